package regex_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/regex"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

func rollout(completion string) *scorers.Rollout {
	return &scorers.Rollout{Completion: completion}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name string
		p    regex.Params
		text string
		want float64
	}{
		{"search hit", regex.Params{Pattern: `#### (-?[\d,]*\.?\d+)`}, "so 3+4=7\n#### 7", 1},
		{"search miss", regex.Params{Pattern: `#### (-?[\d,]*\.?\d+)`}, "so 3+4=7\n#### seven", 0},
		{"search default mode anywhere", regex.Params{Pattern: `b`}, "abc", 1},
		{"match at start", regex.Params{Pattern: `ab`, Mode: regex.Match}, "abc", 1},
		{"match not at start", regex.Params{Pattern: `bc`, Mode: regex.Match}, "abc", 0},
		{"match m flag keeps \\A", regex.Params{Pattern: `bc`, Mode: regex.Match, Flags: "m"}, "a\nbc", 0},
		{"match ^ with m is still \\A", regex.Params{Pattern: `^bc`, Mode: regex.Match, Flags: "m"}, "a\nbc", 0},
		{"search ^ with m at a line", regex.Params{Pattern: `^bc$`, Flags: "m"}, "a\nbc\nd", 1},
		{"search ^ without m", regex.Params{Pattern: `^bc$`}, "a\nbc\nd", 0},
		{"fullmatch whole", regex.Params{Pattern: `a.c`, Mode: regex.FullMatch}, "abc", 1},
		{"fullmatch longer text", regex.Params{Pattern: `a.c`, Mode: regex.FullMatch}, "abcd", 0},
		{"fullmatch alternation needs whole", regex.Params{Pattern: `a|ab`, Mode: regex.FullMatch}, "ab", 1},
		{"fullmatch m flag keeps \\z", regex.Params{Pattern: `abc$`, Mode: regex.FullMatch, Flags: "m"}, "abc\n", 0},
		{"dot without s", regex.Params{Pattern: `a.c`}, "a\nc", 0},
		{"dot with s", regex.Params{Pattern: `a.c`, Flags: "s"}, "a\nc", 1},
		{"case with i", regex.Params{Pattern: `hello`, Flags: "i"}, "HeLLo", 1},
		{"case without i", regex.Params{Pattern: `hello`}, "HeLLo", 0},
		{"kelvin sign folds to k", regex.Params{Pattern: `k`, Flags: "i"}, "\u212A", 1},
		{"count 0 of 3", regex.Params{Pattern: `\[\d+\]`, Mode: regex.Count, CountTarget: new(3)}, "no cites", 0},
		{"count 2 of 3", regex.Params{Pattern: `\[\d+\]`, Mode: regex.Count, CountTarget: new(3)}, "see [1] and [2]", 2.0 / 3},
		{"count 4 of 3 caps at 1", regex.Params{Pattern: `\[\d+\]`, Mode: regex.Count, CountTarget: new(3)}, "[1][2][3][4]", 1},
		{"count default target 1", regex.Params{Pattern: `\[\d+\]`, Mode: regex.Count}, "[1][2]", 1},
		{"count non-overlapping", regex.Params{Pattern: `aa`, Mode: regex.Count, CountTarget: new(2)}, "aaa", 0.5},
		{"count empty matches", regex.Params{Pattern: `x*`, Mode: regex.Count, CountTarget: new(4)}, "ab", 0.75},
		{"gsm8k tail match", regex.Params{Pattern: `(?s)^.*\n#### .+$`, Mode: regex.Match}, "work\n#### 18", 1},
		{"gsm8k tail match empty answer", regex.Params{Pattern: `(?s)^.*\n#### .+$`, Mode: regex.Match}, "work\n#### ", 0},
		{"invalid utf-8 matches U+FFFD", regex.Params{Pattern: `\x{FFFD}`}, "\xff", 1},
		{"literal does not match invalid byte", regex.Params{Pattern: `ÿ`}, "\xff", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := regex.New(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			got := s.Score(context.Background(), rollout(tt.text))
			if got.Outcome != scorers.OK || math.Abs(got.Value-tt.want) > 1e-12 {
				t.Errorf("Score(%q) = %+v, want OK %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		p    regex.Params
		key  string
	}{
		{"no pattern", regex.Params{}, "pattern"},
		{"both pattern sources", regex.Params{Pattern: "a", PatternField: "p"}, "pattern_field"},
		{"bad pattern", regex.Params{Pattern: "a(b"}, "pattern"},
		{"perl lookahead", regex.Params{Pattern: "a(?=b)"}, "pattern"},
		{"unknown mode", regex.Params{Pattern: "a", Mode: "find"}, "mode"},
		{"negative count target", regex.Params{Pattern: "a", Mode: regex.Count, CountTarget: new(-1)}, "count_target"},
		{"count target outside count mode", regex.Params{Pattern: "a", CountTarget: new(2)}, "count_target"},
		{"unknown flag", regex.Params{Pattern: "a", Flags: "ix"}, "flags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := regex.New(tt.p)
			var pe *scorers.ParamError
			if !errors.As(err, &pe) || pe.Key != tt.key {
				t.Fatalf("New(%+v) = %v, want a ParamError for %q", tt.p, err, tt.key)
			}
		})
	}
	// A bad pattern's error wraps the parser's and quotes the pattern.
	_, err := regex.New(regex.Params{Pattern: "a(b"})
	var se *syntax.Error
	if !errors.As(err, &se) || se.Code != syntax.ErrMissingParen {
		t.Errorf("bad pattern error %v does not wrap the syntax error", err)
	}
	if !strings.Contains(err.Error(), strconv.Quote("a(b")) {
		t.Errorf("bad pattern error %q does not name the pattern", err)
	}
}

func field(name string, v *structpb.Value) *scorers.Rollout {
	return &scorers.Rollout{Completion: "the answer is 42", Fields: map[string]*structpb.Value{name: v}}
}

func TestPatternField(t *testing.T) {
	s, err := regex.New(regex.Params{PatternField: "pat", Mode: regex.FullMatch})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name    string
		r       *scorers.Rollout
		outcome scorers.Outcome
		value   float64
	}{
		{"match", field("pat", structpb.NewStringValue(`the answer is \d+`)), scorers.OK, 1},
		{"no match", field("pat", structpb.NewStringValue(`answer is \d+`)), scorers.OK, 0},
		{"number pattern", field("pat", structpb.NewNumberValue(42)), scorers.OK, 0},
		{"missing", &scorers.Rollout{Completion: "x"}, scorers.NotApplicable, math.NaN()},
		{"null", field("pat", structpb.NewNullValue()), scorers.NotApplicable, math.NaN()},
		{"empty", field("pat", structpb.NewStringValue("")), scorers.NotApplicable, math.NaN()},
		{"bad pattern", field("pat", structpb.NewStringValue(`(\d+`)), scorers.Error, math.NaN()},
		{"wrong type", field("pat", structpb.NewBoolValue(true)), scorers.Error, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice: the second call is served from the cache.
			for range 2 {
				got := s.Score(ctx, tt.r)
				if got.Outcome != tt.outcome || !(got.Value == tt.value || math.IsNaN(got.Value) && math.IsNaN(tt.value)) {
					t.Fatalf("got %+v, want %v %v", got, tt.outcome, tt.value)
				}
			}
		})
	}
	// The reason for a bad row pattern names it.
	if got := s.Score(ctx, field("pat", structpb.NewStringValue(`(\d+`))); !strings.Contains(got.Reason, strconv.Quote(`(\d+`)) {
		t.Errorf("reason %q does not name the pattern", got.Reason)
	}
}

// TestPatternFieldConcurrent scores many distinct row patterns from several
// goroutines (more than the cache holds), checking every verdict.
func TestPatternFieldConcurrent(t *testing.T) {
	s, err := regex.New(regex.Params{PatternField: "pat"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 3000 {
				n := (i*7 + g) % 2500
				r := &scorers.Rollout{
					Completion: fmt.Sprintf("id %d.", n%100),
					Fields:     map[string]*structpb.Value{"pat": structpb.NewStringValue(fmt.Sprintf(`id %d\.`, n))},
				}
				want := 0.0
				if n < 100 {
					want = 1
				}
				if got := s.Score(context.Background(), r); got.Value != want {
					t.Errorf("pattern %d: got %+v, want %v", n, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestConformance(t *testing.T) {
	cases := []*scorers.Rollout{
		rollout("so 3+4=7\n#### 7"),
		rollout("no answer"),
		rollout("see [1], [2] and [3]"),
		field("pat", structpb.NewStringValue(`\d+`)),
	}
	for _, p := range []regex.Params{
		{Pattern: `#### (-?[\d,]*\.?\d+)`},
		{Pattern: `(?s)^.*\n#### .+$`, Mode: regex.Match},
		{Pattern: `\d`, Mode: regex.FullMatch, Flags: "ims"},
		{Pattern: `\[\d+\]`, Mode: regex.Count, CountTarget: new(3)},
		{Pattern: `x*`, Mode: regex.Count, CountTarget: new(5)},
	} {
		t.Run(p.Mode+" "+p.Pattern, func(t *testing.T) {
			s, err := regex.New(p)
			if err != nil {
				t.Fatal(err)
			}
			scorertest.Run(t, s, scorertest.Unit, cases)
		})
	}
	t.Run("pattern_field", func(t *testing.T) {
		s, err := regex.New(regex.Params{PatternField: "pat", Mode: regex.Count, CountTarget: new(2)})
		if err != nil {
			t.Fatal(err)
		}
		scorertest.Run(t, s, scorertest.Unit, cases, "pat")
	})
}

func TestKind(t *testing.T) {
	s := scorertest.MustCompile(t, scorers.Kind(regex.New), "pattern: '\\[\\d+\\]'\nmode: count\ncount_target: 3\nflags: i\n")
	if got := s.Score(context.Background(), rollout("[1] [2] [3]")); got.Value != 1 {
		t.Errorf("Score = %+v, want 1", got)
	}
}
