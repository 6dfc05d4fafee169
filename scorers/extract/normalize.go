package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The string normalizers below return s itself, without allocating, when
// there is nothing to change.

// Normalizer returns the string normalizer a config calls name: strip,
// lower, whitespace or punctuation; ok is false for any other name.
func Normalizer(name string) (f func(string) string, ok bool) {
	switch name {
	case "strip":
		return strip, true
	case "lower":
		return lower, true
	case "whitespace":
		return whitespace, true
	case "punctuation":
		return punctuation, true
	}
	return nil, false
}

// strip removes leading and trailing white space.
func strip(s string) string { return strings.TrimSpace(s) }

// lower maps s to lower case (Unicode).
func lower(s string) string { return strings.ToLower(s) }

// whitespace replaces every run of white space (Unicode) with one space and
// removes leading and trailing white space. Bytes that are not valid UTF-8
// are kept as they are.
func whitespace(s string) string {
	if collapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			space = true
		} else {
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString(s[i : i+n]) // keeps invalid bytes as they are
		}
		i += n
	}
	return b.String()
}

// collapsed reports whether s is ASCII and already in the form whitespace
// gives.
func collapsed(s string) bool {
	prevSpace := true // no leading space
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c != ' ' && asciiSpace(c) {
			return false
		}
		if c == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
	}
	return s == "" || s[len(s)-1] != ' '
}

// PySpace is 1 when byte c is an ASCII character Python's str.split splits
// on, 0 otherwise: the ASCII white space and the separators U+001C–U+001F.
// Above ASCII, str.split splits on Unicode White_Space, as unicode.IsSpace
// says; a caller decodes those runes itself. It is a number, not a bool, so
// that a word counter can add it without a branch.
func PySpace(c byte) uint8 { return pySpace[c] }

var pySpace = [256]uint8{
	'\t': 1, '\n': 1, '\v': 1, '\f': 1, '\r': 1, ' ': 1,
	0x1c: 1, 0x1d: 1, 0x1e: 1, 0x1f: 1,
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// punctuation removes every Unicode punctuation character (category P:
// .,;:!?'"()[]{}-_/\@#%&* and their non-ASCII kin). Symbols such as $ + = ^
// are kept. Bytes that are not valid UTF-8 are kept as they are.
func punctuation(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isPunct(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isPunct(r, n) {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isPunct reports whether the rune r, decoded from n bytes, is punctuation.
// An invalid byte (RuneError of width 1) is not.
func isPunct(r rune, n int) bool {
	if r == utf8.RuneError && n == 1 {
		return false
	}
	return unicode.IsPunct(r)
}
