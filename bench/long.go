package bench

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Long is reasoning-model output (DeepSeek-R1 style) on GSM8K problems:
// thinking of 4 to 128 KiB in paragraphs, "Step k:" lines, numbered and
// bulleted lines, LaTeX, "Wait," second thoughts and "First, … Finally,"
// transitions, then the answer.
const Long = "long"

// Long rows' lengths are log-uniform between longMin and longMax (mean
// about 36 KiB), unless --completion-length sets one.
const (
	longMin = 4 << 10
	longMax = 128 << 10
)

// longFormats are how a long row ends, with their share (out of 100): the
// answer in tags after the thinking, \boxed{} after it, the thinking cut
// off by the length limit (no answer), or plain text with a final line.
var longFormats = []struct {
	share      int
	head, tail func(final string) string
}{
	{60, func(string) string { return "<think>\n" }, func(f string) string { return "\n</think>\n<answer>\n" + f + "\n</answer>" }},
	{15, func(string) string { return "<think>\n" }, func(f string) string { return "\n</think>\nSo the answer is $\\boxed{" + f + "}$." }},
	{15, func(string) string { return "<think>\n" }, func(string) string { return "" }},
	{10, func(string) string { return "" }, func(f string) string { return "\n\nFinal answer: " + f }},
}

// long returns row i's completion for problem p with the given final
// answer: reasoning built from the problem's solution steps and other
// problems' until the row's length, then its ending.
func (s *scenario) long(i int, p problem, final string) string {
	n := s.length
	if n == 0 {
		n = int(float64(longMin) * math.Pow(float64(longMax)/longMin, s.uniform(i, 5)))
	}
	pick, acc := int(s.uniform(i, 2)*100), 0
	f := longFormats[0]
	for _, lf := range longFormats {
		if acc += lf.share; pick < acc {
			f = lf
			break
		}
	}
	head, tail := f.head(final), f.tail(final)
	body := max(0, n-len(head)-len(tail))
	var b strings.Builder
	b.Grow(n + 256)
	b.WriteString(head)
	s.reason(&b, i, p, body)
	text := b.String()
	if len(text) > len(head)+body {
		cut := len(head) + body
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + strings.Repeat(" ", len(head)+body-cut)
	}
	return text + tail
}

// reason writes at least n bytes of reasoning for row i on p.
func (s *scenario) reason(b *strings.Builder, i int, p problem, n int) {
	start := b.Len()
	steps := plainSteps(p.steps)
	fmt.Fprintf(b, "Okay, let's see. %s\n\n", firstSentence(p.question))
	for k := 0; b.Len()-start < n; k++ {
		// Mostly this problem's steps, sometimes another problem's (the
		// model wandering off and back).
		src := steps
		if s.uniform(i, uint64(1000+k)) < 0.3 {
			src = plainSteps(s.problems[(int(s.uniform(i, uint64(2000+k))*float64(len(s.problems))))%len(s.problems)].steps)
		}
		line := src[k%len(src)]
		switch kind := int(s.uniform(i, uint64(3000+k)) * 10); kind {
		case 0:
			fmt.Fprintf(b, "Step %d: %s\n", k+1, line)
		case 1:
			fmt.Fprintf(b, "%d. %s\n", k%9+1, line)
		case 2:
			fmt.Fprintf(b, "- %s\n* %s\n", line, src[(k+1)%len(src)])
		case 3:
			fmt.Fprintf(b, "Wait, let me double-check that. %s Hmm, yes, that seems right.\n\n", line)
		case 4:
			fmt.Fprintf(b, "%s, %s\n", []string{"First", "Second", "Next", "Then", "Finally"}[k%5], lowerFirst(line))
		case 5:
			fmt.Fprintf(b, "So we have $$%s$$ and therefore \\(%s\\).\n\n", latex(line), latex(src[(k+1)%len(src)]))
		default:
			// A paragraph of a few sentences.
			for j := range 3 {
				b.WriteString(src[(k+j)%len(src)])
				b.WriteByte(' ')
			}
			b.WriteString("\n\n")
		}
	}
}

// plainSteps returns a solution's lines without GSM8K's <<a*b=c>>
// calculator annotations, which models do not write.
func plainSteps(steps string) []string {
	var out []string
	for _, line := range strings.Split(steps, "\n") {
		var b strings.Builder
		for {
			i := strings.Index(line, "<<")
			j := strings.Index(line, ">>")
			if i < 0 || j < i {
				b.WriteString(line)
				break
			}
			b.WriteString(line[:i])
			line = line[j+2:]
		}
		if t := strings.TrimSpace(strings.ToValidUTF8(b.String(), "")); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		out = []string{"Let me think about this."}
	}
	return out
}

// latex writes the arithmetic of a solution line in LaTeX: its first
// "a op b = c" with \times and \frac, or the line's numbers in a sum.
func latex(line string) string {
	var nums []string
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return !('0' <= r && r <= '9' || r == '.') }) {
		if f = strings.Trim(f, "."); f != "" {
			nums = append(nums, f)
		}
	}
	switch len(nums) {
	case 0:
		return "x = x"
	case 1:
		return "x = " + nums[0]
	case 2:
		return "\\frac{" + nums[0] + "}{" + nums[1] + "}"
	default:
		return nums[0] + " \\times " + nums[1] + " = " + nums[2]
	}
}

func firstSentence(q string) string {
	if i := strings.IndexAny(q, ".?!"); i >= 0 {
		return strings.ToValidUTF8(q[:i+1], "")
	}
	return strings.ToValidUTF8(q, "")
}

func lowerFirst(s string) string {
	if s != "" && 'A' <= s[0] && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}
