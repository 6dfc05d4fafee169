package mathverify

import (
	"strings"

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
		case len(rest) >= 2 && strings.EqualFold(rest[:2], "is") && (len(rest) == 2 || !isLetter(rest[2])):
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
// \(…\) or \[…\]. A single $ opens a span only when a non-space follows it,
// and closes one only when a non-space precedes it and no digit follows it
// (Pandoc's rule), so that the dollar amounts of "costs $5 and $10" are not
// a span.
func lastLatex(s string) (string, bool) {
	sc := spans{s: s}
	var last string
	found := false
	for {
		m, ok := sc.next()
		if !ok {
			return last, found
		}
		if m, ok := extract.NonBlank(m); ok {
			last, found = m, true
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

// spans scans a text for math spans from left to right. A delimiter with no
// closer after it means no later delimiter of its kind has one either, so
// the scan stops looking for that kind: each byte is looked at a bounded
// number of times.
type spans struct {
	s                       string
	i                       int
	noDollar, noParen, noBr bool
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
			var closer string
			var no *bool
			switch s[i+1] {
			case '(':
				closer, no = `\)`, &sc.noParen
			case '[':
				closer, no = `\]`, &sc.noBr
			default:
				continue
			}
			if *no {
				continue
			}
			k := strings.Index(s[i+2:], closer)
			if k < 0 {
				*no = true
				continue
			}
			sc.i = i + 4 + k
			return s[i+2 : i+2+k], true
		}
		if sc.noDollar {
			continue
		}
		if strings.HasPrefix(s[i:], "$$") {
			k := strings.Index(s[i+2:], "$$")
			if k < 0 {
				sc.noDollar = true
				continue
			}
			sc.i = i + 4 + k
			return s[i+2 : i+2+k], true
		}
		if i+1 < len(s) && !isSpace(s[i+1]) {
			k := closingDollar(s, i+1)
			if k < 0 {
				sc.noDollar = true
				continue
			}
			sc.i = k + 1
			return s[i+1 : k], true
		}
	}
	return "", false
}

// closingDollar returns the index of the first $ at or after from that can
// close a span, or -1.
func closingDollar(s string, from int) int {
	for k := from; k < len(s); k++ {
		switch s[k] {
		case '\\':
			k++ // \$ is a dollar sign, not a delimiter
		case '$':
			if !isSpace(s[k-1]) && (k+1 == len(s) || !isDigit(s[k+1])) {
				return k
			}
		}
	}
	return -1
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
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
