// Package extract finds the final answer in a model's completion and
// normalizes answers so that they can be compared.
//
// Extractors are hand-written scans, not regular expressions: they run once
// per rollout per function, and a scan over a typical 400-byte completion
// costs tens of nanoseconds where Go's regexp costs microseconds. Every
// extractor returns a substring of its input (never a copy), and reports
// found=false when the answer it finds is empty or only white space, so that
// a chain of extractors can fall through to the next one.
package extract

import (
	"strings"
)

// Boxed returns the content of the last \boxed{…} (or \fbox{…}) in s, with
// nested braces balanced: `\boxed{\frac{1}{2}}` gives `\frac{1}{2}`. The
// space form `\boxed 5` gives the text up to the next white space or `$`.
// When the last box is not closed (a truncated completion), there is no
// answer: an earlier box is not used in its place.
func Boxed(s string) (string, bool) {
	start := -1 // index just after the command name of the last box
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 {
			break
		}
		i += j + 1
		var n int
		switch {
		case strings.HasPrefix(s[i:], "boxed"):
			n = len("boxed")
		case strings.HasPrefix(s[i:], "fbox"):
			n = len("fbox")
		default:
			continue
		}
		// Only a box command counts, not a macro that merely starts with
		// the same letters (\boxedanswer).
		if i+n < len(s) && (s[i+n] == '{' || s[i+n] == ' ') {
			start = i + n
		}
	}
	if start < 0 {
		return "", false
	}
	rest := s[start:]
	spaced := strings.TrimLeft(rest, " ")
	if spaced != "" && spaced[0] == '{' {
		return braced(spaced)
	}
	// Space form: \boxed 5
	end := strings.IndexAny(spaced, " \t\n\r\v\f$")
	if end >= 0 {
		spaced = spaced[:end]
	}
	return NonBlank(spaced)
}

// FirstBoxed returns the content of the first \boxed{…} in s, with nested
// braces balanced, as Axolotl's Hatchery math reward chooses its box
// (extract_boxed in integrations/hatchery/rewards/math_reward.py): only the
// brace form of \boxed counts (not \fbox, not \boxed 5), and when that
// first box is not closed there is no answer, a later box is not used.
func FirstBoxed(s string) (string, bool) {
	i := strings.Index(s, `\boxed{`)
	if i < 0 {
		return "", false
	}
	return braced(s[i+len(`\boxed`):])
}

// braced returns the content of the balanced group that s starts with (s[0]
// is '{').
func braced(s string) (string, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return NonBlank(s[1:i])
			}
		}
	}
	return "", false
}

// AnswerTag returns the content of the last complete <answer>…</answer> in
// s: the text after the last opening tag that is followed by a closing tag,
// up to the first closing tag after it.
func AnswerTag(s string) (string, bool) {
	const open, closing = "<answer>", "</answer>"
	end := lastIndex(s, closing, 1) // '/' is rarer than '<'
	if end < 0 {
		return "", false
	}
	// The opening tag is usually a few bytes before the closing one: search
	// backwards.
	start := strings.LastIndex(s[:end], open)
	if start < 0 {
		return "", false
	}
	content := s[start+len(open) : end]
	if i := strings.Index(content, closing); i >= 0 {
		content = content[:i] // <answer>1</answer>2</answer>
	}
	return NonBlank(content)
}

// GSM8K returns the text after the last "####" in s up to the end of that
// line, trimmed: the final answer of a GSM8K solution ("#### 18"). A
// Markdown heading ("#### Step 2") looks the same, so in a chain of
// extractors gsm8k belongs after the ones that look for explicit answer
// markup (boxed, answer_tag).
func GSM8K(s string) (string, bool) {
	i := lastIndex(s, "####", 0)
	if i < 0 {
		return "", false
	}
	rest := s[i+len("####"):]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	return NonBlank(strings.TrimSpace(rest))
}

// LastNumber returns the last number in s, in the manner of the regular
// expression -?[\d,]*\.?\d+ that GSM8K reward functions commonly use, with
// these differences:
//
//   - a comma belongs to the number only as a thousands separator between
//     groups of three digits ("1,234,567"; in "4,5" the number is "5");
//   - a minus sign belongs to it only when it does not follow a letter, digit
//     or closing bracket ("-3" in "x = -3", but "15" in "pages 10-15");
//   - a fraction a/b of two such numbers is one number ("3/4"), unless it is
//     part of a longer chain such as a date ("12/25/2023" gives "2023");
//   - a period after the last digit is not part of it ("is 18." gives "18").
//
// Exponents are not recognized: "1e-3" gives "3".
func LastNumber(s string) (string, bool) {
	end := len(s)
	for end > 0 && !isDigit(s[end-1]) {
		end--
	}
	if end == 0 {
		return "", false
	}
	start := decimalStart(s, end)
	if start >= 2 && s[start-1] == '/' && isDigit(s[start-2]) {
		num := decimalStart(s, start-1)
		if num == 0 || s[num-1] != '/' {
			start = num
		}
	}
	if start > 0 && s[start-1] == '-' && (start == 1 || !isWordByte(s[start-2])) {
		start--
	}
	return s[start:end], true
}

// decimalStart returns where the unsigned decimal number that ends at end
// begins (s[end-1] is a digit): an integer part with optional thousands
// commas, then optionally a period and more digits.
func decimalStart(s string, end int) int {
	i := end
	for i > 0 && isDigit(s[i-1]) {
		i--
	}
	if i > 0 && s[i-1] == '.' {
		if i < 2 || !isDigit(s[i-2]) {
			return i - 1 // ".5"
		}
		i = intStart(s, i-1)
	} else {
		i = intStart(s, end)
	}
	return i
}

// intStart returns where the integer part that ends at end begins (s[end-1]
// is a digit), taking in commas that separate groups of three digits after a
// first group of one to three.
func intStart(s string, end int) int {
	i := end
	for i > 0 && isDigit(s[i-1]) {
		i--
	}
	for end-i == 3 && i >= 2 && s[i-1] == ',' && isDigit(s[i-2]) {
		j := i - 1
		for j > 0 && isDigit(s[j-1]) {
			j--
		}
		if i-1-j > 3 {
			break // "1234,567": the comma is not a thousands separator
		}
		end, i = i-1, j
	}
	return i
}

// lastIndex returns the index of the last sub in s, or -1. It looks for
// sub[k] with strings.IndexByte, which is vectorized, and compares the rest
// at each hit: k should pick the byte of sub that is rarest in completions.
// (strings.LastIndex is not vectorized, and strings.Index restarts at every
// '<' of a GSM8K-style "<<2*3=6>>" annotation.)
func lastIndex(s, sub string, k int) int {
	last := -1
	c := sub[k]
	for i := k; i < len(s); i++ {
		j := strings.IndexByte(s[i:], c)
		if j < 0 {
			break
		}
		i += j
		if start := i - k; start+len(sub) <= len(s) && s[start:start+len(sub)] == sub {
			last = start
		}
	}
	return last
}

// NonBlank returns s, and whether it holds anything but white space: it is
// the "none" extractor, whose answer is the whole text.
func NonBlank(s string) (string, bool) {
	if strings.TrimSpace(s) == "" {
		return "", false
	}
	return s, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isWordByte reports whether c ends a word or an expression, so that a
// following '-' is a hyphen or an operator rather than a sign.
func isWordByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == ')' || c == ']' || c == '}'
}
