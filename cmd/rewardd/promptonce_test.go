package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/server/config"
)

// TestPromptOnceMatchesScore: rows in GRPO groups (four completions of each
// question) scored by `rewardd score` from JSONL, and the same rows sent to
// `rewardd serve` in the prompt-once form (each question once, the answer
// a prompt column, a per-rollout column), get the same scores and
// advantages.
func TestPromptOnceMatchesScore(t *testing.T) {
	rows := gsm8kRows(t, 160)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "agg.yml")
	if err := os.WriteFile(cfgPath, append(config.Default(), "aggregation: {mode: sum_then_normalize, scale: group}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	req := &rewardv1.ScoreRequest{
		Aggregation:   &rewardv1.Aggregation{},
		PromptFields:  []*rewardv1.FieldColumn{{Name: "answer"}},
		RolloutFields: []*rewardv1.FieldColumn{{Name: "completion_tokens"}},
	}
	var in bytes.Buffer
	for i, row := range rows {
		// Rows 4k..4k+3 answer the question of row 4k, with its answer.
		head := rows[i/4*4]
		row["prompt"], row["answer"] = head["prompt"], head["answer"]
		row["completion_tokens"] = float64(len(row["completion"].(string)) / 4)
		line, err := json.Marshal(row)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(line)
		in.WriteByte('\n')
		if i%4 == 0 {
			req.Prompts = append(req.Prompts, head["prompt"].(string))
			req.PromptFields[0].Values = append(req.PromptFields[0].Values, structpb.NewStringValue(head["answer"].(string)))
		}
		req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Id: row["id"].(string), Completion: row["completion"].(string), PromptIndex: uint32(i / 4)})
		req.RolloutFields[0].Values = append(req.RolloutFields[0].Values, structpb.NewNumberValue(row["completion_tokens"].(float64)))
	}

	resp, err := startServer(t, "--config", cfgPath).client(t).Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}

	inPath, outPath := filepath.Join(dir, "rows.jsonl"), filepath.Join(dir, "scores.jsonl")
	if err := os.WriteFile(inPath, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, exit := runRewardd(t, "", "score", "--in", inPath, "--out", outPath, "--config", cfgPath); exit != 0 {
		t.Fatalf("rewardd score: exit %d: %s", exit, stderr)
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) != len(rows) {
		t.Fatalf("%d output rows for %d rows", len(lines), len(rows))
	}
	same := func(got *float64, want float64) bool {
		return got == nil && math.IsNaN(want) || got != nil && math.Abs(*got-want) < 1e-12
	}
	for i, line := range lines {
		var o struct {
			ID        string              `json:"id"`
			Scores    map[string]*float64 `json:"scores"`
			Advantage *float64            `json:"advantage"`
		}
		if err := json.Unmarshal(line, &o); err != nil {
			t.Fatalf("output line %d: %v", i+1, err)
		}
		for _, fs := range resp.GetFunctions() {
			if got, want := o.Scores[fs.GetName()], fs.GetValues()[i]; !same(got, want) {
				t.Errorf("row %d %s: rewardd score says %v, the prompt-once request %v", i, fs.GetName(), got, want)
			}
		}
		if !same(o.Advantage, resp.GetAdvantages()[i]) {
			t.Errorf("row %d: advantage %v from rewardd score, %v from the prompt-once request", i, o.Advantage, resp.GetAdvantages()[i])
		}
	}
}
