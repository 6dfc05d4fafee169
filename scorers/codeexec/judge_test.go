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

// countingRunner counts the compiles and runs a Runner does, and of the
// runs those under the judge's uid (checkers).
type countingRunner struct {
	codeexec.Runner
	compiles, runs, judged atomic.Int32
}

func (c *countingRunner) Compile(ctx context.Context, job sandbox.CompileJob) (*sandbox.Build, error) {
	c.compiles.Add(1)
	return c.Runner.Compile(ctx, job)
}

func (c *countingRunner) Run(ctx context.Context, job sandbox.Job) (sandbox.Result, error) {
	c.runs.Add(1)
	if job.Judge {
		c.judged.Add(1)
	}
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
	if res := s.Score(context.Background(), broken); res.Outcome != scorers.Error || !strings.Contains(res.Reason, "checker failed on test 1: exit status 1; on the jury's answer as the output too: exit status 1") {
		t.Errorf("a checker that fails on the jury's answer: %+v, want an Error saying so", res)
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

// scanfChecker is a Kattis output validator for "print a divisor of n"
// written as many are: it reads the jury's answer first (exit 1 when it
// says "broken"), then the output with scanf, never checking the read.
// "abc" or nothing leaves d at 0, and n % d traps (SIGFPE); a number past
// 10^18 (a 30-digit one reads as LLONG_MAX) trips its assert (SIGABRT).
const scanfChecker = `#include <cassert>
#include <cstdio>
#include <fstream>
#include <string>
int main(int argc, char **argv) {
	std::ifstream in(argv[1]), ans(argv[2]);
	long long n; std::string a;
	in >> n; ans >> a;
	if (a == "broken") return 1;
	long long x = 0;
	scanf("%lld", &x);
	assert(x < 1000000000000000000LL);
	volatile long long d = x;
	return n % d == 0 ? 42 : 43;
}
`

// testlibStyleChecker is a checker for "print the largest proper divisor
// of n" that ends as testlib's quitf does (testlib.h's exit codes, with
// ENABLE_UNEXPECTED_EOF): the jury's answer first (_fail, 3, when it is
// not a number), then the output: no token is _unexpected_eof (8), a
// token that is not a number _pe (2), a wrong divisor _wa (1), one larger
// than the jury's _fail (3: the jury is wrong), another token after it
// _dirt (4), "points" quitp (7). "throw" throws, as a checker written
// without testlib may: an uncaught exception (SIGABRT).
const testlibStyleChecker = `#include <bits/stdc++.h>
int main(int argc, char **argv) {
	std::ifstream in(argv[1]), out(argv[2]), ans(argv[3]);
	long long n, j; in >> n;
	if (!(ans >> j)) { std::cerr << "FAIL the jury's answer is not a number"; return 3; }
	std::string tok;
	if (!(out >> tok)) { std::cerr << "unexpected eof: a number expected"; return 8; }
	if (tok == "throw") throw std::runtime_error("no");
	if (tok == "points") { std::cerr << "points 0.5"; return 7; }
	char *end; errno = 0;
	long long d = std::strtoll(tok.c_str(), &end, 10);
	if (*end || errno || tok.empty()) { std::cerr << "wrong output format: expected a number, found " << tok; return 2; }
	if (d < 1 || d >= n || n % d) { std::cerr << "wrong answer: " << d << " is not a proper divisor"; return 1; }
	if (d > j) { std::cerr << "FAIL the participant's " << d << " beats the jury's " << j; return 3; }
	if (d < j) { std::cerr << "wrong answer: " << d << " is not the largest"; return 1; }
	if (out >> tok) { std::cerr << "wrong output format: extra information in the output file"; return 4; }
	return 0;
}
`

// byInput is a python program that prints, for each n it reads, the text
// outputs gives it.
func byInput(outputs map[int]string) string {
	var b strings.Builder
	b.WriteString("```python\nout = {")
	for n, o := range outputs {
		fmt.Fprintf(&b, "%d: %q, ", n, o)
	}
	b.WriteString("}\nprint(out[int(input())], end='')\n```")
	return b.String()
}

// TestSpecialCheckerOddEnds: a special checker that crashes, or exits
// outside its protocol's table, on the contestant's output ("abc", nothing,
// a 30-digit number) gives that test a wrong answer whose reason says how
// the checker ended, when the checker accepts the jury's answer on the
// same test; when it does not, the rollout is an Error naming the test.
// testlib's exit codes map as testlib's judges map them: 1, 2, 4 and 8 are
// wrong answers, 3 (_fail: the jury is wrong) and 7 (points) Errors, even
// where the jury's answer would be accepted.
func TestSpecialCheckerOddEnds(t *testing.T) {
	p := pool(t, "cpp")
	files := func(src string) map[string]any {
		return map[string]any{"main": "check.cpp", "std": "c++17", "files": map[string]any{"check.cpp": src}}
	}
	type want struct {
		verdict scorers.Verdict
		detail  string // a part of the test's detail
	}
	for _, c := range []struct {
		name, protocol, checker string
		tests                   [][2]string
		outputs                 map[int]string
		value                   float64
		want                    []want
	}{
		{"kattis, scanf", "kattis", scanfChecker,
			[][2]string{{"12\n", "6\n"}, {"10\n", "5\n"}, {"14\n", "7\n"}, {"16\n", "8\n"}, {"18\n", "9\n"}},
			map[int]string{12: "abc\n", 10: "", 14: "123456789012345678901234567890\n", 16: "3\n", 18: "9\n"},
			1.0 / 5, []want{
				{scorers.WrongAnswer, "the checker failed on the output (crashed: killed by signal SIGFPE), and accepts the jury's answer"},
				{scorers.WrongAnswer, "the checker failed on the output (crashed: killed by signal SIGFPE), and accepts the jury's answer"},
				{scorers.WrongAnswer, "the checker failed on the output (crashed: killed by signal SIGABRT: "},
				{scorers.WrongAnswer, "the checker says: wrong answer"},
				{scorers.Accepted, ""},
			}},
		{"testlib exit codes", "testlib", testlibStyleChecker,
			[][2]string{{"12\n", "6\n"}, {"18\n", "9\n"}, {"20\n", "10\n"}, {"24\n", "12\n"}, {"30\n", "15\n"}, {"36\n", "18\n"}},
			map[int]string{12: "6\n", 18: "3\n", 20: "abc\n", 24: "", 30: "15 15\n", 36: "throw\n"},
			1.0 / 6, []want{
				{scorers.Accepted, ""},
				{scorers.WrongAnswer, "the checker says: wrong answer: 3 is not the largest"},
				{scorers.WrongAnswer, "the checker says: wrong output format: expected a number, found abc"},
				{scorers.WrongAnswer, "the checker says: unexpected eof"},
				{scorers.WrongAnswer, "the checker says: wrong output format: extra information"},
				{scorers.WrongAnswer, "the checker failed on the output (crashed: killed by signal SIGABRT: "},
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScorer(t, codeexec.Params{TestStyle: "io", Checker: "special", CheckerProtocol: c.protocol}, p)
			res := s.Score(context.Background(), row(byInput(c.outputs), c.tests, map[string]any{"checker_files": files(c.checker)}))
			if res.Outcome != scorers.OK || res.Value != c.value {
				t.Fatalf("got %+v, want OK %v", res, c.value)
			}
			for k, w := range c.want {
				got := res.Execution.Tests[k]
				if got.Verdict != w.verdict || !strings.Contains(got.Detail, w.detail) {
					t.Errorf("test %d: %s %q, want %s %q", k+1, got.Verdict, got.Detail, w.verdict, w.detail)
				}
			}
		})
	}

	for _, c := range []struct {
		name, protocol, checker string
		test                    [2]string
		output                  string
		reason                  string
	}{
		{"kattis, the jury's answer broken", "kattis", scanfChecker, [2]string{"12\n", "broken\n"}, "abc",
			"the row's checker failed on test 1: exit status 1; on the jury's answer as the output too: exit status 1"},
		{"kattis, the jury's answer rejected", "kattis", scanfChecker, [2]string{"12\n", "7\n"}, "abc",
			"the row's checker failed on test 1: crashed: killed by signal SIGFPE; it rejects the jury's answer as an output: wrong answer"},
		{"testlib _fail, the jury is wrong", "testlib", testlibStyleChecker, [2]string{"12\n", "4\n"}, "6",
			"the row's checker failed on test 1: it says the jury is wrong (testlib's _fail, exit status 3: FAIL the participant's 6 beats the jury's 4)"},
		{"testlib _fail, the jury's answer unreadable", "testlib", testlibStyleChecker, [2]string{"12\n", "six\n"}, "6",
			"the row's checker failed on test 1: it says the jury is wrong (testlib's _fail, exit status 3: FAIL the jury's answer is not a number)"},
		{"testlib points", "testlib", testlibStyleChecker, [2]string{"12\n", "6\n"}, "points",
			"the row's checker failed on test 1: it gives points (testlib's _points, exit status 7: points 0.5), which code_exec does not score"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScorer(t, codeexec.Params{TestStyle: "io", Checker: "special", CheckerProtocol: c.protocol}, p)
			program := fmt.Sprintf("```python\nprint(%q)\n```", c.output)
			res := s.Score(context.Background(), row(program, [][2]string{c.test}, map[string]any{"checker_files": files(c.checker)}))
			if res.Outcome != scorers.Error || res.Reason != c.reason {
				t.Errorf("got %+v, want an Error %q", res, c.reason)
			}
		})
	}
}

// TestSpecialCheckerJuryRunOnce: the checker's run on the jury's answers
// happens only after an odd end, once per request for a checker and a
// row's tests however many rollouts end it oddly; with no memo, once per
// rollout that does.
func TestSpecialCheckerJuryRunOnce(t *testing.T) {
	p := pool(t, "cpp")
	counter := &countingRunner{Runner: p}
	s := newScorer(t, codeexec.Params{TestStyle: "io", Checker: "special"}, counter)
	tests := [][2]string{{"12\n", "6\n"}, {"10\n", "5\n"}}
	checker := map[string]any{"checker_files": map[string]any{"main": "check.cpp", "files": map[string]any{"check.cpp": scanfChecker}}}
	var rollouts []*scorers.Rollout
	for _, out := range []string{"abc", "", "123456789012345678901234567890", "7"} { // odd, odd, odd, wrong
		rollouts = append(rollouts, row(fmt.Sprintf("```python\nprint(%q)\n```", out), tests, checker))
	}
	rollouts = append(rollouts, row("```python\nprint(int(input()) // 2)\n```", tests, checker)) // right
	for _, c := range []struct {
		name   string
		ctx    context.Context
		judged int32
	}{
		{"one request", scorers.WithMemo(context.Background()), 5 + 1},
		{"no memo", context.Background(), 5 + 3},
	} {
		counter.judged.Store(0)
		for i, r := range rollouts {
			want := 0.0
			if i == 4 {
				want = 1
			}
			if res := s.Score(c.ctx, r); res.Outcome != scorers.OK || res.Value != want {
				t.Errorf("%s: rollout %d: %+v, want OK %v", c.name, i, res, want)
			}
		}
		if got := counter.judged.Load(); got != c.judged {
			t.Errorf("%s: the checker ran %d times, want %d (once per rollout, and on the jury's answers as often as there is no memo to keep them)", c.name, got, c.judged)
		}
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
// know, or a test runner, is refused when the function compiles, on key
// language.
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
		{codeexec.Params{Language: "pytest", TestStyle: "io"}, "language", "pytest is a test runner"},
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
