package scorertest

import (
	"context"
	"testing"

	"github.com/rewardd/rewardd/scorers"
)

// Bench scores rs in turn, one rollout per iteration of b.Loop, with
// allocations reported; it fails on the first result want refuses.
func Bench(b *testing.B, s scorers.Scorer, rs []*scorers.Rollout, want func(scorers.Result) bool) {
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if res := s.Score(ctx, rs[i%len(rs)]); !want(res) {
			b.Fatal(res)
		}
		i++
	}
}

// BenchParallel is Bench on all cores (GOMAXPROCS, see -cpu), and reports
// the evaluations per second as the metric unit ("evals/s").
func BenchParallel(b *testing.B, s scorers.Scorer, rs []*scorers.Rollout, want func(scorers.Result) bool, unit string) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		i := 0
		for pb.Next() {
			if res := s.Score(ctx, rs[i%len(rs)]); !want(res) {
				b.Fatal(res)
			}
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

// IsOK is a want for Bench: the outcome is OK.
func IsOK(res scorers.Result) bool { return res.Outcome == scorers.OK }

// IsOne is a want for Bench: the value is 1.
func IsOne(res scorers.Result) bool { return res.Value == 1 }
