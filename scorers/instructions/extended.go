package instructions

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// extendedSpecs are the instructions open-instruct's IFEvalG adds to
// IFEval's (Tülu 3's RLVR data uses them), each checked as
// open_instruct/IFEvalG/instructions.py checks it, but for its random
// draws: where it draws a parameter given as 0 (n_start, N, small_n),
// rewardd takes 0, but where 0 means nothing (a sentence or word position,
// a number of sentences or words a sentence), where it is an error. Four
// ids count NLTK word tokens: they use wordTokenizer, NLTK's
// word_tokenize ported. letters:letter_counting2 is IFEval's
// keywords:letter_frequency under another id.
func extendedSpecs() map[string]spec {
	return map[string]spec{
		"copy:repeat_phrase": {[]string{"phrase", "small_n"}, func(a *kwargs, _ *env) (check, error) {
			phrase := strings.FieldsFunc(strip(a.str("phrase")), pySpace)
			n := a.count("small_n")
			if a.err == nil && len(phrase) == 0 {
				a.fail("phrase", fmt.Errorf("is empty"))
			}
			var re *regexp.Regexp
			if a.err == nil {
				var err error
				// The reference's rf"{first_word} .*? {last_word}".
				if re, err = regexp.Compile(phrase[0] + " .*? " + phrase[len(phrase)-1]); err != nil {
					a.fail("phrase", err)
				}
			}
			return func(v string) bool { return repeatPhrase(re, phrase, n, v) }, a.err
		}},
		"copy:copy": {[]string{"prompt_to_repeat"}, func(a *kwargs, _ *env) (check, error) {
			p := strings.ToLower(strip(a.str("prompt_to_repeat")))
			return func(v string) bool { return strings.ToLower(strip(v)) == p }, a.err
		}},
		"new:copy_span_idx": {[]string{"prompt_to_repeat", "n_start", "n_end"}, func(a *kwargs, _ *env) (check, error) {
			p := []rune(a.str("prompt_to_repeat"))
			start, end := a.count("n_start"), a.count("n_end")
			span := ""
			if a.err == nil {
				start, end = min(start, len(p)), min(end, len(p))
				if start < end {
					span = string(p[start:end])
				}
			}
			span = strings.ToLower(strip(span))
			return func(v string) bool { return strings.ToLower(strip(v)) == span }, a.err
		}},
		"copy:copying_simple": {[]string{"prompt_to_repeat"}, func(a *kwargs, _ *env) (check, error) {
			p := strings.ToLower(strip(a.str("prompt_to_repeat")))
			return func(v string) bool { return strings.ToLower(strip(v)) == p }, a.err
		}},
		"copy:copying_multiple": {[]string{"prompt_to_repeat", "N"}, func(a *kwargs, _ *env) (check, error) {
			p := strings.ToLower(strip(a.str("prompt_to_repeat")))
			n := a.count("N")
			return func(v string) bool {
				parts := strings.Split(v, "******")
				if len(parts) != n {
					return false
				}
				for _, part := range parts {
					if strings.ToLower(strip(part)) != p {
						return false
					}
				}
				return true
			}, a.err
		}},
		"detectable_format:sentence_hyphens": {nil, func(a *kwargs, _ *env) (check, error) {
			return sentenceHyphens, a.err
		}},
		"keywords:no_adjacent_consecutive": {nil, func(a *kwargs, _ *env) (check, error) {
			return noAdjacentConsecutive, a.err
		}},
		"detectable_format:square_brackets": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				for _, w := range strings.FieldsFunc(v, pySpace) {
					if !strings.HasPrefix(w, "[") || !strings.HasSuffix(w, "]") {
						return false
					}
				}
				return true
			}, a.err
		}},
		"keywords:word_once": {[]string{"keyword"}, func(a *kwargs, _ *env) (check, error) {
			m := a.pattern("keyword", strip(a.str("keyword")), true)
			return func(v string) bool { return m.count(v, 2) == 1 }, a.err
		}},
		"keywords:word_count_different_numbers": {[]string{"keyword", "frequency", "relation"}, func(a *kwargs, _ *env) (check, error) {
			m := a.pattern("keyword", strip(a.str("keyword")), true)
			n, rel := a.count("frequency"), a.relation("relation")
			return func(v string) bool { return rel(m.count(v, -1), n) }, a.err
		}},
		"keywords:exclude_word_harder": {[]string{"keyword", "instruction"}, func(a *kwargs, _ *env) (check, error) {
			w := " " + strip(a.str("keyword")) + " "
			return func(v string) bool { return !strings.Contains(v, w) }, a.err
		}},
		"paragraphs:paragraphs": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool { return twoParagraphs(divider.Split(v, -1)) }, a.err
		}},
		"paragraphs:paragraphs2": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool { return twoParagraphs(strings.Split(v, "\n\n")) }, a.err
		}},
		"first_word:first_word_sent": {[]string{"first_word"}, func(a *kwargs, _ *env) (check, error) {
			w := strings.ToLower(strip(a.str("first_word")))
			return func(v string) bool {
				for _, s := range splitIntoSentences(v) {
					f := strings.FieldsFunc(s, pySpace)
					if len(f) == 0 || strings.ToLower(f[0]) != w {
						return false
					}
				}
				return true
			}, a.err
		}},
		"first_word:first_word_answer": {[]string{"first_word"}, func(a *kwargs, _ *env) (check, error) {
			w := strings.ToLower(strip(a.str("first_word")))
			return func(v string) bool {
				f := strings.FieldsFunc(v, pySpace)
				return len(f) > 0 && strings.ToLower(f[0]) == w
			}, a.err
		}},
		"last_word:last_word_sent": {[]string{"last_word"}, func(a *kwargs, _ *env) (check, error) {
			w := strings.ToLower(strip(a.str("last_word")))
			return func(v string) bool {
				for _, s := range splitIntoSentences(v) {
					f := strings.FieldsFunc(s, pySpace)
					if len(f) == 0 || strings.ToLower(dropNonWord(f[len(f)-1])) != w {
						return false
					}
				}
				return true
			}, a.err
		}},
		"last_word:last_word_answer": {[]string{"last_word"}, func(a *kwargs, _ *env) (check, error) {
			w := strings.ToLower(strip(a.str("last_word")))
			return func(v string) bool {
				f := strings.FieldsFunc(v, pySpace)
				return len(f) > 0 && strings.ToLower(dropNonWord(f[len(f)-1])) == w
			}, a.err
		}},
		"detectable_format:bigram_wrapping": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				words := strings.FieldsFunc(v, pySpace)
				for i := 0; i+1 < len(words); i += 2 {
					if !strings.HasPrefix(words[i], "<<") || !strings.HasSuffix(words[i+1], ">>") {
						return false
					}
				}
				return true
			}, a.err
		}},
		"punctuation:punctuation_dot": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool { return !strings.Contains(v, ".") }, a.err
		}},
		"punctuation:punctuation_exclamation": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool { return !strings.Contains(v, "!") }, a.err
		}},
		"count:lowercase_counting": {[]string{"N"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("N")
			return func(v string) bool { return lowercaseWords(v) <= n }, a.err
		}},
		"letters:letter_counting": {[]string{"N", "relation"}, func(a *kwargs, _ *env) (check, error) {
			n, rel := a.count("N"), a.relation("relation")
			return func(v string) bool {
				letters := 0
				for i := 0; i < len(v); i++ {
					if c := v[i] | 0x20; c >= 'a' && c <= 'z' {
						letters++
					}
				}
				return rel(letters, n)
			}, a.err
		}},
		"count:count_increment_word": {[]string{"keyword1", "keyword2"}, func(a *kwargs, _ *env) (check, error) {
			m1 := a.pattern("keyword1", strip(a.str("keyword1")), true)
			m2 := a.pattern("keyword2", strip(a.str("keyword2")), true)
			return func(v string) bool { return m1.count(v, 2) == 1 && m2.count(v, 3) == 2 }, a.err
		}},
		"count:counting_composition": {[]string{"n_sent", "n_words"}, func(a *kwargs, e *env) (check, error) {
			nSent, nWords := a.positive("n_sent"), a.positive("n_words")
			return func(v string) bool { return countingComposition(e.words, nSent, nWords, v) }, a.err
		}},
		"count:count_unique": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				words := e.words.tokens(v)
				seen := make(map[string]bool, len(words))
				for _, w := range words {
					if seen[w] {
						return false
					}
					seen[w] = true
				}
				return true
			}, a.err
		}},
		"keywords:keyword_specific_position": {[]string{"keyword", "n", "m"}, func(a *kwargs, e *env) (check, error) {
			kw := strip(a.str("keyword"))
			n, m := a.positive("n"), a.positive("m")
			return func(v string) bool {
				sentences := splitIntoSentences(v)
				if len(sentences) < n {
					return false
				}
				words := e.words.tokens(sentences[n-1])
				return len(words) >= m && words[m-1] == kw
			}, a.err
		}},
		"keywords:start_end": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				words := e.words.tokens(v)
				return len(words) >= 2 && strings.ToLower(words[0]) == strings.ToLower(words[len(words)-1])
			}, a.err
		}},
		"keywords:palindrome": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				for _, w := range strings.FieldsFunc(v, pySpace) {
					if isPalindrome(w) {
						return true
					}
				}
				return false
			}, a.err
		}},
	}
}

// repeatPhrase is IFEvalG's RepeatPhraseChecker: the phrase appears n
// times, each with exactly one word changed.
func repeatPhrase(re *regexp.Regexp, phrase []string, n int, v string) bool {
	found := re.FindAllString(v, -1)
	if len(found) != n {
		return false
	}
	satisfied := 0
	for _, f := range found {
		words := strings.FieldsFunc(f, pySpace)
		if len(words) != len(phrase) {
			return false
		}
		diff := 0
		for i := range words {
			if words[i] != phrase[i] {
				diff++
				if diff > 1 {
					return false
				}
			}
		}
		if diff == 1 {
			satisfied++
		}
	}
	return satisfied == n
}

// countingComposition is IFEvalG's CountingCompositionChecker: three
// paragraphs between "***" dividers, each of nSent sentences (the
// rule-based split) of nWords word tokens. As in the reference, an empty
// paragraph at either end still has its sentences counted, so it fails.
func countingComposition(w *wordTokenizer, nSent, nWords int, v string) bool {
	paragraphs := divider.Split(v, -1)
	n := len(paragraphs)
	for i, p := range paragraphs {
		if strip(p) == "" {
			if i != 0 && i != len(paragraphs)-1 {
				return false
			}
			n--
		}
		sentences := splitIntoSentences(p)
		if len(sentences) != nSent {
			return false
		}
		for _, s := range sentences {
			if len(w.tokens(s)) != nWords {
				return false
			}
		}
	}
	return n == 3
}

// twoParagraphs is IFEvalG's ParagraphBasicChecker on already split
// paragraphs: two, with empty ones only at the ends.
func twoParagraphs(parts []string) bool {
	n := len(parts)
	for i, p := range parts {
		if strip(p) == "" {
			if i != 0 && i != len(parts)-1 {
				return false
			}
			n--
		}
	}
	return n == 2
}

// noAdjacentConsecutive is IFEvalG's AdjacentLetterChecker: no two
// neighbouring words start with consecutive letters (a then b).
func noAdjacentConsecutive(v string) bool {
	words := strings.FieldsFunc(v, pySpace)
	for i := 0; i+1 < len(words); i++ {
		a, b := []rune(strings.ToLower(firstChar(words[i]))), []rune(strings.ToLower(firstChar(words[i+1])))
		if len(a) != 1 || len(b) != 1 {
			return false
		}
		if b[0]-a[0] == 1 {
			return false
		}
	}
	return true
}

func firstChar(s string) string {
	_, size := utf8.DecodeRuneInString(s)
	return s[:size]
}

// dropNonWord is re.sub(r"[^\w\s]", "", s).
func dropNonWord(s string) string {
	return strings.Map(func(r rune) rune {
		if pyWord(r) || pySpace(r) {
			return r
		}
		return -1
	}, s)
}

// lowercaseWords counts the matches of \b[a-z]+\b: the runs of \w that are
// all ASCII lowercase letters.
func lowercaseWords(v string) int {
	n, inWord, allLower := 0, false, false
	flush := func() {
		if inWord && allLower {
			n++
		}
	}
	for _, r := range v {
		if pyWord(r) {
			if !inWord {
				inWord, allLower = true, true
			}
			allLower = allLower && r >= 'a' && r <= 'z'
			continue
		}
		flush()
		inWord = false
	}
	flush()
	return n
}

func isPalindrome(w string) bool {
	r := []rune(w)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		if r[i] != r[j] {
			return false
		}
	}
	return true
}

// sentenceHyphens is IFEvalG's SentenceHyphenChecker: the sentences are
// joined by hyphens, with no space around them.
func sentenceHyphens(v string) bool {
	gold := splitIntoSentences(strings.ReplaceAll(v, "-", " "))
	parts := strings.Split(v, "-")
	for i := 0; i < len(parts) && i < len(gold); i++ {
		if strip(parts[i]) != parts[i] || parts[i] != gold[i] {
			return false
		}
	}
	return true
}

// The patterns of instructions_util.split_into_sentences, with Python's \s.
var (
	splitPrefixes   = regexp.MustCompile(`(Mr|St|Mrs|Ms|Dr)[.]`)
	splitWebsites   = regexp.MustCompile(`[.](com|net|org|io|gov|edu|me)`)
	splitDigits     = regexp.MustCompile(`([0-9])[.]([0-9])`)
	splitDots       = regexp.MustCompile(`\.{2,}`)
	splitInitial    = regexp.MustCompile(pyS + `([A-Za-z])[.] `)
	splitStarters   = `(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He` + pyS + `|She` + pyS + `|It` + pyS + `|They` + pyS + `|Their` + pyS + `|Our` + pyS + `|We` + pyS + `|But` + pyS + `|However` + pyS + `|That` + pyS + `|This` + pyS + `|Wherever)`
	splitAcronyms   = regexp.MustCompile(`([A-Z][.][A-Z][.](?:[A-Z][.])?) ` + splitStarters)
	splitThree      = regexp.MustCompile(`([A-Za-z])[.]([A-Za-z])[.]([A-Za-z])[.]`)
	splitTwo        = regexp.MustCompile(`([A-Za-z])[.]([A-Za-z])[.]`)
	splitSuffixStop = regexp.MustCompile(` (Inc|Ltd|Jr|Sr|Co)[.] ` + splitStarters)
	splitSuffix     = regexp.MustCompile(` (Inc|Ltd|Jr|Sr|Co)[.]`)
	splitAlpha      = regexp.MustCompile(` ([A-Za-z])[.]`)
)

// splitIntoSentences is IFEval's instructions_util.split_into_sentences, a
// rule-based splitter (not Punkt) that IFEvalG's sentence checks use.
func splitIntoSentences(text string) []string {
	text = " " + text + "  "
	text = strings.ReplaceAll(text, "\n", " ")
	text = splitPrefixes.ReplaceAllString(text, "${1}<prd>")
	text = splitWebsites.ReplaceAllString(text, "<prd>${1}")
	text = splitDigits.ReplaceAllString(text, "${1}<prd>${2}")
	text = splitDots.ReplaceAllStringFunc(text, func(m string) string {
		return strings.Repeat("<prd>", len(m)) + "<stop>"
	})
	text = strings.ReplaceAll(text, "Ph.D.", "Ph<prd>D<prd>")
	text = splitInitial.ReplaceAllString(text, " ${1}<prd> ")
	text = splitAcronyms.ReplaceAllString(text, "${1}<stop> ${2}")
	text = splitThree.ReplaceAllString(text, "${1}<prd>${2}<prd>${3}<prd>")
	text = splitTwo.ReplaceAllString(text, "${1}<prd>${2}<prd>")
	text = splitSuffixStop.ReplaceAllString(text, " ${1}<stop> ${2}")
	text = splitSuffix.ReplaceAllString(text, " ${1}<prd>")
	text = splitAlpha.ReplaceAllString(text, " ${1}<prd>")
	text = strings.NewReplacer(".”", "”.").Replace(text)
	text = strings.ReplaceAll(text, `."`, `".`)
	text = strings.ReplaceAll(text, `!"`, `"!`)
	text = strings.ReplaceAll(text, `?"`, `"?`)
	text = strings.ReplaceAll(text, ".", ".<stop>")
	text = strings.ReplaceAll(text, "?", "?<stop>")
	text = strings.ReplaceAll(text, "!", "!<stop>")
	text = strings.ReplaceAll(text, "<prd>", ".")
	sentences := strings.Split(text, "<stop>")
	for i, s := range sentences {
		sentences[i] = strip(s)
	}
	if n := len(sentences); n > 0 && sentences[n-1] == "" {
		sentences = sentences[:n-1]
	}
	return sentences
}
