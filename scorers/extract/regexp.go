package extract

import (
	"errors"
	"slices"
	"strings"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/rematch"
)

// Regexp extracts the answer with a regular expression (RE2 syntax, Go
// regexp's semantics; see package rematch for the engine) compiled once. It
// is the slow path: prefer the scans of this package where one fits.
type Regexp struct {
	re    *rematch.Regexp
	group int
	// prefix is a literal that every match begins with; when the text does
	// not contain it, the regexp engine is not run at all.
	prefix string
}

// PatternParam compiles a scorer's extract_pattern parameter, which the
// extractor lists share: it reports to bad a pattern that does not compile,
// or that no list names regex for. It returns nil when pattern is "" or does
// not compile.
func PatternParam(bad *scorers.ParamErrors, pattern string, lists ...[]string) *Regexp {
	if pattern == "" {
		return nil
	}
	if !slices.ContainsFunc(lists, func(l []string) bool { return slices.Contains(l, "regex") }) {
		bad.Add("extract_pattern", errors.New("is set but no extract list has regex"))
	}
	re, err := NewRegexp(pattern)
	if err != nil {
		bad.Addf("extract_pattern", "compile %q: %w", pattern, err)
		return nil
	}
	return re
}

// NewRegexp compiles pattern. The answer is the submatch named "answer" if
// the pattern has one, else its first group, else the whole match.
func NewRegexp(pattern string) (*Regexp, error) {
	re, err := rematch.CompileString(pattern)
	if err != nil {
		return nil, err
	}
	group := re.Std().SubexpIndex("answer")
	if group < 0 {
		group = min(1, re.Std().NumSubexp())
	}
	prefix, _ := re.Std().LiteralPrefix()
	return &Regexp{re: re, group: group, prefix: prefix}, nil
}

// Extract returns the answer group of the last match of the pattern in s
// whose answer group took part in the match and is not blank.
func (r *Regexp) Extract(s string) (string, bool) {
	if r.prefix != "" && !strings.Contains(s, r.prefix) {
		return "", false
	}
	matches := r.re.FindAllStringSubmatchIndex(s, -1)
	for k := len(matches) - 1; k >= 0; k-- {
		lo, hi := matches[k][2*r.group], matches[k][2*r.group+1]
		if lo < 0 {
			continue
		}
		if ans, ok := NonBlank(s[lo:hi]); ok {
			return ans, true
		}
	}
	return "", false
}

// String returns the pattern.
func (r *Regexp) String() string { return r.re.String() }
