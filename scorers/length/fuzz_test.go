package length

import (
	"context"
	"math"
	"strings"
	"testing"
	"unicode"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// pythonSpace is the white space of Python's str.split, written from its
// definition rather than from the table in countWords.
func pythonSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// FuzzCountWords checks countWords against strings.FieldsFunc.
func FuzzCountWords(f *testing.F) {
	for _, s := range []string{"", " ", "a b", "  a\u00a0b\u3000c\x1fd \n\t", "\xff \xfe", "a\u0085b", "a\u200bb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := countWords(s), len(strings.FieldsFunc(s, pythonSpace)); got != want {
			t.Fatalf("countWords(%q) = %d, FieldsFunc gives %d", s, got, want)
		}
	})
}

// FuzzKimi scores a group whose lengths and correctness come from the fuzzer
// (two bytes per rollout: length, correct when odd) and checks what the Kimi
// reward promises: values in [−0.5, 0.5]; a shortest correct completion gets
// 0.5 and a longest one −0.5 (unless all lengths are equal, which gives 0);
// among correct completions, and among wrong ones, longer never scores
// higher; a wrong completion never scores above 0 nor above a correct one of
// the same length.
func FuzzKimi(f *testing.F) {
	f.Add([]byte{2, 1, 4, 1, 6, 0})
	f.Add([]byte{5, 1})
	f.Add([]byte{0, 0, 0, 1, 255, 1, 255, 0})
	s, err := New(Params{Mode: Kimi, Unit: Tokens})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, spec []byte) {
		n := len(spec) / 2
		group := make([]*scorers.Rollout, n)
		lens := make([]int, n)
		correct := make([]bool, n)
		lo, hi := math.MaxInt, -1
		for i := range group {
			lens[i], correct[i] = int(spec[2*i]), spec[2*i+1]%2 == 1
			lo, hi = min(lo, lens[i]), max(hi, lens[i])
			group[i] = &scorers.Rollout{Fields: map[string]*structpb.Value{
				"completion_tokens": structpb.NewNumberValue(float64(lens[i])),
				"correct":           structpb.NewBoolValue(correct[i]),
			}}
		}
		out := make([]scorers.Result, n)
		s.ScoreGroup(context.Background(), group, out)
		for i, r := range out {
			if r.Outcome != scorers.OK || r.Value < -0.5 || r.Value > 0.5 {
				t.Fatalf("rollout %d: %+v", i, r)
			}
			if lo == hi {
				if r.Value != 0 {
					t.Fatalf("equal lengths, rollout %d scored %v", i, r.Value)
				}
				continue
			}
			if correct[i] && lens[i] == lo && r.Value != 0.5 || lens[i] == hi && r.Value != -0.5 {
				t.Fatalf("rollout %d (length %d in [%d, %d], correct %v) scored %v", i, lens[i], lo, hi, correct[i], r.Value)
			}
			if !correct[i] && r.Value > 0 {
				t.Fatalf("wrong rollout %d scored %v", i, r.Value)
			}
			for j := range out {
				if lens[j] > lens[i] && correct[j] == correct[i] && out[j].Value > r.Value {
					t.Fatalf("rollout %d (length %d) scored %v, shorter %d (length %d) %v", j, lens[j], out[j].Value, i, lens[i], r.Value)
				}
				if lens[j] == lens[i] && correct[i] && !correct[j] && out[j].Value > r.Value {
					t.Fatalf("wrong rollout %d beat correct %d of the same length", j, i)
				}
			}
		}
	})
}

// FuzzOverlongCosine checks the per-rollout modes on arbitrary text and
// parameters: in range, and never rewarding length where they should not
// (overlong never rises with length; cosine falls with length for a correct
// completion and rises for a wrong one).
func FuzzOverlongCosine(f *testing.F) {
	f.Add("a b c d e f g", uint16(10), uint16(4), true)
	f.Add("", uint16(1), uint16(0), false)
	f.Add("x\u00a0y", uint16(2), uint16(2), true)
	f.Fuzz(func(t *testing.T, text string, maxLen, buf uint16, correct bool) {
		if maxLen == 0 {
			return
		}
		buf = buf % (maxLen + 1)
		over, err := New(Params{Mode: Overlong, MaxLength: new(int(maxLen)), BufferLength: new(int(buf))})
		if err != nil {
			t.Fatal(err)
		}
		cos, err := New(Params{Mode: Cosine, MaxLength: new(int(maxLen))})
		if err != nil {
			t.Fatal(err)
		}
		fields := map[string]*structpb.Value{"correct": structpb.NewBoolValue(correct)}
		shorter := &scorers.Rollout{Completion: text, Fields: fields}
		longer := &scorers.Rollout{Completion: text + " more", Fields: fields}
		ctx := context.Background()
		o1, o2 := over.Score(ctx, shorter), over.Score(ctx, longer)
		if o1.Outcome != scorers.OK || o1.Value < -1 || o1.Value > 0 || o2.Value > o1.Value {
			t.Fatalf("overlong: %+v then %+v", o1, o2)
		}
		c1, c2 := cos.Score(ctx, shorter), cos.Score(ctx, longer)
		if c1.Outcome != scorers.OK || c1.Value < -1 || c1.Value > 1 {
			t.Fatalf("cosine: %+v", c1)
		}
		if correct && c2.Value > c1.Value || !correct && c2.Value < c1.Value {
			t.Fatalf("cosine, correct %v: %v then %v", correct, c1.Value, c2.Value)
		}
	})
}
