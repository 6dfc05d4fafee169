package codeexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// pool starts one sandbox pool for the test, running python and
// languages, and closes it at the end.
func pool(t testing.TB, languages ...string) *sandbox.Pool {
	t.Helper()
	sandboxtest.SkipUnlessRoot(t)
	sandboxtest.SkipUnlessAvailable(t, languages...)
	p, err := sandbox.Start(context.Background(), sandbox.Config{Slots: 2, Languages: append([]string{"python"}, languages...)})
	if err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func newScorer(t testing.TB, p codeexec.Params, r codeexec.Runner) *codeexec.Scorer {
	t.Helper()
	s, err := codeexec.New(p, func() (codeexec.Runner, error) { return r, nil })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func humanEvalRollout(r scorertest.HumanEvalRow, completion string) *scorers.Rollout {
	return &scorers.Rollout{ID: r.TaskID, Prompt: r.Prompt, Completion: completion, Fields: map[string]*structpb.Value{
		"test": structpb.NewStringValue(r.Test), "entry_point": structpb.NewStringValue(r.EntryPoint),
	}}
}

// scoreAll scores rollouts two at a time, as the engine's workers would.
func scoreAll(s scorers.Scorer, rollouts []*scorers.Rollout) []scorers.Result {
	out := make([]scorers.Result, len(rollouts))
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(rollouts); i += 2 {
				out[i] = s.Score(context.Background(), rollouts[i])
			}
		})
	}
	wg.Wait()
	return out
}

// TestHumanEval: every canonical solution scores 1; with each body replaced
// by `return None` every program scores what plain Python says it should
// (its asserts run by `python3 -c`, pass when it exits 0).
func TestHumanEval(t *testing.T) {
	rows := scorertest.HumanEval(t)
	s := newScorer(t, codeexec.Params{TestStyle: "assert", Scoring: "all", TrustedPrompt: true}, pool(t))

	var good, wrong []*scorers.Rollout
	for _, r := range rows {
		good = append(good, humanEvalRollout(r, "Here you go:\n```python\n"+r.Prompt+r.CanonicalSolution+"```\n"))
		wrong = append(wrong, humanEvalRollout(r, "```python\n"+r.Prompt+"    return None\n```"))
	}
	for i, res := range scoreAll(s, good) {
		if res.Outcome != scorers.OK || res.Value != 1 {
			t.Errorf("%s canonical: %+v, want 1", rows[i].TaskID, res)
		}
	}

	plain := plainPython(t, rows, func(r scorertest.HumanEvalRow) string { return r.Prompt + "    return None\n" })
	passing := 0
	for i, res := range scoreAll(s, wrong) {
		want := 0.0
		if plain[i] {
			want, passing = 1, passing+1
		}
		if res.Outcome != scorers.OK || res.Value != want {
			t.Errorf("%s with `return None`: %+v, plain Python says %v", rows[i].TaskID, res, want)
		}
	}
	t.Logf("with `return None`: %d of 164 pass in plain Python and in rewardd", passing)
}

// TestHumanEvalContinuation: with prefix_field: prompt, a completion that
// continues the prompt (the function's body alone, as base models are
// evaluated on HumanEval) scores as prompt + completion does, on rows as
// JSONL, TRL and reward.v1 give them: the prompt in the rollout, no field
// "prompt". Every canonical body scores 1, a body that raises 0, and a
// chat-style completion (a fenced whole function) still scores 1. A row
// without its prefix is an Error naming prefix_field, and a body scored
// without a prefix says why it fails.
func TestHumanEvalContinuation(t *testing.T) {
	rows := scorertest.HumanEval(t)
	p := pool(t)
	s := newScorer(t, codeexec.Params{TestStyle: "assert", Scoring: "all", PrefixField: "prompt"}, p)

	var body, raises, chat []*scorers.Rollout
	for _, r := range rows {
		body = append(body, humanEvalRollout(r, r.CanonicalSolution))
		raises = append(raises, humanEvalRollout(r, "    raise NotImplementedError\n"))
		chat = append(chat, humanEvalRollout(r, "Here you go:\n```python\n"+r.Prompt+r.CanonicalSolution+"```\n"))
	}
	for _, c := range []struct {
		form     string
		rollouts []*scorers.Rollout
		want     float64
	}{{"canonical body", body, 1}, {"body that raises", raises, 0}, {"chat, whole function", chat, 1}} {
		for i, res := range scoreAll(s, c.rollouts) {
			if res.Outcome != scorers.OK || res.Value != c.want {
				t.Errorf("%s %s: %+v, want OK %v", rows[i].TaskID, c.form, res, c.want)
			}
		}
	}

	r := rows[0]
	noPrompt := humanEvalRollout(r, r.CanonicalSolution)
	noPrompt.Prompt = ""
	if res := s.Score(context.Background(), noPrompt); res.Outcome != scorers.Error || !strings.Contains(res.Reason, "prefix_field") {
		t.Errorf("no prompt to put before the body: %+v, want an Error naming prefix_field", res)
	}
	other := newScorer(t, codeexec.Params{TestStyle: "assert", PrefixField: "code_prefix"}, p)
	if res := other.Score(context.Background(), humanEvalRollout(r, r.CanonicalSolution)); res.Outcome != scorers.Error || !strings.Contains(res.Reason, `"code_prefix"`) {
		t.Errorf("no field code_prefix: %+v, want an Error naming it", res)
	}
	unprefixed := newScorer(t, codeexec.Params{TestStyle: "assert", TrustedPrompt: true}, p)
	res := unprefixed.Score(context.Background(), humanEvalRollout(r, r.CanonicalSolution))
	if res.Outcome != scorers.OK || res.Value != 0 || !strings.Contains(res.Reason, "starts indented") || !strings.Contains(res.Reason, "prefix_field") {
		t.Errorf("a body without its prompt: %+v, want OK 0 with a reason saying it starts indented and naming prefix_field", res)
	}
}

// plainPython runs each row's program and check(entry_point) with
// /usr/bin/python3 -c, two at a time, and says which exit 0.
func plainPython(t *testing.T, rows []scorertest.HumanEvalRow, program func(scorertest.HumanEvalRow) string) []bool {
	t.Helper()
	out := make([]bool, len(rows))
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(rows); i += 2 {
				r := rows[i]
				src := program(r) + "\n" + r.Test + fmt.Sprintf("\ncheck(%s)\n", r.EntryPoint)
				ctx, cancel := context.WithTimeout(context.Background(), 20_000_000_000)
				err := exec.CommandContext(ctx, "/usr/bin/python3", "-c", src).Run()
				cancel()
				var exit *exec.ExitError
				if err != nil && !errors.As(err, &exit) {
					t.Errorf("%s: run plain Python: %v", r.TaskID, err)
				}
				out[i] = err == nil
			}
		})
	}
	wg.Wait()
	return out
}

// TestIOPartialCredit: a program right on some cases and wrong on others
// scores exactly the fraction it gets right, and 0 with scoring: all.
func TestIOPartialCredit(t *testing.T) {
	p := pool(t)
	// Right for non-negative n, wrong for negative n, crashes on junk.
	program := "```python\nn = int(input())\nprint(n * 2 if n >= 0 else n)\n```"
	cases := []any{
		map[string]any{"stdin": "1\n", "stdout": "2\n"},
		map[string]any{"stdin": "21", "stdout": "42   \n\n"}, // trailing whitespace and blank lines do not count
		map[string]any{"stdin": "-3\n", "stdout": "-6\n"},
		map[string]any{"stdin": "x\n", "stdout": "0\n"},
		map[string]any{"stdin": "0\n", "stdout": "0\n0\n"}, // one line too few
	}
	tests, err := structpb.NewList(cases)
	if err != nil {
		t.Fatal(err)
	}
	r := &scorers.Rollout{Completion: program, Fields: map[string]*structpb.Value{"tests": structpb.NewListValue(tests)}}

	frac := newScorer(t, codeexec.Params{TestStyle: "io"}, p).Score(context.Background(), r)
	if frac.Outcome != scorers.OK || frac.Value != 2.0/5 {
		t.Errorf("fraction: %+v, want OK 2/5 = 0.4", frac)
	}
	if !strings.HasPrefix(frac.Reason, "2/5 tests passed; test 3: WA: wrong output") {
		t.Errorf("fraction reason %q does not name the first failing test", frac.Reason)
	}
	all := newScorer(t, codeexec.Params{TestStyle: "io", Scoring: "all"}, p).Score(context.Background(), r)
	if all.Outcome != scorers.OK || all.Value != 0 {
		t.Errorf("all: %+v, want OK 0", all)
	}

	// The same cases as APPS stores them: a JSON string of inputs/outputs.
	apps, _ := json.Marshal(map[string]any{
		"inputs":  []string{"1\n", "21", "-3\n", "x\n", "0\n"},
		"outputs": []string{"2\n", "42   \n\n", "-6\n", "0\n", "0\n0\n"},
	})
	r.Fields = map[string]*structpb.Value{"input_output": structpb.NewStringValue(string(apps))}
	got := newScorer(t, codeexec.Params{TestStyle: "io", TestsField: "input_output"}, p).Score(context.Background(), r)
	if got.Outcome != scorers.OK || got.Value != 2.0/5 {
		t.Errorf("APPS form: %+v, want OK 0.4", got)
	}

	// Ten cases of which seven pass: an exact 0.7.
	var ten []any
	for n := -3; n < 7; n++ {
		ten = append(ten, map[string]any{"stdin": fmt.Sprint(n), "stdout": fmt.Sprint(2 * n)})
	}
	tl, _ := structpb.NewList(ten)
	r.Fields = map[string]*structpb.Value{"tests": structpb.NewListValue(tl)}
	got = newScorer(t, codeexec.Params{TestStyle: "io"}, p).Score(context.Background(), r)
	if got.Outcome != scorers.OK || got.Value != 0.7 {
		t.Errorf("ten cases: %+v, want OK 0.7", got)
	}
}

// TestOutcomes: rows without tests are NotApplicable; broken rows, broken
// test code and an unavailable sandbox are Errors naming the problem; a
// failing program is OK with a low score.
func TestOutcomes(t *testing.T) {
	p := pool(t)
	assert := newScorer(t, codeexec.Params{TestStyle: "assert"}, p)
	io := newScorer(t, codeexec.Params{TestStyle: "io"}, p)
	ctx := context.Background()
	str := structpb.NewStringValue

	cases := []struct {
		name    string
		s       scorers.Scorer
		r       *scorers.Rollout
		outcome scorers.Outcome
		value   float64
		reason  string
	}{
		{"no tests", assert, &scorers.Rollout{Completion: "x = 1"}, scorers.NotApplicable, math.NaN(), `row has no "test" test code`},
		{"no io tests", io, &scorers.Rollout{Completion: "x = 1"}, scorers.NotApplicable, math.NaN(), `row has no "tests" tests`},
		{"no entry point", assert, &scorers.Rollout{Completion: "x = 1", Fields: map[string]*structpb.Value{"test": str("def check(c): pass")}},
			scorers.Error, math.NaN(), `row has tests but no "entry_point"`},
		{"tests not JSON", io, &scorers.Rollout{Completion: "x = 1", Fields: map[string]*structpb.Value{"tests": str("[{")}},
			scorers.Error, math.NaN(), `field "tests": not JSON tests`},
		{"test code broken", assert, &scorers.Rollout{Completion: "def f(): return 1", Fields: map[string]*structpb.Value{
			"test": str("def check(c):\n  assert c() ==\n"), "entry_point": str("f")}},
			scorers.Error, math.NaN(), "the row's tests are broken, not the program: test code does not compile"},
		{"wrong function name", assert, &scorers.Rollout{Completion: "def g(): return 1", Fields: map[string]*structpb.Value{
			"test": str("def check(c):\n  assert c() == 1\n"), "entry_point": str("f")}},
			scorers.OK, 0, "0/1 tests passed; test 1: WA: program defines no function 'f'"},
		{"exit before asserts", assert, &scorers.Rollout{Completion: "import sys\ndef f(): return 2\nsys.exit(0)", Fields: map[string]*structpb.Value{
			"test": str("def check(c):\n  assert c() == 1\n"), "entry_point": str("f")}},
			scorers.OK, 0, "0/1 tests passed; test 1: WA: program raised SystemExit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.s.Score(ctx, c.r)
			if got.Outcome != c.outcome || (c.outcome == scorers.OK && got.Value != c.value) || !strings.HasPrefix(got.Reason, c.reason) {
				t.Errorf("got %+v (%s), want %s %v %q…", got, got.Outcome, c.outcome, c.value, c.reason)
			}
		})
	}

	t.Run("sandbox unavailable", func(t *testing.T) {
		s, err := codeexec.New(codeexec.Params{TestStyle: "assert"}, func() (codeexec.Runner, error) {
			return nil, errors.New("sandbox: needs root")
		})
		if err != nil {
			t.Fatal(err)
		}
		got := s.Score(ctx, &scorers.Rollout{Completion: "def f(): return 1", Fields: map[string]*structpb.Value{
			"test": str("def check(c): assert c() == 1"), "entry_point": str("f")}})
		if got.Outcome != scorers.Error || got.Reason != "code execution unavailable: sandbox: needs root" {
			t.Errorf("got %+v, want an Error saying the sandbox is unavailable and why", got)
		}
	})
}

// TestConformance runs the shared scorer contract with a real sandbox.
func TestConformance(t *testing.T) {
	p := pool(t)
	str := structpb.NewStringValue
	assertRow := func(completion string) *scorers.Rollout {
		return &scorers.Rollout{Completion: completion, Fields: map[string]*structpb.Value{
			"test": str("def check(c):\n  assert c(2) == 4\n  assert c(3) == 6\n"), "entry_point": str("f")}}
	}
	rollouts := []*scorers.Rollout{
		assertRow("```python\ndef f(x):\n    return 2 * x\n```"),
		assertRow("def f(x):\n    return x * x\n"),
		assertRow("```python\nwhile True: pass\n```"),
		assertRow("not python at all"),
	}
	s := newScorer(t, codeexec.Params{TestStyle: "assert", Limits: sandbox.Limits{CPUSeconds: 0.5, WallSeconds: 1}}, p)
	scorertest.Run(t, s, scorertest.Unit, rollouts, "test", "entry_point")
}

func TestParams(t *testing.T) {
	_, canonical, err := scorertest.Compile(codeexec.Kind(nil), "test_style: io\nlimits: {wall_seconds: 3}")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tests_field: tests", "scoring: fraction", "cpu_seconds: 2", "wall_seconds: 3", "memory_mb: 512", "total_output_kb: 16384"} {
		if !strings.Contains(string(canonical), want) {
			t.Errorf("canonical parameters lack %q (defaults must be part of the fingerprint):\n%s", want, canonical)
		}
	}
	// The total output follows output_kb unless set, and an inline
	// function's may not exceed the server's.
	max := sandbox.DefaultLimits().WithDefaults(sandbox.Limits{})
	for src, want := range map[string]string{
		"test_style: io\nlimits: {output_kb: 64}":          "total_output_kb: 1024",
		"test_style: io\nlimits: {total_output_kb: 100}":   "total_output_kb: 100",
		"test_style: io\nlimits: {output_kb: 8192}":        "total_output_kb: 65536",
		"test_style: io\nlimits: {total_output_kb: 20000}": "",
	} {
		s, canonical, err := scorertest.Compile(codeexec.Kind(nil), src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if !strings.Contains(string(canonical), want) {
			t.Errorf("%q: canonical parameters lack %q:\n%s", src, want, canonical)
		}
		err = s.(*codeexec.Scorer).LimitsWithin(max)
		if above := strings.Contains(src, "20000") || strings.Contains(src, "8192"); above != (err != nil) || above && !strings.Contains(err.Error(), "output") {
			t.Errorf("%q within the default limits: %v", src, err)
		}
	}
}

func TestProgram(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"x = 1", "x = 1"},
		{"text\n```python\na = 1\n```\nmore\n```\nb = 2\n```\nend", "b = 2\n"},
		{"```py\na\n```\n```bash\nrm -rf /\n```", "a\n"},
		{"```python\nfirst\n```\n```python\ncut off", "cut off"},
		{"```python3\n  x\n```", "  x\n"},
		{"```\n```", ""},
		{"  ```python\nindented fence\n  ```", "indented fence\n"},
		{"```json\n{}\n```", "```json\n{}\n```"},
	} {
		if got := codeexec.Program(c.in); got != c.want {
			t.Errorf("Program(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzProgram: extraction never panics and returns a part of the completion.
func FuzzProgram(f *testing.F) {
	for _, s := range []string{"```python\nx\n```", "```\n", "a```b\n```c", "```python\n```python\n```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := codeexec.Program(s); !strings.Contains(s, got) {
			t.Fatalf("Program(%q) = %q, not part of it", s, got)
		}
	})
}

// BenchmarkHumanEval scores HumanEval rollouts through a real sandbox, two
// at a time as the engine's workers would: every problem's canonical
// solution and, for one in four, its body replaced by `return None`. One
// op is one submission; submissions/s is what the bench's humaneval
// scenario reports, without the gRPC server and the naive runner.
func BenchmarkHumanEval(b *testing.B) {
	rows := scorertest.HumanEval(b)
	var rollouts []*scorers.Rollout
	for i, r := range rows {
		body := r.CanonicalSolution
		if i%4 == 3 {
			body = "    return None\n"
		}
		rollouts = append(rollouts, humanEvalRollout(r, "```python\n"+r.Prompt+body+"```\n"))
	}
	for _, slots := range []int{1, 2} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			sandboxtest.SkipUnlessRoot(b)
			var before syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
			p, err := sandbox.Start(context.Background(), sandbox.Config{Slots: slots})
			if err != nil {
				b.Fatalf("start sandbox: %v", err)
			}
			// The other languages are probed after Start: their probes'
			// CPU is not the benchmark's.
			if err := p.Await(context.Background(), p.Probing()...); err != nil {
				b.Fatal(err)
			}
			s := newScorer(b, codeexec.Params{TestStyle: "assert", Scoring: "all"}, p)
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range slots {
				wg.Go(func() {
					for i := w; i < b.N; i += slots {
						if res := s.Score(context.Background(), rollouts[i%len(rollouts)]); res.Outcome != scorers.OK {
							b.Errorf("%s: %+v", rollouts[i%len(rollouts)].ID, res)
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "submissions/s")
			// The fork servers' CPU, and that of every program they
			// reaped, counts here once Close has reaped them.
			p.Close()
			var after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
			cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "sandbox-cpu-ms/op")
		})
	}
}

// TestHumanEvalHelpersFromPrompt: HumanEval/32's and /38's tests call a
// helper the prompt defines (poly, encode_cyclic). A program that
// redefines that helper so that the check passes without solving must
// score 0, the canonical solution 1, whether the trusted prompt is the
// rollout's (plain, or fenced in a chat turn) or the row field
// prefix_field names.
func TestHumanEvalHelpersFromPrompt(t *testing.T) {
	p := pool(t)
	plain := newScorer(t, codeexec.Params{TestStyle: "assert", Scoring: "all", TrustedPrompt: true}, p)
	prefixed := newScorer(t, codeexec.Params{TestStyle: "assert", Scoring: "all", PrefixField: "prompt"}, p)
	// What each hack redefines: the helper, to something the stub then
	// satisfies without solving the problem.
	hacks := map[string]string{
		"HumanEval/32": "    return 0.0\n\n\ndef poly(xs, x):\n    return 0.0\n",
		"HumanEval/38": "    return s\n\n\ndef encode_cyclic(s):\n    return s\n",
	}
	for _, id := range []string{"HumanEval/32", "HumanEval/38"} {
		r := scorertest.HumanEvalTask(t, id)
		for _, c := range []struct {
			form    string
			s       *codeexec.Scorer
			rollout func(body string) *scorers.Rollout
		}{
			{"prompt", plain, func(body string) *scorers.Rollout {
				return humanEvalRollout(r, "```python\n"+r.Prompt+body+"```\n")
			}},
			{"chat prompt", plain, func(body string) *scorers.Rollout {
				ro := humanEvalRollout(r, "Here it is:\n```python\n"+r.Prompt+body+"```\n")
				ro.Prompt = "<|user|>\nComplete the function.\n```python\n" + r.Prompt + "```\n<|assistant|>\n"
				return ro
			}},
			{"prefix_field", prefixed, func(body string) *scorers.Rollout {
				ro := humanEvalRollout(r, body)
				ro.Prompt = "Complete the code."
				ro.Fields["prompt"] = structpb.NewStringValue(r.Prompt)
				return ro
			}},
		} {
			t.Run(id+"/"+c.form, func(t *testing.T) {
				if got := c.s.Score(context.Background(), c.rollout(r.CanonicalSolution)); got.Outcome != scorers.OK || got.Value != 1 {
					t.Errorf("canonical solution: %+v, want OK 1", got)
				}
				if got := c.s.Score(context.Background(), c.rollout(hacks[id])); got.Outcome != scorers.OK || got.Value != 0 {
					t.Errorf("REWARD HACK: a stub with the helper redefined: %+v, want OK 0", got)
				}
			})
		}
	}
}

// TestHumanEvalHelpersRestored: with the default parameters (no trusted
// prompt), the helpers of the rollout's prompt are defined again after
// the program ran, so the helper redefinitions of
// TestHumanEvalHelpersFromPrompt score 0, and so do programs that patch
// what the helper uses (the module it imports, a builtin); the canonical
// solutions score 1. Turned off, the redefinition passes: what `rewardd
// check` warns of.
func TestHumanEvalHelpersRestored(t *testing.T) {
	p := pool(t)
	safe := newScorer(t, codeexec.Params{TestStyle: "assert", Scoring: "all"}, p)
	off := newScorer(t, codeexec.Params{TestStyle: "assert", Scoring: "all", RestorePromptHelpers: new(bool)}, p)
	hacks := map[string][]string{
		"HumanEval/32": {
			"    return 0.0\n\n\ndef poly(xs, x):\n    return 0.0\n",
			"    return 0.0\n\n\nimport math\nmath.pow = lambda x, y: 0.0\n",
		},
		"HumanEval/38": {
			"    return s\n\n\ndef encode_cyclic(s):\n    return s\n",
			"    return s\n\n\nimport builtins\nbuiltins.min = lambda *a: 0\n",
		},
	}
	for _, id := range []string{"HumanEval/32", "HumanEval/38"} {
		r := scorertest.HumanEvalTask(t, id)
		for _, form := range []struct {
			name   string
			prompt string
		}{
			{"prompt", r.Prompt},
			{"chat prompt", "<|user|>\nComplete the function.\n```python\n" + r.Prompt + "```\n<|assistant|>\n"},
		} {
			rollout := func(body string) *scorers.Rollout {
				ro := humanEvalRollout(r, "```python\n"+r.Prompt+body+"```\n")
				ro.Prompt = form.prompt
				return ro
			}
			t.Run(id+"/"+form.name, func(t *testing.T) {
				if got := safe.Score(context.Background(), rollout(r.CanonicalSolution)); got.Outcome != scorers.OK || got.Value != 1 {
					t.Errorf("canonical solution: %+v, want OK 1", got)
				}
				for i, hack := range hacks[id] {
					if got := safe.Score(context.Background(), rollout(hack)); got.Outcome != scorers.OK || got.Value != 0 {
						t.Errorf("REWARD HACK %d: %+v, want OK 0", i, got)
					}
				}
				if got := off.Score(context.Background(), rollout(hacks[id][0])); got.Outcome != scorers.OK || got.Value != 1 {
					t.Errorf("restore_prompt_helpers: false, the redefinition: %+v, want OK 1 (nothing restored)", got)
				}
			})
		}
	}
}
