package repetition_test

import (
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/repetition"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// loadGSM8K returns the GSM8K solutions (about 300 bytes, 60 words each) as
// completions, and the same with their first line said three times more (a
// mildly repetitive completion).
func loadGSM8K(b *testing.B) (plain, repeated []*scorers.Rollout) {
	b.Helper()
	for _, text := range scorertest.GSM8KTexts(b) {
		first, _, _ := strings.Cut(text, "\n")
		plain = append(plain, &scorers.Rollout{Completion: text})
		repeated = append(repeated, &scorers.Rollout{Completion: strings.Repeat(first+"\n", 3) + text})
	}
	return plain, repeated
}

// joined returns the GSM8K solutions joined until n bytes: a long
// completion.
func joined(plain []*scorers.Rollout, n int) []*scorers.Rollout {
	var t strings.Builder
	for i := 0; t.Len() < n; i++ {
		t.WriteString(plain[i%len(plain)].Completion)
		t.WriteByte('\n')
	}
	return []*scorers.Rollout{{Completion: t.String()[:n]}}
}

// BenchmarkScore is one evaluation (one function on one rollout).
func BenchmarkScore(b *testing.B) {
	plain, repeated := loadGSM8K(b)
	for _, c := range []struct {
		name string
		p    repetition.Params
		rs   []*scorers.Rollout
	}{
		{"words/plain", repetition.Params{}, plain},
		{"words/repeated", repetition.Params{}, repeated},
		{"chars/plain", repetition.Params{Unit: repetition.Chars, NgramSize: new(8)}, plain},
		{"words/4KiB", repetition.Params{}, joined(plain, 4<<10)},
		{"words/32KiB", repetition.Params{}, joined(plain, 32<<10)},
		{"words/128KiB", repetition.Params{}, joined(plain, 128<<10)},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := scorertest.MustNew(b, repetition.New, c.p)
			b.SetBytes(int64(len(c.rs[0].Completion)))
			scorertest.Bench(b, s, c.rs, scorertest.IsOK)
		})
	}
}

// BenchmarkScoreParallel reports evaluations per second on all cores
// (GOMAXPROCS, see -cpu).
func BenchmarkScoreParallel(b *testing.B) {
	plain, _ := loadGSM8K(b)
	s := scorertest.MustNew(b, repetition.New, repetition.Params{})
	scorertest.BenchParallel(b, s, plain, scorertest.IsOK, "evals/s")
}
