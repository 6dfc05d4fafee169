package similarity_test

import (
	"regexp"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/scorertest"
	"github.com/rewardd/rewardd/scorers/similarity"
)

// loadPairs returns GSM8K-sized rollouts (about 300 bytes, 60 words each):
// near, each solution against itself with the calculator notes
// (<<16-3-4=9>>) dropped from the completion, a close paraphrase; far, each
// solution against the next problem's.
func loadPairs(b *testing.B) (near, far []*scorers.Rollout) {
	b.Helper()
	sols := scorertest.GSM8KTexts(b)
	notes := regexp.MustCompile(`<<[^>]*>>`)
	for i, sol := range sols {
		near = append(near, scorertest.Rollout(notes.ReplaceAllString(sol, ""), structpb.NewStringValue(sol)))
		far = append(far, scorertest.Rollout(sols[(i+1)%len(sols)], structpb.NewStringValue(sol)))
	}
	return near, far
}

// BenchmarkScore is one evaluation (one function on one rollout) per metric,
// on GSM8K-sized pairs.
func BenchmarkScore(b *testing.B) {
	near, far := loadPairs(b)
	for _, m := range []string{similarity.Fuzzy, similarity.RougeL, similarity.BLEU} {
		for name, rs := range map[string][]*scorers.Rollout{"near": near, "far": far} {
			b.Run(m+"/"+name, func(b *testing.B) {
				s := scorertest.MustNew(b, similarity.New, similarity.Params{Metric: m})
				scorertest.Bench(b, s, rs, scorertest.IsOK)
			})
		}
	}
}

// BenchmarkScoreParallel reports fuzzy evaluations per second on all cores
// (GOMAXPROCS, see -cpu).
func BenchmarkScoreParallel(b *testing.B) {
	near, _ := loadPairs(b)
	s := scorertest.MustNew(b, similarity.New, similarity.Params{Metric: similarity.Fuzzy})
	scorertest.BenchParallel(b, s, near, scorertest.IsOK, "evals/s")
}

// BenchmarkScoreLong is fuzzy on the largest texts max_chars lets through by
// default: 20,000 code points on each side, little in common.
func BenchmarkScoreLong(b *testing.B) {
	var x, y []rune
	for i := range 20000 {
		x = append(x, rune('a'+i*7%26))
		y = append(y, rune('a'+i*11%26))
	}
	r := scorertest.Rollout(string(x), structpb.NewStringValue(string(y)))
	s := scorertest.MustNew(b, similarity.New, similarity.Params{Metric: similarity.Fuzzy})
	scorertest.Bench(b, s, []*scorers.Rollout{r}, scorertest.IsOK)
}
