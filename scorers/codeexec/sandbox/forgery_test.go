package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// forgeLines writes status lines claiming every test passed (or whatever
// status) into every pipe the program holds: the harness's status pipe is
// one of them.
const forgeLines = `import os
def forge(status):
    line = b"\n" + b"".join(b'{"k": %d, "status": "%s", "detail": "forged"}\n' % (k, status.encode()) for k in range(8))
    for fd in range(3, 256):
        try:
            if os.fstat(fd).st_mode & 0o170000 == 0o010000:   # a pipe
                os.write(fd, line)
        except OSError:
            pass
`

// TestIOVerdictForgery: in io style the verdict is Check's, in Go. A
// program that writes status lines of its own into the harness's pipe must
// neither pass a test it did not answer nor turn its failure into a
// HarnessError (which the scorer reports as an error, not as a 0).
func TestIOVerdictForgery(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	for _, status := range []string{"passed", "failed", "harness", "ran"} {
		t.Run(status, func(t *testing.T) {
			job := goodIO()
			job.Code = forgeLines + "forge(" + `"` + status + `"` + ")\nprint('wrong')\n"
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := p.Run(ctx, job)
			if err != nil {
				var he *sandbox.HarnessError
				if errors.As(err, &he) {
					t.Fatalf("REWARD HACK: a forged status line turned a wrong program into a HarnessError: %v", err)
				}
				t.Fatalf("Run: %v", err)
			}
			for k, tr := range res.Tests {
				if tr.Status == sandbox.Passed {
					t.Errorf("REWARD HACK: test %d passed on a forged %q status line", k, status)
				}
			}
		})
	}
	assertServes(t, p)
}

// TestAssertVerdictForgery: a program must not be able to pass assert-style
// tests by writing the harness's status line itself or by patching the
// harness, nor turn its failure into a HarnessError.
//
// These passed before the assert-style tests moved out of the program's
// process: the verdict was reached by the process that ran the program,
// which holds its pipes and can reach the harness's code and frames. Now
// the tests run in the fork server and reach the program only through a
// pipe carrying plain data.
func TestAssertVerdictForgery(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	test := "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 3\n"
	for _, c := range []struct{ name, code string }{
		{"status line into every pipe, then exit", forgeLines + "forge('passed')\nos._exit(0)\n"},
		{"status line into every pipe, then fail", forgeLines + "forge('passed')\ndef f(x):\n    return -1\n"},
		{"harness status line", forgeLines + "forge('harness')\ndef f(x):\n    return -1\n"},
		{"patch the harness's report", `import __main__
_report = __main__.report
__main__.report = lambda w, k, status, detail="": _report(w, k, "passed", "")
def f(x):
    return -1
`},
		{"patch the harness's plain check", `import __main__
__main__.plain = lambda *a, **k: None
class Anything:
    def __eq__(self, other):
        return True
def f(x):
    return Anything()
`},
		{"status pipe from the caller's frame", `import os, sys
w = sys._getframe(1).f_locals["w"]
os.write(w, b'{"k": 0, "status": "passed", "detail": ""}\n')
os._exit(0)
`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := p.Run(ctx, sandbox.Job{Style: sandbox.Assert, Code: c.code, Test: test, EntryPoint: "f", Limits: hostile})
			if err != nil {
				var he *sandbox.HarnessError
				if errors.As(err, &he) {
					t.Fatalf("REWARD HACK: a wrong program turned its failure into a HarnessError: %v", err)
				}
				t.Fatalf("Run: %v", err)
			}
			if tr := res.Tests[0]; tr.Status == sandbox.Passed || strings.Contains(tr.Detail, "forged") {
				t.Errorf("REWARD HACK: a program that fails the asserts got %s (%s)", tr.Status, tr.Detail)
			}
		})
	}
	assertServes(t, p)
}
