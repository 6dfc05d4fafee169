package exactmatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"regexp/syntax"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// typical is the configuration of design §6.
var typical = exactmatch.Params{
	Extract:   []string{"boxed", "answer_tag", "gsm8k", "last_number"},
	Normalize: []string{"strip", "numeric"},
}

func mustNew(t testing.TB, p exactmatch.Params) *exactmatch.Scorer {
	t.Helper()
	s, err := exactmatch.New(p)
	if err != nil {
		t.Fatalf("New(%+v): %v", p, err)
	}
	return s
}

// rollout builds a rollout whose field "answer" holds ref (no field when ref
// is nil).
func rollout(completion string, ref *structpb.Value) *scorers.Rollout {
	r := &scorers.Rollout{Completion: completion}
	if ref != nil {
		r.Fields = map[string]*structpb.Value{"answer": ref}
	}
	return r
}

// compile builds a scorer the way a config file does: from YAML text through
// scorers.Kind.
func compile(src string) (scorers.Scorer, []byte, error) {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(src), &node); err != nil {
		return nil, nil, err
	}
	return scorers.Kind(exactmatch.New)(&node)
}

func TestCases(t *testing.T) {
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name       string
		Params     json.RawMessage
		Completion string
		Reference  json.RawMessage // absent: no field
		Want       any             // a number, "not_applicable" or "error"
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			s, _, err := compile(string(c.Params)) // JSON is YAML
			if err != nil {
				t.Fatalf("params %s: %v", c.Params, err)
			}
			var ref *structpb.Value
			if c.Reference != nil {
				var v any
				if err := json.Unmarshal(c.Reference, &v); err != nil {
					t.Fatal(err)
				}
				if ref, err = structpb.NewValue(v); err != nil {
					t.Fatal(err)
				}
			}
			got := s.Score(context.Background(), rollout(c.Completion, ref))
			switch want := c.Want.(type) {
			case float64:
				if got.Outcome != scorers.OK || got.Value != want {
					t.Errorf("got %v %v (%s), want ok %v", got.Outcome, got.Value, got.Reason, want)
				}
			case string:
				if got.Outcome.String() != want {
					t.Errorf("got %v %v (%s), want %s", got.Outcome, got.Value, got.Reason, want)
				}
			default:
				t.Fatalf("bad want %v", c.Want)
			}
		})
	}
}

func TestReasons(t *testing.T) {
	s := mustNew(t, exactmatch.Params{Extract: []string{"boxed"}, ReferenceField: "gold"})
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
		rollout(`The answer is \boxed{18}.`, structpb.NewStringValue("18")),
		rollout(`The answer is \boxed{17}.`, structpb.NewStringValue("18")),
		rollout("#### 1,600", structpb.NewNumberValue(1600)),
		rollout("<answer>3/4</answer>", structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
			structpb.NewStringValue("0.75"), structpb.NewStringValue("3/4"),
		}})),
		rollout("no number here", structpb.NewStringValue("18")),
		rollout("18", nil),
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
			scorertest.Run(t, mustNew(t, p), scorertest.Unit, cases, "answer")
		})
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name string
		p    exactmatch.Params
		key  string
	}{
		{"unknown extractor", exactmatch.Params{Extract: []string{"boxed", "latex"}}, "extract"},
		{"regex without pattern", exactmatch.Params{Extract: []string{"regex"}}, "extract"},
		{"pattern without regex", exactmatch.Params{ExtractPattern: `\d+`}, "extract_pattern"},
		{"unknown reference extractor", exactmatch.Params{ReferenceExtract: []string{"gsm8"}}, "reference_extract"},
		{"reference regex without pattern", exactmatch.Params{ReferenceExtract: []string{"regex"}}, "reference_extract"},
		{"unknown normalizer", exactmatch.Params{Normalize: []string{"upper"}}, "normalize"},
		{"negative tolerance", exactmatch.Params{Normalize: []string{"numeric"}, Tolerance: -0.1}, "tolerance"},
		{"tolerance of 1", exactmatch.Params{Normalize: []string{"numeric"}, Tolerance: 1}, "tolerance"},
		{"NaN tolerance", exactmatch.Params{Normalize: []string{"numeric"}, Tolerance: math.NaN()}, "tolerance"},
		{"tolerance without numeric", exactmatch.Params{Tolerance: 0.01}, "tolerance"},
	}
	for _, c := range cases {
		_, err := exactmatch.New(c.p)
		var pe *scorers.ParamError
		if !errors.As(err, &pe) || pe.Key != c.key {
			t.Errorf("%s: New gave %v, want a ParamError at %q", c.name, err, c.key)
		}
	}

	_, err := exactmatch.New(exactmatch.Params{Extract: []string{"regex"}, ExtractPattern: `(\d+`})
	var pe *scorers.ParamError
	var se *syntax.Error
	if !errors.As(err, &pe) || pe.Key != "extract_pattern" || !errors.As(err, &se) || se.Code != syntax.ErrMissingParen {
		t.Errorf("bad pattern: New gave %v, want a ParamError at extract_pattern wrapping a syntax error", err)
	}
}

func TestConfig(t *testing.T) {
	s, canonical, err := compile(`
reference_field: answer
extract: [boxed, answer_tag, gsm8k, last_number]
normalize: [strip, numeric]
tolerance: 0.001
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(canonical) == 0 {
		t.Error("no canonical parameters")
	}
	got := s.Score(context.Background(), rollout(`\boxed{1,000}`, structpb.NewStringValue("1000.5")))
	if got.Outcome != scorers.OK || got.Value != 1 {
		t.Errorf("Score = %+v, want 1", got)
	}

	// Defaults need no parameters at all.
	fn, err := scorers.Registry{"exact_match": scorers.Kind(exactmatch.New)}.Compile(scorers.Spec{Name: "accuracy", Kind: "exact_match"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fn.Scorer.Score(context.Background(), rollout(" Paris", structpb.NewStringValue("Paris"))); got.Value != 1 {
		t.Errorf("default Score = %+v, want 1", got)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name, src string
		key       string
		line      int
	}{
		{"unknown key", "extract: [boxed]\nnormalise: [strip]\n", "normalise", 2},
		{"bad extractor", "normalize: [strip]\nextract:\n  - boxed\n  - latex\n", "extract", 3},
		{"bad pattern", "extract: [regex]\nextract_pattern: '(('\n", "extract_pattern", 2},
		{"bad tolerance", "normalize: [numeric]\ntolerance: -1\n", "tolerance", 2},
		{"wrong type", "normalize: [numeric]\ntolerance: high\n", "tolerance", 2},
		{"scalar for a list", "extract: boxed\n", "extract", 1},
	}
	for _, c := range cases {
		_, _, err := compile(c.src)
		var pe *scorers.ParamError
		if !errors.As(err, &pe) || pe.Key != c.key || pe.Line != c.line {
			t.Errorf("%s: got %v (%#v), want a ParamError at %q line %d", c.name, err, pe, c.key, c.line)
		}
	}
}

// FuzzScore checks that Score never panics and keeps to the three outcomes.
func FuzzScore(f *testing.F) {
	f.Add(`\boxed{18}`, "18", false)
	f.Add("#### 1,600", "#### 1,600", true)
	f.Add("<answer>3/4</answer>", "0.75", false)
	f.Add("", "", true)
	plain := mustNew(f, typical)
	p := typical
	p.ReferenceExtract = []string{"gsm8k", "last_number"}
	refExtract := mustNew(f, p)
	f.Fuzz(func(t *testing.T, completion, ref string, extractRef bool) {
		s := plain
		if extractRef {
			s = refExtract
		}
		got := s.Score(context.Background(), rollout(completion, structpb.NewStringValue(ref)))
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
