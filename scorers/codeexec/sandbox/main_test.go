package sandbox_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	goleak.VerifyTestMain(m)
}
