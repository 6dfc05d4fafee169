package format

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// loadRollouts wraps each GSM8K solution as a model might: well formed
// (open-r1's newline layout), missing </answer>, or as a ```json block.
func loadRollouts(b *testing.B) (tagged, broken, fenced []*scorers.Rollout) {
	b.Helper()
	for _, text := range scorertest.GSM8KTexts(b) {
		work, final, _ := strings.Cut(text, "\n#### ")
		tagged = append(tagged, &scorers.Rollout{Completion: "<think>\n" + work + "\n</think>\n<answer>\n" + final + "\n</answer>"})
		broken = append(broken, &scorers.Rollout{Completion: "<think>\n" + work + "\n</think>\n<answer>\n" + final})
		obj, _ := json.Marshal(map[string]string{"reasoning": work, "answer": final})
		fenced = append(fenced, &scorers.Rollout{Completion: work + "\n```json\n" + string(obj) + "\n```"})
	}
	return tagged, broken, fenced
}

func bench(b *testing.B, p Params, rows []*scorers.Rollout) {
	s, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Score(ctx, rows[i%len(rows)])
	}
}

// BenchmarkScore measures each mode on GSM8K-sized completions, next to the
// way open-r1 computes the nearest reward (format_reward's regexp through
// Go's regexp; tag_count_reward's four counts).
func BenchmarkScore(b *testing.B) {
	tagged, broken, fenced := loadRollouts(b)
	b.Run("strict/ok", func(b *testing.B) { bench(b, Params{}, tagged) })
	b.Run("strict/broken", func(b *testing.B) { bench(b, Params{}, broken) })
	b.Run("strict/openr1_regexp", func(b *testing.B) {
		re := regexp.MustCompile(`(?sm)^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$`)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			re.MatchString(tagged[i%len(tagged)].Completion)
		}
	})
	b.Run("partial/ok", func(b *testing.B) { bench(b, Params{Mode: Partial}, tagged) })
	b.Run("partial/openr1_counts", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			text := tagged[i%len(tagged)].Completion
			for _, t := range []string{"<think>\n", "\n</think>\n", "\n<answer>\n", "\n</answer>"} {
				_ = strings.Count(text, t)
			}
		}
	})
	b.Run("json/fenced", func(b *testing.B) { bench(b, Params{Mode: JSON}, fenced) })
	b.Run("json/fenced_keys", func(b *testing.B) { bench(b, Params{Mode: JSON, RequiredKeys: []string{"answer"}}, fenced) })
}
