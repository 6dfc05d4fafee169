package exactmatch_test

import (
	"context"
	"errors"
	"math"
	"regexp/syntax"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// typical is a GSM8K-style accuracy configuration: the answer in \boxed{},
// an <answer> tag, after ####, or the last number, compared as numbers.
var typical = exactmatch.Params{
	Extract:   []string{"boxed", "answer_tag", "gsm8k", "last_number"},
	Normalize: []string{"strip", "numeric"},
}

func TestCases(t *testing.T) {
	scorertest.RunCases(t, scorers.Kind(exactmatch.New), "testdata/cases.json", 0)
}

func TestReasons(t *testing.T) {
	s := scorertest.MustNew(t, exactmatch.New, exactmatch.Params{Extract: []string{"boxed"}, ReferenceField: "gold"})
	ctx := context.Background()
	if got := s.Score(ctx, &scorers.Rollout{Completion: "18"}); got.Reason != `no reference in field "gold"` {
		t.Errorf("no reference: reason %q", got.Reason)
	}
	r := &scorers.Rollout{Completion: "18", Fields: map[string]*structpb.Value{"gold": structpb.NewStringValue("18")}}
	if got := s.Score(ctx, r); got.Outcome != scorers.OK || got.Value != 0 || got.Reason != "no answer found" {
		t.Errorf("no answer: got %+v", got)
	}
}

func TestConformance(t *testing.T) {
	cases := []*scorers.Rollout{
		scorertest.Rollout(`The answer is \boxed{18}.`, structpb.NewStringValue("18")),
		scorertest.Rollout(`The answer is \boxed{17}.`, structpb.NewStringValue("18")),
		scorertest.Rollout("#### 1,600", structpb.NewNumberValue(1600)),
		scorertest.Rollout("<answer>3/4</answer>", structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
			structpb.NewStringValue("0.75"), structpb.NewStringValue("3/4"),
		}})),
		scorertest.Rollout("no number here", structpb.NewStringValue("18")),
		scorertest.Rollout("18", nil),
	}
	for name, p := range map[string]exactmatch.Params{
		"typical": typical,
		"default": {},
		"everything": {
			Extract:          []string{"regex", "boxed", "none"},
			ExtractPattern:   `answer: (\S+)`,
			Normalize:        []string{"whitespace", "lower", "punctuation", "numeric", "strip"},
			Tolerance:        1e-6,
			ReferenceExtract: []string{"gsm8k", "none"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			scorertest.Run(t, scorertest.MustNew(t, exactmatch.New, p), scorertest.Unit, cases, "answer")
		})
	}
}

func TestNewErrors(t *testing.T) {
	scorertest.RunRefusals(t, exactmatch.New, []scorertest.Refusal[exactmatch.Params]{
		{Name: "unknown extractor", Params: exactmatch.Params{Extract: []string{"boxed", "latex"}}, Key: "extract"},
		{Name: "regex without pattern", Params: exactmatch.Params{Extract: []string{"regex"}}, Key: "extract"},
		{Name: "pattern without regex", Params: exactmatch.Params{ExtractPattern: `\d+`}, Key: "extract_pattern"},
		{Name: "unknown reference extractor", Params: exactmatch.Params{ReferenceExtract: []string{"gsm8"}}, Key: "reference_extract"},
		{Name: "reference regex without pattern", Params: exactmatch.Params{ReferenceExtract: []string{"regex"}}, Key: "reference_extract"},
		{Name: "unknown normalizer", Params: exactmatch.Params{Normalize: []string{"upper"}}, Key: "normalize"},
		{Name: "negative tolerance", Params: exactmatch.Params{Normalize: []string{"numeric"}, Tolerance: -0.1}, Key: "tolerance"},
		{Name: "tolerance of 1", Params: exactmatch.Params{Normalize: []string{"numeric"}, Tolerance: 1}, Key: "tolerance"},
		{Name: "NaN tolerance", Params: exactmatch.Params{Normalize: []string{"numeric"}, Tolerance: math.NaN()}, Key: "tolerance"},
		{Name: "tolerance without numeric", Params: exactmatch.Params{Tolerance: 0.01}, Key: "tolerance"},
	})

	_, err := exactmatch.New(exactmatch.Params{Extract: []string{"regex"}, ExtractPattern: `(\d+`})
	var pe *scorers.ParamError
	var se *syntax.Error
	if !errors.As(err, &pe) || pe.Key != "extract_pattern" || !errors.As(err, &se) || se.Code != syntax.ErrMissingParen {
		t.Errorf("bad pattern: New gave %v, want a ParamError at extract_pattern wrapping a syntax error", err)
	}
}

func TestConfig(t *testing.T) {
	s := scorertest.MustCompile(t, scorers.Kind(exactmatch.New), `
reference_field: answer
extract: [boxed, answer_tag, gsm8k, last_number]
normalize: [strip, numeric]
tolerance: 0.001
`)
	got := s.Score(context.Background(), scorertest.Rollout(`\boxed{1,000}`, structpb.NewStringValue("1000.5")))
	if got.Outcome != scorers.OK || got.Value != 1 {
		t.Errorf("Score = %+v, want 1", got)
	}

	// Defaults need no parameters at all.
	fn, err := scorers.Registry{"exact_match": scorers.Kind(exactmatch.New)}.Compile(scorers.Spec{Name: "accuracy", Kind: "exact_match"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fn.Scorer.Score(context.Background(), scorertest.Rollout(" Paris", structpb.NewStringValue("Paris"))); got.Value != 1 {
		t.Errorf("default Score = %+v, want 1", got)
	}
}

// FuzzScore checks that Score never panics and keeps to the three outcomes.
func FuzzScore(f *testing.F) {
	f.Add(`\boxed{18}`, "18", false)
	f.Add("#### 1,600", "#### 1,600", true)
	f.Add("<answer>3/4</answer>", "0.75", false)
	f.Add("", "", true)
	plain := scorertest.MustNew(f, exactmatch.New, typical)
	p := typical
	p.ReferenceExtract = []string{"gsm8k", "last_number"}
	refExtract := scorertest.MustNew(f, exactmatch.New, p)
	f.Fuzz(func(t *testing.T, completion, ref string, extractRef bool) {
		s := plain
		if extractRef {
			s = refExtract
		}
		got := s.Score(context.Background(), scorertest.Rollout(completion, structpb.NewStringValue(ref)))
		switch got.Outcome {
		case scorers.OK:
			if got.Value != 0 && got.Value != 1 {
				t.Fatalf("value %v", got.Value)
			}
		case scorers.NotApplicable:
			if !math.IsNaN(got.Value) {
				t.Fatalf("not applicable with value %v", got.Value)
			}
		default:
			t.Fatalf("outcome %v for a string reference", got.Outcome)
		}
	})
}
