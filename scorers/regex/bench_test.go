package regex

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// gsm8kPath holds GSM8K test solutions (~300–400 B each), realistic text for
// the benchmarks.
const gsm8kPath = "../../../shared/data/gsm8k_test.jsonl"

func loadGSM8K(b *testing.B) []*scorers.Rollout {
	b.Helper()
	f, err := os.Open(gsm8kPath)
	if err != nil {
		b.Skipf("GSM8K data not available: %v", err)
	}
	defer f.Close()
	var out []*scorers.Rollout
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct{ Answer string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			b.Fatal(err)
		}
		out = append(out, &scorers.Rollout{Completion: row.Answer})
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// benchParams are the workloads: the design's two GSM8K patterns, a count, a
// pattern absent from the data, and one the prefilter cannot help
// (case-folded letters, no literal).
var benchParams = []struct {
	name string
	p    Params
}{
	{"search_answer", Params{Pattern: `#### (-?[\d,]*\.?\d+)`}},
	{"match_tail", Params{Pattern: `(?s)^.*\n#### .+$`, Mode: Match}},
	{"fullmatch_tail", Params{Pattern: `(?s).*\n#### -?\d[\d,]*`, Mode: FullMatch}},
	{"count_calc3", Params{Pattern: `<<[^>]*>>`, Mode: Count, CountTarget: 3}},
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
