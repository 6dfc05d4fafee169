package instructions

import (
	"strings"

	"github.com/dlclark/regexp2/v2"
)

// wordTokenizer is NLTK 3.8's word_tokenize with its English model: the
// text split into sentences by Punkt (punkt.go), each sentence split into
// words by NLTKWordTokenizer, the "improved Treebank" tokenizer of
// nltk/tokenize/destructive.py. The tokenizer's rules are its regular
// expressions applied in its order; they need look-ahead, which RE2 does
// not have, so they run on github.com/dlclark/regexp2 (a backtracking
// engine with .NET's syntax, which reads these patterns as Python's re
// does; its \w and \s are Unicode's, as Python's are on a str, but for
// combining marks, which .NET counts in \w and Python does not). The
// tests compare its tokens with NLTK's on 256 texts
// (testdata/word_tokenize.jsonl).
//
// A rule is the pattern with its replacement. TestWordTokenizeLongRuns
// holds the time on long runs of the characters the patterns repeat to a
// bound.
type wordTokenizer struct {
	punkt *punkt
	rules []wordRule
}

type wordRule struct {
	re   *regexp2.Regexp
	repl string
}

// newWordTokenizer compiles NLTKWordTokenizer's rules, in the order
// tokenize applies them (convert_parentheses off).
func newWordTokenizer(p *punkt) *wordTokenizer {
	r := func(pattern, repl string) wordRule { return wordRule{regexp2.MustCompile(pattern), repl} }
	space := wordRule{repl: "pad"} // tokenize's text = " " + text + " "
	rules := []wordRule{
		// STARTING_QUOTES
		r("([«“‘„]|[`]+)", " $1 "),
		r(`^"`, "``"),
		r("(``)", " $1 "),
		r(`([ \(\[{<])("|'{2})`, "$1 `` "),
		r(`(?i)(')(?!re|ve|ll|m|t|s|d|n)(\w)\b`, "$1 $2"),
		// PUNCTUATION
		// NLTK's ([\]\)}>"'»”’ ]*) with the group atomic: the class holds
		// the space that \s* also takes, and NLTK's backtracking between
		// the two is quadratic in a run of spaces (4 s for 20,000 of them
		// in Python). Atomic, the group keeps its longest run; a shorter
		// one only gives spaces back to \s*, which cannot change whether
		// the rest is white space to the end, so the matches are NLTK's.
		r(`([^\.])(\.)((?>[\]\)}>"'»”’ ]*))\s*$`, "$1 $2 $3 "),
		r(`([:,])([^\d])`, " $1 $2"),
		r(`([:,])$`, " $1 "),
		r(`\.{2,}`, " $0 "),
		r(`[;@#$%&]`, " $0 "),
		r(`([^\.])(\.)([\]\)}>"']*)\s*$`, "$1 $2$3 "),
		r(`[?!]`, " $0 "),
		r(`([^'])' `, "$1 ' "),
		r(`[*]`, " $0 "),
		// PARENS_BRACKETS
		r(`[\]\[\(\)\{\}\<\>]`, " $0 "),
		// DOUBLE_DASHES
		r(`--`, " -- "),
		space,
		// ENDING_QUOTES
		r("([»”’])", " $1 "),
		r(`''`, " '' "),
		r(`"`, " '' "),
		r(`([^' ])('[sS]|'[mM]|'[dD]|') `, "$1 $2 "),
		r(`([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) `, "$1 $2 "),
	}
	// MacIntyre's contractions (CONTRACTIONS2, CONTRACTIONS3).
	for _, c := range []string{
		`(?i)\b(can)(not)\b`, `(?i)\b(d)('ye)\b`, `(?i)\b(gim)(me)\b`, `(?i)\b(gon)(na)\b`,
		`(?i)\b(got)(ta)\b`, `(?i)\b(lem)(me)\b`, `(?i)\b(more)('n)\b`, `(?i)\b(wan)(na)(?=\s)`,
		`(?i) ('t)(is)\b`, `(?i) ('t)(was)\b`,
	} {
		rules = append(rules, r(c, " $1 $2 "))
	}
	return &wordTokenizer{punkt: p, rules: rules}
}

// tokens returns nltk.word_tokenize(text).
func (w *wordTokenizer) tokens(text string) []string {
	var out []string
	for _, s := range w.punkt.sentences(text) {
		out = append(out, w.sentence(s)...)
	}
	return out
}

// sentence returns NLTKWordTokenizer().tokenize(s).
func (w *wordTokenizer) sentence(s string) []string {
	for _, rule := range w.rules {
		if rule.re == nil {
			s = " " + s + " "
			continue
		}
		// The patterns cannot fail at run time: no timeout is set.
		s, _ = rule.re.Replace(s, rule.repl, -1, -1)
	}
	return strings.FieldsFunc(s, pySpace)
}
