package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the binary when goroutines are left over, but for
// net/http's own after a connection it closes with a request body unread
// (a 408): it waits half a second for the client to close first
// (closeWriteAndWait) and ends by itself, while the tests' servers stop
// without waiting for it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("net/http.(*conn).closeWriteAndWait"))
}
