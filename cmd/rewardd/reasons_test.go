package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestScoreOutcomesAndReasons (issue 19, item 1): each output row of
// `rewardd score` names every function's outcome, so that a null score
// says whether the function did not apply or could not decide, and gives
// an OK score's reason ("no answer found") apart from the errors; and
// (issue 31) a run with an ERROR row exits 1, every row still written,
// with a summary naming the function, its count and the first reason.
func TestScoreOutcomesAndReasons(t *testing.T) {
	cfg := writeConfig(t, `functions:
  - name: accuracy
    kind: exact_match
    extract: [answer_tag]
`)
	in := strings.Join([]string{
		`{"id": "right", "completion": "<answer>42</answer>", "answer": "42"}`,
		`{"id": "none", "completion": "I do not know.", "answer": "42"}`,
		`{"id": "unreferenced", "completion": "<answer>42</answer>"}`,
		`{"id": "malformed", "completion": "<answer>42</answer>", "answer": {"value": 42}}`,
	}, "\n") + "\n"
	out, stderr, exit := runRewardd(t, in, "score", "--config", cfg, "--in", "-")
	if exit != 1 || !strings.Contains(stderr, "1 of 4 rows have an ERROR score") ||
		!strings.Contains(stderr, `accuracy: 1, first on line 4 (id "malformed"): field "answer": holds an object`) {
		t.Errorf("score with an ERROR row: exit %d\n%s\nwant exit 1 and a summary", exit, stderr)
	}
	type row struct {
		ID       string              `json:"id"`
		Scores   map[string]*float64 `json:"scores"`
		Outcomes map[string]string   `json:"outcomes"`
		Errors   map[string]string   `json:"errors"`
		Reasons  map[string]string   `json:"reasons"`
	}
	var rows []row
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var r row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		rows = append(rows, r)
	}
	if len(rows) != 4 {
		t.Fatalf("%d output rows, want 4:\n%s", len(rows), out)
	}
	if r := rows[0]; r.Outcomes["accuracy"] != "ok" || len(r.Reasons) != 0 || len(r.Errors) != 0 {
		t.Errorf("right answer: %+v; want accuracy ok, no reasons, no errors", r)
	}
	if r := rows[1]; r.Outcomes["accuracy"] != "ok" || r.Scores["accuracy"] == nil || *r.Scores["accuracy"] != 0 || r.Reasons["accuracy"] != "no answer found" || r.Errors["accuracy"] != "" {
		t.Errorf("no answer: %+v; want accuracy ok 0 with the reason \"no answer found\" and no error", r)
	}
	if r := rows[2]; r.Outcomes["accuracy"] != "not_applicable" || r.Scores["accuracy"] != nil || r.Reasons["accuracy"] == "" || len(r.Errors) != 0 {
		t.Errorf("no reference: %+v; want accuracy not_applicable, null, with its reason in reasons (errors are ERROR's)", r)
	}
	if r := rows[3]; r.Outcomes["accuracy"] != "error" || r.Scores["accuracy"] != nil || r.Errors["accuracy"] == "" {
		t.Errorf("malformed reference: %+v; want accuracy error, null, with its reason in errors", r)
	}
}

// TestScoreWarnsLooseRows (issue 19, item 6): `rewardd score` with an
// aggregating config says on stderr that rows with neither a group nor a
// prompt are each a group of their own.
func TestScoreWarnsLooseRows(t *testing.T) {
	cfg := writeConfig(t, "functions:\n  - name: accuracy\n    kind: exact_match\naggregation: {mode: sum_then_normalize}\n")
	in := `{"completion": "42", "answer": "42"}` + "\n" + `{"completion": "41", "answer": "42"}` + "\n"
	_, stderr, exit := runRewardd(t, in, "score", "--config", cfg, "--in", "-")
	if exit != 0 || !strings.Contains(stderr, "-: rows 1 to 2: warning: 2 rollout(s) have neither a group nor a prompt") {
		t.Errorf("exit %d, stderr:\n%s\nwant a warning naming the rows and the 2 rollouts without a group", exit, stderr)
	}
}
