// Package sandboxtest holds what the tests of packages that run the
// code_exec sandbox share.
package sandboxtest

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// Main runs a package's tests; call it from TestMain. A sandbox pool
// re-executes the test binary as its helper, so a run with the helper's
// arguments becomes the helper and never returns. Otherwise Main runs the
// tests and fails the binary when goroutines are left over (goleak).
func Main(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	goleak.VerifyTestMain(m)
}

// SkipUnlessRoot skips the test, saying why, when the process is not root:
// the sandbox needs namespaces, mounts and setuid.
func SkipUnlessRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("the sandbox needs root (namespaces, mounts, setuid); not root")
	}
}

// SkipUnlessAvailable skips the test, saying which toolchain is missing,
// unless every one of languages can run here; it fails the test on a
// language the sandbox does not know.
func SkipUnlessAvailable(tb testing.TB, languages ...string) {
	tb.Helper()
	for _, name := range languages {
		l, err := sandbox.LookupLanguage(name)
		if err != nil {
			tb.Fatal(err)
		}
		if err := l.Available(); err != nil {
			tb.Skipf("the %s toolchain cannot run here: %v", name, err)
		}
	}
}
