// Package clitest builds a command of this module and runs it, for tests
// that run the real program as a user would.
package clitest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers/rematch"
)

// Build builds the command in the package directory pkg (with the race
// detector, and with RE2 when the calling test was built with it, so that
// patterns match with the same engine) as dir/name, and returns its path.
func Build(pkg, dir, name string) (string, error) {
	binary := filepath.Join(dir, name)
	args := []string{"build", "-race", "-o", binary}
	if rematch.Engine() == "re2" {
		args = append(args, "-tags", "re2_cgo")
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
