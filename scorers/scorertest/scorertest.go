// Package scorertest is the conformance suite every scorer kind runs: the
// same rollout always gives the same result (also when scored concurrently),
// OK values are finite and in the kind's range, a cancelled context is
// honoured, and junk input never panics.
//
// It also holds what the kinds' tests share: the runner of the
// testdata/cases.json tables of the kinds that compare a completion with a
// reference (RunCases), the checks that a kind refuses bad parameters with
// every problem named (RunBadParams for config text, RunRefusals for a
// constructor's Params), the GSM8K test set (GSM8K, GSM8KTexts), and helpers
// that build scorers and rollouts (MustNew, Compile, Rollout). Every kind of
// builtin.Registry runs Run and RunBadParams from one test in package
// builtin, so that no kind skips them.
package scorertest

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// Range is the closed interval an OK value must lie in.
type Range struct{ Min, Max float64 }

// Unit is the range of most reward functions: [0, 1].
var Unit = Range{0, 1}

// Run checks s against the contract of scorers.Scorer on the given rollouts
// (the kind's interesting cases) plus a fixed set of junk rollouts built from
// them. fieldNames are the row fields the scorer reads; the junk set puts
// values of every type into them.
func Run(t *testing.T, s scorers.Scorer, rng Range, rollouts []*scorers.Rollout, fieldNames ...string) {
	t.Helper()
	all := append(append([]*scorers.Rollout(nil), rollouts...), Junk(fieldNames...)...)
	ctx := context.Background()

	// The results every subtest compares with are computed here, not in a
	// subtest, so that each subtest also runs alone (go test -run).
	first := make([]scorers.Result, len(all))
	for i, r := range all {
		first[i] = s.Score(ctx, r)
	}
	t.Run("range", func(t *testing.T) {
		for i, res := range first {
			checkResult(t, i, res, rng)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		for i, r := range all {
			if got := s.Score(ctx, r); !same(got, first[i]) {
				t.Errorf("rollout %d: second call gave %+v, first gave %+v", i, got, first[i])
			}
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan string, 4*len(all))
		for range 4 {
			wg.Go(func() {
				for i, r := range all {
					if got := s.Score(ctx, r); !same(got, first[i]) {
						errs <- "concurrent call differs on rollout " + r.ID
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i, r := range all {
				res := s.Score(cctx, r)
				if res.Outcome == scorers.OK {
					checkResult(t, i, res, rng)
				}
			}
		}()
		// A hang detector, not a speed assertion: a scorer that honours ctx
		// returns in microseconds; one that ignores it may hang forever.
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("Score did not return within a minute of a cancelled context")
		}
	})
}

func checkResult(t *testing.T, i int, res scorers.Result, rng Range) {
	t.Helper()
	switch res.Outcome {
	case scorers.OK:
		if math.IsNaN(res.Value) || math.IsInf(res.Value, 0) {
			t.Errorf("rollout %d: OK with non-finite value %v", i, res.Value)
		}
		if res.Value < rng.Min || res.Value > rng.Max {
			t.Errorf("rollout %d: value %v outside [%v, %v]", i, res.Value, rng.Min, rng.Max)
		}
	case scorers.NotApplicable, scorers.Error:
		if !math.IsNaN(res.Value) {
			t.Errorf("rollout %d: %v with value %v, want NaN", i, res.Outcome, res.Value)
		}
		if res.Reason == "" {
			t.Errorf("rollout %d: %v without a reason", i, res.Outcome)
		}
	default:
		t.Errorf("rollout %d: invalid outcome %v", i, res.Outcome)
	}
}

func same(a, b scorers.Result) bool {
	if a.Outcome != b.Outcome || a.Reason != b.Reason {
		return false
	}
	return a.Value == b.Value || math.IsNaN(a.Value) && math.IsNaN(b.Value)
}

// Junk returns rollouts no scorer should panic on: empty, huge, invalid UTF-8,
// unbalanced markup, and every value type in each named field.
func Junk(fieldNames ...string) []*scorers.Rollout {
	texts := []string{
		"",
		" ",
		"\x00\xff\xfe invalid \xc3\x28 utf-8",
		strings.Repeat("{", 10000) + `\boxed{` + strings.Repeat("}", 3),
		`\boxed{` + strings.Repeat(`\boxed{`, 1000),
		"<answer><answer></answer>",
		"#### ",
		"####",
		"1,,,2..3e",
		"-",
		"1/0",
		"0/0",
		"1e999999",
		"NaN",
		"Infinity",
		strings.Repeat("9", 400),
		strings.Repeat("<think>", 500),
		strings.Repeat("a", 1<<20),
		"```python\n",
		"{\"a\": [1, 2, {\"b\": null}]}",
		strings.Repeat("[", 5000),
	}
	values := []*structpb.Value{
		nil,
		structpb.NewNullValue(),
		structpb.NewBoolValue(true),
		structpb.NewNumberValue(math.NaN()),
		structpb.NewNumberValue(math.Inf(1)),
		structpb.NewNumberValue(-0.5),
		structpb.NewStringValue(""),
		structpb.NewStringValue("\xff"),
		structpb.NewStringValue("["),
		structpb.NewListValue(&structpb.ListValue{}),
		structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewBoolValue(false)}}),
		structpb.NewStructValue(&structpb.Struct{}),
	}
	var out []*scorers.Rollout
	for i, text := range texts {
		out = append(out, &scorers.Rollout{ID: "junk-text", Completion: text, Prompt: text})
		for _, name := range fieldNames {
			for _, v := range values {
				out = append(out, &scorers.Rollout{
					ID: "junk-field", Completion: texts[(i+1)%len(texts)],
					Fields: map[string]*structpb.Value{name: v},
				})
			}
			out = append(out, &scorers.Rollout{
				ID: "junk-field-text", Completion: text,
				Fields: map[string]*structpb.Value{name: structpb.NewStringValue(text)},
			})
		}
	}
	return out
}
