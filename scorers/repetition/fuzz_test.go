package repetition_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/repetition"
)

func pythonSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// reference computes the penalty the slow and obvious way: split into units,
// join each n-gram with a separator that cannot occur in a unit, count the
// distinct ones.
func reference(text string, n int, penalty float64, chars bool) float64 {
	text = strings.ToLower(text)
	var units []string
	if chars {
		text = strings.Join(strings.FieldsFunc(text, pythonSpace), " ")
		for i := 0; i < len(text); {
			_, size := utf8.DecodeRuneInString(text[i:])
			units = append(units, text[i:i+size])
			i += size
		}
	} else {
		units = strings.FieldsFunc(text, pythonSpace)
	}
	if len(units) < n {
		return 0
	}
	seen := map[string]bool{}
	total := 0
	for i := 0; i+n <= len(units); i++ {
		seen[strings.Join(units[i:i+n], "\x00\x01")] = true
		total++
	}
	return (1 - float64(len(seen))/float64(total)) * penalty
}

// FuzzScore compares Score with reference, for words and chars.
func FuzzScore(f *testing.F) {
	for _, s := range []string{"", "a b c a b c", "ab c a bc", "哈哈哈哈", "  ab \n ab ", "\xff\xfe \xff", "A a À à", "x\x1fy x\x1fy"} {
		f.Add(s, uint8(3), false)
		f.Add(s, uint8(2), true)
	}
	f.Fuzz(func(t *testing.T, text string, n uint8, chars bool) {
		if strings.Contains(text, "\x00\x01") {
			return
		}
		n = 1 + n%8
		unit := repetition.Words
		if chars {
			unit = repetition.Chars
		}
		s, err := repetition.New(repetition.Params{NgramSize: new(int(n)), Unit: unit})
		if err != nil {
			t.Fatal(err)
		}
		got := s.Score(context.Background(), &scorers.Rollout{Completion: text})
		want := reference(text, int(n), -1, chars)
		if got.Outcome != scorers.OK || math.Abs(got.Value-want) > 1e-12 || got.Value < -1 || got.Value > 0 {
			t.Fatalf("%q n=%d chars=%v: got %+v, want %v", text, n, chars, got, want)
		}
	})
}
