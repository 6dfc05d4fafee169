package scorertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// MathVerifySuiteAgreement is the least agreement with Math-Verify's own
// test suite (scorers/mathverify/testdata/mathverify_suite.jsonl, see the
// README beside it) that a test of it accepts, in cases out of
// MathVerifySuiteCases (the cases not left out): a ratchet, raised as the
// scorer learns, never lowered to let a change through. The suite's tests
// (in-process and through `rewardd score`) share it.
const (
	MathVerifySuiteAgreement = 254
	MathVerifySuiteCases     = 261
)

// MathVerifyCase is a line of the suite: a case of Math-Verify's tests/
// folder.
type MathVerifyCase struct {
	ID     string `json:"id"`
	Gold   string `json:"gold"`
	Pred   string `json:"pred"`
	Want   int    `json:"want"` // Math-Verify's expected verdict, 0 or 1
	Config struct {
		MatchTypes           []string `json:"match_types"`
		Precision            int      `json:"precision"`
		Strict               bool     `json:"strict"`
		AllowSetRelationComp bool     `json:"allow_set_relation_comp"`
		BoxedMatchPriority   int      `json:"boxed_match_priority"`
	} `json:"config"`
	Skip string `json:"skip"` // why the case is left out, when it is
}

// ReadMathVerifySuite reads the cases of the suite at path (its first line,
// which names the source, is not a case). Unlike the data sets beside the
// repository the suite is part of it: a missing file fails the test, as
// does a line that does not decode or a verdict other than 0 or 1.
func ReadMathVerifySuite(tb testing.TB, path string) []MathVerifyCase {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []MathVerifyCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue // where the cases come from
		}
		var c MathVerifyCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("%s line %d: %v", path, line, err)
		}
		if c.Want != 0 && c.Want != 1 {
			tb.Fatalf("%s line %d: want %d", path, line, c.Want)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return cases
}

// Params are the parameters, as a YAML flow mapping, of the kind math
// function that the case's Math-Verify configuration corresponds to.
// Math-Verify parses the gold with the same extraction as the prediction,
// so the reference goes through the completion's extractors; its latex
// target alone reads no bare numbers, so last_number is left out with it;
// its float_rounding is our precision, its allow_set_relation_comp our
// inequality_for_interval.
func (c MathVerifyCase) Params() string {
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
