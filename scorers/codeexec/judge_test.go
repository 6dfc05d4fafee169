package codeexec_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// row is a dataset row with io tests (stdin → stdout) and other fields.
func row(completion string, tests [][2]string, fields map[string]any) *scorers.Rollout {
	var list []any
	for _, t := range tests {
		list = append(list, map[string]any{"stdin": t[0], "stdout": t[1]})
	}
	all := map[string]any{"tests": list}
	for k, v := range fields {
		all[k] = v
	}
	s, err := structpb.NewStruct(all)
	if err != nil {
		panic(err)
	}
	return &scorers.Rollout{Completion: completion, Fields: s.GetFields()}
}

// doublingTests: read n, print 2n.
var doublingTests = [][2]string{{"1\n", "2\n"}, {"21\n", "42\n"}, {"-3\n", "-6\n"}}

// TestJudgedVerdicts: through the scorer, programs in C++ and Python that
// are right, wrong, too slow, too big, crash, print too much or do not
// compile get AC, WA, TLE, MLE, RE, OLE or CE, a score, a reason naming
// the first failing test and its verdict, and an Execution with every
// test's verdict, CPU time and memory.
func TestJudgedVerdicts(t *testing.T) {
	p := pool(t, "cpp")
	cases := []struct {
		lang, name, src string
		want            scorers.Verdict
		value           float64
		reason          string
	}{
		{"cpp", "right", "#include <bits/stdc++.h>\nint main() { long long n; std::cin >> n; std::cout << 2 * n << \"\\n\"; }", scorers.Accepted, 1, "3/3 tests passed"},
		{"cpp", "wrong on one", "#include <bits/stdc++.h>\nint main() { long long n; std::cin >> n; std::cout << (n == 21 ? 41 : 2 * n); }", scorers.WrongAnswer, 2.0 / 3, "2/3 tests passed; test 2: WA: wrong output"},
		{"cpp", "slow", "int main() { volatile long x = 0; for (;;) x++; }", scorers.TimeLimitExceeded, 0, "0/3 tests passed; test 1: TLE: time limit reached (0.50 s CPU per test)"},
		{"cpp", "big", "#include <bits/stdc++.h>\nint main() { std::vector<long> v(1L << 28, 1); std::cout << v[3]; }", scorers.MemoryLimitExceeded, 0, "0/3 tests passed; test 1: MLE"},
		{"cpp", "crash", "#include <cstdlib>\nint main() { std::abort(); }", scorers.RuntimeError, 0, "0/3 tests passed; test 1: RE: killed by signal SIGABRT"},
		{"cpp", "chatty", "#include <cstdio>\nint main() { for (;;) std::puts(\"2\"); }", scorers.OutputLimitExceeded, 0, "0/3 tests passed; test 1: OLE"},
		{"cpp", "does not compile", "int main() { return undefined_thing; }", scorers.CompilationError, 0, "0/3 tests passed; CE: main.cpp: In function 'int main()':\nmain.cpp:1:21: error: 'undefined_thing' was not declared in this scope"},
		{"cpp", "template explosion", "template <int N> struct F { static const int v = F<N - 1>::v + F<N - 2>::v; };\ntemplate <> struct F<0> { static const int v = 0; };\ntemplate <> struct F<1> { static const int v = 1; };\nint main() { return F<100000>::v; }", scorers.CompilationError, 0, "0/3 tests passed; CE: "},
		{"python", "right", "print(2 * int(input()))", scorers.Accepted, 1, "3/3 tests passed"},
		{"python", "slow", "while True:\n    pass", scorers.TimeLimitExceeded, 0, "0/3 tests passed; test 1: TLE: time limit reached (0.50 s CPU per test)"},
		{"python", "big", "x = bytearray(1 << 30)", scorers.MemoryLimitExceeded, 0, "0/3 tests passed; test 1: MLE"},
		{"python", "raises", "n = int(input())\nprint(2 * n if n > 0 else n // 0)", scorers.RuntimeError, 2.0 / 3, "2/3 tests passed; test 3: RE: ZeroDivisionError: integer division or modulo by zero"},
		{"python", "chatty", "while True:\n    print(2)", scorers.OutputLimitExceeded, 0, "0/3 tests passed; test 1: OLE"},
	}
	scorer := map[string]*codeexec.Scorer{}
	for _, lang := range []string{"cpp", "python"} {
		scorer[lang] = newScorer(t, codeexec.Params{Language: lang, TestStyle: "io", TimeLimitSeconds: 0.5,
			Limits: sandbox.Limits{MemoryMB: 256, OutputKB: 64, WallSeconds: 20}}, p)
	}
	for _, c := range cases {
		t.Run(c.lang+" "+c.name, func(t *testing.T) {
			res := scorer[c.lang].Score(context.Background(), row(fmt.Sprintf("```%s\n%s\n```", c.lang, c.src), doublingTests, nil))
			if res.Outcome != scorers.OK || res.Value != c.value || !strings.HasPrefix(res.Reason, c.reason) {
				t.Errorf("got %v %v %q, want OK %v %q…", res.Outcome, res.Value, res.Reason, c.value, c.reason)
			}
			e := res.Execution
			if e == nil || e.Verdict != c.want || e.Language != c.lang || e.Total != 3 {
				t.Fatalf("execution %+v, want verdict %s in %s of 3 tests", e, c.want, c.lang)
			}
			if c.want == scorers.CompilationError {
				if len(e.Tests) != 0 || e.CompilerOutput == "" {
					t.Errorf("CE: %d tests ran, compiler output %q", len(e.Tests), e.CompilerOutput)
				}
				return
			}
			if len(e.Tests) != 3 {
				t.Fatalf("%d tests in the execution, want 3", len(e.Tests))
			}
			for k, te := range e.Tests {
				if te.Index != k || te.Wall <= 0 {
					t.Errorf("test %d: %+v", k, te)
				}
			}
		})
	}
}

// countingRunner counts the compiles and runs a Runner does.
type countingRunner struct {
	codeexec.Runner
	compiles, runs atomic.Int32
}

func (c *countingRunner) Compile(ctx context.Context, job sandbox.CompileJob) (*sandbox.Build, error) {
	c.compiles.Add(1)
	return c.Runner.Compile(ctx, job)
}

func (c *countingRunner) Run(ctx context.Context, job sandbox.Job) (sandbox.Result, error) {
	c.runs.Add(1)
	return c.Runner.Run(ctx, job)
}

// TestOncePerRequest: in one request (a memo, as the server gives each),
// a program repeated across a group compiles once and runs once however
// many rollouts carry it and however many workers score them; a program
// that differs only in its tests compiles once and runs twice; with no
// memo every rollout compiles and runs.
func TestOncePerRequest(t *testing.T) {
	p := pool(t, "cpp")
	counter := &countingRunner{Runner: p}
	s := newScorer(t, codeexec.Params{Language: "cpp", TestStyle: "io"}, counter)
	right := "```cpp\n#include <iostream>\nint main() { long long n; std::cin >> n; std::cout << 2 * n; }\n```"
	wrong := "```c++\n#include <iostream>\nint main() { long long n; std::cin >> n; std::cout << n; }\n```"
	var rollouts []*scorers.Rollout
	for i := range 8 {
		if i%4 == 3 {
			rollouts = append(rollouts, row(wrong, doublingTests, nil))
		} else {
			rollouts = append(rollouts, row(right, doublingTests, nil))
		}
	}
	rollouts = append(rollouts, row(right, doublingTests[:2], nil))
	score := func(ctx context.Context) []scorers.Result {
		out := make([]scorers.Result, len(rollouts))
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Go(func() {
				for i := w; i < len(rollouts); i += 3 {
					out[i] = s.Score(ctx, rollouts[i])
				}
			})
		}
		wg.Wait()
		return out
	}
	for i, res := range score(scorers.WithMemo(context.Background())) {
		want := 1.0
		if i%4 == 3 && i < 8 {
			want = 0
		}
		if res.Outcome != scorers.OK || res.Value != want {
			t.Errorf("rollout %d: %+v, want %v", i, res, want)
		}
	}
	if c, r := counter.compiles.Load(), counter.runs.Load(); c != 2 || r != 3 {
		t.Errorf("one request: %d compiles and %d runs, want 2 (distinct programs) and 3 (distinct programs and tests)", c, r)
	}
	counter.compiles.Store(0)
	counter.runs.Store(0)
	score(context.Background())
	if c, r := counter.compiles.Load(), counter.runs.Load(); c != 9 || r != 9 {
		t.Errorf("no memo: %d compiles and %d runs, want 9 of each", c, r)
	}
}

// kattisChecker accepts any positive divisor of the input's number (the
// Kattis convention: argv input answer feedback_dir, the output on stdin,
// 42 accepted, 43 wrong); it fails (exit 1) when the answer file says
// "broken".
const kattisChecker = `#include <bits/stdc++.h>
#include "util.h"
int main(int argc, char **argv) {
	std::ifstream in(argv[1]), ans(argv[2]);
	long long n, d; std::string a;
	in >> n; ans >> a;
	if (a == "broken") return 1;
	if (!(std::cin >> d) || d <= 0 || n % d) { std::cout << "not a divisor"; return WRONG; }
	return ACCEPTED;
}
`

// testlibChecker is the same under testlib's convention: argv input
// output answer; 0 accepted, 1 wrong.
const testlibChecker = `#include <bits/stdc++.h>
int main(int argc, char **argv) {
	std::ifstream in(argv[1]), out(argv[2]);
	long long n, d; in >> n;
	if (!(out >> d) || d <= 0 || n % d) { std::cerr << "wrong answer: not a divisor"; return 1; }
	return 0;
}
`

// TestSpecialChecker: a row's own checker, compiled in the sandbox, judges
// each output, in the Kattis and the testlib conventions; it reads the
// expected answer, the program never does; a checker that fails is an
// Error, never a wrong answer; a checker that does not compile is an
// Error too.
func TestSpecialChecker(t *testing.T) {
	p := pool(t, "cpp")
	tests := [][2]string{{"12\n", "6\n"}, {"7\n", "7\n"}, {"10\n", "5\n"}}
	program := "```python\nn = int(input())\nprint(n if n != 10 else 3)\n```" // 3 does not divide 10
	files := func(main, src string) map[string]any {
		return map[string]any{"main": main, "std": "c++17", "files": map[string]any{
			main: src, "util.h": "#define ACCEPTED 42\n#define WRONG 43\n"}}
	}
	for _, c := range []struct {
		protocol, src string
	}{{"kattis", kattisChecker}, {"testlib", testlibChecker}} {
		t.Run(c.protocol, func(t *testing.T) {
			s := newScorer(t, codeexec.Params{TestStyle: "io", CheckerField: "checker", CheckerProtocol: c.protocol}, p)
			r := row(program, tests, map[string]any{"checker": "special", "checker_files": files("check.cpp", c.src)})
			res := s.Score(context.Background(), r)
			if res.Outcome != scorers.OK || res.Value != 2.0/3 || !strings.HasPrefix(res.Reason, "2/3 tests passed; test 3: WA: the checker says: ") {
				t.Errorf("got %+v, want 2/3 with test 3 wrong", res)
			}
			if !strings.Contains(res.Reason, "not a divisor") {
				t.Errorf("the checker's message is not in the reason: %q", res.Reason)
			}
		})
	}
	s := newScorer(t, codeexec.Params{TestStyle: "io", Checker: "special"}, p)
	broken := row(program, [][2]string{{"12\n", "broken"}}, map[string]any{"checker_files": files("check.cpp", kattisChecker)})
	if res := s.Score(context.Background(), broken); res.Outcome != scorers.Error || !strings.Contains(res.Reason, "checker failed on test 1: exit status 1") {
		t.Errorf("a checker that fails: %+v, want an Error saying so", res)
	}
	bad := row(program, tests, map[string]any{"checker_files": files("check.cpp", "int main() { syntax error }")})
	if res := s.Score(context.Background(), bad); res.Outcome != scorers.Error || !strings.Contains(res.Reason, "checker does not compile") {
		t.Errorf("a checker that does not compile: %+v, want an Error saying so", res)
	}
	noFiles := row(program, tests, nil)
	if res := s.Score(context.Background(), noFiles); res.Outcome != scorers.Error || !strings.Contains(res.Reason, `"checker_files"`) {
		t.Errorf("no checker files: %+v, want an Error naming the field", res)
	}
}

// TestPolicies: fraction, all (cheapest tests first, stopping at the
// first failure), first_n, weighted_sum and ioi, on one program that
// fails the tests whose input is odd.
func TestPolicies(t *testing.T) {
	p := pool(t)
	program := "```python\nn = int(input())\nprint(2 * n if n % 2 == 0 else 0)\n```"
	var tests [][2]string
	for _, n := range []int{1000, 2, 4, 30000, 7, 600, 8} { // stdin lengths differ
		tests = append(tests, [2]string{fmt.Sprint(n), fmt.Sprint(2 * n)})
	}
	subtasks := []any{
		map[string]any{"points": 30, "tests": []any{1, 2}},    // all even
		map[string]any{"points": 50, "tests": []any{0, 4, 6}}, // 7 is odd
		map[string]any{"score": 20, "tests": []any{3, 5}},     // all even
	}
	r := row(program, tests, map[string]any{"subtasks": subtasks})
	for _, c := range []struct {
		params codeexec.Params
		value  float64
		ran    int
		reason string
	}{
		{codeexec.Params{}, 6.0 / 7, 7, "6/7 tests passed; test 5: WA"},
		// Cheapest first: 2, 4, 7 → stops at 7, the third test run.
		{codeexec.Params{Scoring: "all"}, 0, 3, "2/7 tests passed; test 5: WA"},
		{codeexec.Params{Scoring: "first_n", FirstN: new(4)}, 1, 4, "4/4 tests passed"},
		{codeexec.Params{Scoring: "first_n", FirstN: new(5)}, 0, 3, "2/5 tests passed; test 5: WA"},
		{codeexec.Params{Scoring: "weighted_sum"}, 0.1 * 6 / 7, 7, "6/7 tests passed"},
		{codeexec.Params{Scoring: "ioi"}, 0.5, 7, "6/7 tests passed; test 5: WA: wrong output; 50 of 100 points"},
	} {
		c.params.TestStyle = "io"
		res := newScorer(t, c.params, p).Score(context.Background(), r)
		if res.Outcome != scorers.OK || fmt.Sprintf("%.6f", res.Value) != fmt.Sprintf("%.6f", c.value) || !strings.HasPrefix(res.Reason, c.reason) {
			t.Errorf("%s: %v %v %q, want %v %q…", c.params.Scoring, res.Outcome, res.Value, res.Reason, c.value, c.reason)
		}
		if res.Execution == nil || len(res.Execution.Tests) != c.ran {
			t.Errorf("%s: %d tests ran, want %d", c.params.Scoring, len(res.Execution.Tests), c.ran)
		}
	}
	all := newScorer(t, codeexec.Params{TestStyle: "io", Scoring: "weighted_sum"}, p)
	if res := all.Score(context.Background(), row(program, tests[1:3], nil)); res.Value != 1.1 {
		t.Errorf("weighted_sum, every test passed: %v, want 1.1", res.Value)
	}
	ioi := newScorer(t, codeexec.Params{TestStyle: "io", Scoring: "ioi"}, p)
	for _, bad := range []any{
		nil,
		[]any{map[string]any{"points": 10, "tests": []any{9}}},
		[]any{map[string]any{"points": -1, "tests": []any{0}}},
		[]any{map[string]any{"points": 0, "tests": []any{0}}},
	} {
		fields := map[string]any{}
		if bad != nil {
			fields["subtasks"] = bad
		}
		if res := ioi.Score(context.Background(), row(program, tests, fields)); res.Outcome != scorers.Error || !strings.Contains(res.Reason, `"subtasks"`) {
			t.Errorf("subtasks %v: %+v, want an Error naming the field", bad, res)
		}
	}
}

// TestRowTimeLimit: a row's time limit applies to each of its tests, up to
// the function's cap: a row that asks for more is an Error naming both,
// never a higher limit.
func TestRowTimeLimit(t *testing.T) {
	p := pool(t)
	s := newScorer(t, codeexec.Params{TestStyle: "io", TimeLimitField: "time_limit_s", TimeLimitSeconds: 2, MaxTimeLimitSeconds: new(4.0),
		Limits: sandbox.Limits{CPUSeconds: 10, WallSeconds: 30}}, p)
	// Busy for 1 s of CPU per test.
	program := "```python\nimport time\nt = time.process_time()\nwhile time.process_time() - t < 1:\n    pass\nprint(1)\n```"
	tests := [][2]string{{"", "1"}}
	for _, c := range []struct {
		limit   any
		outcome scorers.Outcome
		value   float64
		reason  string
	}{
		{nil, scorers.OK, 1, "1/1 tests passed"},
		{3.0, scorers.OK, 1, "1/1 tests passed"},
		{0.5, scorers.OK, 0, "0/1 tests passed; test 1: TLE: time limit reached (0.50 s CPU per test)"},
		{4.5, scorers.Error, 0, `field "time_limit_s" asks for 4.5 s per test, over this function's max_time_limit_seconds 4 s`},
		{"2", scorers.Error, 0, `field "time_limit_s": want a number of seconds`},
		{0.0, scorers.Error, 0, `field "time_limit_s": 0 seconds`},
	} {
		fields := map[string]any{}
		if c.limit != nil {
			fields["time_limit_s"] = c.limit
		}
		res := s.Score(context.Background(), row(program, tests, fields))
		if res.Outcome != c.outcome || c.outcome == scorers.OK && res.Value != c.value || !strings.HasPrefix(res.Reason, c.reason) {
			t.Errorf("time limit %v: %v %v %q, want %v %v %q", c.limit, res.Outcome, res.Value, res.Reason, c.outcome, c.value, c.reason)
		}
	}
	// The factor scales the row's limit after the cap is checked.
	quarter := newScorer(t, codeexec.Params{TestStyle: "io", TimeLimitField: "time_limit_s", TimeLimitFactor: new(0.25), MaxTimeLimitSeconds: new(4.0),
		Limits: sandbox.Limits{CPUSeconds: 10, WallSeconds: 30}}, p)
	res := quarter.Score(context.Background(), row(program, tests, map[string]any{"time_limit_s": 3.0}))
	if want := "0/1 tests passed; test 1: TLE: time limit reached (0.75 s CPU per test)"; res.Reason != want {
		t.Errorf("a quarter of 3 s: %q, want %q", res.Reason, want)
	}
}

// TestLanguageParams: a language the sandbox does not run, or does not
// know, is refused when the function compiles, on key language.
func TestLanguageParams(t *testing.T) {
	p := pool(t) // python only
	for _, c := range []struct {
		params codeexec.Params
		key    string
		says   string
	}{
		{codeexec.Params{Language: "cpp", TestStyle: "io"}, "language", "does not run cpp"},
		{codeexec.Params{Language: "cobol", TestStyle: "io"}, "language", `unknown language "cobol"`},
		{codeexec.Params{Language: "cpp", TestStyle: "assert"}, "test_style", "assert tests are python's"},
		{codeexec.Params{TestStyle: "io", Checker: "special"}, "checker", "special checkers are C++"},
		{codeexec.Params{TestStyle: "io", Checker: "float:x"}, "checker", "tolerance"},
		{codeexec.Params{TestStyle: "io", FirstN: new(3)}, "first_n", "scoring: first_n"},
		{codeexec.Params{TestStyle: "io", TimeLimitSeconds: 5, MaxTimeLimitSeconds: new(2.0)}, "time_limit_seconds", "over max_time_limit_seconds"},
		{codeexec.Params{TestStyle: "io", CompileLimits: sandbox.Limits{CPUSeconds: 1}}, "compile_limits", "python is not compiled"},
	} {
		_, err := codeexec.New(c.params, func() (codeexec.Runner, error) { return p, nil })
		var pe *scorers.ParamError
		if !errors.As(err, &pe) || pe.Key != c.key || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: %v, want a ParamError on %s saying %q", c.params, err, c.key, c.says)
		}
	}
}

// TestConformanceIO runs the shared scorer contract on an io function with
// a row checker and time limit, scored by weighted_sum (0 to 1.1). (In
// C++ it takes a minute: the contract's junk rollouts each compile, four
// times over.)
func TestConformanceIO(t *testing.T) {
	p := pool(t, "cpp") // a row may ask for a special checker, which is C++
	s := newScorer(t, codeexec.Params{TestStyle: "io", Scoring: "weighted_sum", CheckerField: "checker",
		TimeLimitField: "time_limit_s", Limits: sandbox.Limits{WallSeconds: 10}}, p)
	fields := map[string]any{"checker": "float:1e-6", "time_limit_s": 0.5}
	rollouts := []*scorers.Rollout{
		row("```python\nprint(2 * float(input()) + 1e-9)\n```", doublingTests, fields),
		row("```python\nprint(input())\n```", doublingTests, fields),
		row("```python\nwhile True: pass\n```", doublingTests[:1], fields),
		row("```python\nnot python at all\n```", doublingTests, fields),
	}
	scorertest.Run(t, s, scorertest.Range{Min: 0, Max: 1.1}, rollouts, "tests", "checker", "time_limit_s")
}
