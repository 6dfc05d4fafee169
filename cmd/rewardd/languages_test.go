package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server/check"
)

// languagesConfig lets requests run programs (inline code_exec, so POST
// /run_code) in every language the sandbox runs.
const languagesConfig = `functions:
  - name: acc
    kind: exact_match
inline:
  kinds: [code_exec]
  code_exec_limits: {cpu_seconds: 10, wall_seconds: 30, memory_mb: 1024, output_kb: 1024, processes: 128}
`

// TestRunCodeLanguages: in every language beyond the first four whose
// toolchain is installed, by SandboxFusion's name, a program that echoes
// its stdin, one that does not compile, one that raises and one that
// loops, through POST /run_code (SandboxFusion's statuses: Success;
// Failed with a compile_result, or for a language that is not compiled a
// run_result, that Finished non-zero; Failed with a run_result that
// Finished non-zero; Failed with a run_result TimeLimitExceeded) and
// through an inline code_exec function with io tests (AC 1, CE or RE 0, RE
// 0, TLE 0).
func TestRunCodeLanguages(t *testing.T) {
	programs := sandboxtest.MoreLanguagePrograms()
	langs := installedLanguages(t, func(l *sandbox.Language) bool { return !l.Default && !l.Runner }, // a runner's are TestRunCodeRunners
		"no language beyond the default four is installed here (CODE_EXEC_LANGUAGES=all make deps installs them)")
	srv := startCodeServer(t, languagesConfig, "--workers", "2")
	url := "http://" + srv.httpAddr + "/run_code"
	running := probedLanguages(t, srv)
	for _, l := range langs {
		if !slices.Contains(running, l.Name) {
			t.Errorf("GET /readyz lists %v, not %s, which is installed", running, l.Name)
		}
	}
	for _, l := range langs {
		p, ok := programs[l.Name]
		if !ok {
			t.Errorf("%s has no programs in sandboxtest.MoreLanguagePrograms", l.Name)
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			// Two languages at a time (-parallel: GOMAXPROCS), one
			// server's two slots: the second core is not left idle while
			// a program waits for its time limit or a compiler starts.
			t.Parallel()
			t.Run("run_code", func(t *testing.T) { runCodeLanguage(t, url, l, p) })
			t.Run("code_exec", func(t *testing.T) { codeExecLanguage(t, srv, l, p) })
		})
	}
}

// installedLanguages are the languages of the sandbox's table that want
// keeps and whose toolchain is installed here (the test logs each other
// one); with none, the test is skipped saying none.
func installedLanguages(t *testing.T, want func(*sandbox.Language) bool, none string) []*sandbox.Language {
	t.Helper()
	var langs []*sandbox.Language
	for _, l := range sandbox.Languages() {
		if !want(l) {
			continue
		}
		if err := l.Available(); err != nil {
			t.Logf("skipped: %s: %v", l.Name, err)
			continue
		}
		langs = append(langs, l)
	}
	if len(langs) == 0 {
		t.Skip(none)
	}
	return langs
}

func runCodeLanguage(t *testing.T, url string, l *sandbox.Language, p sandboxtest.Programs) {
	c := runCodeClient{url: url, l: l, stdin: "21\nhello, wörld\n"}
	a := c.post(t, p.Echo, 10)
	wantFinished(t, "echo: run_result", a.RunResult, true)
	if a.Status != "Success" || a.RunResult == nil || a.RunResult.Stdout == nil || *a.RunResult.Stdout != c.stdin {
		t.Errorf("echo: %s, want Success printing its stdin", describe(a))
	}

	a = c.post(t, p.RuntimeError, 10)
	wantFinished(t, "runtime error: run_result", a.RunResult, false)
	if a.Status != "Failed" {
		t.Errorf("runtime error: %s, want Failed", describe(a))
	}

	runCodeCompileErrorAndLoop(t, c, p.CompileError, p.Loop)
}

// runCodeClient posts programs in one language to POST /run_code as
// SandboxFusion's clients do, each with stdin (none when empty).
type runCodeClient struct {
	url   string
	l     *sandbox.Language
	stdin string
}

// post runs code with a compile_timeout of 20 s and a run_timeout of
// runTimeout seconds, and returns SandboxFusion's answer; anything but
// HTTP 200 with that answer ends the test.
func (c runCodeClient) post(t *testing.T, code string, runTimeout float64) *sandboxFusionAnswer {
	t.Helper()
	req := map[string]any{"code": code, "language": c.l.SandboxFusion,
		"compile_timeout": 20, "run_timeout": runTimeout, "files": map[string]any{}, "fetch_files": []string{}}
	if c.stdin != "" {
		req["stdin"] = c.stdin
	}
	body, _ := json.Marshal(req)
	status, a, out := postRunCode(t, c.url, body)
	if status != http.StatusOK || a == nil {
		t.Fatalf("HTTP %d %s, want 200 and SandboxFusion's answer", status, out)
	}
	return a
}

// wantFinished fails the test unless c Finished with a return code that
// is 0 exactly when zero is.
func wantFinished(t *testing.T, what string, c *commandOutcome, zero bool) {
	t.Helper()
	switch {
	case c == nil:
		t.Errorf("%s: no result", what)
	case c.Status != "Finished" || c.ReturnCode == nil || (*c.ReturnCode == 0) != zero:
		t.Errorf("%s: %s, want Finished with a return code that is 0: %v", what, describeOutcome(c), zero)
	}
}

// runCodeCompileErrorAndLoop checks, in c's language, that compileError
// is Failed with a compile_result that Finished non-zero with the
// compiler's messages and no run_result or, in a language that is not
// compiled, with a run_result that Finished non-zero; and that loop, with
// a run_timeout of 1 s, is Failed with a run_result TimeLimitExceeded.
func runCodeCompileErrorAndLoop(t *testing.T, c runCodeClient, compileError, loop string) {
	t.Helper()
	a := c.post(t, compileError, 10)
	if c.l.Compiled() {
		wantFinished(t, "compile error: compile_result", a.CompileResult, false)
		if a.RunResult != nil || a.CompileResult == nil || a.CompileResult.Stderr == nil || *a.CompileResult.Stderr == "" {
			t.Errorf("compile error: %s, want the compiler's messages and no run_result", describe(a))
		}
	} else {
		wantFinished(t, "compile error: run_result", a.RunResult, false)
	}
	if a.Status != "Failed" {
		t.Errorf("compile error: %s, want Failed", describe(a))
	}

	a = c.post(t, loop, 1)
	if a.Status != "Failed" || a.RunResult == nil || a.RunResult.Status != "TimeLimitExceeded" {
		t.Errorf("loop: %s, want Failed with a run_result TimeLimitExceeded", describe(a))
	}
}

func codeExecLanguage(t *testing.T, srv *process, l *sandbox.Language, p sandboxtest.Programs) {
	// 1 s of CPU per test; half its default for a language whose programs
	// start slowly (a default above 4 s: kotlin compiles its script as it
	// runs).
	timeLimit := 1.0
	if l.RunLimits.CPUSeconds > 4 {
		timeLimit = l.RunLimits.CPUSeconds / 2
	}
	params, err := structpb.NewStruct(map[string]any{"language": l.Name, "test_style": "io", "time_limit_seconds": timeLimit})
	if err != nil {
		t.Fatal(err)
	}
	fields, err := structpb.NewStruct(map[string]any{"tests": []any{map[string]any{"stdin": "21\n", "stdout": "21\n"}}})
	if err != nil {
		t.Fatal(err)
	}
	ceVerdict := rewardv1.Verdict_VERDICT_RUNTIME_ERROR
	if l.Compiled() {
		ceVerdict = rewardv1.Verdict_VERDICT_COMPILATION_ERROR
	}
	cases := []struct {
		name    string
		src     string
		value   float64
		verdict rewardv1.Verdict
	}{
		{"echo", p.Echo, 1, rewardv1.Verdict_VERDICT_ACCEPTED},
		{"compile error", p.CompileError, 0, ceVerdict},
		{"runtime error", p.RuntimeError, 0, rewardv1.Verdict_VERDICT_RUNTIME_ERROR},
		{"loop", p.Loop, 0, rewardv1.Verdict_VERDICT_TIME_LIMIT_EXCEEDED},
	}
	name := "io_" + l.Name
	req := &rewardv1.ScoreRequest{Inline: []*rewardv1.FunctionSpec{{Name: name, Kind: "code_exec", Params: params}}}
	for _, c := range cases {
		req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Completion: "```" + l.Name + "\n" + c.src + "```\n", Fields: fields})
	}
	resp, err := srv.client(t).Score(context.Background(), req)
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	var fs *rewardv1.FunctionScores
	for _, f := range resp.GetFunctions() {
		if f.GetName() == name {
			fs = f
		}
	}
	if fs == nil {
		t.Fatalf("no scores of %s in %v", name, resp)
	}
	for i, c := range cases {
		e := fs.GetExecutions()[int32(i)]
		if fs.GetStatus()[i] != rewardv1.ScoreStatus_SCORE_STATUS_OK || fs.GetValues()[i] != c.value || e.GetVerdict() != c.verdict {
			t.Errorf("%s: %v %g %v (%q), want OK %g %v", c.name, fs.GetStatus()[i], fs.GetValues()[i], e.GetVerdict(), fs.GetErrors()[int32(i)], c.value, c.verdict)
		}
	}
}

// describeOutcome shows a command's result in a test's message.
func describeOutcome(c *commandOutcome) string {
	s := c.Status
	if c.ReturnCode != nil {
		s += fmt.Sprintf(" %d", *c.ReturnCode)
	}
	if c.Stderr != nil {
		s += fmt.Sprintf(" stderr %q", strings.TrimSpace(*c.Stderr))
	}
	return s
}

// TestCheckSaysLanguages: rewardd check lists the code_exec languages this
// machine can run (those whose toolchain is installed) and, for each
// other, how to install it; a code_exec function in a language that is not
// installed fails the check naming its package.
func TestCheckSaysLanguages(t *testing.T) {
	r, stderr, exit := checkJSON(t)
	if exit != 0 || r.Languages == nil {
		t.Fatalf("check: exit %d, languages %v; stderr:\n%s", exit, r.Languages, stderr)
	}
	var missing *sandbox.Language
	for _, l := range sandbox.Languages() {
		err := l.Available()
		listed := slices.Contains(r.Languages.Installed, l.Name)
		if listed != (err == nil) {
			t.Errorf("%s: listed as installed %v, toolchain: %v", l.Name, listed, err)
		}
		if err != nil {
			missing = l
			if !slices.ContainsFunc(r.Languages.Missing, func(m check.MissingLanguage) bool {
				return m.Name == l.Name && strings.Contains(m.Install, l.Package)
			}) {
				t.Errorf("%s is not installed; the report's missing languages %v do not say to install %s", l.Name, r.Languages.Missing, l.Package)
			}
		}
	}
	if stdout, _, _ := runRewardd(t, "", "check"); !strings.Contains(stdout, "code_exec languages this machine can run: python") {
		t.Errorf("check's table does not list the languages:\n%s", stdout)
	}
	if missing == nil {
		t.Skip("every language is installed here: no language to fail a function with")
	}
	cfg := writeConfig(t, "functions:\n  - name: code\n    kind: code_exec\n    language: "+missing.Name+"\n    test_style: io\n")
	_, stderr, exit = runRewardd(t, "", "check", "--config", cfg)
	if exit != 2 || !strings.Contains(stderr, missing.Package) || !strings.Contains(stderr, "make deps") {
		t.Errorf("a %s function, not installed: exit %d, stderr:\n%s\nwant 2 naming the package %s and make deps", missing.Name, exit, stderr, missing.Package)
	}
}
