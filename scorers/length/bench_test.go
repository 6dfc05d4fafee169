package length_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/length"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// loadGSM8K returns one rollout per GSM8K solution (about 300 bytes, 60
// words each), with a token count (a rough 1.3 per word) and a correctness
// that alternates.
func loadGSM8K(b *testing.B) []*scorers.Rollout {
	b.Helper()
	var rs []*scorers.Rollout
	for i, text := range scorertest.GSM8KTexts(b) {
		rs = append(rs, &scorers.Rollout{Completion: text, Fields: map[string]*structpb.Value{
			"completion_tokens": structpb.NewNumberValue(float64(len(text) / 4)),
			"correct":           structpb.NewBoolValue(i%2 == 0),
		}})
	}
	return rs
}

// BenchmarkScore is one evaluation (one function on one rollout) per mode
// and unit.
func BenchmarkScore(b *testing.B) {
	rs := loadGSM8K(b)
	for name, p := range map[string]length.Params{
		"overlong/words":  {Mode: length.Overlong, MaxLength: new(60), BufferLength: new(20)},
		"overlong/chars":  {Mode: length.Overlong, Unit: length.Chars, MaxLength: new(300), BufferLength: new(100)},
		"overlong/tokens": {Mode: length.Overlong, Unit: length.Tokens, MaxLength: new(80), BufferLength: new(20)},
		"cosine/words":    {Mode: length.Cosine, MaxLength: new(100)},
	} {
		b.Run(name, func(b *testing.B) {
			s := scorertest.MustNew(b, length.New, p)
			scorertest.Bench(b, s, rs, scorertest.IsOK)
		})
	}
}

// BenchmarkScoreGroup is the Kimi reward over groups of 8 and 64 GSM8K
// solutions; ns/op is per group, and rollouts/s counts rollouts.
func BenchmarkScoreGroup(b *testing.B) {
	rs := loadGSM8K(b)
	s := scorertest.MustNew(b, length.New, length.Params{Mode: length.Kimi})
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
