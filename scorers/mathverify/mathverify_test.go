package mathverify_test

import (
	"context"
	"errors"
	"os"
	"regexp/syntax"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

func str(s string) *structpb.Value { return structpb.NewStringValue(s) }

// checkWant compares a result with a table's expected verdict: a number for
// an OK score, or an outcome name.
func checkWant(t *testing.T, got scorers.Result, want string) {
	t.Helper()
	switch want {
	case "1", "0":
		if got.Outcome != scorers.OK || got.Value != map[string]float64{"1": 1, "0": 0}[want] {
			t.Errorf("got %v %v (%s), want ok %s", got.Outcome, got.Value, got.Reason, want)
		}
	case "error", "not_applicable":
		if got.Outcome.String() != want {
			t.Errorf("got %v %v (%s), want %s", got.Outcome, got.Value, got.Reason, want)
		}
	default:
		t.Fatalf("bad verdict %q", want)
	}
}

// equivalenceCase is a row of testdata/equivalence.tsv.
type equivalenceCase struct {
	line                         int
	category, gold, answer, want string
	params                       string // YAML flow mapping
}

func loadEquivalence(t testing.TB) []equivalenceCase {
	t.Helper()
	data, err := os.ReadFile("testdata/equivalence.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var cases []equivalenceCase
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 && len(f) != 5 {
			t.Fatalf("equivalence.tsv line %d: %d fields, want 4 or 5", i+1, len(f))
		}
		c := equivalenceCase{line: i + 1, category: f[0], gold: f[1], answer: f[2], want: f[3], params: "{}"}
		if len(f) == 5 {
			c.params = f[4]
		}
		cases = append(cases, c)
	}
	return cases
}

// completion writes an answer the way the table is scored: boxed at the end
// of a sentence.
func (c equivalenceCase) completion() string { return `The answer is $\boxed{` + c.answer + `}$.` }

// TestEquivalence runs the table of testdata/equivalence.tsv: each answer in
// a box at the end of a sentence, against its gold.
func TestEquivalence(t *testing.T) {
	categories := map[string]int{}
	for _, c := range loadEquivalence(t) {
		categories[c.category]++
		t.Run(c.category+"/"+c.gold+"~"+c.answer, func(t *testing.T) {
			s, _, err := scorertest.Compile(scorers.Kind(mathverify.New), c.params)
			if err != nil {
				t.Fatalf("line %d: params %s: %v", c.line, c.params, err)
			}
			checkWant(t, s.Score(context.Background(), scorertest.Rollout(c.completion(), str(c.gold))), c.want)
		})
	}
	for _, c := range []string{"fraction", "sqrt", "power", "times", "left_right", "text", "units", "degrees",
		"percent", "thousands", "periods", "pi", "infinity", "spacing", "exact", "float", "variables", "tuple",
		"set", "interval", "assignment", "equation", "inequality", "pm", "several", "hedge", "function", "unreadable",
		"error", "decimal", "base", "ratio", "time", "words", "kept"} {
		if categories[c] == 0 {
			t.Errorf("no case of category %s", c)
		}
	}
}

// TestCases runs the scorer-level table of testdata/cases.json: extraction,
// references, outcomes, parameters.
func TestCases(t *testing.T) {
	scorertest.RunCases(t, scorers.Kind(mathverify.New), "testdata/cases.json", 0)
}

// TestStepBudget checks that a check that needs more steps than its budget
// is an Error naming the budget, never a 0, and that the same check passes
// with the default budget.
func TestStepBudget(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("(x+1)*", 100) + "1"
	r := scorertest.Rollout(`\boxed{`+long+`}`, str(long))
	if got := scorertest.MustNew(t, mathverify.New, mathverify.Params{}).Score(ctx, r); got.Outcome != scorers.OK || got.Value != 1 {
		t.Fatalf("default budget: got %+v, want 1", got)
	}
	got := scorertest.MustNew(t, mathverify.New, mathverify.Params{StepBudget: new(500)}).Score(ctx, r)
	if got.Outcome != scorers.Error || !strings.Contains(got.Reason, "step budget of 500") {
		t.Errorf("small budget: got %+v, want an error naming the step budget", got)
	}

	// Adversarial answers end in an Error or a score within the default
	// budget: huge powers, factorials, deep nesting, long sums.
	for _, answer := range []string{
		`2^{2^{2^{2^{2^{2}}}}}`,
		`10^{10^{10}}`,
		`(10^{4000})!`,
		`1000!^{1000}`,
		strings.Repeat(`\sqrt{`, 60) + "2" + strings.Repeat("}", 60),
		strings.Repeat(`(`, 5000) + "1" + strings.Repeat(`)`, 5000),
		strings.Repeat("x+", 20000) + "x",
		strings.Repeat("1, ", 3000) + "1",
		strings.Repeat(`\pm 1`, 10),
		"9" + strings.Repeat("9", 3999) + "e4000",
	} {
		for _, gold := range []string{"1", answer, strings.Repeat("1, ", 100) + "2"} {
			res := scorertest.MustNew(t, mathverify.New, mathverify.Params{}).Score(ctx, scorertest.Rollout(`\boxed{`+answer+`}`, str(gold)))
			if res.Outcome == scorers.NotApplicable {
				t.Errorf("answer %.40q gold %.40q: %+v", answer, gold, res)
			}
		}
	}
}

func TestReasons(t *testing.T) {
	s := scorertest.MustNew(t, mathverify.New, mathverify.Params{Extract: []string{"boxed"}, ReferenceField: "gold"})
	ctx := context.Background()
	if got := s.Score(ctx, &scorers.Rollout{Completion: "18"}); got.Reason != `no reference in field "gold"` {
		t.Errorf("no reference: reason %q", got.Reason)
	}
	r := &scorers.Rollout{Completion: "18", Fields: map[string]*structpb.Value{"gold": str("18")}}
	if got := s.Score(ctx, r); got.Outcome != scorers.OK || got.Value != 0 || got.Reason != "no answer found" {
		t.Errorf("no answer: got %+v", got)
	}
	r.Completion = `\boxed{\foo}`
	if got := s.Score(ctx, r); got.Outcome != scorers.OK || got.Value != 0 || !strings.Contains(got.Reason, "not understood") {
		t.Errorf("unreadable answer: got %+v", got)
	}
	r.Fields["gold"] = str(strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70))
	r.Completion = `\boxed{1}`
	if got := s.Score(ctx, r); got.Outcome != scorers.Error || !strings.Contains(got.Reason, "nested too deeply") {
		t.Errorf("gold beyond a limit: got %+v", got)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long := strings.Repeat("(x+1)*", 2000) + "1"
	got := scorertest.MustNew(t, mathverify.New, mathverify.Params{StepBudget: new(10_000_000)}).Score(ctx, scorertest.Rollout(`\boxed{`+long+`}`, str(long)))
	if got.Outcome != scorers.Error || !strings.Contains(got.Reason, "interrupted") {
		t.Errorf("got %+v, want an error saying the check was interrupted", got)
	}
}

func TestConformance(t *testing.T) {
	cases := []*scorers.Rollout{
		scorertest.Rollout(`The answer is $\boxed{\frac{1}{2}}$.`, str("0.5")),
		scorertest.Rollout(`The answer is $\boxed{2}$.`, str(`\frac12`)),
		scorertest.Rollout("#### 1,600", structpb.NewNumberValue(1600)),
		scorertest.Rollout("<answer>(1, 2]</answer>", structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
			str("[1, 2]"), str("(1, 2]"),
		}})),
		scorertest.Rollout(`so $x > 1$`, str(`(1, \infty)`)),
		scorertest.Rollout(`\boxed{(x+1)^2}`, str(`x^2 + 2x + 1`)),
		scorertest.Rollout("no number here", str("18")),
		scorertest.Rollout("18", nil),
		scorertest.Rollout(`\boxed{1}`, str(`\frac{1}{0}`)),
	}
	for name, p := range map[string]mathverify.Params{
		"default":      {},
		"tolerant":     {Tolerance: 0.01},
		"small budget": {StepBudget: new(50)},
		"everything": {
			Extract:          []string{"regex", "boxed", "answer_tag", "answer_is", "latex", "gsm8k", "last_number", "none"},
			ExtractPattern:   `answer: (\S+)`,
			ReferenceExtract: []string{"boxed", "gsm8k", "none"},
			Tolerance:        1e-6,
			StepBudget:       new(1_000_000),
		},
	} {
		t.Run(name, func(t *testing.T) {
			scorertest.Run(t, scorertest.MustNew(t, mathverify.New, p), scorertest.Unit, cases, "answer")
		})
	}
}

func TestNewErrors(t *testing.T) {
	scorertest.RunRefusals(t, mathverify.New, []scorertest.Refusal[mathverify.Params]{
		{Name: "unknown extractor", Params: mathverify.Params{Extract: []string{"boxed", "latexx"}}, Key: "extract"},
		{Name: "regex without pattern", Params: mathverify.Params{Extract: []string{"regex"}}, Key: "extract"},
		{Name: "pattern without regex", Params: mathverify.Params{ExtractPattern: `\d+`}, Key: "extract_pattern"},
		{Name: "unknown reference extractor", Params: mathverify.Params{ReferenceExtract: []string{"gsm8"}}, Key: "reference_extract"},
		{Name: "negative tolerance", Params: mathverify.Params{Tolerance: -0.1}, Key: "tolerance"},
		{Name: "tolerance of 1", Params: mathverify.Params{Tolerance: 1}, Key: "tolerance"},
		{Name: "negative budget", Params: mathverify.Params{StepBudget: new(-1)}, Key: "step_budget"},
		{Name: "huge budget", Params: mathverify.Params{StepBudget: new(1 << 40)}, Key: "step_budget"},
		{Name: "negative precision", Params: mathverify.Params{Precision: new(-1)}, Key: "precision"},
		{Name: "precision beyond float64", Params: mathverify.Params{Precision: new(16)}, Key: "precision"},
	})
	_, err := mathverify.New(mathverify.Params{Extract: []string{"regex"}, ExtractPattern: `(\d+`})
	var pe *scorers.ParamError
	var se *syntax.Error
	if !errors.As(err, &pe) || pe.Key != "extract_pattern" || !errors.As(err, &se) {
		t.Errorf("bad pattern: New gave %v, want a ParamError at extract_pattern wrapping a syntax error", err)
	}
}

func TestConfig(t *testing.T) {
	s := scorertest.MustCompile(t, scorers.Kind(mathverify.New), `
reference_field: solution
extract: [boxed, answer_is]
reference_extract: [boxed]
tolerance: 0.01
step_budget: 20000
`)
	r := &scorers.Rollout{
		Completion: "So the answer is 0.333.",
		Fields:     map[string]*structpb.Value{"solution": str(`Hence $\boxed{\frac{1}{3}}$.`)},
	}
	if got := s.Score(context.Background(), r); got.Outcome != scorers.OK || got.Value != 1 {
		t.Errorf("Score = %+v, want 1", got)
	}

	// Defaults need no parameters at all.
	fn, err := scorers.Registry{"math": scorers.Kind(mathverify.New)}.Compile(scorers.Spec{Name: "accuracy", Kind: "math"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fn.Scorer.Score(context.Background(), scorertest.Rollout(`$\boxed{\dfrac{1}{2}}$`, str("0.5"))); got.Value != 1 {
		t.Errorf("default Score = %+v, want 1", got)
	}
}

// TestHugeAnswerScoresZero checks that an answer too long to check is a
// wrong answer (0), not an Error whose NaN would spare the policy the 0.
func TestHugeAnswerScoresZero(t *testing.T) {
	s, err := mathverify.New(mathverify.Params{})
	if err != nil {
		t.Fatal(err)
	}
	r := &scorers.Rollout{
		Completion: `\boxed{` + strings.Repeat("(1+", 600) + "1" + strings.Repeat(")", 600) + "}",
		Fields:     map[string]*structpb.Value{"answer": structpb.NewStringValue("601")},
	}
	if res := s.Score(context.Background(), r); res.Outcome != scorers.OK || res.Value != 0 || res.Reason == "" {
		t.Errorf("huge answer: %+v, want OK 0 with a reason", res)
	}
	if _, err := mathverify.New(mathverify.Params{MaxAnswerChars: new(-1)}); err == nil {
		t.Error("negative max_answer_chars accepted")
	}
}
