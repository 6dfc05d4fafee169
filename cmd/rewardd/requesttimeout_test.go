package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// timeoutCodeConfig serves an io code_exec function whose tests may run
// longer than the request_timeout, so that a request's limit runs out
// while a program still runs.
const timeoutCodeConfig = `functions:
  - name: io
    kind: code_exec
    test_style: io
    limits: {cpu_seconds: 10, wall_seconds: 30}
limits:
  request_timeout: 4s
`

// timeoutCodeRows are a right program, a wrong one, and one that sleeps
// past the request_timeout, last: the two before it are scored before it
// starts, in whatever spans the engine cuts.
func timeoutCodeRows() []map[string]any {
	tests := []any{map[string]any{"stdin": "2\n", "stdout": "4\n"}}
	row := func(id, program string) map[string]any {
		return map[string]any{"id": id, "completion": "```python\n" + program + "\n```", "tests": tests}
	}
	return []map[string]any{
		row("right", "print(2 * int(input()))"),
		row("wrong", "print(int(input()) + 1)"),
		row("sleeper", "import time\ntime.sleep(60)"),
	}
}

const codeTimeoutReason = "not scored: the request ran past limits.request_timeout (4s)"

// TestRequestTimeoutCodeExec: with a real sandbox, a batch whose last
// program sleeps past limits.request_timeout keeps the scores of the
// programs that ran, and its sleeper is ERROR naming the limit, over gRPC
// from `rewardd serve` and in `rewardd score`'s output rows.
func TestRequestTimeoutCodeExec(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	config := writeConfig(t, timeoutCodeConfig)
	rows := timeoutCodeRows()
	want := map[string]float64{"right": 1, "wrong": 0}

	t.Run("Score", func(t *testing.T) {
		srv := startServer(t, "--config", config, "--workers", "2")
		req := &rewardv1.ScoreRequest{}
		for _, r := range rows {
			fields, err := structpb.NewStruct(map[string]any{"tests": r["tests"]})
			if err != nil {
				t.Fatal(err)
			}
			req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Id: r["id"].(string), Completion: r["completion"].(string), Fields: fields})
		}
		resp, err := srv.client(t).Score(context.Background(), req)
		if err != nil {
			t.Fatalf("Score: %v, want the programs that ran scored", err)
		}
		fs := resp.GetFunctions()[0]
		for i, r := range rows {
			id, st, v, reason := r["id"].(string), fs.GetStatus()[i], fs.GetValues()[i], fs.GetErrors()[int32(i)]
			if w, scored := want[id]; scored && (st != rewardv1.ScoreStatus_SCORE_STATUS_OK || v != w) {
				t.Errorf("%s: %v %v %q, want OK %v", id, st, v, reason, w)
			} else if !scored && (st != rewardv1.ScoreStatus_SCORE_STATUS_ERROR || !math.IsNaN(v) || reason != codeTimeoutReason) {
				t.Errorf("%s: %v %v %q, want ERROR %q", id, st, v, reason, codeTimeoutReason)
			}
		}
		if w := strings.Join(resp.GetWarnings(), "\n"); !strings.Contains(w, "1 of 3 rollouts not scored") {
			t.Errorf("warnings %q: want one saying 1 of the 3 rollouts was not scored", w)
		}
	})

	t.Run("JSONL", func(t *testing.T) {
		in := filepath.Join(t.TempDir(), "rows.jsonl")
		var b strings.Builder
		for _, r := range rows {
			line, _ := json.Marshal(r)
			b.Write(append(line, '\n'))
		}
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, exit := runRewardd(t, "", "score", "--config", config, "--in", in, "--workers", "2")
		// Every row is answered (below); one is an ERROR, so the exit
		// status is 1.
		if exit != 1 {
			t.Fatalf("rewardd score: exit %d, want 1 (every row answered, one of them an ERROR); stderr:\n%s", exit, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != len(rows) {
			t.Fatalf("%d output rows for %d input rows:\n%s", len(lines), len(rows), stdout)
		}
		for i, line := range lines {
			var out struct {
				ID     string              `json:"id"`
				Scores map[string]*float64 `json:"scores"`
				Errors map[string]string   `json:"errors"`
			}
			if err := json.Unmarshal([]byte(line), &out); err != nil {
				t.Fatalf("output row %d: %v: %s", i+1, err, line)
			}
			got := out.Scores["io"]
			if w, scored := want[out.ID]; scored && (got == nil || *got != w) {
				t.Errorf("%s: %s, want io %v", out.ID, line, w)
			} else if !scored && (got != nil || out.Errors["io"] != codeTimeoutReason) {
				t.Errorf("%s: %s, want io null with the error %q", out.ID, line, codeTimeoutReason)
			}
		}
		if !strings.Contains(stderr, "warning: the request ran past limits.request_timeout (4s)") {
			t.Errorf("stderr does not warn that the batch ran past its request_timeout:\n%s", stderr)
		}
	})
}
