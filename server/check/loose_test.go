package check_test

import (
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server/check"
)

// TestRowsWithoutGroup (issue 19, item 6): sample rows with neither a group
// nor a prompt are each a group of their own, and the check says so, naming
// the first; it counts them as groups of one, as aggregation does, not as
// one group of every such row.
func TestRowsWithoutGroup(t *testing.T) {
	const cfg = `
functions:
  - name: accuracy
    kind: exact_match
    extract: [answer_tag]
`
	const samples = `{"group": "a", "completion": "<answer>4</answer>", "answer": "4"}
{"group": "a", "completion": "<answer>5</answer>", "answer": "4"}
{"completion": "<answer>4</answer>", "answer": "4"}
{"completion": "<answer>5</answer>", "answer": "4"}
{"completion": "<answer>6</answer>", "answer": "4"}
`
	rows, _ := readRows(t, samples)
	r := mustRun(t, check.Input{
		ConfigName: "test.yml", Service: newService(t, cfg, builtin.Registry()), SamplesName: "samples.jsonl", Rows: rows,
	})
	assertFindings(t, r, finding{check.Warning, check.CodeNoGroup, ""})
	for _, f := range r.Findings {
		if f.Code == check.CodeNoGroup && (!strings.Contains(f.Message, "3 of 5 rows") || !strings.Contains(f.Message, "samples.jsonl:3")) {
			t.Errorf("finding %q: want the count (3 of 5 rows) and the first row (samples.jsonl:3)", f.Message)
		}
	}
	if r.Samples.Groups != 4 {
		t.Errorf("%d groups, want 4: group a, and each row without one", r.Samples.Groups)
	}
}
