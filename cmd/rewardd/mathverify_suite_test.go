package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// TestScoreMathVerifySuite runs Math-Verify's own test suite through a
// `rewardd score` process: the cases are grouped by the math parameters
// their Math-Verify options map to (scorertest.MathVerifyCase.Params, as
// TestMathVerifySuite maps them), the config has one kind math function
// per distinct parameter set, each case is a JSONL row (the prediction as
// the completion, the gold in "answer"), and its verdict is read from its
// own function's column. It wants the same agreement as the in-process
// test (at least the ratchet, no false positive) and, case by case, left
// out ones included, the outcome and value the scorer gives in process.
func TestScoreMathVerifySuite(t *testing.T) {
	cases := scorertest.ReadMathVerifySuite(t, "../../scorers/mathverify/testdata/mathverify_suite.jsonl")

	// One function per distinct parameter set, named in order of first use.
	fnOf := map[string]string{}             // params → function name
	scorerOf := map[string]scorers.Scorer{} // function name → its scorer, in process
	var params []string                     // of each function, in order
	for _, c := range cases {
		p := c.Params()
		if _, ok := fnOf[p]; ok {
			continue
		}
		s, _, err := scorertest.Compile(scorers.Kind(mathverify.New), p)
		if err != nil {
			t.Fatalf("%s: %s: %v", c.ID, p, err)
		}
		fnOf[p] = fmt.Sprintf("mv%d", len(params))
		scorerOf[fnOf[p]] = s
		params = append(params, p)
	}
	var entries []map[string]any
	for _, p := range params {
		entry := map[string]any{}
		if err := yaml.Unmarshal([]byte(p), &entry); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		entry["name"], entry["kind"] = fnOf[p], "math"
		entries = append(entries, entry)
	}
	cfgText, err := yaml.Marshal(map[string]any{"functions": entries})
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, string(cfgText))

	var in strings.Builder
	enc := json.NewEncoder(&in)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		if err := enc.Encode(map[string]string{"id": c.ID, "completion": c.Pred, "answer": c.Gold}); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, exit := runRewardd(t, in.String(), "score", "--config", cfg, "--in", "-")
	if exit != 0 {
		t.Fatalf("rewardd score exit %d: %s", exit, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d output rows for %d cases", len(lines), len(cases))
	}

	ctx := context.Background()
	agree, total, falsePos := 0, 0, 0
	for i, c := range cases {
		var o struct {
			ID       string
			Scores   map[string]*float64
			Outcomes map[string]string
		}
		if err := json.Unmarshal([]byte(lines[i]), &o); err != nil {
			t.Fatalf("output row %d: %v", i+1, err)
		}
		if o.ID != c.ID {
			t.Fatalf("output row %d is %q, want %q", i+1, o.ID, c.ID)
		}
		fn := fnOf[c.Params()]
		got := verdictOf(o.Outcomes[fn], o.Scores[fn])
		r := scorerOf[fn].Score(ctx, scorertest.Rollout(c.Pred, structpb.NewStringValue(c.Gold)))
		inProcess := verdictOf(r.Outcome.String(), &r.Value)
		if got != inProcess {
			t.Errorf("%s (%s): rewardd score says %s, the scorer in process %s", c.ID, fn, got, inProcess)
		}
		if c.Skip != "" {
			continue
		}
		total++
		switch {
		case got == fmt.Sprintf("ok %d", c.Want):
			agree++
		case got == "ok 1":
			falsePos++
			t.Errorf("%s: false positive: gold %q, pred %q scores 1; Math-Verify says 0", c.ID, c.Gold, c.Pred)
		}
	}
	t.Logf("rewardd score on Math-Verify's suite, %d functions: %d/%d agree, %d false positives", len(params), agree, total, falsePos)
	if total != scorertest.MathVerifySuiteCases {
		t.Errorf("%d cases, the ratchet was set on %d", total, scorertest.MathVerifySuiteCases)
	}
	if agree < scorertest.MathVerifySuiteAgreement {
		t.Errorf("agreement %d/%d is below the ratchet %d", agree, total, scorertest.MathVerifySuiteAgreement)
	}
}

// verdictOf writes an outcome and, when it is OK, its value: "ok 1",
// "ok 0", "not_applicable", "error".
func verdictOf(outcome string, value *float64) string {
	if outcome != "ok" {
		return outcome
	}
	if value == nil {
		return "ok without a value"
	}
	return fmt.Sprintf("ok %g", *value)
}
