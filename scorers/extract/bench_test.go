package extract

import (
	"strings"
	"testing"
)

// solution is a GSM8K-sized model completion (about 400 bytes) ending in a
// plain-text answer.
var solution = strings.Repeat("Janet sells 16 - 3 - 4 = 9 duck eggs a day. ", 8) +
	"She makes 9 * 2 = $18 every day at the farmer's market.\nThe answer is 18."

func BenchmarkExtract(b *testing.B) {
	re, err := NewRegexp(`answer is (\d+)`)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		f    func(string) (string, bool)
		text string
	}{
		{"Boxed", Boxed, solution + ` \boxed{18}`},
		{"BoxedNone", Boxed, solution},
		{"AnswerTag", AnswerTag, solution + "<answer>18</answer>"},
		{"AnswerTagNone", AnswerTag, solution},
		{"GSM8K", GSM8K, solution + "\n#### 18"},
		{"GSM8KNone", GSM8K, solution},
		{"LastNumber", LastNumber, solution},
		{"Regexp", re.Extract, solution},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := bc.f(bc.text); ok != !strings.HasSuffix(bc.name, "None") {
					b.Fatal("unexpected result")
				}
			}
		})
	}
}

func BenchmarkParseNumber(b *testing.B) {
	for _, in := range []string{"18", "1,234", "1,234.50", "3/4", "1e-3"} {
		b.Run(in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := ParseNumber(in); !ok {
					b.Fatal("no number")
				}
			}
		})
	}
}
