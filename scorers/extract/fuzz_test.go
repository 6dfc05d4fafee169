package extract

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rewardd/rewardd/scorers/scorertest"
)

// seeds are inputs every extractor fuzz target starts from.
var seeds = []string{
	"", "18", "The answer is 18.", `\boxed{18}`, `\boxed{\frac{1}{2}}`, `\boxed 5$`, `\fbox{x}`,
	`\boxed{{}`, "<answer>18</answer>", "<answer><answer></answer>", "<answer>1</answer>2</answer>", "#### 18", "####", "#####\n",
	"1,234.50", "-3/4", "12/25/2023", "1,,,2..3e", "x-5", ".5", "\xff\\boxed{\xfe}",
}

// fuzzExtractor checks what every extractor promises: no panic, and an answer
// that is a non-blank substring of the input.
func fuzzExtractor(f *testing.F, extract func(string) (string, bool)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := extract(s)
		if !ok {
			if got != "" {
				t.Fatalf("not found but returned %q", got)
			}
			return
		}
		if strings.TrimSpace(got) == "" {
			t.Fatalf("found a blank answer %q", got)
		}
		if !strings.Contains(s, got) {
			t.Fatalf("answer %q is not a substring of the input", got)
		}
	})
}

func FuzzBoxed(f *testing.F) {
	fuzzExtractor(f, func(s string) (string, bool) {
		got, ok := Boxed(s)
		// A braced answer has balanced braces; a spaced one (\boxed 5) has
		// no white space or dollar sign.
		if ok && strings.Count(got, "{") != strings.Count(got, "}") && strings.ContainsAny(got, " \t\n\r\v\f$") {
			panic("malformed answer " + strconv.Quote(got))
		}
		return got, ok
	})
}

func FuzzAnswerTag(f *testing.F) {
	fuzzExtractor(f, func(s string) (string, bool) {
		got, ok := AnswerTag(s)
		if ok && strings.Contains(got, "</answer>") {
			panic("answer contains a closing tag: " + strconv.Quote(got))
		}
		return got, ok
	})
}

func FuzzGSM8K(f *testing.F) {
	fuzzExtractor(f, func(s string) (string, bool) {
		got, ok := GSM8K(s)
		if ok && (strings.Contains(got, "\n") || got != strings.TrimSpace(got)) {
			panic("answer spans lines or is not trimmed: " + strconv.Quote(got))
		}
		return got, ok
	})
}

func FuzzLastNumber(f *testing.F) {
	fuzzExtractor(f, func(s string) (string, bool) {
		got, ok := LastNumber(s)
		if ok {
			// The answer ends at the last digit of the text.
			last := strings.LastIndexAny(s, "0123456789")
			if !strings.HasSuffix(s[:last+1], got) {
				panic("answer " + strconv.Quote(got) + " does not end at the last digit")
			}
			// What it finds without a fraction bar, ParseNumber reads.
			// (Numbers too large for a float64 are left out.)
			if !strings.Contains(got, "/") && len(got) < 300 {
				if _, ok := ParseNumber(got); !ok {
					panic("ParseNumber cannot read " + strconv.Quote(got))
				}
			}
		}
		return got, ok
	})
}

func FuzzRegexp(f *testing.F) {
	f.Add(`A:\s*(\d+)`, "A: 5\nA: 18")
	f.Add(`(?P<answer>\w+)$`, "x y z")
	f.Add(`(?i)final`, "FINAL final")
	f.Add(`(`, "")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		re, err := NewRegexp(pattern)
		if err != nil {
			return
		}
		got, ok := re.Extract(s)
		if ok && (!strings.Contains(s, got) || strings.TrimSpace(got) == "") {
			t.Fatalf("Extract(%q) = %q: not a non-blank substring", s, got)
		}
		if !ok && got != "" {
			t.Fatalf("not found but returned %q", got)
		}
	})
}

// FuzzParseNumber checks that ParseNumber never panics, gives finite values,
// equals itself, and reads back exactly every float64 and int64 formatted
// the usual ways.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"18", "1,234.50", "$5", "50%", "3/4", "-2", "1e-3", "+7", "18.0", `\frac{1}{2}`, "1/0", "."} {
		f.Add(s, 0.0, int64(0))
	}
	f.Add("", math.MaxFloat64, int64(math.MinInt64))
	f.Add("", 5e-324, int64(math.MaxInt64))
	f.Add("", -1.5e-7, int64(-1234567))
	f.Fuzz(func(t *testing.T, s string, x float64, i int64) {
		if n, ok := ParseNumber(s); ok {
			if math.IsNaN(n.Float64()) || math.IsInf(n.Float64(), 0) {
				t.Fatalf("ParseNumber(%q) = %v", s, n.Float64())
			}
			if !n.Equal(n, 0) {
				t.Fatalf("ParseNumber(%q) is not equal to itself", s)
			}
		}
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			for _, fmtc := range []byte{'g', 'e', 'f'} {
				text := strconv.FormatFloat(x, fmtc, -1, 64)
				n, ok := ParseNumber(text)
				if !ok || n.Float64() != x {
					t.Fatalf("ParseNumber(%q) = %v, %v; want %v", text, n.Float64(), ok, x)
				}
			}
		}
		text := strconv.FormatInt(i, 10)
		n, ok := ParseNumber(scorertest.WithCommas(text))
		want, _ := ParseNumber(text)
		if !ok || !n.IsInt() || !n.Equal(want, 0) || n.Float64() != float64(i) {
			t.Fatalf("ParseNumber(%q) = %v, %v; want %d", scorertest.WithCommas(text), n.Float64(), ok, i)
		}
	})
}

// FuzzNormalizers checks that the normalizers are idempotent and keep valid
// UTF-8 valid.
func FuzzNormalizers(f *testing.F) {
	for _, s := range []string{"", " a  b ", "Hello, World!", "«¿Qué?»", "a\xff.b", "\u00a0x\u2003"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, norm := range map[string]func(string) string{
			"strip": strip, "lower": lower, "whitespace": whitespace, "punctuation": punctuation,
		} {
			once := norm(s)
			if twice := norm(once); twice != once && utf8.ValidString(s) {
				t.Fatalf("%s not idempotent: %q -> %q -> %q", name, s, once, twice)
			}
			if utf8.ValidString(s) && !utf8.ValidString(once) {
				t.Fatalf("%s(%q) = %q is not valid UTF-8", name, s, once)
			}
		}
	})
}
