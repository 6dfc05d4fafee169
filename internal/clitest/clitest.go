// Package clitest builds a command of this module and runs it, for tests
// that run the real program as a user would.
package clitest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/rewardd/rewardd/scorers/rematch"
)

// Build builds the command in the package directory pkg (with the race
// detector, and with the regex engine tag the calling test was built with,
// so that patterns match with the same engine) as dir/name, and returns its
// path.
func Build(pkg, dir, name string) (string, error) {
	binary := filepath.Join(dir, name)
	args := []string{"build", "-race", "-o", binary}
	switch rematch.Engine() {
	case "re2":
		args = append(args, "-tags", "re2_cgo")
	case "regexp":
		args = append(args, "-tags", "rematch_regexp")
	}
	build := exec.Command("go", append(args, pkg)...)
	build.Stderr = os.Stderr
	return binary, build.Run()
}

// Run runs binary with args and stdin and returns what it wrote and its
// exit status.
func Run(t testing.TB, binary, stdin string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		exit = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), exit
}

// Main is TestMain for the tests of the command in the current directory:
// it builds it as name into a temporary directory, sets *binary to its
// path, runs the tests, and, when they pass, fails if any goroutine they
// started is left.
func Main(m *testing.M, name string, binary *string) {
	dir, err := os.MkdirTemp("", name+"-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *binary, err = Build(".", dir, name); err != nil {
		fmt.Fprintf(os.Stderr, "build %s: %v\n", name, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
