package instructions_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/instructions"
)

// BenchmarkPalm2 scores the 156 PaLM 2 responses, every instruction of a
// row in one call, strictly and loosely: one op is the 312 scores.
func BenchmarkPalm2(b *testing.B) {
	rows, _ := palm2Rows(b)
	rollouts := make([]*scorers.Rollout, len(rows))
	for i, row := range rows {
		rollouts[i] = row.rollout(b, row.InstructionIDList, row.Kwargs)
	}
	benchStrictLoose(b, rollouts)
}

// BenchmarkAll541 scores IFEval's 541 prompts, strictly and loosely, each
// with a PaLM 2 response (those of other prompts, in turn, where a prompt
// has none: bench/ifeval/rows.py's rows): one op is the 1,082 scores.
func BenchmarkAll541(b *testing.B) {
	rows := cycledRows(b)
	rollouts := make([]*scorers.Rollout, len(rows))
	for i, row := range rows {
		rollouts[i] = row.rollout(b, row.InstructionIDList, row.Kwargs)
	}
	benchStrictLoose(b, rollouts)
}

// benchStrictLoose scores every rollout strictly and loosely, with new
// scorers (so new memories of languages and sentence counts) each op,
// made outside the timer.
func benchStrictLoose(b *testing.B, rollouts []*scorers.Rollout) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		strict, err := instructions.New(instructions.Params{})
		if err != nil {
			b.Fatal(err)
		}
		loose, err := instructions.New(instructions.Params{Loose: new(true)})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, r := range rollouts {
			strict.Score(ctx, r)
			loose.Score(ctx, r)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(rollouts)), "µs/row")
}

// BenchmarkIFBench290 scores IFBench's 290 published responses with their
// instructions (those rewardd refuses answer at once), strictly and
// loosely: one op is the 580 scores.
func BenchmarkIFBench290(b *testing.B) {
	data, err := os.ReadFile("testdata/ifbench_reference_290.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var rollouts []*scorers.Rollout
	for line := range strings.Lines(string(data)) {
		var r struct {
			InstructionIDList []any `json:"instruction_id_list"`
			Kwargs            []any `json:"kwargs"`
			Response          string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			b.Fatal(err)
		}
		row, err := structpb.NewStruct(map[string]any{"instruction_id_list": r.InstructionIDList, "kwargs": r.Kwargs})
		if err != nil {
			b.Fatal(err)
		}
		rollouts = append(rollouts, &scorers.Rollout{Completion: r.Response, Fields: row.GetFields()})
	}
	benchStrictLoose(b, rollouts)
}
