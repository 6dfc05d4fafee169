package main

import (
	"strings"
	"testing"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestRunCodeRunners: in every test runner whose toolchain is installed
// (SandboxFusion's pytest, go_test, junit), by SandboxFusion's name,
// through POST /run_code, with SandboxFusion's statuses: a file whose
// tests pass is Success with a run_result that Finished 0; one whose test
// fails is Failed with a run_result that Finished non-zero, the runner's
// report on its stdout; one that does not compile is Failed with a
// compile_result that Finished non-zero with the compiler's messages and
// no run_result (junit), or a
// run_result that Finished non-zero (pytest and go_test, which
// SandboxFusion runs without a compile step); one whose test loops is
// Failed with a run_result TimeLimitExceeded. A code_exec function in a
// runner is a configuration error: its tests run programs.
func TestRunCodeRunners(t *testing.T) {
	programs := sandboxtest.Runners()
	langs := installedLanguages(t, func(l *sandbox.Language) bool { return l.Runner },
		"no test runner is installed here (CODE_EXEC_LANGUAGES=pytest,go_test,junit make deps installs them)")
	srv := startCodeServer(t, languagesConfig, "--workers", "2")
	url := "http://" + srv.httpAddr + "/run_code"
	for _, l := range langs {
		p, ok := programs[l.Name]
		if !ok {
			t.Errorf("%s has no programs in sandboxtest.Runners", l.Name)
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			c := runCodeClient{url: url, l: l}
			a := c.post(t, p.Pass, 20)
			wantFinished(t, "passing tests: run_result", a.RunResult, true)
			if a.Status != "Success" {
				t.Errorf("passing tests: %s, want Success", describe(a))
			}

			a = c.post(t, p.Fail, 20)
			wantFinished(t, "failing test: run_result", a.RunResult, false)
			if a.Status != "Failed" || a.RunResult == nil || a.RunResult.Stdout == nil || !strings.Contains(strings.ToLower(*a.RunResult.Stdout), "fail") {
				t.Errorf("failing test: %s, want Failed with the runner's report of the failure", describe(a))
			}

			runCodeCompileErrorAndLoop(t, c, p.CompileError, p.Loop)
		})
	}
	t.Run("code_exec", func(t *testing.T) {
		cfg := writeConfig(t, "functions:\n  - name: code\n    kind: code_exec\n    language: "+langs[0].Name+"\n    test_style: io\n")
		_, stderr, exit := runRewardd(t, "", "check", "--config", cfg)
		if exit != 2 || !strings.Contains(stderr, "test runner") {
			t.Errorf("a code_exec function in %s: check exit %d, stderr:\n%s\nwant 2 saying it is a test runner", langs[0].Name, exit, stderr)
		}
	})
}
