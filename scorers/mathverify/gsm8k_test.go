package mathverify_test

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// perturbations rewrite a GSM8K solution's final line; want says whether
// the result is still right.
var perturbations = []struct {
	name  string
	final func(t *testing.T, n string) string
	want  float64
}{
	{"gold", func(_ *testing.T, n string) string { return n }, 1},
	{"thousands separators", func(t *testing.T, n string) string { return scorertest.WithCommas(intOf(t, n).String()) }, 1},
	{"no separators", func(t *testing.T, n string) string { return intOf(t, n).String() }, 1},
	{"decimal", func(t *testing.T, n string) string { return intOf(t, n).String() + ".00" }, 1},
	{"dollars", func(_ *testing.T, n string) string { return "$" + n }, 1},
	{"fraction over 1", func(t *testing.T, n string) string { return intOf(t, n).String() + "/1" }, 1},
	{"plus one", func(t *testing.T, n string) string { return add(intOf(t, n), 1).String() }, 0},
	{"minus one", func(t *testing.T, n string) string { return add(intOf(t, n), -1).String() }, 0},
	{"times ten", func(t *testing.T, n string) string { return intOf(t, n).String() + "0" }, 0},
	{"half", func(t *testing.T, n string) string { return intOf(t, n).String() + ".5" }, 0},
}

// TestGSM8K scores every GSM8K gold solution, and perturbed copies of it,
// against the number after its "####" with math (default configuration)
// and with exact_match + numeric: they must agree, and be right.
func TestGSM8K(t *testing.T) {
	rows := scorertest.GSM8K(t)
	if len(rows) != 1319 {
		t.Errorf("read %d rows, want 1319", len(rows))
	}
	mv, err := mathverify.New(mathverify.Params{})
	if err != nil {
		t.Fatal(err)
	}
	em, err := exactmatch.New(exactmatch.Params{Extract: []string{"gsm8k"}, Normalize: []string{"strip", "numeric"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	failures, checks := 0, 0
	for i, row := range rows {
		for _, pt := range perturbations {
			completion := row.Body + "#### " + pt.final(t, row.Final)
			want := pt.want
			if pt.name == "times ten" && intOf(t, row.Final).Sign() == 0 {
				want = 1 // 00 is 0
			}
			r := &scorers.Rollout{Completion: completion, Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(row.Final)}}
			got, base := mv.Score(ctx, r), em.Score(ctx, r)
			checks++
			if got.Outcome == scorers.OK && base.Outcome == scorers.OK && got.Value == base.Value && got.Value == want {
				continue
			}
			if failures++; failures <= 10 {
				t.Errorf("row %d, %s: math %v %v (%s), exact_match %v %v (%s), want %v\ncompletion: %q",
					i+1, pt.name, got.Outcome, got.Value, got.Reason, base.Outcome, base.Value, base.Reason, want, completion)
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d checks disagree", failures, checks)
	}
	t.Logf("%d checks on %d solutions agree", checks, len(rows))
}

func intOf(t *testing.T, n string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(strings.ReplaceAll(n, ",", ""), 10)
	if !ok {
		t.Fatalf("final answer %q is not an integer", n)
	}
	return v
}

func add(v *big.Int, d int64) *big.Int { return new(big.Int).Add(v, big.NewInt(d)) }
