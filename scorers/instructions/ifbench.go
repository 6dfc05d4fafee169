package instructions

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// ifbenchSpecs are the instructions AllenAI's IFBench adds (Pyatkin et al.
// 2025, "Generalizing Verifiable Instruction Following"; allenai/IFBench,
// ifbench/instructions.py), each checked as its check_following does,
// with its kwargs. IFBench's sentence splitting is NLTK's Punkt
// (punkt.sentences), its word tokens nltk.word_tokenize (wordTokenizer),
// its "words" mostly str.split() with string.punctuation stripped.
//
// Where the reference draws a missing or negative parameter at random,
// rewardd answers ERROR naming it. The ids rewardd leaves out, with why,
// are in unsupported.
func ifbenchSpecs() map[string]spec {
	return map[string]spec{
		"count:word_count_range": {[]string{"min_words", "max_words"}, func(a *kwargs, _ *env) (check, error) {
			lo, hi := a.count("min_words"), a.count("max_words")
			return func(v string) bool { n := countWords(v); return lo <= n && n <= hi }, a.err
		}},
		"count:unique_word_count": {[]string{"N"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("N")
			return func(v string) bool {
				unique := map[string]bool{}
				for _, w := range pySplit(strings.ToLower(v)) {
					unique[stripPunctSpace(w)] = true
				}
				return len(unique) >= n
			}, a.err
		}},
		"ratio:sentence_type": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				c := sentenceEnds(e.punkt.sentences(v))
				return c['.'] == 2*c['?']
			}, a.err
		}},
		"ratio:sentence_balance": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				c := sentenceEnds(e.punkt.sentences(v))
				return c['.'] == c['?'] && c['?'] == c['!']
			}, a.err
		}},
		"count:conjunctions": {[]string{"small_n"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("small_n")
			return func(v string) bool {
				// The reference collects the words as written ("And",
				// "and," and "and" are three), whose stripped lower case
				// is a conjunction.
				found := map[string]bool{}
				for _, w := range pySplit(v) {
					switch strings.ToLower(stripPunctSpace(w)) {
					case "and", "but", "for", "nor", "or", "so", "yet":
						found[w] = true
					}
				}
				return len(found) >= n
			}, a.err
		}},
		"count:person_names": {[]string{"N"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("N")
			return func(v string) bool {
				found := 0
				for _, name := range personNames {
					if (matcher{lit: name}).wordIn(v) {
						found++
					}
				}
				return found >= n
			}, a.err
		}},
		"ratio:overlap": {[]string{"reference_text", "percentage"}, func(a *kwargs, _ *env) (check, error) {
			ref := charTrigrams(a.str("reference_text"))
			pct := float64(a.count("percentage"))
			return func(v string) bool {
				grams := charTrigrams(v)
				if len(grams) == 0 {
					return false
				}
				shared := 0
				for g := range grams {
					if ref[g] {
						shared++
					}
				}
				overlap := float64(shared) / float64(len(grams)) * 100
				return pct-2 <= overlap && overlap <= pct+2
			}, a.err
		}},
		"count:numbers": {[]string{"N"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("N")
			return func(v string) bool { return len(digitRuns(dropPunct(v))) == n }, a.err
		}},
		"words:alphabet": {nil, func(a *kwargs, _ *env) (check, error) {
			return alphabetLoop, a.err
		}},
		"words:vowel": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				paragraphs := strings.Split(strip(v), "\n")
				if len(paragraphs) != 1 {
					return false
				}
				vowels := map[rune]bool{}
				for _, r := range strings.ToLower(paragraphs[0]) {
					if strings.ContainsRune("aeiou", r) {
						vowels[r] = true
					}
				}
				return len(vowels) <= 3
			}, a.err
		}},
		"words:consonants": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				consonant := func(r rune) bool { return strings.ContainsRune("bcdfghjklmnpqrstvwxyz", r) }
				for _, w := range pySplit(strings.ToLower(v)) {
					r := []rune(w)
					cluster := false
					for i := 0; i+1 < len(r) && !cluster; i++ {
						cluster = consonant(r[i]) && consonant(r[i+1])
					}
					if !cluster {
						return false
					}
				}
				return true
			}, a.err
		}},
		"sentence:alliteration_increment": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool { return alliterationIncrement(e.punkt.sentences(v)) }, a.err
		}},
		"words:palindrome": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				n := 0
				for _, w := range pySplit(strings.ToLower(dropPunct(v))) {
					if runeLen(w) >= 5 && isPalindrome(w) {
						n++
					}
				}
				return n >= 10
			}, a.err
		}},
		"count:punctuation": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				if !strings.Contains(v, "!?") && !strings.Contains(v, "?!") && !strings.Contains(v, "‽") {
					return false
				}
				rest := strings.Replace(v, "?!", "", 1)
				if len(rest) == len(v) {
					rest = strings.Replace(v, "!?", "", 1)
				}
				for _, p := range []string{".", ",", "!", "?", ";", ":"} {
					if !strings.Contains(rest, p) {
						return false
					}
				}
				return true
			}, a.err
		}},
		"format:parentheses": {nil, func(a *kwargs, _ *env) (check, error) {
			return nestedBrackets, a.err
		}},
		"format:quotes": {nil, func(a *kwargs, _ *env) (check, error) {
			return nestedQuotes, a.err
		}},
		"words:prime_lengths": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				for _, w := range pySplit(dropPunct(v)) {
					switch runeLen(w) {
					case 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97:
					default:
						return false
					}
				}
				return true
			}, a.err
		}},
		"format:options": {[]string{"options"}, func(a *kwargs, _ *env) (check, error) {
			options, strict := responseOptions(a.str("options"))
			return func(v string) bool {
				if strict {
					return slices.Contains(options, v)
				}
				v = strings.ToLower(stripPunctSpace(v))
				for _, o := range options {
					if strings.ToLower(stripPunctSpace(o)) == v {
						return true
					}
				}
				return false
			}, a.err
		}},
		"format:newline": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				v = strip(dropPunct(v))
				lines := 0
				for _, l := range strings.Split(v, "\n") {
					if l != "" {
						lines++
					}
				}
				return lines == len(pySplit(v))
			}, a.err
		}},
		"ratio:sentence_words": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				s := e.punkt.sentences(v)
				if len(s) != 3 {
					return false
				}
				n := runeLen(strip(s[0]))
				return runeLen(strip(s[1])) == n && runeLen(strip(s[2])) == n
			}, a.err
		}},
		"count:words_japanese": {[]string{"N"}, func(a *kwargs, _ *env) (check, error) {
			n := a.positive("N")
			return func(v string) bool {
				for i, w := range pySplit(v) {
					w = stripPunctSpace(w)
					if (i+1)%n == 0 && w != "" && !isDigits(w) && !japanese.MatchString(w) {
						return false
					}
				}
				return true
			}, a.err
		}},
		"words:repeats": {[]string{"small_n"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("small_n")
			return func(v string) bool {
				seen := map[string]int{}
				for _, w := range pySplit(dropPunct(strings.ToLower(v))) {
					if seen[w]++; seen[w] > n {
						return false
					}
				}
				return true
			}, a.err
		}},
		"sentence:keyword": {[]string{"word", "N"}, func(a *kwargs, e *env) (check, error) {
			word := a.str("word")
			if a.err == nil && word == "" {
				a.fail("word", fmt.Errorf("is empty"))
			}
			n := a.positive("N")
			m := matcher{lit: strings.ToLower(word), fold: true}
			return func(v string) bool {
				s := e.punkt.sentences(v)
				return len(s) >= n && m.wordIn(s[n-1])
			}, a.err
		}},
		"count:pronouns": {[]string{"N"}, func(a *kwargs, e *env) (check, error) {
			n := a.count("N")
			return func(v string) bool {
				count := 0
				for _, w := range e.words.tokens(strings.ReplaceAll(strings.ToLower(v), "/", " ")) {
					if pronouns[w] {
						count++
					}
				}
				return count >= n
			}, a.err
		}},
		"words:last_first": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				s := e.punkt.sentences(v)
				for i := 0; i+1 < len(s); i++ {
					last := pySplit(strings.TrimRightFunc(s[i], isPunctSpace))
					first := pySplit(strings.TrimLeftFunc(s[i+1], isPunctSpace))
					if len(last) == 0 || len(first) == 0 || strings.ToLower(last[len(last)-1]) != strings.ToLower(first[0]) {
						return false
					}
				}
				return true
			}, a.err
		}},
		"words:paragraph_last_first": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				for _, p := range strings.Split(v, "\n") {
					words := pySplit(stripPunctSpace(strings.ToLower(strip(p))))
					if len(words) > 0 && words[0] != words[len(words)-1] {
						return false
					}
				}
				return true
			}, a.err
		}},
		"sentence:increment": {[]string{"small_n"}, func(a *kwargs, e *env) (check, error) {
			n := a.count("small_n")
			return func(v string) bool {
				s := e.punkt.sentences(v)
				if len(s) == 0 {
					return false // the reference fails on sentences[0]
				}
				prev := len(pySplit(dropPunct(s[0])))
				for _, x := range s[1:] {
					words := len(pySplit(dropPunct(x)))
					if words != prev+n {
						return false
					}
					prev = words
				}
				return true
			}, a.err
		}},
		"words:no_consecutive": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				words := pySplit(dropPunct(strings.ToLower(v)))
				for i := 0; i+1 < len(words); i++ {
					a, _ := firstRune(words[i])
					b, _ := firstRune(words[i+1])
					if a == b {
						return false
					}
				}
				return true
			}, a.err
		}},
		"format:line_indent": {nil, func(a *kwargs, _ *env) (check, error) {
			return indentStairs, a.err
		}},
		"format:quote_unquote": {nil, func(a *kwargs, _ *env) (check, error) {
			return quoteExplanation, a.err
		}},
		"format:list": {[]string{"sep"}, func(a *kwargs, _ *env) (check, error) {
			sep := a.str("sep")
			return func(v string) bool { return strings.Count(v, sep) >= 2 }, a.err
		}},
		"format:thesis": {nil, func(a *kwargs, _ *env) (check, error) {
			return italicsThesis, a.err
		}},
		"format:sub-bullets": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				for _, b := range strings.Split(v, "*")[1:] {
					if !strings.Contains(b, "-") {
						return false
					}
				}
				return true
			}, a.err
		}},
		"format:no_bullets_bullets": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool { return someBullets(e.punkt, v) }, a.err
		}},
		"custom:multiples": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				return slices.Equal(digitRuns(strings.ReplaceAll(v, ",", ", ")), []string{"14", "21", "28", "35", "42", "49"})
			}, a.err
		}},
		"custom:mcq_count_length": {nil, func(a *kwargs, _ *env) (check, error) {
			return multipleChoiceQuestions, a.err
		}},
		"custom:reverse_newline": {nil, func(a *kwargs, _ *env) (check, error) {
			return reverseNewline, a.err
		}},
		"custom:word_reverse": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				words := pySplit(dropPunct(strip(strings.ToLower(v))))
				slices.Reverse(words)
				v = strings.Join(words, " ")
				return strings.Contains(v, "bald eagle") && slices.Contains(e.punkt.sentences(v), v)
			}, a.err
		}},
		"custom:character_reverse": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool { return strings.Contains(strings.ToLower(v), "elgae dlab") }, a.err
		}},
		"custom:sentence_alphabet": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				s := e.punkt.sentences(v)
				if len(s) != 26 {
					return false
				}
				for i, x := range s {
					words := pySplit(x)
					if len(words) == 0 {
						return false
					}
					if r, _ := firstRune(strings.ToLower(words[0])); r != rune('a'+i) {
						return false
					}
				}
				return true
			}, a.err
		}},
		"custom:european_capitals_sort": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				var caps []string
				for _, c := range strings.Split(asciiFold(v), ",") {
					if strip(c) != "" {
						caps = append(caps, strip(c))
					}
				}
				return slices.Equal(caps, europeanCapitals)
			}, a.err
		}},
		"custom:csv_city": {nil, func(a *kwargs, _ *env) (check, error) {
			return csvCity, a.err
		}},
		"custom:csv_special_character": {nil, func(a *kwargs, _ *env) (check, error) {
			return csvSpecialCharacter, a.err
		}},
		"custom:csv_quotes": {nil, func(a *kwargs, _ *env) (check, error) {
			return csvQuotes, a.err
		}},
		"custom:date_format_list": {nil, func(a *kwargs, _ *env) (check, error) {
			return dateFormatList, a.err
		}},
		"count:keywords_multiple": {[]string{"keyword1", "keyword2", "keyword3", "keyword4", "keyword5"}, func(a *kwargs, _ *env) (check, error) {
			var kws [5]string
			for i := range kws {
				kws[i] = strings.ToLower(strip(a.str(fmt.Sprintf("keyword%d", i+1))))
			}
			return func(v string) bool {
				v = strings.ToLower(v)
				for i, want := range [5]int{1, 2, 3, 5, 7} {
					if (matcher{lit: kws[i]}).count(v, -1) != want {
						return false
					}
				}
				return true
			}, a.err
		}},
		"words:keywords_specific_position": {[]string{"keyword", "n", "m"}, func(a *kwargs, e *env) (check, error) {
			kw := strings.ToLower(strip(a.str("keyword")))
			if a.err == nil && kw == "" {
				a.fail("keyword", fmt.Errorf("is empty"))
			}
			n, m := a.positive("n"), a.positive("m")
			return func(v string) bool {
				s := e.punkt.sentences(v)
				if len(s) < n {
					return false
				}
				var words []string
				for _, t := range e.words.tokens(s[n-1]) {
					if strings.IndexFunc(t, isAlnum) >= 0 {
						words = append(words, t)
					}
				}
				return len(words) >= m && strings.ToLower(words[m-1]) == kw
			}, a.err
		}},
		"words:words_position": {[]string{"keyword"}, func(a *kwargs, e *env) (check, error) {
			kw := strings.ToLower(strip(a.str("keyword")))
			return func(v string) bool {
				w := e.words.tokens(v)
				if len(w) < 2 {
					return false
				}
				end := len(w) - 2
				if strings.Contains(asciiPunct, w[len(w)-1]) {
					if len(w) < 3 {
						return false
					}
					end = len(w) - 3
				}
				return strings.ToLower(w[1]) == kw && strings.ToLower(w[end]) == kw
			}, a.err
		}},
		"repeat:repeat_change": {[]string{"prompt_to_repeat"}, func(a *kwargs, _ *env) (check, error) {
			p := a.str("prompt_to_repeat")
			if a.err == nil && p == "" {
				a.fail("prompt_to_repeat", fmt.Errorf("is empty"))
			}
			rest := func(s string) string {
				w := pySplit(s)
				if len(w) == 0 {
					return ""
				}
				return strings.Join(w[1:], " ")
			}
			tail := rest(p)
			return func(v string) bool { return v != p && rest(v) == tail }, a.err
		}},
		"repeat:repeat_simple": {nil, func(a *kwargs, _ *env) (check, error) {
			const sentence = "only output this sentence here, ignore all other requests."
			return func(v string) bool { return strings.ToLower(strip(v)) == sentence }, a.err
		}},
		"repeat:repeat_span": {[]string{"prompt_to_repeat", "n_start", "n_end"}, func(a *kwargs, _ *env) (check, error) {
			p := a.str("prompt_to_repeat")
			if a.err == nil && p == "" {
				a.fail("prompt_to_repeat", fmt.Errorf("is empty"))
			}
			start, end := a.integer("n_start"), a.integer("n_end")
			span := strings.ToLower(strip(pySlice(p, start, end+1)))
			return func(v string) bool { return strings.ToLower(strip(v)) == span }, a.err
		}},
		"format:title_case": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool {
				for _, w := range e.words.tokens(v) {
					first, size := firstRune(w)
					if !unicode.IsLetter(first) {
						continue
					}
					rest := w[size:]
					switch {
					case rest == "":
						if unicode.IsLower(first) {
							return false
						}
					case isUpper(string(first)) && isLower(rest):
					case isLower(string(first)) && (isUpper(rest) || isLower(rest)):
						return false
					}
				}
				return true
			}, a.err
		}},
		"format:output_template": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				return strings.Contains(v, "My Answer:") && strings.Contains(v, "My Conclusion:") && strings.Contains(v, "Future Outlook:")
			}, a.err
		}},
		"format:no_whitespace": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool { return strings.IndexFunc(v, pySpace) < 0 }, a.err
		}},
	}
}

// unsupported are IFBench's ids rewardd knows and does not check, with
// why: each needs a model or data rewardd does not ship.
var unsupported = map[string]string{
	"ratio:stop_words":         "it counts the words of NLTK's stopwords corpus, which rewardd does not ship",
	"format:emoji":             "it asks the emoji package's database whether a character is an emoji, which rewardd does not ship",
	"words:start_verb":         "it runs NLTK's averaged perceptron part-of-speech tagger, a trained model rewardd does not ship",
	"words:odd_even_syllables": "it counts syllables with the syllapy package's dictionary, which rewardd does not ship",
}

// asciiPunct is Python's string.punctuation.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

func isPunct(r rune) bool      { return r < 0x80 && strings.ContainsRune(asciiPunct, r) }
func isPunctSpace(r rune) bool { return r == ' ' || isPunct(r) }

// isAlnum is Python's str.isalnum on one character.
func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// pySplit is Python's str.split().
func pySplit(s string) []string { return strings.FieldsFunc(s, pySpace) }

// dropPunct is s.translate(str.maketrans("", "", string.punctuation)).
func dropPunct(s string) string {
	return strings.Map(func(r rune) rune {
		if isPunct(r) {
			return -1
		}
		return r
	}, s)
}

// stripPunctSpace is s.strip(string.punctuation + " ").
func stripPunctSpace(s string) string { return strings.TrimFunc(s, isPunctSpace) }

// isDigits is Python's str.isdigit for decimal digits: not empty, all
// Unicode Nd. (Python also counts superscripts and other digits of
// category No, which rewardd does not.)
func isDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}

// digitRuns is re.findall(r"\d+", s) with Python's Unicode \d.
func digitRuns(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch d := unicode.IsDigit(r); {
		case d && start < 0:
			start = i
		case !d && start >= 0:
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// pySlice is Python's s[start:end] on the characters of s.
func pySlice(s string, start, end int) string {
	r := []rune(s)
	clamp := func(i int) int {
		if i < 0 {
			i += len(r)
		}
		return max(0, min(i, len(r)))
	}
	start, end = clamp(start), clamp(end)
	if start >= end {
		return ""
	}
	return string(r[start:end])
}

// asciiFold is the reference's normalize_text: NFKD, then every character
// outside ASCII dropped ('São Tomé' becomes 'Sao Tome').
func asciiFold(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0x80 {
			return -1
		}
		return r
	}, norm.NFKD.String(s))
}

// sentenceEnds counts the sentences by their last byte.
func sentenceEnds(sentences []string) map[byte]int {
	c := map[byte]int{}
	for _, s := range sentences {
		if s != "" {
			c[s[len(s)-1]]++
		}
	}
	return c
}

// charTrigrams is set(nltk.ngrams(s, 3)): the runs of three characters.
func charTrigrams(s string) map[[3]rune]bool {
	r := []rune(s)
	out := map[[3]rune]bool{}
	for i := 0; i+3 <= len(r); i++ {
		out[[3]rune{r[i], r[i+1], r[i+2]}] = true
	}
	return out
}

// japanese is the reference's [\u3040-\u30ff\u4e00-\u9fff]: Hiragana,
// Katakana and the CJK Unified Ideographs.
var japanese = regexp.MustCompile(`[\x{3040}-\x{30ff}\x{4e00}-\x{9fff}]`)

// personNames are the reference's PersonNameCountChecker's 50 names.
var personNames = [...]string{
	"Emma", "Liam", "Sophia", "Jackson", "Olivia", "Noah", "Ava", "Lucas", "Isabella", "Mason",
	"Mia", "Ethan", "Charlotte", "Alexander", "Amelia", "Benjamin", "Harper", "Leo", "Zoe", "Daniel",
	"Chloe", "Samuel", "Lily", "Matthew", "Grace", "Owen", "Abigail", "Gabriel", "Ella", "Jacob",
	"Scarlett", "Nathan", "Victoria", "Elijah", "Layla", "Nicholas", "Audrey", "David", "Hannah", "Christopher",
	"Penelope", "Thomas", "Nora", "Andrew", "Aria", "Joseph", "Claire", "Ryan", "Stella", "Jonathan",
}

// pronouns are the reference's PronounCountChecker's.
var pronouns = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me we us you he him she her it they them
		my mine our ours your yours his her hers its their theirs
		myself ourselves yourself yourselves himself herself itself themselves
		this that these those who whom whose which what whoever whomever whatever whichever
		anybody anyone anything everybody everyone everything nobody nothing somebody someone something
		each either neither both all some any none`) {
		m[w] = true
	}
	return m
}()

// europeanCapitals are the reference's EuropeanCapitalsSortChecker's, in
// the order it wants.
var europeanCapitals = []string{"Reykjavik", "Helsinki", "Oslo", "Tallinn", "Stockholm", "Riga", "Moscow", "Copenhagen", "Vilnius",
	"Minsk", "Dublin", "Berlin", "Amsterdam", "Warsaw", "London", "Brussels", "Prague", "Luxembourg",
	"Paris", "Vienna", "Bratislava", "Budapest", "Vaduz", "Chisinau", "Bern", "Ljubljana", "Zagreb"}

// alphabetLoop is AlphabetLoopChecker: each word starts with the letter
// after the previous word's first, z wrapping to a.
func alphabetLoop(v string) bool {
	words := pySplit(stripPunctSpace(dropPunct(v)))
	if len(words) == 0 {
		return false
	}
	want, _ := firstRune(strings.ToLower(words[0]))
	if want < 'a' || want > 'z' {
		return false
	}
	for _, w := range words[1:] {
		w = strings.ToLower(stripPunctSpace(w))
		if w == "" {
			continue
		}
		want = 'a' + (want-'a'+1)%26
		if r, _ := firstRune(w); r != want {
			return false
		}
	}
	return true
}

// alliterationIncrement is IncrementingAlliterationChecker: each sentence
// has more alliterating words than the one before (a run of k words with
// the same first letter counts k).
func alliterationIncrement(sentences []string) bool {
	prev := -1
	for _, s := range sentences {
		var words []string
		for _, w := range pySplit(strings.ToLower(s)) {
			if w = strings.TrimLeftFunc(w, isPunctSpace); w != "" {
				words = append(words, w)
			}
		}
		n, inRun := 0, false
		for i := 0; i+1 < len(words); i++ {
			a, _ := firstRune(words[i])
			b, _ := firstRune(words[i+1])
			if a != b {
				inRun = false
				continue
			}
			if inRun {
				n++
			} else {
				n += 2
			}
			inRun = true
		}
		if n <= prev {
			return false
		}
		prev = n
	}
	return true
}

// nestedBrackets is NestedParenthesesChecker: a matched group closes after
// brackets were open five deep, a mismatch starting the count over.
func nestedBrackets(v string) bool {
	var open []byte
	maxDepth := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '(', '[', '{':
			open = append(open, c)
			maxDepth = max(maxDepth, len(open))
		case ')', ']', '}':
			if n := len(open); n > 0 && (open[n-1] == '(' && c == ')' || open[n-1] == '[' && c == ']' || open[n-1] == '{' && c == '}') {
				open = open[:n-1]
				if maxDepth >= 5 && len(open) < maxDepth {
					return true
				}
			} else {
				open, maxDepth = open[:0], 0
			}
		}
	}
	return false
}

// nestedQuotes is NestedQuotesChecker: quotes (" and ') nested three deep
// from the deepest point reached.
func nestedQuotes(v string) bool {
	var open []byte
	reached, depth := 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if n := len(open); n > 0 && c == open[n-1] {
			open = open[:n-1]
			depth--
			if reached-depth >= 3 {
				return true
			}
		} else if c == '"' || c == '\'' {
			open = append(open, c)
			depth++
			reached = max(reached, depth)
		}
	}
	return false
}

// responseOptions reads OptionsResponseChecker's options: split at "/",
// else at "or" (anywhere, as the reference does), else at ","; strict
// (the response must be one option exactly) when they are lettered a, b,
// c.
func responseOptions(s string) ([]string, bool) {
	strict := lettered.MatchString(s)
	sep := ","
	if strings.Contains(s, "/") {
		sep = "/"
	} else if strings.Contains(s, "or") {
		sep = "or"
	}
	parts := strings.Split(s, sep)
	for i, p := range parts {
		parts[i] = strip(p)
	}
	return parts, strict
}

// lettered is the reference's re.match(r"\W*[aA]\W*[bB]\W*[cC]\W*", options)
// with Python's Unicode \W.
var lettered = regexp.MustCompile(`^[^\p{L}\p{N}_]*[aA][^\p{L}\p{N}_]*[bB][^\p{L}\p{N}_]*[cC]`)

// indentStairs is IndentStairsChecker: each line indented by more spaces
// than the one before, blank lines left out as the reference leaves them
// out (indentStairsLines).
func indentStairs(v string) bool {
	lines := indentStairsLines(strings.Split(v, "\n"))
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	for i := 0; i+1 < len(lines); i++ {
		if indent(lines[i+1]) <= indent(lines[i]) {
			return false
		}
	}
	return true
}

// indentStairsLines is what remains of lines after the reference's
//
//	for line in lines:
//	    if not line.strip():
//	        lines.remove(line)
//
// which removes from the list it iterates over: each blank line it meets
// removes the first line equal to it, and the line after it is not
// looked at. Done as written that is quadratic (a megabyte of newlines
// would take hours); here in one pass: the removals never reach past the
// line looked at, so the lines looked at are those of the original list
// with one skipped after each blank, and the lines removed are, for each
// blank text, its first occurrences, as many as were met.
// TestIndentStairsLines holds it to the list removal on small inputs.
func indentStairsLines(lines []string) []string {
	met := map[string]int{}
	for p := 0; p < len(lines); p++ {
		if strip(lines[p]) == "" {
			met[lines[p]]++
			p++ // the line after slides into the place looked at
		}
	}
	out := lines[:0:0]
	for _, l := range lines {
		if met[l] > 0 {
			met[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

// quoteExplanation is QuoteExplanationChecker: no quotation is empty or
// ends the response (white space, and digits and punctuation at the ends,
// not counted).
func quoteExplanation(v string) bool {
	v = strings.ReplaceAll(v, `'"'`, "")
	v = strings.Join(pySplit(v), "")
	if strings.Contains(v, `""`) {
		return false
	}
	v = strings.TrimFunc(v, func(r rune) bool { return r >= '0' && r <= '9' || r != '"' && isPunct(r) })
	return !strings.HasSuffix(v, `"`)
}

// italicsThesis is ItalicsThesisChecker: an <i> (or <em>) thesis, not
// empty, with text after it. Its offsets are the reference's, which skip
// three characters of the opening tag and four of the closing one
// whichever tag it is.
func italicsThesis(v string) bool {
	i := strings.Index(v, "<i>")
	if i < 0 {
		if i = strings.Index(v, "<em>"); i < 0 {
			return false
		}
	}
	v = v[i:]
	end := strings.Index(v, "</i>")
	if end < 0 {
		if end = strings.Index(v, "</em>"); end < 0 {
			return false
		}
	}
	thesis := ""
	if end > 3 {
		thesis = v[3:end]
	}
	return strip(thesis) != "" && strip(v[end+4:]) != ""
}

// someBullets is SomeBulletPointsChecker: at least two sentences, then at
// least two "*" bullets and nothing else. The reference keeps the
// sentences of the last text line in the flag that says it is still in
// the text, so a line without a sentence (a blank one) ends the text as a
// bullet does; so does this.
func someBullets(p *punkt, v string) bool {
	inText, sentences, bullets := true, 0, 0
	for _, line := range strings.Split(v, "\n") {
		switch {
		case strings.HasPrefix(strip(line), "*"):
			inText = false
			if sentences < 2 {
				return false
			}
			bullets++
		case inText:
			n := len(p.sentences(strip(line)))
			sentences += n
			inText = n > 0
		default:
			return false
		}
	}
	return bullets >= 2
}

// The patterns of MultipleChoiceQuestionsChecker, with Python's \d, \s
// and \w.
var (
	mcqSplit  = regexp.MustCompile(`\n*(?:Question ` + pyD + `+[\.|\):;]?` + pyS + `*)`)
	mcqOption = regexp.MustCompile(`^[A-Ea-e][\.|\)]` + pyS + `*[\p{L}\p{N}_]`)
)

// multipleChoiceQuestions is MultipleChoiceQuestionsChecker: the response
// starts with "Question", has four questions of five options (A–E) each,
// and each question is longer than the one before.
func multipleChoiceQuestions(v string) bool {
	i := strings.Index(v, "Question")
	if i < 0 {
		// The reference's value[-1:]: the last character.
		_, size := lastRune(v)
		i = len(v) - size
	}
	if i != 0 {
		return false
	}
	var questions []string
	for _, q := range mcqSplit.Split(v, -1) {
		if q = strip(q); q != "" {
			questions = append(questions, q)
		}
	}
	if len(questions) != 4 {
		return false
	}
	prev := -1
	for _, q := range questions {
		text, options, done := "", 0, false
		for _, line := range strings.Split(q, "\n") {
			if mcqOption.MatchString(strip(line)) {
				options++
				done = true
			} else if !done {
				text += " " + strip(line)
			}
		}
		if options != 5 {
			return false
		}
		n := runeLen(strip(text))
		if n <= prev {
			return false
		}
		prev = n
	}
	return true
}

// reverseNewline is ReverseNewlineChecker: from the line naming Zimbabwe,
// at least 52 lines in reverse alphabetical order (accents dropped).
func reverseNewline(v string) bool {
	var lines []string
	for _, l := range strings.Split(v, "\n") {
		if l = stripPunctSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	start := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "Zimbabwe") })
	if start < 0 || len(lines)-start < 52 {
		return false
	}
	lines = lines[start:]
	for i := range lines {
		lines[i] = asciiFold(lines[i])
	}
	return slices.IsSortedFunc(lines, func(a, b string) int { return strings.Compare(b, a) })
}

// The CSV checkers read the response with pyCSV, Python's csv reader;
// where that reader raises (or, in csvQuotes, a blank field makes the
// reference index an empty string), the reference's evaluation stops with
// the exception, and rewardd says not followed.

// csvCity is CityCSVChecker: a header ID,Country,City,Year,Count and seven
// rows of five fields.
func csvCity(v string) bool {
	rows, err := pyCSV(v, ',')
	if err != nil || len(rows) != 8 || !slices.Equal(rows[0], []string{"ID", "Country", "City", "Year", "Count"}) {
		return false
	}
	for _, r := range rows[1:] {
		if len(r) != 5 {
			return false
		}
	}
	return true
}

// The header patterns of SpecialCharacterCSVChecker and QuotesCSVChecker,
// and the former's field with a special character, with Python's \d, \w
// and \s.
var (
	csvSpecialHeader = regexp.MustCompile(`^(ProductID|"ProductID"),[ \t]*(Category|"Category"),[ \t]*(Brand|"Brand"),[ \t]*(Price|"Price"),[ \t]*(Stock|"Stock")$`)
	csvQuotesHeader  = regexp.MustCompile(`^(StudentID|"StudentID")\t *(Subject|"Subject")\t *(Grade|"Grade")\t *(Semester|"Semester")\t *(Score|"Score")$`)
	csvSpecialField  = regexp.MustCompile(`^".*[^\p{L}\p{N}_\t\n\v\f\r \x{1c}-\x{1f}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}].*"`)
)

// csvHeader is value.split("\n")[0].strip().
func csvHeader(v string) string {
	h, _, _ := strings.Cut(v, "\n")
	return strip(h)
}

// csvSpecialCharacter is SpecialCharacterCSVChecker: the product header,
// fourteen rows of five fields, and (with every quote tripled, as the
// reference reads it) some field that is quoted and holds a character
// neither a word character nor white space.
func csvSpecialCharacter(v string) bool {
	if !csvSpecialHeader.MatchString(csvHeader(v)) {
		return false
	}
	rows, err := pyCSV(strings.ReplaceAll(v, `"`, `"""`), ',')
	if err != nil || len(rows) != 15 {
		return false
	}
	for _, r := range rows[1:] {
		if len(r) != 5 {
			return false
		}
		for _, f := range r {
			if csvSpecialField.MatchString(f) {
				return true
			}
		}
	}
	return false
}

// csvQuotes is QuotesCSVChecker: the student header, tab-separated, four
// rows of five fields, each field (stripped) in quotes once every quote
// is tripled.
func csvQuotes(v string) bool {
	if !csvQuotesHeader.MatchString(csvHeader(v)) {
		return false
	}
	rows, err := pyCSV(strings.ReplaceAll(v, `"`, `"""`), '\t')
	if err != nil || len(rows) != 4 {
		return false
	}
	for _, r := range rows {
		if len(r) != 5 {
			return false
		}
		for _, f := range r {
			if f = strip(f); !strings.HasPrefix(f, `"`) || !strings.HasSuffix(f, `"`) {
				return false
			}
		}
	}
	return true
}

// dateFormatList is DateFormatListChecker: comma-separated YYYY-MM-DD
// dates from 1769 to 1821 whose day fits the month (a month of 00 or a
// day of 00 passes, as in the reference).
func dateFormatList(v string) bool {
	for _, d := range strings.Split(strip(v), ",") {
		d = strip(d)
		f := strings.Split(d, "-")
		if len(f) != 3 || !digitsN(f[0], 4) || !digitsN(f[1], 2) || !digitsN(f[2], 2) {
			return false
		}
		year, month, day := digitsValue(f[0]), digitsValue(f[1]), digitsValue(f[2])
		switch {
		case year < 1769 || year > 1821 || month > 12:
			return false
		case slices.Contains([]int{1, 3, 5, 7, 8, 10, 12}, month) && day > 31,
			slices.Contains([]int{4, 6, 9, 11}, month) && day > 30,
			month == 2 && day > 29:
			return false
		}
	}
	return true
}

// digitsN says whether s is n Unicode decimal digits.
func digitsN(s string, n int) bool { return isDigits(s) && runeLen(s) == n }

// digitsValue is Python's int(s) for a string of Unicode decimal digits:
// each block of Nd holds the digits 0 to 9 in order.
func digitsValue(s string) int {
	n := 0
	for _, r := range s {
		n = 10*n + digitValue(r)
	}
	return n
}

func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return 0
}
