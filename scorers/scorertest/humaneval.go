package scorertest

import "testing"

// HumanEvalRow is one HumanEval problem as its data file has it.
type HumanEvalRow struct {
	TaskID            string `json:"task_id"`
	Prompt            string `json:"prompt"`
	CanonicalSolution string `json:"canonical_solution"`
	Test              string `json:"test"`
	EntryPoint        string `json:"entry_point"`
}

// HumanEval reads the 164 HumanEval problems,
// ../shared/data/humaneval.jsonl from the repository root. It skips the
// test when the file cannot be opened and fails it when the file does not
// hold 164 rows.
func HumanEval(tb testing.TB) []HumanEvalRow {
	tb.Helper()
	path := dataPath(tb, "humaneval.jsonl")
	rows := ReadJSONL[HumanEvalRow](tb, path)
	if len(rows) != 164 {
		tb.Fatalf("%s: %d rows, want 164", path, len(rows))
	}
	return rows
}

// HumanEvalTask is the HumanEval problem named id ("HumanEval/38"); it
// fails the test when there is none.
func HumanEvalTask(tb testing.TB, id string) HumanEvalRow {
	tb.Helper()
	for _, r := range HumanEval(tb) {
		if r.TaskID == id {
			return r
		}
	}
	tb.Fatalf("no %s in the HumanEval data", id)
	return HumanEvalRow{}
}
