package multiplechoice

import (
	"strings"
	"testing"
)

// FuzzExtract checks, on any text, that extraction gives a letter of the
// set or none with a reason, the same twice; and that a text ending with
// "The final answer is \boxed{X}." gives X when nothing boxed comes
// before it.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"", "The answer is (B).", "\\boxed{", "Answer: A or", "C)", "\\boxed{\\text{(", "I"} {
		f.Add(s)
	}
	s, err := New(Params{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, why := s.Extract(text)
		if c2, why2 := s.Extract(text); c2 != c || why2 != why {
			t.Fatalf("%q: %q %q, then %q %q", text, c, why, c2, why2)
		}
		if c != 0 && !strings.ContainsRune(s.letters, c) || c == 0 && why == "" {
			t.Fatalf("%q: %q %q", text, c, why)
		}
		if strings.Contains(text, "boxed") || strings.Contains(text, "fbox") {
			return
		}
		if c, why := s.Extract(text + "\nThe final answer is \\boxed{B}."); c != 'B' {
			t.Fatalf("%q then a boxed B: %q %q", text, c, why)
		}
	})
}
