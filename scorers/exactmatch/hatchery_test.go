package exactmatch_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/extract"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

var hatcheryBox = regexp.MustCompile(`\\boxed\{`)

// hatcheryExtractBoxed is Axolotl's Hatchery extract_boxed
// (src/axolotl/integrations/hatchery/rewards/math_reward.py): re.search for
// the first \boxed{, then braces counted to its end; None (false) when the
// text ends first.
func hatcheryExtractBoxed(text string) (string, bool) {
	m := hatcheryBox.FindStringIndex(text)
	if m == nil {
		return "", false
	}
	start, depth, i := m[1], 1, m[1]
	for i < len(text) && depth > 0 {
		switch text[i] {
		case '{':
			depth++
		case '}':
			depth--
		}
		i++
	}
	if depth != 0 {
		return "", false
	}
	return text[start : i-1], true
}

// hatcheryReward is Hatchery's math_reward when math_verify is not
// installed: 1 when the first box, stripped, equals the gold, stripped.
func hatcheryReward(completion, gold string) float64 {
	pred, ok := hatcheryExtractBoxed(completion)
	if ok && strings.TrimSpace(pred) == strings.TrimSpace(gold) {
		return 1
	}
	return 0
}

// TestHatcheryBoxChoice: on 900 completions (300 MATH solutions, each as it
// is, after a first wrong box, and followed by a second box), first_boxed
// picks Hatchery's box every time, and exact_match with it gives
// Hatchery's reward; boxed (the last box) picks another box on some.
func TestHatcheryBoxChoice(t *testing.T) {
	rows := scorertest.ReadJSONL[struct{ Solution string }](t, "testdata/math_300.jsonl")
	s, err := exactmatch.New(exactmatch.Params{Extract: []string{"first_boxed"}, Normalize: []string{"strip"}, ReferenceField: "answer"})
	if err != nil {
		t.Fatal(err)
	}
	n, sameBox, sameReward, lastDiffers, ones := 0, 0, 0, 0, 0
	for _, row := range rows {
		gold, ok := extract.Boxed(row.Solution)
		if !ok {
			t.Fatalf("no box in %q", row.Solution)
		}
		for _, text := range []string{
			row.Solution,
			"A first guess: $\\boxed{" + gold + "0}$. Let me work it out.\n" + row.Solution,
			row.Solution + "\nChecking once more gives $\\boxed{" + gold + "}$, not $\\boxed{0}$.",
		} {
			n++
			want, wantOK := hatcheryExtractBoxed(text)
			want, wantOK = extract.NonBlank(want) // an empty box is no answer here; Hatchery's "" matches no gold
			got, gotOK := extract.FirstBoxed(text)
			if got == want && gotOK == wantOK {
				sameBox++
			} else {
				t.Errorf("box of %q: first_boxed %q %v, Hatchery %q %v", text, got, gotOK, want, wantOK)
			}
			if last, _ := extract.Boxed(text); last != want {
				lastDiffers++
			}
			r := &scorers.Rollout{Completion: text, Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(gold)}}
			res := s.Score(context.Background(), r)
			if ref := hatcheryReward(text, gold); res.Outcome == scorers.OK && res.Value == ref {
				sameReward++
				if ref == 1 {
					ones++
				}
			} else {
				t.Errorf("reward of %q (gold %q): %v %v, Hatchery %v", text, gold, res.Outcome, res.Value, ref)
			}
		}
	}
	t.Logf("first_boxed picks Hatchery's box on %d/%d and gives its reward on %d/%d (%d of them 1); the last box differs on %d",
		sameBox, n, sameReward, n, ones, lastDiffers)
	if n != 900 || lastDiffers == 0 {
		t.Errorf("%d completions, last box differs on %d: the layouts must tell first from last", n, lastDiffers)
	}
}
