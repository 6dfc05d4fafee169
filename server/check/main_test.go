package check_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The live checks start gRPC servers and clients: none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
