package mathverify_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// suiteAgreement is the least agreement with Math-Verify's own test suite
// that TestMathVerifySuite accepts, in cases out of suiteCases: a ratchet,
// raised as the scorer learns, never lowered to let a change through.
const (
	suiteAgreement = 254
	suiteCases     = 261
)

// suiteCase is a line of testdata/mathverify_suite.jsonl: a case of
// Math-Verify's tests/ folder.
type suiteCase struct {
	ID     string `json:"id"`
	Gold   string `json:"gold"`
	Pred   string `json:"pred"`
	Want   int    `json:"want"` // Math-Verify's expected verdict
	Config struct {
		MatchTypes           []string `json:"match_types"`
		Precision            int      `json:"precision"`
		Strict               bool     `json:"strict"`
		AllowSetRelationComp bool     `json:"allow_set_relation_comp"`
		BoxedMatchPriority   int      `json:"boxed_match_priority"`
	} `json:"config"`
	Skip string `json:"skip"` // why the case is left out, when it is
}

func loadSuite(t *testing.T) []suiteCase {
	t.Helper()
	f, err := os.Open("testdata/mathverify_suite.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []suiteCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue // where the cases come from
		}
		var c suiteCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("mathverify_suite.jsonl line %d: %v", line, err)
		}
		if c.Want != 0 && c.Want != 1 {
			t.Fatalf("mathverify_suite.jsonl line %d: want %d", line, c.Want)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// suiteParams are the parameters of the function that a case's
// Math-Verify configuration corresponds to.
// Math-Verify parses the gold with the same extraction as the prediction,
// so the reference goes through the completion's extractors; its latex
// target alone reads no bare numbers, so last_number is left out with it;
// its float_rounding is our precision, its allow_set_relation_comp our
// inequality_for_interval.
func suiteParams(c suiteCase) string {
	extract := []string{"bare"}
	for _, t := range c.Config.MatchTypes {
		switch t {
		case "latex":
			extract = append(extract, "boxed", "answer_tag", "answer_is", "latex")
		case "expr":
			extract = append(extract, "answer_is", "last_number")
		}
	}
	extract = slices.Compact(extract)
	list := "[" + strings.Join(extract, ", ") + "]"
	return fmt.Sprintf("{extract: %s, reference_extract: %s, precision: %d, inequality_for_interval: %t}",
		list, list, c.Config.Precision, c.Config.AllowSetRelationComp)
}

// TestMathVerifySuite scores every case of Math-Verify's own test suite
// (the prediction as the completion, the gold as the reference) and
// compares with the verdict Math-Verify's tests expect. It fails on any
// false positive (1 where Math-Verify says 0) and when the agreement falls
// below the ratchet; -v lists the disagreements.
func TestMathVerifySuite(t *testing.T) {
	ctx := context.Background()
	agree, total, falsePos, skipped := 0, 0, 0, 0
	var disagree []string
	for _, c := range loadSuite(t) {
		if c.Skip != "" {
			skipped++
			continue
		}
		total++
		s, _, err := scorertest.Compile(scorers.Kind(mathverify.New), suiteParams(c))
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
	if total != suiteCases {
		t.Errorf("%d cases, the ratchet was set on %d: update suiteCases and suiteAgreement", total, suiteCases)
	}
	if agree < suiteAgreement {
		t.Errorf("agreement %d/%d is below the ratchet %d", agree, total, suiteAgreement)
	}
}

// clipText shortens a long case for the log.
func clipText(s string) string {
	if len(s) <= 120 {
		return s
	}
	return s[:60] + " … " + s[len(s)-50:]
}
