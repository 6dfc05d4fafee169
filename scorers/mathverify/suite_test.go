package mathverify_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// TestMathVerifySuite scores every case of Math-Verify's own test suite
// (the prediction as the completion, the gold as the reference) and
// compares with the verdict Math-Verify's tests expect. It fails on any
// false positive (1 where Math-Verify says 0) and when the agreement falls
// below the ratchet; -v lists the disagreements.
func TestMathVerifySuite(t *testing.T) {
	ctx := context.Background()
	agree, total, falsePos, skipped := 0, 0, 0, 0
	var disagree []string
	for _, c := range scorertest.ReadMathVerifySuite(t, "testdata/mathverify_suite.jsonl") {
		if c.Skip != "" {
			skipped++
			continue
		}
		total++
		s, _, err := scorertest.Compile(scorers.Kind(mathverify.New), c.Params())
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		got := s.Score(ctx, scorertest.Rollout(c.Pred, str(c.Gold)))
		verdict := -1 // not OK
		if got.Outcome == scorers.OK {
			verdict = int(got.Value)
		}
		if verdict == c.Want {
			agree++
			continue
		}
		if verdict == 1 {
			falsePos++
			t.Errorf("%s: false positive: gold %q, pred %q scores 1; Math-Verify says 0", c.ID, clipText(c.Gold), clipText(c.Pred))
		}
		disagree = append(disagree, fmt.Sprintf("%s: gold %q pred %q: got %v %v (%s), Math-Verify %d",
			c.ID, clipText(c.Gold), clipText(c.Pred), got.Outcome, got.Value, got.Reason, c.Want))
	}
	for _, d := range disagree {
		t.Log(d)
	}
	t.Logf("agreement with Math-Verify's suite: %d/%d (%.1f%%), %d false positives; %d debatable cases left out",
		agree, total, 100*float64(agree)/float64(total), falsePos, skipped)
	if total != scorertest.MathVerifySuiteCases {
		t.Errorf("%d cases, the ratchet was set on %d: update scorertest.MathVerifySuiteCases and scorertest.MathVerifySuiteAgreement", total, scorertest.MathVerifySuiteCases)
	}
	if agree < scorertest.MathVerifySuiteAgreement {
		t.Errorf("agreement %d/%d is below the ratchet %d", agree, total, scorertest.MathVerifySuiteAgreement)
	}
}

// clipText shortens a long case for the log.
func clipText(s string) string {
	if len(s) <= 120 {
		return s
	}
	return s[:60] + " … " + s[len(s)-50:]
}
