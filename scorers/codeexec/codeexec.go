// Package codeexec implements the code_exec scorer kind: the code in a
// completion is run against the row's tests in the sandbox (package
// sandbox), and scores by a policy over the tests' verdicts (the fraction
// passed by default).
//
// # Code
//
// The program is the completion's last fenced code block tagged with the
// function's language (```python, ```py, ```python3; ```cpp, ```c++;
// ```java; ```javascript, ```js) or with no tag; a block the generation
// cut off before its closing fence counts from its opening fence to the
// end. Without any such fence the whole completion is the program. With
// PrefixField set, that row field is put before it, as it is (HumanEval's
// prompt, when completions continue it: the body of the function alone).
// PrefixField "prompt" names the rollout's prompt when the row has no
// field of that name, as rows from JSONL, TRL and reward.v1 have none: they
// keep the prompt apart from the other columns. A row without its prefix is
// an Error: without it, a continuation is not a program.
//
// # Languages
//
// Language is python (the default: the sandbox's fork server runs it
// in-process, all of a submission's tests in one process), cpp (C++17,
// g++ -std=gnu++17 -O2, with bits/stdc++.h and iostream precompiled), java (OpenJDK
// 17; the public class may have any name) or javascript (node). A
// language whose toolchain is not installed is refused when the function
// is compiled, naming the Debian package to install. A compiled program
// is compiled once per request however many rollouts repeat it; a program
// that does not compile, or whose compile runs out of its limits, scores 0
// with verdict CE and the compiler's first lines in the reason.
//
// # Tests
//
// test_style io: the row field TestsField (default "tests") holds the cases:
// a list of {stdin, stdout} objects ("input"/"output" also read), an object
// {"inputs": [...], "outputs": [...]} as APPS stores them, or a string
// holding either as JSON. The program runs once per case with the case's
// stdin, each under the test's time limit (TimeLimitSeconds, or the row's
// TimeLimitField, at most MaxTimeLimitSeconds) and memory limit; its
// output is judged by the checker (Checker, or the row's CheckerField):
// exact (lines equal once trailing white space and trailing empty lines
// are dropped), exact_ci (the same, ignoring the case of ASCII letters,
// as judges do: not Unicode's case folding), float:E (tokens; two
// numbers pass when their absolute or relative error is at most E),
// float_abs:E, float_rel:E, or special (the row's own checker program, in
// CheckerFilesField, run in the sandbox: see special.go). The expected
// outputs are compared in Go, or by a checker that runs after every
// process of the program is gone: a program never sees them. Each test gets
// a verdict: AC, WA, TLE, MLE, RE or OLE.
//
// test_style assert (HumanEval, python only): TestsField (default "test")
// holds test code that defines check(candidate), and EntryPointField
// (default "entry_point") the name of the function to pass it. One test:
// pass or fail. A program that exits before the asserts ran, returns an
// object that is not plain built-in data (an __eq__ that is always true),
// or passes only because it patched builtins or the modules the tests use,
// fails. A name the test code uses without defining it (a helper such as
// HumanEval/38's encode_cyclic) comes from the program's process, where
// the helpers of the task's prompt (the row field PrefixField when it is
// set, else the code of the rollout's prompt: its last fenced block, as the
// program is taken from the completion) are defined again after the
// program ran (RestorePromptHelpers, sandbox.Job.Helpers), so redefining
// the helper the tests check with gains nothing. With TrustedPrompt (or
// PrefixField) the prompt also runs beside the tests, which then take its
// names from it. A prompt that is not python defines nothing.
//
// # Scoring
//
// fraction (default): the fraction of tests passed. all: 1 when every test
// passes, else 0; the tests run cheapest first (shortest stdin) and stop at
// the first failure. first_n: the first FirstN tests (default 15, as
// DeepCoder caps them) in the row's order, 1 when all of those pass, else
// 0. weighted_sum (open-r1's Codeforces reward): 1 when all pass, plus 0.1
// times the fraction passed (0 to 1.1). ioi: subtasks from the row's
// SubtasksField, a list of {points, tests: [indices]}; each scores its
// points times the lowest score of its tests (open-r1's IOI rule), and the
// score is their sum over the sum of points.
//
// # Outcomes
//
// A program whose tests together print more than Limits.TotalOutputKB
// scores 0, OK, with the verdict OLE, however many tests it passed. A
// program that fails a test, times out, runs out of memory, prints too
// much, crashes or does not compile scores lower, OK, with the first
// failing test and its verdict in the reason and every test's verdict,
// CPU time and peak memory in the Result's Execution. A row without tests
// is NotApplicable. A sandbox that could not run the program (it is
// unavailable on this machine, failed twice, the request ended), tests
// or checkers that are themselves broken, or a row asking for more time
// than the function allows give Error, never a silent 0.
package codeexec

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// Runner compiles and runs submissions. *sandbox.Pool is the Runner
// rewardd serves with.
type Runner interface {
	Run(ctx context.Context, job sandbox.Job) (sandbox.Result, error)
	Compile(ctx context.Context, job sandbox.CompileJob) (*sandbox.Build, error)
	// Supports says whether the runner runs programs in language, and if
	// not, why.
	Supports(language string) error
}

// Sandbox gives a scorer its Runner, or the reason there is none (the
// sandbox could not start on this machine). It is called once per compiled
// function.
type Sandbox func() (Runner, error)

// Params configures a code_exec function.
type Params struct {
	// Language of the programs: python (default), cpp, java or javascript
	// (or an alias: c++, js, …).
	Language string `yaml:"language,omitempty"`
	// TestStyle is io or assert. Required.
	TestStyle string `yaml:"test_style,omitempty"`
	// TestsField is the row field with the tests; default "tests" for io,
	// "test" for assert.
	TestsField string `yaml:"tests_field,omitempty"`
	// EntryPointField is the row field naming the function that assert
	// tests check; default "entry_point".
	EntryPointField string `yaml:"entry_point_field,omitempty"`
	// PrefixField, when set, is a row field put before the program, and
	// the trusted prompt of assert tests; "prompt" is the rollout's prompt
	// when the row has no field "prompt".
	PrefixField string `yaml:"prefix_field,omitempty"`
	// TrustedPrompt lets assert tests take the helpers they call from the
	// rollout's prompt when PrefixField is not set. The prompt's code then
	// runs beside the tests, in the sandbox's runner, which is less confined
	// than a program's process: set it only when prompts are the dataset's
	// (not, say, earlier turns the model wrote).
	TrustedPrompt bool `yaml:"trusted_prompt,omitempty"`
	// RestorePromptHelpers (default true) defines the helpers of the
	// task's prompt (the row field PrefixField when it is set, else the
	// code of the rollout's prompt) again in the program's process after
	// the program's code ran (sandbox.Job.Helpers), so that a program
	// cannot pass by redefining a helper the tests check it with. Turning
	// it off (a dataset whose completions must replace a helper) is what
	// `rewardd check` warns of.
	RestorePromptHelpers *bool `yaml:"restore_prompt_helpers,omitempty"`
	// Scoring is fraction (default), all, first_n, weighted_sum or ioi.
	Scoring string `yaml:"scoring,omitempty"`
	// FirstN is how many tests first_n runs, in [1, 256]; default 15.
	FirstN *int `yaml:"first_n,omitempty"`
	// SubtasksField is the row field with ioi's subtasks; default
	// "subtasks".
	SubtasksField string `yaml:"subtasks_field,omitempty"`
	// Checker judges io outputs: exact (default), exact_ci, float:E,
	// float_abs:E, float_rel:E or special.
	Checker string `yaml:"checker,omitempty"`
	// CheckerField, when set, is a row field with the row's checker, as
	// Checker writes it; a row without it uses Checker.
	CheckerField string `yaml:"checker_field,omitempty"`
	// CheckerFilesField is the row field with a special checker's sources,
	// {main, std, files: {name: source}}; default "checker_files".
	CheckerFilesField string `yaml:"checker_files_field,omitempty"`
	// CheckerProtocol is how a special checker is run and answers: kattis
	// (default) or testlib.
	CheckerProtocol string `yaml:"checker_protocol,omitempty"`
	// TimeLimitSeconds is each io test's CPU time limit; 0 leaves python's
	// tests the submission's limits.cpu_seconds together, and each test of
	// another language limits.cpu_seconds.
	TimeLimitSeconds float64 `yaml:"time_limit_seconds,omitempty"`
	// TimeLimitField, when set, is a row field with the row's time limit
	// per test in seconds (a number; null or absent: TimeLimitSeconds).
	TimeLimitField string `yaml:"time_limit_field,omitempty"`
	// MaxTimeLimitSeconds caps what a row may ask for, in [0.001, 60];
	// default 10. A row over it is an Error: request data never raises the
	// server's limits.
	MaxTimeLimitSeconds *float64 `yaml:"max_time_limit_seconds,omitempty"`
	// TimeLimitFactor multiplies the time limit per test, the row's or
	// TimeLimitSeconds, in [0.001, 10]; default 1. Judges set limits for their own
	// machines and runtimes (Kattis runs Python with PyPy): CPython may
	// need 2 or more.
	TimeLimitFactor *float64 `yaml:"time_limit_factor,omitempty"`
	// Limits bound each submission: its wall time as a whole, and CPU
	// time (python: the whole suite; other languages: each test), memory,
	// output and processes, and what all its tests print together. A zero
	// field (a limit a config leaves out: one it writes as 0 is refused)
	// takes its default from the language: 2 CPU seconds, 6 wall
	// seconds, 512 MB, 1024 KB of output, 128 processes (threads count as
	// processes; java: 4 CPU and 10 wall seconds); total_output_kb 16 ×
	// output_kb, at most 65536.
	Limits sandbox.Limits `yaml:"limits,omitempty"`
	// CompileLimits bound a compile; zero fields (left out) take the
	// language's defaults (10 CPU seconds, 20 wall seconds, 1024 MB; java
	// 20, 30).
	CompileLimits sandbox.Limits `yaml:"compile_limits,omitempty"`
}

// Scorer is a compiled code_exec function.
type Scorer struct {
	p       Params
	lang    *sandbox.Language
	checker checker // Checker, parsed
	runner  Runner
	// unavailable is why there is no runner.
	unavailable error
	// checkers are the compiled special checkers, and builds the compiled
	// submissions, shared by the functions of one Kind.
	checkers, builds *buildCache
}

// The bounds of the compiled submissions a Kind keeps: 17–28 KB each for
// the C++ solutions of cp_problems.
const (
	keptBuilds     = 1024
	keptBuildBytes = 64 << 20
)

// Kind is the code_exec factory for a scorers.Registry: functions get their
// runner from sb, and share compiled special checkers and submissions.
func Kind(sb Sandbox) scorers.Factory {
	checkers, builds := newBuildCache(256, 0), newBuildCache(keptBuilds, keptBuildBytes)
	return scorers.Kind(func(p Params) (*Scorer, error) { return newScorer(p, sb, checkers, builds) })
}

// New checks p, fills in its defaults, and asks sb for the runner. A sandbox
// that is unavailable is not a configuration error: the function compiles
// and every rollout it scores is an Error that says why (fail closed). A
// language whose toolchain is missing is a configuration error on key
// language, naming the package to install.
func New(p Params, sb Sandbox) (*Scorer, error) {
	return newScorer(p, sb, newBuildCache(64, 0), newBuildCache(keptBuilds, keptBuildBytes))
}

func newScorer(p Params, sb Sandbox, checkers, builds *buildCache) (*Scorer, error) {
	lang, err := p.fill()
	if err != nil {
		return nil, err
	}
	if err := lang.Available(); err != nil {
		return nil, &scorers.ParamError{Key: "language", Err: err}
	}
	s := &Scorer{p: p, lang: lang, checkers: checkers, builds: builds}
	if p.TestStyle == string(sandbox.IO) {
		s.checker, _ = parseChecker(p.Checker) // checked by fill
	}
	if sb == nil {
		s.unavailable = errors.New("this process has no code execution sandbox")
	} else {
		s.runner, s.unavailable = sb()
	}
	if s.unavailable == nil {
		if err := s.runner.Supports(lang.Name); err != nil {
			return nil, &scorers.ParamError{Key: "language", Err: err}
		}
		if p.Checker == "special" || p.CheckerField != "" {
			// A special checker is compiled C++.
			if err := s.runner.Supports("cpp"); err != nil {
				return nil, &scorers.ParamError{Key: "checker", Err: fmt.Errorf("special checkers are C++: %w", err)}
			}
		}
	}
	return s, nil
}

// fill checks p and fills in its defaults; it returns the language. Its
// error is a scorers.ParamErrors with every problem found.
func (p *Params) fill() (*sandbox.Language, error) {
	var bad scorers.ParamErrors
	if p.Language == "" {
		p.Language = "python"
	}
	lang, err := sandbox.LookupLanguage(p.Language)
	if err != nil {
		bad.Add("language", err)
		lang, _ = sandbox.LookupLanguage("python") // to check the rest
	}
	p.Language = lang.Name
	if lang.Runner {
		bad.Addf("language", "%s is a test runner, which POST /run_code runs as SandboxFusion does; code_exec's tests run programs: name the language the program is in", lang.Name)
	}
	switch p.TestStyle {
	case string(sandbox.IO):
		if p.TestsField == "" {
			p.TestsField = "tests"
		}
		p.fillIO(&bad)
	case string(sandbox.Assert):
		if !lang.InProcess {
			bad.Addf("test_style", "assert tests are python's; %s runs io tests", lang.Name)
		}
		if p.RestorePromptHelpers == nil {
			p.RestorePromptHelpers = ptr(true)
		}
		if p.TestsField == "" {
			p.TestsField = "test"
		}
		if p.EntryPointField == "" {
			p.EntryPointField = "entry_point"
		}
	case "":
		bad.Add("test_style", errors.New("required: io or assert"))
	default:
		bad.Addf("test_style", "%q, want io or assert", p.TestStyle)
	}
	if p.TestStyle != string(sandbox.Assert) && p.RestorePromptHelpers != nil {
		bad.Add("restore_prompt_helpers", errors.New("is for test_style: assert"))
	}
	switch p.Scoring {
	case "":
		p.Scoring = "fraction"
	case "fraction", "all":
	case "first_n", "weighted_sum", "ioi":
		if p.TestStyle != string(sandbox.IO) {
			bad.Addf("scoring", "%s scores io tests", p.Scoring)
		}
	default:
		bad.Addf("scoring", "%q, want fraction, all, first_n, weighted_sum or ioi", p.Scoring)
	}
	switch {
	case p.Scoring == "first_n":
		p.FirstN = scorers.Optional(&bad, "first_n", p.FirstN, 15, 1, 256)
	case p.FirstN != nil:
		bad.Add("first_n", errors.New("is for scoring: first_n"))
	}
	switch {
	case p.Scoring == "ioi" && p.SubtasksField == "":
		p.SubtasksField = "subtasks"
	case p.Scoring != "ioi" && p.SubtasksField != "":
		bad.Add("subtasks_field", errors.New("is for scoring: ioi"))
	}
	p.Limits = p.Limits.WithDefaults(lang.RunLimits)
	bad.Add("limits", p.Limits.Validate())
	if lang.Compiled() {
		p.CompileLimits = p.CompileLimits.WithDefaults(lang.CompileLimits)
		bad.Add("compile_limits", p.CompileLimits.Validate())
	} else if p.CompileLimits != (sandbox.Limits{}) {
		bad.Addf("compile_limits", "%s is not compiled", lang.Name)
	}
	return lang, bad.Err()
}

// fillIO checks and fills the parameters of io tests: the checker and the
// time limits.
func (p *Params) fillIO(bad *scorers.ParamErrors) {
	if p.Checker == "" {
		p.Checker = "exact"
	}
	if _, err := parseChecker(p.Checker); err != nil {
		bad.Add("checker", err)
	}
	if p.Checker == "special" || p.CheckerField != "" {
		if p.CheckerFilesField == "" {
			p.CheckerFilesField = "checker_files"
		}
		p.CheckerProtocol, _ = scorers.Choice(bad, "checker_protocol", p.CheckerProtocol, kattis, kattis, testlib)
	}
	if p.TimeLimitSeconds < 0 || p.TimeLimitSeconds > 60 {
		bad.Addf("time_limit_seconds", "must be in [0, 60], got %g", p.TimeLimitSeconds)
	}
	if p.TimeLimitField != "" || p.MaxTimeLimitSeconds != nil {
		p.MaxTimeLimitSeconds = scorers.Optional(bad, "max_time_limit_seconds", p.MaxTimeLimitSeconds, 10, 0.001, 60)
	}
	p.TimeLimitFactor = scorers.Optional(bad, "time_limit_factor", p.TimeLimitFactor, 1, 0.001, 10)
	most := p.TimeLimitSeconds
	if p.MaxTimeLimitSeconds != nil {
		most = max(most, *p.MaxTimeLimitSeconds)
		if p.TimeLimitSeconds > *p.MaxTimeLimitSeconds {
			bad.Addf("time_limit_seconds", "%g is over max_time_limit_seconds %g", p.TimeLimitSeconds, *p.MaxTimeLimitSeconds)
		}
	}
	if most**p.TimeLimitFactor > 60 {
		bad.Add("time_limit_factor", errors.New("times the time limit is over 60 s per test"))
	}
}

// LimitsWithin reports a limit of the function above the same limit in max
// (a request's inline function may only lower the server's limits): its
// run limits, the time limit per test it may give a test (its own, or the
// most a row may ask for), and its compile limits, which may not exceed its
// language's defaults.
func (s *Scorer) LimitsWithin(max sandbox.Limits) error {
	if err := within("limits", s.p.Limits, max); err != nil {
		return err
	}
	factor := s.timeLimitFactor()
	if t := s.p.TimeLimitSeconds * factor; t > max.CPUSeconds {
		return fmt.Errorf("time_limit_seconds × time_limit_factor %g is above this server's cpu_seconds %g", t, max.CPUSeconds)
	}
	if s.p.TimeLimitField == "" {
		return nil
	}
	if t := *s.p.MaxTimeLimitSeconds * factor; t > max.CPUSeconds {
		return fmt.Errorf("max_time_limit_seconds × time_limit_factor %g is above this server's cpu_seconds %g", t, max.CPUSeconds)
	}
	if s.p.CompileLimits != (sandbox.Limits{}) {
		if lang, err := sandbox.LookupLanguage(s.p.Language); err == nil {
			return within("compile_limits", s.p.CompileLimits, lang.CompileLimits)
		}
	}
	return nil
}

func within(key string, l, max sandbox.Limits) error {
	for _, c := range []struct {
		key      string
		got, max float64
	}{
		{"cpu_seconds", l.CPUSeconds, max.CPUSeconds}, {"wall_seconds", l.WallSeconds, max.WallSeconds},
		{"memory_mb", float64(l.MemoryMB), float64(max.MemoryMB)}, {"output_kb", float64(l.OutputKB), float64(max.OutputKB)},
		{"processes", float64(l.Processes), float64(max.Processes)},
		{"total_output_kb", float64(l.TotalOutputKB), float64(max.TotalOutputKB)},
	} {
		if c.got > c.max {
			return fmt.Errorf("%s.%s %g is above this server's %g", key, c.key, c.got, c.max)
		}
	}
	return nil
}

// Cautions says what of s's parameters lets a program pass its tests
// without solving the task (scorers.Cautious).
func (s *Scorer) Cautions() []string {
	if p := s.p.RestorePromptHelpers; p != nil && !*p {
		return []string{"restore_prompt_helpers is false: a program may redefine a helper of the prompt that the tests check it with (HumanEval/38's encode_cyclic) and pass without solving the task"}
	}
	return nil
}

// Params returns the parameters s runs with, defaults filled in.
func (s *Scorer) Params() Params { return s.p }

// Languages are the languages the function runs programs in, by name: its
// submissions' and, with a special checker, C++.
func (s *Scorer) Languages() []string {
	if s.lang.Name != "cpp" && (s.p.Checker == "special" || s.p.CheckerField != "") {
		return []string{s.lang.Name, "cpp"}
	}
	return []string{s.lang.Name}
}

// timeLimitFactor is Params.TimeLimitFactor, which io tests have, or 1.
func (s *Scorer) timeLimitFactor() float64 {
	if f := s.p.TimeLimitFactor; f != nil {
		return *f
	}
	return 1
}

// Score runs the rollout's program against its row's tests.
func (s *Scorer) Score(ctx context.Context, r *scorers.Rollout) scorers.Result {
	if sandbox.Style(s.p.TestStyle) == sandbox.IO {
		return s.scoreIO(ctx, r)
	}
	return s.scoreAssert(ctx, r)
}

// scoreAssert runs a HumanEval-style submission.
func (s *Scorer) scoreAssert(ctx context.Context, r *scorers.Rollout) scorers.Result {
	test, found, err := scorers.String(r, s.p.TestsField)
	if err != nil {
		return scorers.Errorf("%v", err)
	}
	if !found || strings.TrimSpace(test) == "" {
		return scorers.Skip(fmt.Sprintf("row has no %q test code", s.p.TestsField))
	}
	entry, found, err := scorers.String(r, s.p.EntryPointField)
	if err != nil {
		return scorers.Errorf("%v", err)
	}
	if !found || entry == "" {
		return scorers.Errorf("row has tests but no %q", s.p.EntryPointField)
	}
	if s.unavailable != nil {
		return scorers.Errorf("code execution unavailable: %v", s.unavailable)
	}
	code, err := s.program(r)
	if err != nil {
		return scorers.Errorf("%v", err)
	}
	prompt, err := s.trustedPrompt(r)
	if err != nil {
		return scorers.Errorf("%v", err)
	}
	job := sandbox.Job{Style: sandbox.Assert, Code: code, Test: test, EntryPoint: entry, Prompt: prompt, Limits: s.p.Limits}
	if *s.p.RestorePromptHelpers {
		if job.Helpers, err = s.helpers(r); err != nil {
			return scorers.Errorf("%v", err)
		}
	}
	res, err := s.runner.Run(ctx, job)
	if err != nil {
		return runError(ctx, err)
	}
	to := fromSandbox(0, res.Tests[0])
	if to.verdict != scorers.Accepted && s.p.PrefixField == "" && startsIndented(code) {
		// A function's body alone: the completion continues the prompt,
		// which no one put before it.
		to.detail += "; the program starts indented, as a function's body continuing the prompt does: prefix_field (prompt) puts the prompt before it"
	}
	return s.summarize(outcome{tests: []testOutcome{to}, total: 1})
}

// program is the rollout's program, its row's prefix before it.
func (s *Scorer) program(r *scorers.Rollout) (string, error) {
	code := programIn(r.Completion, s.lang.Names())
	if s.p.PrefixField != "" {
		prefix, err := s.prefix(r)
		if err != nil {
			return "", err
		}
		code = prefix + code
	}
	return code, nil
}

// prefix is the code the row puts before the program (PrefixField is
// set): the row field PrefixField, else, when that is "prompt", the
// rollout's prompt. A row with neither is an error.
func (s *Scorer) prefix(r *scorers.Rollout) (string, error) {
	prefix, found, err := scorers.String(r, s.p.PrefixField)
	switch {
	case err != nil:
		return "", err
	case found:
		return prefix, nil
	case s.p.PrefixField == "prompt" && r.Prompt != "":
		return r.Prompt, nil
	case s.p.PrefixField == "prompt":
		return "", errors.New(`prefix_field is "prompt", but the row has no field "prompt" and the rollout no prompt to put before the program`)
	}
	return "", fmt.Errorf("the row has no %q to put before the program (prefix_field)", s.p.PrefixField)
}

// startsIndented says whether the first line of python code that is
// neither blank nor a comment starts with a space or a tab: python
// refuses such a program (IndentationError).
func startsIndented(code string) bool {
	for line := range strings.Lines(code) {
		if rest := strings.TrimLeft(line, " \t"); rest != "" && rest[0] != '\n' && rest[0] != '\r' && rest[0] != '#' {
			return len(rest) < len(line)
		}
	}
	return false
}

// trustedPrompt is the code of the task's prompt, whose definitions the
// assert tests see before the program's (sandbox.Job.Prompt): the prefix
// (see prefix) when PrefixField is set, else, with TrustedPrompt, the
// code of the prompt the model saw, taken as the program is taken from the
// completion (a chat turn may fence it); else none.
func (s *Scorer) trustedPrompt(r *scorers.Rollout) (string, error) {
	switch {
	case s.p.PrefixField != "":
		return s.prefix(r)
	case s.p.TrustedPrompt:
		return programIn(r.Prompt, s.lang.Names()), nil
	}
	return "", nil
}

// helpers is the code of the task's prompt whose helpers the program's
// process defines again (Params.RestorePromptHelpers): the row field
// PrefixField when it is set, else the code of the prompt the model saw.
func (s *Scorer) helpers(r *scorers.Rollout) (string, error) {
	if s.p.PrefixField != "" {
		return s.prefix(r)
	}
	return programIn(r.Prompt, s.lang.Names()), nil
}

// runError is the Result of a run the sandbox could not do.
func runError(ctx context.Context, err error) scorers.Result {
	if ctx.Err() != nil {
		return scorers.Errorf("cancelled: %v", ctx.Err())
	}
	return scorers.Errorf("%v", err)
}

// Program returns the python code in a completion: its last fenced block
// tagged python (or untagged), or the whole completion when it has none.
func Program(completion string) string {
	return programIn(completion, []string{"python", "py", "python3"})
}

// programIn returns the code in a completion: its last fenced block tagged
// with one of tags (any case) or with no tag, or the whole completion when
// it has none.
func programIn(completion string, tags []string) string {
	var last string
	found := false
	inCode, inOther := false, false
	start := 0
	ours := func(lang string) bool {
		if lang == "" {
			return true
		}
		for _, t := range tags {
			if strings.EqualFold(lang, t) {
				return true
			}
		}
		return false
	}
	for pos := 0; pos < len(completion); {
		line, next := completion[pos:], len(completion)
		if end := strings.IndexByte(line, '\n'); end >= 0 {
			line, next = line[:end], pos+end+1
		}
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			lang := strings.TrimSpace(fence)
			switch {
			case inCode && lang == "":
				last, found, inCode = completion[start:pos], true, false
			case inOther && lang == "":
				inOther = false
			case !inCode && !inOther:
				if ours(lang) {
					inCode, start = true, next
				} else {
					inOther = true
				}
			}
		}
		pos = next
	}
	switch {
	case inCode: // cut off before its closing fence
		return completion[start:]
	case found:
		return last
	}
	return completion
}

func ptr[T any](v T) *T { return &v }
