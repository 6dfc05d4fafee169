package regex

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// loadGSM8K returns the GSM8K test solutions (~300–400 B each) as
// rollouts: realistic text for the benchmarks.
func loadGSM8K(b *testing.B) []*scorers.Rollout {
	b.Helper()
	var out []*scorers.Rollout
	for _, text := range scorertest.GSM8KTexts(b) {
		out = append(out, &scorers.Rollout{Completion: text})
	}
	return out
}

// benchParams are the workloads: two GSM8K patterns, a count, a
// pattern absent from the data, and one the prefilter cannot help
// (case-folded letters, no literal).
var benchParams = []struct {
	name string
	p    Params
}{
	{"search_answer", Params{Pattern: `#### (-?[\d,]*\.?\d+)`}},
	{"match_tail", Params{Pattern: `(?s)^.*\n#### .+$`, Mode: Match}},
	{"fullmatch_tail", Params{Pattern: `(?s).*\n#### -?\d[\d,]*`, Mode: FullMatch}},
	{"count_calc3", Params{Pattern: `<<[^>]*>>`, Mode: Count, CountTarget: new(3)}},
	{"search_absent", Params{Pattern: `\\boxed\{`}},
	{"search_fold", Params{Pattern: `(?i)so (he|she|they) (has|had)`}},
}

// BenchmarkScore compares, per workload, Score (prefilter) with the plain
// regexp on the same texts (baseline). Each op is one rollout.
func BenchmarkScore(b *testing.B) {
	rows := loadGSM8K(b)
	ctx := context.Background()
	for _, bp := range benchParams {
		b.Run(bp.name, func(b *testing.B) {
			s, err := New(bp.p)
			if err != nil {
				b.Fatal(err)
			}
			ref, ok := plain(bp.p)
			if !ok {
				b.Fatal("plain regexp does not compile")
			}
			b.Run("prefilter", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					s.Score(ctx, rows[i%len(rows)])
				}
			})
			b.Run("baseline", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					ref(rows[i%len(rows)].Completion)
				}
			})
		})
	}
}

// BenchmarkRowPattern scores with the pattern taken from a row field (cache
// hit path), from all cores.
func BenchmarkRowPattern(b *testing.B) {
	rows := loadGSM8K(b)
	s, err := New(Params{PatternField: "pattern"})
	if err != nil {
		b.Fatal(err)
	}
	fields := map[string]*structpb.Value{"pattern": structpb.NewStringValue(`#### (-?[\d,]*\.?\d+)`)}
	for _, r := range rows {
		r.Fields = fields
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for i := 0; pb.Next(); i++ {
			s.Score(ctx, rows[i%len(rows)])
		}
	})
}
