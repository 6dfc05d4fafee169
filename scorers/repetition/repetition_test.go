package repetition_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/repetition"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

func ptr(f float64) *float64 { return &f }

func TestCases(t *testing.T) {
	scorertest.RunCases(t, scorers.Kind(repetition.New), "testdata/cases.json", 1e-12)
}

// TestOpenR1Parity compares with open-r1's formula run in Python on GSM8K
// solutions (testdata/parity.jsonl, see testdata/README.md).
func TestOpenR1Parity(t *testing.T) {
	f, err := os.Open("testdata/parity.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	ctx := context.Background()
	n := 0
	for sc.Scan() {
		var c struct {
			Completion string
			NgramSize  int     `json:"ngram_size"`
			MaxPenalty float64 `json:"max_penalty"`
			Want       float64
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		s := scorertest.MustNew(t, repetition.New, repetition.Params{NgramSize: &c.NgramSize, MaxPenalty: &c.MaxPenalty})
		if got := s.Score(ctx, &scorers.Rollout{Completion: c.Completion}); got.Outcome != scorers.OK || math.Abs(got.Value-c.Want) > 1e-12 {
			t.Errorf("n=%d max_penalty=%v %q: got %+v, open-r1 %v", c.NgramSize, c.MaxPenalty, c.Completion, got, c.Want)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 200 {
		t.Fatalf("only %d parity cases", n)
	}
}

func TestReasons(t *testing.T) {
	ctx := context.Background()
	if got := scorertest.MustNew(t, repetition.New, repetition.Params{}).Score(ctx, &scorers.Rollout{Completion: "a b"}); got.Reason != "shorter than 3 words" {
		t.Errorf("short words: reason %q", got.Reason)
	}
	if got := scorertest.MustNew(t, repetition.New, repetition.Params{Unit: repetition.Chars, NgramSize: new(5)}).Score(ctx, &scorers.Rollout{Completion: "ab"}); got.Reason != "shorter than 5 chars" {
		t.Errorf("short chars: reason %q", got.Reason)
	}
}

func TestCancelled(t *testing.T) {
	s := scorertest.MustNew(t, repetition.New, repetition.Params{Unit: repetition.Chars})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Long enough to reach a ctx check.
	if got := s.Score(ctx, &scorers.Rollout{Completion: strings.Repeat("abcdefg", 10000)}); got.Outcome != scorers.Error {
		t.Errorf("got %+v, want an error", got)
	}
}

func TestConformance(t *testing.T) {
	cases := []*scorers.Rollout{
		{Completion: "a b c a b c"},
		{Completion: strings.Repeat("the answer is 18. ", 500)},
		{Completion: "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day."},
		{Completion: "哈哈哈哈哈哈"},
		{Completion: strings.Repeat("x", 100000)},
	}
	for name, p := range map[string]repetition.Params{
		"default":         {},
		"unigram":         {NgramSize: new(1), MaxPenalty: ptr(-0.5)},
		"chars":           {Unit: repetition.Chars, NgramSize: new(4), MaxPenalty: ptr(-2)},
		"no penalty":      {MaxPenalty: ptr(0)},
		"largest n":       {NgramSize: new(32)},
		"largest chars n": {Unit: repetition.Chars, NgramSize: new(32)},
	} {
		t.Run(name, func(t *testing.T) {
			s := scorertest.MustNew(t, repetition.New, p)
			lo, hi := s.Range()
			scorertest.Run(t, s, scorertest.Range{Min: lo, Max: hi}, cases)
		})
	}
}

func TestNewErrors(t *testing.T) {
	scorertest.RunRefusals(t, repetition.New, []scorertest.Refusal[repetition.Params]{
		{Name: "negative n", Params: repetition.Params{NgramSize: new(-1)}, Key: "ngram_size"},
		{Name: "n too large", Params: repetition.Params{NgramSize: new(33)}, Key: "ngram_size"},
		{Name: "positive penalty", Params: repetition.Params{MaxPenalty: ptr(0.5)}, Key: "max_penalty"},
		{Name: "NaN penalty", Params: repetition.Params{MaxPenalty: ptr(math.NaN())}, Key: "max_penalty"},
		{Name: "infinite penalty", Params: repetition.Params{MaxPenalty: ptr(math.Inf(-1))}, Key: "max_penalty"},
		{Name: "unknown unit", Params: repetition.Params{Unit: "tokens"}, Key: "unit"},
	})
}

func TestConfig(t *testing.T) {
	s := scorertest.MustCompile(t, scorers.Kind(repetition.New), "ngram_size: 2\nmax_penalty: -0.5\nunit: words\n")
	if got := s.Score(context.Background(), &scorers.Rollout{Completion: "a b a b"}); math.Abs(got.Value-(-1.0/6)) > 1e-15 {
		t.Errorf("Score = %+v", got)
	}
	// Defaults need no parameters at all.
	fn, err := scorers.Registry{"repetition": scorers.Kind(repetition.New)}.Compile(scorers.Spec{Name: "rep", Kind: "repetition"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fn.Scorer.Score(context.Background(), &scorers.Rollout{Completion: "a b c a b c"}); got.Value != -0.25 {
		t.Errorf("default Score = %+v, want -0.25", got)
	}
}
