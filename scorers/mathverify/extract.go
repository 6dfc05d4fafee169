package mathverify

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rewardd/rewardd/scorers/extract"
)

// The extractors of this file complete those of package extract for
// mathematics. Like them they are scans, return a substring of their input,
// and report found=false for a blank answer.

// answerIs returns what follows the last "answer is" or "answer:" (any case)
// in s, to the end of its line: the first $…$ (or \(…\), \[…\]) there when
// there is one, else the text up to the end of the sentence. "The final
// answer is $\frac{1}{2}$. I hope it is correct." gives \frac{1}{2}.
func answerIs(s string) (string, bool) {
	rest, ok := afterAnswer(s)
	if !ok {
		return "", false
	}
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	rest = statedValue(firstSentence(rest))
	if m, ok := firstLatex(rest); ok {
		return m, true
	}
	if boxed, ok := extract.Boxed(rest); ok {
		return boxed, true
	}
	// The sentence ends at a period followed by white space.
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == '.' && (rest[i+1] == ' ' || rest[i+1] == '\t') {
			rest = rest[:i]
			break
		}
	}
	rest = strings.TrimSpace(rest)
	rest = strings.Trim(rest, "*_")
	rest = strings.TrimRight(rest, ". ")
	return extract.NonBlank(rest)
}

// firstSentence returns s up to the first period followed by white space
// outside math spans and braces: "Jane started 3 hours ago. I hope it is
// correct." gives "Jane started 3 hours ago", so that the "is" of the next
// sentence states nothing.
func firstSentence(s string) string {
	inMath, depth := false, 0
	for i := 0; i+1 < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++ // an escaped character: \$, \{
		case c == '$':
			inMath = !inMath
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '.' && !inMath && depth == 0 && (s[i+1] == ' ' || s[i+1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// statedValue returns the part of an answer line that states the value
// when the line is a sentence about it: what follows the first "is" or
// "are" of a line that starts with a word. "The largest $n$ is 34." gives
// "34.", not the $n$ it names; "$5$ is the result" and "42" stay as they
// are.
func statedValue(line string) string {
	t := strings.TrimLeft(line, " *_")
	if t == "" || !isLetter(t[0]) {
		return line
	}
	for i := 0; i+4 <= len(t); i++ {
		if t[i] != ' ' {
			continue
		}
		for _, verb := range []string{"is ", "are "} {
			if len(t) >= i+1+len(verb) && strings.EqualFold(t[i+1:i+1+len(verb)], verb) {
				return t[i+1+len(verb):]
			}
		}
	}
	return line
}

// afterAnswer returns the text after the last "answer is" or "answer:" in s,
// with the markup between them skipped ("**Answer:** 5").
func afterAnswer(s string) (string, bool) {
	for end := len(s); end > 0; {
		i := lastFold(s[:end], "answer")
		if i < 0 {
			return "", false
		}
		end = i
		rest := strings.TrimLeft(s[i+len("answer"):], " *_")
		switch {
		case strings.HasPrefix(rest, ":"):
			return strings.TrimLeft(rest[1:], " *_:"), true
		case len(rest) >= 2 && strings.EqualFold(rest[:2], "is") && (len(rest) == 2 || !isLetter(rest[2]) && !isDigit(rest[2])):
			// Not "is34": digits glued to a word are part of it.
			return strings.TrimLeft(rest[2:], " *_:"), true
		}
	}
	return "", false
}

// lastFold returns the index of the last ASCII case-insensitive occurrence
// of the lower-case word sub in s, or -1.
func lastFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// lastLatex returns the content of the last math span in s: $…$, $$…$$,
// \(…\) or \[…\], with the spans before it that only a connective joins
// to it ("$1$ and $2$ and $3$", "$21, 16$ or $11$": see connective), as one
// list. The inline spans, $…$ and \(…\), end on their line, as
// Math-Verify's do; the display spans may cross lines. A single $ opens a
// span unless a digit precedes it, and closes one unless a digit follows
// it; white space inside the span is allowed ("$ 10/9 $" and "$\frac13 $"
// are spans), except before the closer of a span that starts with a digit,
// so that the dollar amounts of "costs $5 and $10" and "$400 + $60 = $460"
// are not spans.
func lastLatex(s string) (string, bool) {
	sc := spans{s: s}
	var group []string // the last span and those joined to it
	prevEnd := -1
	for {
		m, ok := sc.next()
		if !ok {
			break
		}
		if _, ok := extract.NonBlank(m); !ok {
			continue
		}
		if prevEnd < 0 || len(group) >= maxBoxes || !connective(s[prevEnd:sc.start]) {
			group = group[:0]
		}
		group = append(group, m)
		prevEnd = sc.i
	}
	switch len(group) {
	case 0:
		return "", false
	case 1:
		return group[0], true
	}
	return strings.Join(group, ", "), true
}

// lastLatexEnd returns the index just after the last math span of s, the
// one lastLatex reads, or len(s) when there is none.
func lastLatexEnd(s string) int {
	sc := spans{s: s}
	end := len(s)
	for {
		m, ok := sc.next()
		if !ok {
			return end
		}
		if _, ok := extract.NonBlank(m); ok {
			end = sc.i
		}
	}
}

// firstLatex returns the content of the first non-blank math span in s.
func firstLatex(s string) (string, bool) {
	sc := spans{s: s}
	for {
		m, ok := sc.next()
		if !ok {
			return "", false
		}
		if m, ok := extract.NonBlank(m); ok {
			return m, true
		}
	}
}

// spans scans a text for math spans from left to right. A display
// delimiter with no closer after it means no later delimiter of its kind
// has one either, and a \( with no \) on its line means no later one on
// that line has: the scan skips them, so each byte is looked at a bounded
// number of times.
type spans struct {
	s         string
	i         int
	start     int  // the index of the opening delimiter of the last span found
	noDisplay bool // no $$ closes
	noBr      bool // no \] closes
	parenLine int  // no \) closes before this index
}

func (sc *spans) next() (string, bool) {
	s := sc.s
	for sc.i < len(s) {
		j := strings.IndexAny(s[sc.i:], `$\`)
		if j < 0 {
			sc.i = len(s)
			return "", false
		}
		i := sc.i + j
		sc.i = i + 1
		if s[i] == '\\' {
			if i+1 >= len(s) {
				return "", false
			}
			sc.i = i + 2 // an escaped character (\$ included) or a command
			switch {
			case s[i+1] == '(' && i >= sc.parenLine:
				eol := lineEnd(s, i+2)
				k := strings.Index(s[i+2:eol], `\)`)
				if k < 0 {
					sc.parenLine = eol
					continue
				}
				sc.i, sc.start = i+4+k, i
				return s[i+2 : i+2+k], true
			case s[i+1] == '[' && !sc.noBr:
				k := strings.Index(s[i+2:], `\]`)
				if k < 0 {
					sc.noBr = true
					continue
				}
				sc.i, sc.start = i+4+k, i
				return s[i+2 : i+2+k], true
			}
			continue
		}
		if strings.HasPrefix(s[i:], "$$") {
			sc.i = i + 2
			if sc.noDisplay {
				continue
			}
			k := strings.Index(s[i+2:], "$$")
			if k < 0 {
				sc.noDisplay = true
				continue
			}
			sc.i, sc.start = i+4+k, i
			return s[i+2 : i+2+k], true
		}
		if i > 0 && isDigit(s[i-1]) {
			continue
		}
		// A $ right before a digit may be a dollar amount: its span must
		// close tight ("$5$", not "$5 and $").
		tight := i+1 < len(s) && isDigit(s[i+1])
		k := closingDollar(s[:lineEnd(s, i+1)], i+1, tight)
		if k < 0 {
			continue
		}
		sc.i, sc.start = k+1, i
		return s[i+1 : k], true
	}
	return "", false
}

// lineEnd returns the index of the first newline at or after from, or
// len(s).
func lineEnd(s string, from int) int {
	if k := strings.IndexByte(s[from:], '\n'); k >= 0 {
		return from + k
	}
	return len(s)
}

// closingDollar returns the index of the $ that closes the inline span
// whose content starts at from, or -1 when the next unescaped $ of s cannot
// close it: when it is followed by a digit or another $, or, for a tight
// span, preceded by white space. The content of a span holds no $ but \$,
// so the scans of all the spans of a line look at each byte once.
func closingDollar(s string, from int, tight bool) int {
	for k := from; k < len(s); k++ {
		switch s[k] {
		case '\\':
			k++ // \$ is a dollar sign, not a delimiter
		case '$':
			if k+1 < len(s) && (isDigit(s[k+1]) || s[k+1] == '$') || tight && isSpace(s[k-1]) {
				return -1
			}
			return k
		}
	}
	return -1
}

// refine narrows an answer found by a loose extractor (answer tags, "the
// answer is") to its \boxed{} or its last math span, when it has one.
func refine(s string) string {
	if b, ok := extract.Boxed(s); ok {
		return b
	}
	if m, ok := lastLatex(s); ok {
		return m
	}
	return s
}

// lastNumber returns the last number of s that stands on its own, as
// Math-Verify's number extraction asks: at the start of s or after white
// space or "=", with a currency sign (\$ included) and markdown's ** allowed
// in between, and not continued by what follows it (see continued). The 2
// of "AZYUK2A", the 3 of "x_3" and the 6 of "6\sqrt{2}" are no answer.
func lastNumber(s string) (string, bool) {
	for end := len(s); end > 0; {
		n, ok := extract.LastNumber(s[:end])
		if !ok {
			return "", false
		}
		start := strings.LastIndex(s[:end], n)
		if k := commaNumberStart(s, start, n); k < start {
			// 2,74: the digits after a decimal comma end the number 2,74.
			n, start = s[k:start+len(n)], k
		}
		if standsAlone(s[:start]) && !continued(s[start+len(n):]) {
			return n, true
		}
		end = start
	}
	return "", false
}

// commaNumberStart returns where the number starts whose decimal comma the
// digits n at s[start:] follow (2,74 or 1000,99: not three digits, which
// would be a thousands separator), or start when they follow none.
func commaNumberStart(s string, start int, n string) int {
	if len(n) == 3 || !allDigits(n) || start < 2 || s[start-1] != ',' || !isDigit(s[start-2]) {
		return start
	}
	k := start - 1
	for k > 0 && isDigit(s[k-1]) {
		k--
	}
	return k
}

// standsAlone reports whether a number that follows before stands on its
// own (see lastNumber).
func standsAlone(before string) bool {
	if r, size := utf8.DecodeLastRuneInString(before); size > 0 && strings.ContainsRune(currencies, r) {
		before = strings.TrimSuffix(before[:len(before)-size], `\`)
	}
	before = strings.TrimSuffix(before, "**")
	if before == "" {
		return true
	}
	c := before[len(before)-1]
	return isSpace(c) || c == '='
}

// continued reports whether the text after a number makes it part of a
// larger expression, so that the number alone is not the answer: a base or
// subscript (40_9), a power (2^10), a factorial (5!), or a command other
// than a unit, percent or spacing (6\sqrt{2}, 2\pi, 2\frac{1}{2}).
func continued(after string) bool {
	if after == "" {
		return false
	}
	switch after[0] {
	case '_', '^', '!':
		return true
	case '\\':
		rest := after[1:]
		if rest == "" || !isLetter(rest[0]) {
			return false // \% \$ \, \! and line breaks
		}
		for _, ok := range []string{"text", "mathrm", "mbox", "quad", "qquad", "cdot", "times", "approx", "le", "ge", "lt", "gt", "ne", "neq", "right", "end"} {
			if strings.HasPrefix(rest, ok) {
				return false
			}
		}
		return true
	}
	return false
}

// currencies are the signs a number may follow (Math-Verify's list).
const currencies = "$€£¥₹₽₪₩₫฿₡₢₣₤₥₦₧₨₭₮₯₰₱₲₳₴₵₶₷₸₺₻₼₾₿"

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// maxBoxes bounds the boxes read as one answer.
const maxBoxes = 16

// boxes returns the final answer written in boxes: the content of the last
// \boxed{…} (or \fbox{…}), and, when boxes before it are joined to it by
// nothing but a connective ("\boxed{1}, \boxed{2}", "\boxed{-2} and
// \boxed{1}", "\boxed{(2, 2)} \quad \text{and} \quad \boxed{(6, 2)}"), all
// of them, in order, as one list: "1, 2". Boxes with other words between
// them ("\boxed{3}, finally \boxed{4}") are not one answer: the last one is.
// As for a single box, a last box that is not closed is no answer.
func boxes(s string) (string, bool) {
	last, ok := extract.Boxed(s)
	if !ok {
		return "", false
	}
	start := lastBoxStart(s)
	parts := []string{last}
	for len(parts) < maxBoxes {
		prev := lastBoxStart(s[:start])
		if prev < 0 {
			break
		}
		content, ok := extract.Boxed(s[prev:start])
		if !ok {
			break
		}
		// The box ends after its content, and its closing brace if it has
		// one (extract.Boxed reads the space form "\boxed 5" too).
		end := prev + 1 + len("boxed")
		if s[prev+1] == 'f' {
			end = prev + 1 + len("fbox")
		}
		for end < start && s[end] == ' ' {
			end++
		}
		if end < start && s[end] == '{' {
			end += 1 + len(content) + 1
		} else {
			end += len(content)
		}
		end = min(end, start)
		if !connective(s[end:start]) {
			break
		}
		parts = append(parts, content)
		start = prev
	}
	if len(parts) == 1 {
		return last, true
	}
	slices.Reverse(parts)
	return strings.Join(parts, ", "), true
}

// finalStatement returns the text from the last "final answer is" of s
// when it follows the last box (Minerva's "Final Answer: The final answer
// is $X$. I hope it is correct." written after a box), or false.
func finalStatement(s string) (string, bool) {
	start := lastBoxStart(s)
	if start < 0 {
		return "", false
	}
	content, _ := extract.Boxed(s[start:])
	after := min(len(s), start+len(`\fbox{`)+len(content))
	i := lastFold(s[after:], "final answer is")
	if i < 0 {
		return "", false
	}
	return s[after+i:], true
}

// lastBoxStart returns the index of the backslash of the last box command
// in s (as extract.Boxed finds it), or -1.
func lastBoxStart(s string) int {
	for end := len(s); end > 0; {
		i := strings.LastIndexByte(s[:end], '\\')
		if i < 0 {
			return -1
		}
		end = i
		rest := s[i+1:]
		var n int
		switch {
		case strings.HasPrefix(rest, "boxed"):
			n = len("boxed")
		case strings.HasPrefix(rest, "fbox"):
			n = len("fbox")
		default:
			continue
		}
		if n < len(rest) && (rest[n] == '{' || rest[n] == ' ') {
			return i
		}
	}
	return -1
}

// connective reports whether the text between two boxes joins them into
// one answer: short, and once TeX spacing, math delimiters and \text are
// taken out, empty or ending in a comma, a semicolon, "and" or "or".
func connective(between string) bool {
	if len(between) > 40 {
		return false
	}
	t := between
	for _, tex := range []string{`\qquad`, `\quad`, `\text`, `\mathrm`, `\(`, `\)`, `\[`, `\]`, `\,`, `\;`, `\ `, "$", "{", "}"} {
		t = strings.ReplaceAll(t, tex, " ")
	}
	t = strings.TrimSpace(t)
	switch {
	case t == "", strings.HasSuffix(t, ","), strings.HasSuffix(t, ";"):
		return true
	}
	words := strings.Fields(t)
	w := strings.ToLower(words[len(words)-1])
	return w == "and" || w == "or"
}
