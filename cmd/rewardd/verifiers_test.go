package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestScoreVerifiers runs `rewardd score` with one function of each of the
// kinds instruction_following, multiple_choice, json_schema and tool_call
// on rows that carry their fields as a dataset would (IFEval's lists of
// ids and kwargs dicts, a schema object, BFCL's expected calls): the row
// fields reach the scorers through JSONL, and each scores what it should;
// an unknown instruction id is an ERROR naming it.
func TestScoreVerifiers(t *testing.T) {
	cfg := writeConfig(t, `functions:
  - name: ifeval
    kind: instruction_following
    scoring: fraction
  - name: choice
    kind: multiple_choice
  - name: schema
    kind: json_schema
    schema_field: schema
  - name: tools
    kind: tool_call
`)
	rows := []string{
		`{"id": "ifeval", "completion": "all lowercase, no exclamation", "instruction_id_list": ["change_case:english_lowercase", "punctuation:no_comma"], "kwargs": [{}, null]}`,
		`{"id": "choice", "completion": "Thinking...\nThe answer is (C).", "answer": 2}`,
		`{"id": "schema", "completion": "` + "```json\\n{\\\"n\\\": \\\"x\\\"}\\n```" + `", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}`,
		`{"id": "tools", "completion": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"paris\"}}</tool_call>", "tool_calls": [{"get_weather": {"city": ["Paris"], "unit": ["celsius", ""]}}]}`,
		`{"id": "unknown-instruction", "completion": "x", "instruction_id_list": ["punctuation:no_semicolon"]}`,
	}
	// The unknown instruction is an ERROR, so rewardd score exits 1 after
	// writing every row, and says which row it was.
	out, stderr, exit := runRewardd(t, strings.Join(rows, "\n")+"\n", "score", "--config", cfg, "--in", "-")
	if exit != 1 || !strings.Contains(stderr, `"unknown-instruction"`) {
		t.Fatalf("exit %d, want 1 naming the row unknown-instruction: %s", exit, stderr)
	}
	want := map[string]map[string]any{
		"ifeval":              {"ifeval": 0.5},
		"choice":              {"choice": 1.0},
		"schema":              {"schema": 0.0},
		"tools":               {"tools": 1.0},
		"unknown-instruction": {"ifeval": nil},
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(rows) {
		t.Fatalf("%d output rows, want %d:\n%s", len(lines), len(rows), out)
	}
	for _, line := range lines {
		var o struct {
			ID       string
			Scores   map[string]*float64
			Outcomes map[string]string
			Reasons  map[string]string
			Errors   map[string]string
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		for fn, w := range want[o.ID] {
			got := o.Scores[fn]
			switch w := w.(type) {
			case float64:
				if got == nil || *got != w {
					t.Errorf("%s: %s scored %v (%s), want %v", o.ID, fn, got, o.Reasons[fn], w)
				}
			case nil:
				if got != nil || o.Outcomes[fn] != "error" || !strings.Contains(o.Errors[fn], "punctuation:no_semicolon") {
					t.Errorf("%s: %s scored %v, %s %q; want an error naming the id", o.ID, fn, got, o.Outcomes[fn], o.Errors[fn])
				}
			}
		}
		if o.ID == "schema" && !strings.Contains(o.Reasons["schema"], "at /n") {
			t.Errorf("schema reason %q does not name /n", o.Reasons["schema"])
		}
	}
}
