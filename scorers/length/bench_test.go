package length_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/length"
)

// gsm8kPath holds GSM8K test solutions (about 300 bytes, 60 words each),
// used as completions.
const gsm8kPath = "../../../shared/data/gsm8k_test.jsonl"

// loadGSM8K returns one rollout per GSM8K solution, with a token count (a
// rough 1.3 per word) and a correctness that alternates.
func loadGSM8K(b *testing.B) []*scorers.Rollout {
	b.Helper()
	f, err := os.Open(gsm8kPath)
	if err != nil {
		b.Skipf("GSM8K data not available: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var rs []*scorers.Rollout
	for i := 0; sc.Scan(); i++ {
		var row struct{ Answer string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			b.Fatal(err)
		}
		rs = append(rs, &scorers.Rollout{Completion: row.Answer, Fields: map[string]*structpb.Value{
			"completion_tokens": structpb.NewNumberValue(float64(len(row.Answer) / 4)),
			"correct":           structpb.NewBoolValue(i%2 == 0),
		}})
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return rs
}

// BenchmarkScore is one evaluation (one function on one rollout) per mode
// and unit.
func BenchmarkScore(b *testing.B) {
	rs := loadGSM8K(b)
	for name, p := range map[string]length.Params{
		"overlong/words":  {Mode: length.Overlong, MaxLength: 60, BufferLength: 20},
		"overlong/chars":  {Mode: length.Overlong, Unit: length.Chars, MaxLength: 300, BufferLength: 100},
		"overlong/tokens": {Mode: length.Overlong, Unit: length.Tokens, MaxLength: 80, BufferLength: 20},
		"cosine/words":    {Mode: length.Cosine, MaxLength: 100},
	} {
		b.Run(name, func(b *testing.B) {
			s := mustNew(b, p)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if res := s.Score(ctx, rs[i%len(rs)]); res.Outcome != scorers.OK {
					b.Fatal(res)
				}
				i++
			}
		})
	}
}

// BenchmarkScoreGroup is the Kimi reward over groups of 8 and 64 GSM8K
// solutions; ns/op is per group, and rollouts/s counts rollouts.
func BenchmarkScoreGroup(b *testing.B) {
	rs := loadGSM8K(b)
	s := mustNew(b, length.Params{Mode: length.Kimi})
	for _, g := range []int{8, 64} {
		b.Run(map[int]string{8: "G=8", 64: "G=64"}[g], func(b *testing.B) {
			out := make([]scorers.Result, g)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				lo := (i * g) % (len(rs) - g)
				s.ScoreGroup(ctx, rs[lo:lo+g], out)
				i++
			}
			b.ReportMetric(float64(b.N*g)/b.Elapsed().Seconds(), "rollouts/s")
		})
	}
}
