package exactmatch_test

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// benchRollouts builds GSM8K-sized rollouts (about 400 bytes) from the gold
// solutions in testdata, each ending its answer the way the named style does.
func benchRollouts(b *testing.B, style string) []*scorers.Rollout {
	rows := scorertest.ReadGSM8K(b, "testdata/gsm8k_sample.jsonl")
	rs := make([]*scorers.Rollout, len(rows))
	for i, row := range rows {
		var c string
		switch style {
		case "gsm8k":
			c = row.Solution
		case "last_number":
			c = row.Body + "So the answer is " + row.Final + "."
		case "boxed":
			c = row.Body + `The final answer is $\boxed{` + row.Final + `}$.`
		case "answer_tag":
			c = "<think>" + row.Body + "</think>\n<answer>" + row.Final + "</answer>"
		case "wrong":
			c = row.Body + "So the answer is " + row.Final + "1."
		}
		rs[i] = scorertest.Rollout(c, structpb.NewStringValue(row.Final))
	}
	return rs
}

// BenchmarkScore is one evaluation (one function on one rollout) with the
// typical configuration, per style of completion.
func BenchmarkScore(b *testing.B) {
	s := scorertest.MustNew(b, exactmatch.New, typical)
	for _, style := range []string{"gsm8k", "last_number", "boxed", "answer_tag", "wrong"} {
		b.Run(style, func(b *testing.B) {
			rs := benchRollouts(b, style)
			b.SetBytes(int64(len(rs[0].Completion)))
			scorertest.Bench(b, s, rs, scorertest.IsOK)
		})
	}
}

// BenchmarkScoreParallel reports evaluations per second on all cores
// (GOMAXPROCS, see -cpu).
func BenchmarkScoreParallel(b *testing.B) {
	s := scorertest.MustNew(b, exactmatch.New, typical)
	rs := benchRollouts(b, "last_number")
	scorertest.BenchParallel(b, s, rs, scorertest.IsOne, "evals/s")
}

// BenchmarkScoreRegex is the regex extractor for comparison: the slow path.
func BenchmarkScoreRegex(b *testing.B) {
	p := typical
	p.Extract = []string{"regex"}
	p.ExtractPattern = `answer is \$?(-?[\d,]*\.?\d+)`
	s := scorertest.MustNew(b, exactmatch.New, p)
	rs := benchRollouts(b, "last_number")
	scorertest.Bench(b, s, rs, scorertest.IsOne)
}
