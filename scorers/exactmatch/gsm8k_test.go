package exactmatch_test

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// plusOne returns the integer n+1 ("1,599" -> "1600").
func plusOne(t *testing.T, n string) string {
	v, ok := new(big.Int).SetString(strings.ReplaceAll(n, ",", ""), 10)
	if !ok {
		t.Fatalf("final answer %q is not an integer", n)
	}
	return v.Add(v, big.NewInt(1)).String()
}

func str(s string) *structpb.Value { return structpb.NewStringValue(s) }

// TestGSM8K scores every gold solution of the GSM8K test set against its own
// final answer (1), and against a wrong final answer (0), with the typical
// configuration; and the same with the whole solution as the reference.
func TestGSM8K(t *testing.T) {
	rows := scorertest.GSM8K(t)
	if len(rows) != 1319 {
		t.Errorf("read %d rows, want 1319", len(rows))
	}
	s := scorertest.MustNew(t, exactmatch.New, typical)
	p := typical
	p.ReferenceExtract = []string{"gsm8k"}
	whole := scorertest.MustNew(t, exactmatch.New, p)

	ctx := context.Background()
	failures := 0
	check := func(name string, i int, s *exactmatch.Scorer, r *scorers.Rollout, want float64) {
		t.Helper()
		got := s.Score(ctx, r)
		if got.Outcome == scorers.OK && got.Value == want {
			return
		}
		if failures++; failures <= 10 {
			t.Errorf("row %d, %s: got %v %v (%s), want %v\ncompletion: %q", i+1, name, got.Outcome, got.Value, got.Reason, want, r.Completion)
		}
	}
	for i, row := range rows {
		wrong := plusOne(t, row.Final)
		// Completions: the gold solution, the same ending in prose, in a
		// box and in answer tags (exercising each extractor of the chain).
		gold := row.Solution
		prose := row.Body + "So the answer is " + row.Final + "."
		boxed := row.Body + `The final answer is $\boxed{` + row.Final + `}$.`
		tagged := "<think>" + row.Body + "</think>\n<answer>" + row.Final + "</answer>"

		check("gold", i, s, scorertest.Rollout(gold, str(row.Final)), 1)
		check("prose", i, s, scorertest.Rollout(prose, str(row.Final)), 1)
		check("boxed", i, s, scorertest.Rollout(boxed, str(row.Final)), 1)
		check("tagged", i, s, scorertest.Rollout(tagged, str(row.Final)), 1)
		check("number reference", i, s, scorertest.Rollout(gold, structpb.NewNumberValue(mustFloat(t, row.Final))), 1)

		check("gold, wrong", i, s, scorertest.Rollout(row.Body+"#### "+wrong, str(row.Final)), 0)
		check("prose, wrong", i, s, scorertest.Rollout(row.Body+"So the answer is "+wrong+".", str(row.Final)), 0)
		check("boxed, wrong", i, s, scorertest.Rollout(row.Body+`$\boxed{`+wrong+`}$`, str(row.Final)), 0)

		// The raw answer column as the reference.
		check("whole, gold", i, whole, scorertest.Rollout(gold, str(row.Solution)), 1)
		check("whole, boxed", i, whole, scorertest.Rollout(boxed, str(row.Solution)), 1)
		check("whole, wrong", i, whole, scorertest.Rollout(row.Body+"#### "+wrong, str(row.Solution)), 0)
	}
	if failures > 0 {
		t.Errorf("%d failures", failures)
	}

	// Rows without a reference are not applicable, never 0.
	for _, sc := range []*exactmatch.Scorer{s, whole} {
		for _, r := range []*scorers.Rollout{
			{Completion: rows[0].Solution},
			scorertest.Rollout(rows[0].Solution, structpb.NewNullValue()),
			scorertest.Rollout(rows[0].Solution, str("")),
			{Completion: rows[0].Solution, Fields: map[string]*structpb.Value{"question": str("?")}},
		} {
			if got := sc.Score(ctx, r); got.Outcome != scorers.NotApplicable {
				t.Errorf("row without a reference (%v): got %+v", r.Fields, got)
			}
		}
	}
}

func mustFloat(t *testing.T, n string) float64 {
	f, ok := new(big.Float).SetString(strings.ReplaceAll(n, ",", ""))
	if !ok {
		t.Fatalf("final answer %q is not a number", n)
	}
	v, _ := f.Float64()
	return v
}
