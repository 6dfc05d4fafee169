package instructions

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The helpers below do what the Python calls of IFEval's reference
// evaluator do on a str, so that the checks read as the reference does.

// pySpace is the white space of Python's str.isspace, str.strip and
// str.split: Unicode White_Space plus the ASCII separators U+001C–U+001F.
func pySpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// pyWord is a character of Python's \w on a str: str.isalnum() or "_".
func pyWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' }

// strip is Python's str.strip().
func strip(s string) string { return strings.TrimFunc(s, pySpace) }

// pyS is Python's \s as an RE2 class, for patterns the reference writes
// with \s (RE2's \s is ASCII only).
const pyS = `[\t\n\v\f\r \x{1c}-\x{1f}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

// pyD is Python's \d on a str.
const pyD = `\p{Nd}`

// isUpper is Python's str.isupper: some cased character, and none
// lowercase or titlecase.
func isUpper(s string) bool {
	cased := false
	for _, r := range s {
		switch {
		case unicode.IsLower(r) || unicode.IsTitle(r):
			return false
		case unicode.IsUpper(r):
			cased = true
		}
	}
	return cased
}

// isLower is Python's str.islower: some cased character, and none
// uppercase or titlecase.
func isLower(s string) bool {
	cased := false
	for _, r := range s {
		switch {
		case unicode.IsUpper(r) || unicode.IsTitle(r):
			return false
		case unicode.IsLower(r):
			cased = true
		}
	}
	return cased
}

// countWords counts the runs of \w characters, as IFEval's
// nltk.tokenize.RegexpTokenizer(r"\w+") does.
func countWords(s string) int {
	n, in := 0, false
	for _, r := range s {
		w := pyWord(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// countPlaceholders counts the matches of the reference's \[.*?\]: a "["
// and the first "]" after it on the same line.
func countPlaceholders(s string) int {
	n := 0
	for i := 0; i < len(s); {
		open := strings.IndexByte(s[i:], '[')
		if open < 0 {
			break
		}
		open += i
		rest := s[open+1:]
		end := strings.IndexAny(rest, "]\n")
		if end >= 0 && rest[end] == ']' {
			n++
			i = open + 1 + end + 1
			continue
		}
		i = open + 1 // a "[" whose line has no "]": try the next one
	}
	return n
}

// capitalWords counts the tokens of nltk.word_tokenize(s) that are in
// capitals (str.isupper), as change_case:capital_word_frequency does.
//
// Only what changes that count is reproduced: a token is upper or not by
// its letters, so the word tokenizer's work on punctuation matters only
// where it splits a run of letters in two. It splits at white space; at
// the characters it always sets apart ("“‘„«»”’`;@#$%&?!*()[]{}<>);
// at "," and ":" (before a digit too, which cannot change the count
// unless a letter follows the digit); at "--" and at runs of dots; before
// the contractions 's 'm 'd 'll 're 've n't ending a token; and it splits
// cannot, gimme, gonna, gotta, lemme and wanna in two.
func capitalWords(s string) int {
	n := 0
	for _, field := range strings.FieldsFunc(s, wordSplit) {
		for _, tok := range splitDashesDots(field) {
			n += capitalPieces(tok)
		}
	}
	return n
}

// wordSplit reports the characters the word tokenizer always splits at.
func wordSplit(r rune) bool {
	if pySpace(r) {
		return true
	}
	switch r {
	case '"', '“', '‘', '„', '«', '»', '”', '’', '`', ';', '@', '#', '$', '%', '&', '?', '!', '*',
		'(', ')', '[', ']', '{', '}', '<', '>', ',', ':':
		return true
	}
	return false
}

// splitDashesDots splits a field at "--" and at runs of two or more dots.
func splitDashesDots(field string) []string {
	if !strings.Contains(field, "--") && !strings.Contains(field, "..") {
		return []string{field}
	}
	var out []string
	start := 0
	for i := 0; i < len(field); {
		c := field[i]
		if c != '-' && c != '.' || i+1 >= len(field) || field[i+1] != c {
			i++
			continue
		}
		j := i
		for j < len(field) && field[j] == c {
			j++
		}
		if c == '-' {
			j = i + 2 // "--" is one token; a third dash starts the next
		}
		out = append(out, field[start:i])
		start, i = j, j
	}
	return append(out, field[start:])
}

// contractions are the endings the word tokenizer sets apart.
var contractions = [...]string{"'s", "'S", "'m", "'M", "'d", "'D", "'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T"}

// twoWords are the words the word tokenizer splits in two, with where.
var twoWords = [...]struct {
	word string
	at   int
}{{"cannot", 3}, {"gimme", 3}, {"gonna", 3}, {"gotta", 3}, {"lemme", 3}, {"wanna", 3}}

// capitalPieces counts the upper-case pieces of one token.
func capitalPieces(tok string) int {
	if tok == "" {
		return 0
	}
	for _, c := range contractions {
		if len(tok) > len(c) && strings.HasSuffix(tok, c) && tok[len(tok)-len(c)-1] != '\'' {
			return capitalPieces(tok[:len(tok)-len(c)]) + b2i(isUpper(c))
		}
	}
	for _, w := range twoWords {
		if strings.EqualFold(tok, w.word) {
			return b2i(isUpper(tok[:w.at])) + b2i(isUpper(tok[w.at:]))
		}
	}
	return b2i(isUpper(tok))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runeLen is Python's len of a str.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

func lastRune(s string) (rune, int)  { return utf8.DecodeLastRuneInString(s) }
func firstRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }
