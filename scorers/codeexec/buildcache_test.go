package codeexec_test

import (
	"context"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// keyedRunner is a countingRunner that says what a compile makes, as
// *sandbox.Pool does.
type keyedRunner struct {
	countingRunner
	pool *sandbox.Pool
}

func (k *keyedRunner) BuildKey(ctx context.Context, job sandbox.CompileJob) (string, error) {
	return k.pool.BuildKey(ctx, job)
}

// TestBuildsAcrossRequests: a program that comes back in another request
// (the rest of its GRPO group, the next step) is compiled once, by the
// functions of one Kind alike, and each request still runs every test of
// it and judges each: a wrong program keeps its verdicts, a right one its
// score. A runner that cannot name its builds compiles once per request.
func TestBuildsAcrossRequests(t *testing.T) {
	p := pool(t, "cpp")
	keyed := &keyedRunner{countingRunner: countingRunner{Runner: p}, pool: p}
	kind := codeexec.Kind(func() (codeexec.Runner, error) { return keyed, nil })
	newFn := func(params string) scorers.Scorer {
		t.Helper()
		return scorertest.MustCompile(t, kind, params)
	}
	fraction := newFn("language: cpp\ntest_style: io\nscoring: fraction\n")
	all := newFn("language: cpp\ntest_style: io\nscoring: all\n")
	right := "```cpp\n#include <iostream>\nint main() { long long n; std::cin >> n; std::cout << 2 * n; }\n```"
	// n³: right on 0 only, 1 of 3.
	wrong := "```cpp\n#include <iostream>\nint main() { long long n; std::cin >> n; std::cout << n * n * n; }\n```"
	cases := []struct {
		s     scorers.Scorer
		code  string
		value float64
	}{{fraction, right, 1}, {fraction, wrong, 1.0 / 3}, {all, right, 1}, {all, wrong, 0}, {fraction, right, 1}, {all, wrong, 0}}
	tests := append([][2]string{{"0\n", "0\n"}}, doublingTests[:2]...)
	for i, c := range cases {
		res := c.s.Score(scorers.WithMemo(context.Background()), row(c.code, tests, nil))
		if res.Outcome != scorers.OK || res.Value != c.value || res.Execution == nil || len(res.Execution.Tests) != len(tests) {
			t.Fatalf("request %d: %+v, want OK %v and the %d tests' verdicts", i, res, c.value, len(tests))
		}
		if c.value < 1 && res.Execution.Tests[1].Verdict != scorers.WrongAnswer {
			t.Errorf("request %d: test 2 is %v, want WA", i, res.Execution.Tests[1].Verdict)
		}
	}
	// fraction runs its tests in one job; all in rounds of 1, then 2.
	if c, r := keyed.compiles.Load(), keyed.runs.Load(); c != 2 || r != 3*1+3*2 {
		t.Errorf("%d requests: %d compiles and %d runs, want 2 (the distinct programs) and 9 (every request's)", len(cases), c, r)
	}

	plain := &countingRunner{Runner: p}
	s := newScorer(t, codeexec.Params{Language: "cpp", TestStyle: "io"}, plain)
	for range 2 {
		if res := s.Score(scorers.WithMemo(context.Background()), row(right, tests, nil)); res.Value != 1 {
			t.Fatalf("%+v", res)
		}
	}
	if c := plain.compiles.Load(); c != 2 {
		t.Errorf("a runner without BuildKey, 2 requests: %d compiles, want 2", c)
	}
}
