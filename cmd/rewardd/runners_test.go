package main

import (
	"encoding/json"
	"net/http"
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
// compile_result that Finished non-zero and no run_result (junit), or a
// run_result that Finished non-zero (pytest and go_test, which
// SandboxFusion runs without a compile step); one whose test loops is
// Failed with a run_result TimeLimitExceeded. A code_exec function in a
// runner is a configuration error: its tests run programs.
func TestRunCodeRunners(t *testing.T) {
	programs := sandboxtest.Runners()
	var langs []*sandbox.Language
	for _, l := range sandbox.Languages() {
		if !l.Runner {
			continue
		}
		if err := l.Available(); err != nil {
			t.Logf("skipped: %s: %v", l.Name, err)
			continue
		}
		langs = append(langs, l)
	}
	if len(langs) == 0 {
		t.Skip("no test runner is installed here (CODE_EXEC_LANGUAGES=pytest,go_test,junit make deps installs them)")
	}
	srv := startCodeServer(t, languagesConfig, "--workers", "2")
	url := "http://" + srv.httpAddr + "/run_code"
	for _, l := range langs {
		p, ok := programs[l.Name]
		if !ok {
			t.Errorf("%s has no programs in sandboxtest.Runners", l.Name)
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			post := func(code string, runTimeout float64) *sandboxFusionAnswer {
				t.Helper()
				body, _ := json.Marshal(map[string]any{"code": code, "language": l.SandboxFusion,
					"compile_timeout": 20, "run_timeout": runTimeout, "files": map[string]any{}, "fetch_files": []string{}})
				code_, a, out := postRunCode(t, url, body)
				if code_ != http.StatusOK || a == nil {
					t.Fatalf("HTTP %d %s, want 200 and SandboxFusion's answer", code_, out)
				}
				return a
			}
			finished := func(what string, c *commandOutcome, zero bool) {
				t.Helper()
				switch {
				case c == nil:
					t.Errorf("%s: no result", what)
				case c.Status != "Finished" || c.ReturnCode == nil || (*c.ReturnCode == 0) != zero:
					t.Errorf("%s: %s, want Finished with a return code that is 0: %v", what, describeOutcome(c), zero)
				}
			}

			a := post(p.Pass, 20)
			finished("passing tests: run_result", a.RunResult, true)
			if a.Status != "Success" {
				t.Errorf("passing tests: %s, want Success", describe(a))
			}

			a = post(p.Fail, 20)
			finished("failing test: run_result", a.RunResult, false)
			if a.Status != "Failed" || a.RunResult == nil || a.RunResult.Stdout == nil || !strings.Contains(strings.ToLower(*a.RunResult.Stdout), "fail") {
				t.Errorf("failing test: %s, want Failed with the runner's report of the failure", describe(a))
			}

			a = post(p.CompileError, 20)
			if l.Compiled() {
				finished("compile error: compile_result", a.CompileResult, false)
				if a.RunResult != nil {
					t.Errorf("compile error: %s, want no run_result", describe(a))
				}
			} else {
				finished("compile error: run_result", a.RunResult, false)
			}
			if a.Status != "Failed" {
				t.Errorf("compile error: %s, want Failed", describe(a))
			}

			a = post(p.Loop, 1)
			if a.Status != "Failed" || a.RunResult == nil || a.RunResult.Status != "TimeLimitExceeded" {
				t.Errorf("loop: %s, want Failed with a run_result TimeLimitExceeded", describe(a))
			}
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
