package similarity

import (
	"context"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// lcsTable is the textbook O(n·m) dynamic programme.
func lcsTable(x, y []int32) int {
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for i := range x {
		for j := range y {
			if x[i] == y[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

// FuzzLCS checks the bit-parallel LCS against the dynamic programme, on the
// code points of two strings and on sequences over a small alphabet (bytes
// mod k, which makes long matches and dense symbols likely). The repeat
// count stretches the inputs past one and several 64-bit words.
func FuzzLCS(f *testing.F) {
	f.Add("kitten", "sitting", uint8(0), uint8(3))
	f.Add("", "abc", uint8(1), uint8(2))
	f.Add("this is a test", "this is a test!", uint8(3), uint8(5))
	f.Add("\xff\xfe", "\xfe\xff", uint8(0), uint8(2))
	f.Add("数学题的答案是十八。", "这道数学题的答案是十八", uint8(2), uint8(4))
	f.Fuzz(func(t *testing.T, a, b string, repeat, k uint8) {
		ctx := context.Background()
		x := runes(nil, a)
		y := runes(nil, b)
		for range repeat % 8 {
			x = append(x, x...)
			y = append(append(y, y...), 'z')
			if len(x) > 3000 || len(y) > 3000 {
				break
			}
		}
		got, err := lcs(ctx, x, y)
		if err != nil {
			t.Fatal(err)
		}
		if want := lcsTable(x, y); got != want {
			t.Fatalf("lcs(%q, %q) = %d, table %d", a, b, got, want)
		}
		if k = k%5 + 2; true {
			for i := range x {
				x[i] %= int32(k)
			}
			for i := range y {
				y[i] %= int32(k)
			}
			got, _ := lcs(ctx, x, y)
			if want := lcsTable(x, y); got != want {
				t.Fatalf("mod %d: lcs = %d, table %d", k, got, want)
			}
		}
	})
}

// FuzzScore checks every metric on arbitrary texts: NotApplicable for a
// blank reference, else OK in [0, 1]; 1 for identical texts (with at least
// one token for rouge_l and bleu); symmetric for fuzzy and rouge_l.
func FuzzScore(f *testing.F) {
	f.Add("the cat sat on the mat", "the cat is on the mat")
	f.Add("", "")
	f.Add("a", "a")
	f.Add("\xff a b", "a b \xfe")
	f.Fuzz(func(t *testing.T, a, b string) {
		ctx := context.Background()
		for _, m := range []string{Fuzzy, RougeL, BLEU} {
			s, err := New(Params{Metric: m})
			if err != nil {
				t.Fatal(err)
			}
			score := func(c, ref string) scorers.Result {
				return s.Score(ctx, &scorers.Rollout{Completion: c, Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(ref)}})
			}
			got := score(a, b)
			switch {
			case isBlank(b):
				if got.Outcome != scorers.NotApplicable {
					t.Fatalf("%s, blank reference: %+v", m, got)
				}
				continue
			case got.Outcome != scorers.OK || math.IsNaN(got.Value) || got.Value < 0 || got.Value > 1:
				t.Fatalf("%s(%q, %q): %+v", m, a, b, got)
			}
			if self := score(b, b); self.Value != 1 && (m == Fuzzy || len(strings.FieldsFunc(b, isSpace)) > 0) {
				t.Fatalf("%s(%q, itself) = %+v", m, b, self)
			}
			if m != BLEU && !isBlank(a) {
				if back := score(b, a); back.Value != got.Value {
					t.Fatalf("%s not symmetric on %q, %q: %v, %v", m, a, b, got.Value, back.Value)
				}
			}
		}
	})
}

// isBlank is what Score takes for no reference at all.
func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
