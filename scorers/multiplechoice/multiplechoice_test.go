package multiplechoice_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/multiplechoice"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// forms are answers as models write them, with the letter each chooses
// (0: none) and, for none, text its reason holds. Letters ABCD unless
// letters is set.
var forms = []struct {
	text    string
	want    rune
	why     string
	letters string
}{
	// boxed
	{text: `The answer is $\boxed{C}$.`, want: 'C'},
	{text: `\boxed{(B)}`, want: 'B'},
	{text: `So we get \boxed{\text{D}}`, want: 'D'},
	{text: `Final: $\boxed{\textbf{(A)}}$`, want: 'A'},
	{text: `\boxed{b}`, want: 'B'},
	{text: `First \boxed{A}, but wait, it is \boxed{C}.`, want: 'C'},
	{text: `\boxed{E}`, want: 0, why: "not one of the letters"},
	{text: `\boxed{F}`, want: 'F', letters: "ABCDEFGHIJ"},
	// answer tag
	{text: `<think>B looks wrong.</think><answer>D</answer>`, want: 'D'},
	{text: `<answer> (c) </answer>`, want: 'C'},
	// answer statements
	{text: `The answer is (B).`, want: 'B'},
	{text: `The answer is B`, want: 'B'},
	{text: `Answer: C`, want: 'C'},
	{text: "Some reasoning.\nAnswer: (A)", want: 'A'},
	{text: `**Final Answer:** D`, want: 'D'},
	{text: `**Answer: B**`, want: 'B'},
	{text: `The correct answer is C) 42 apples.`, want: 'C'},
	{text: `The correct option is D.`, want: 'D'},
	{text: `Therefore, the answer is [A].`, want: 'A'},
	{text: `I choose B.`, want: 'B'},
	{text: `I would go with (C).`, want: 'C'},
	{text: `Answer - D`, want: 'D'},
	{text: `The final answer is option B.`, want: 'B'},
	{text: `The answer is A, since the others fail.`, want: 'A'},
	{text: "Answer: A\n\nWait, no. Answer: C", want: 'C'},
	{text: `The answer is E.`, want: 0, why: "not one of the letters"},
	{text: `The answer is simple: it is (B).`, want: 'B'},
	// several letters
	{text: `The answer is A or B.`, want: 0, why: "several letters (A, B)"},
	{text: `Answer: (A), (C)`, want: 0, why: "several letters"},
	{text: `The answer is both A and D.`, want: 0, why: "several letters"},
	{text: `Answer: B/C`, want: 0, why: "several letters"},
	{text: `The answer is A and A.`, want: 'A'},
	// said to be correct
	{text: `Option C is correct because the others contradict the data.`, want: 'C'},
	{text: `Looking at each: (B) is the best choice here.`, want: 'B'},
	{text: `D is the most likely.`, want: 'D'},
	// last line
	{text: "Let me think.\nB", want: 'B'},
	{text: "Reasoning...\n\n(C)", want: 'C'},
	{text: "Reasoning...\n**D.**", want: 'D'},
	{text: "Reasoning...\nA) 12 meters", want: 'A'},
	{text: "Reasoning...\n(B) The mitochondria", want: 'B'},
	{text: "Reasoning...\nC. Paris\n", want: 'C'},
	// not letters
	{text: `A bit of thought shows the effect is small.`, want: 0, why: "no answer"},
	{text: `I think it depends.`, want: 0, why: "no answer"},
	{text: `The answer is I think unclear.`, want: 0, why: "no answer"},
	{text: `I don't know.`, want: 0, why: "abstained"},
	{text: `This cannot be determined from the passage.`, want: 0, why: "abstained"},
	{text: `None of the above.`, want: 0, why: "abstained"},
	{text: ``, want: 0, why: "no answer"},
	{text: "Reasoning...\nThe end.", want: 0, why: "no answer"},
	{text: `The answer is I.`, want: 'I', letters: "ABCDEFGHIJ"},
}

func TestForms(t *testing.T) {
	if len(forms) < 30 {
		t.Fatalf("%d forms, want 30 at least", len(forms))
	}
	for _, f := range forms {
		letters := f.letters
		s := scorertest.MustNew(t, multiplechoice.New, multiplechoice.Params{Letters: letters})
		got, why := s.Extract(f.text)
		if got != f.want || f.want == 0 && !strings.Contains(why, f.why) {
			t.Errorf("%q: got %q (%s), want %q (%s)", f.text, got, why, f.want, f.why)
		}
	}
}

// TestScore checks the score against references of each form.
func TestScore(t *testing.T) {
	s := scorertest.MustNew(t, multiplechoice.New, multiplechoice.Params{})
	ctx := context.Background()
	for _, c := range []struct {
		completion string
		ref        any // nil: no field
		want       any // a number or an outcome
		why        string
	}{
		{"The answer is (B).", "B", 1.0, ""},
		{"The answer is (B).", "(b)", 1.0, ""},
		{"The answer is (B).", 1.0, 1.0, ""},
		{"The answer is (B).", 2.0, 0.0, "answered B, the answer is C"},
		{"The answer is (B).", []any{"A", "B"}, 1.0, ""},
		{"The answer is (B).", nil, "not_applicable", "no reference"},
		{"The answer is (B).", []any{}, "not_applicable", "no reference"},
		{"The answer is (B).", "Paris", "error", "not one of the letters"},
		{"The answer is (B).", 4.0, "error", "index 4"},
		{"The answer is (B).", 1.5, "error", "index 1.5"},
		{"The answer is (B).", true, "error", "letter"},
		{"I don't know.", "B", 0.0, "abstained"},
		{"A or B", "B", 0.0, "no answer"},
		{"The answer is A or B", "B", 0.0, "several letters"},
	} {
		r := &scorers.Rollout{Completion: c.completion}
		if c.ref != nil {
			v, err := structpb.NewValue(c.ref)
			if err != nil {
				t.Fatal(err)
			}
			r.Fields = map[string]*structpb.Value{"answer": v}
		}
		got := s.Score(ctx, r)
		switch want := c.want.(type) {
		case float64:
			if got.Outcome != scorers.OK || got.Value != want {
				t.Errorf("%q, %v: got %v %v (%s), want %v", c.completion, c.ref, got.Outcome, got.Value, got.Reason, want)
			}
		case string:
			if got.Outcome.String() != want {
				t.Errorf("%q, %v: got %v (%s), want %s", c.completion, c.ref, got.Outcome, got.Reason, want)
			}
		}
		if !strings.Contains(got.Reason, c.why) {
			t.Errorf("%q, %v: reason %q, want %q in it", c.completion, c.ref, got.Reason, c.why)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, letters := range []string{"A", "ABCA", "abcd", "AB1"} {
		if _, err := multiplechoice.New(multiplechoice.Params{Letters: letters}); err == nil || !strings.Contains(err.Error(), "letters") {
			t.Errorf("letters %q: %v, want an error naming letters", letters, err)
		}
	}
}

func TestConformance(t *testing.T) {
	s := scorertest.MustNew(t, multiplechoice.New, multiplechoice.Params{Letters: "ABCDEFGHIJ"})
	var rollouts []*scorers.Rollout
	for i, f := range forms {
		rollouts = append(rollouts, scorertest.Rollout(f.text, structpb.NewStringValue(string(rune('A'+i%10)))))
	}
	scorertest.Run(t, s, scorertest.Unit, rollouts, "answer")
}
