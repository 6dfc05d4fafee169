package similarity_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/scorertest"
	"github.com/rewardd/rewardd/scorers/similarity"
)

func TestCases(t *testing.T) {
	scorertest.RunCases(t, scorers.Kind(similarity.New), "testdata/cases.json", 1e-12)
}

// TestParity compares with other implementations on GSM8K-made pairs
// (testdata/parity.jsonl, see testdata/README.md).
func TestParity(t *testing.T) {
	f, err := os.Open("testdata/parity.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	scorer := map[string]*similarity.Scorer{}
	for _, m := range []string{similarity.Fuzzy, similarity.RougeL, similarity.BLEU} {
		scorer[m] = scorertest.MustNew(t, similarity.New, similarity.Params{Metric: m})
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	count := map[string]int{}
	for sc.Scan() {
		var c struct {
			Metric, Completion, Reference string
			Want                          float64
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		got := scorer[c.Metric].Score(context.Background(), scorertest.Rollout(c.Completion, structpb.NewStringValue(c.Reference)))
		if got.Outcome != scorers.OK || math.Abs(got.Value-c.Want) > 1e-12 {
			t.Errorf("%s %.60q vs %.60q: got %+v, want %v", c.Metric, c.Completion, c.Reference, got, c.Want)
		}
		count[c.Metric]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{similarity.Fuzzy, similarity.RougeL, similarity.BLEU} {
		if count[m] < 50 {
			t.Errorf("only %d parity cases for %s", count[m], m)
		}
	}
}

func TestReasons(t *testing.T) {
	ctx := context.Background()
	s := scorertest.MustNew(t, similarity.New, similarity.Params{Metric: similarity.Fuzzy, ReferenceField: "gold", MaxChars: new(10)})
	if got := s.Score(ctx, &scorers.Rollout{Completion: "x"}); got.Reason != `no reference in field "gold"` {
		t.Errorf("no reference: reason %q", got.Reason)
	}
	r := &scorers.Rollout{Completion: strings.Repeat("é", 11), Fields: map[string]*structpb.Value{"gold": structpb.NewStringValue("x")}}
	if got := s.Score(ctx, r); got.Reason != "the completion has 11 characters, over max_chars 10" {
		t.Errorf("over max_chars: reason %q", got.Reason)
	}
}

// TestBounded scores the largest texts the default max_chars lets through,
// with nothing in common but their alphabet: the LCS's worst case. A hang
// detector, not a speed assertion.
func TestBounded(t *testing.T) {
	a := []rune{}
	b := []rune{}
	for i := range 20000 {
		a = append(a, rune('a'+i*7%26))
		b = append(b, rune('a'+i*11%26))
	}
	ref := structpb.NewStringValue(string(b))
	for _, m := range []string{similarity.Fuzzy, similarity.RougeL, similarity.BLEU} {
		s := scorertest.MustNew(t, similarity.New, similarity.Params{Metric: m})
		start := time.Now()
		got := s.Score(context.Background(), scorertest.Rollout(string(a), ref))
		if got.Outcome != scorers.OK {
			t.Errorf("%s: %+v", m, got)
		}
		t.Logf("%s on 20,000 × 20,000 code points: %v (value %.4f)", m, time.Since(start), got.Value)
		if got := s.Score(context.Background(), scorertest.Rollout(string(a)+"x", ref)); got.Outcome != scorers.Error {
			t.Errorf("%s: 20,001 code points gave %+v, want an error", m, got)
		}
	}
	// Token LCS: 4,000 tokens from a vocabulary of 500 on each side.
	var ta, tb strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&ta, "w%d ", i*7%500)
		fmt.Fprintf(&tb, "w%d ", i*11%500)
	}
	for _, m := range []string{similarity.RougeL, similarity.BLEU} {
		start := time.Now()
		got := scorertest.MustNew(t, similarity.New, similarity.Params{Metric: m}).Score(context.Background(), scorertest.Rollout(ta.String(), structpb.NewStringValue(tb.String())))
		if got.Outcome != scorers.OK {
			t.Errorf("%s: %+v", m, got)
		}
		t.Logf("%s on 4,000 × 4,000 tokens: %v (value %.4f)", m, time.Since(start), got.Value)
	}
	// A cancelled context stops the LCS.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := scorertest.MustNew(t, similarity.New, similarity.Params{Metric: similarity.Fuzzy}).Score(ctx, scorertest.Rollout(string(a), ref)); got.Outcome != scorers.Error {
		t.Errorf("cancelled: got %+v, want an error", got)
	}
}

func TestConformance(t *testing.T) {
	gsm := "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every day at the farmer’s market.\n#### 18"
	cases := []*scorers.Rollout{
		scorertest.Rollout("this is a test", structpb.NewStringValue("this is a test!")),
		scorertest.Rollout(gsm, structpb.NewStringValue(strings.ReplaceAll(gsm, "9", "nine"))),
		scorertest.Rollout("the cat", structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
			structpb.NewStringValue("a dog"), structpb.NewStringValue("the cat sat"), structpb.NewNumberValue(7),
		}})),
		scorertest.Rollout(strings.Repeat("ab ", 6000), structpb.NewStringValue(strings.Repeat("ba ", 6000))),
		scorertest.Rollout("18", structpb.NewNumberValue(18)),
		scorertest.Rollout("x", nil),
	}
	for _, m := range []string{similarity.Fuzzy, similarity.RougeL, similarity.BLEU} {
		for name, p := range map[string]similarity.Params{
			"default":    {Metric: m},
			"normalized": {Metric: m, Normalize: []string{"strip", "lower", "whitespace", "punctuation"}, MaxChars: new(1000)},
		} {
			t.Run(m+"/"+name, func(t *testing.T) {
				scorertest.Run(t, scorertest.MustNew(t, similarity.New, p), scorertest.Unit, cases, "answer")
			})
		}
	}
}

func TestNewErrors(t *testing.T) {
	scorertest.RunRefusals(t, similarity.New, []scorertest.Refusal[similarity.Params]{
		{Name: "no metric", Params: similarity.Params{}, Key: "metric"},
		{Name: "unknown metric", Params: similarity.Params{Metric: "rouge"}, Key: "metric"},
		{Name: "unknown normalizer", Params: similarity.Params{Metric: similarity.Fuzzy, Normalize: []string{"numeric"}}, Key: "normalize"},
		{Name: "negative max_chars", Params: similarity.Params{Metric: similarity.Fuzzy, MaxChars: new(-1)}, Key: "max_chars"},
		{Name: "max_chars too large", Params: similarity.Params{Metric: similarity.Fuzzy, MaxChars: new(200001)}, Key: "max_chars"},
	})
}

func TestConfig(t *testing.T) {
	s := scorertest.MustCompile(t, scorers.Kind(similarity.New), "metric: rouge_l\nreference_field: summary\nnormalize: [lower]\nmax_chars: 5000\n")
	r := &scorers.Rollout{Completion: "The Cat", Fields: map[string]*structpb.Value{"summary": structpb.NewStringValue("the cat")}}
	if got := s.Score(context.Background(), r); got.Outcome != scorers.OK || got.Value != 1 {
		t.Errorf("Score = %+v, want 1", got)
	}
}
