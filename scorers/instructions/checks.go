package instructions

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/instructions/langdetect"
)

// check says whether a response follows one instruction.
type check func(response string) bool

// builder makes the check of one instruction from its kwargs, or says what
// is wrong with them.
type builder func(a *kwargs, env *env) (check, error)

// env is what checks share: the sentence counter and the language
// detector, which take long to build.
type env struct {
	sentences func(string) int // len(punkt.sentences(text)), remembered
	punkt     *punkt
	words     *wordTokenizer
	lang      *langdetect.Detector
	langMemo  *memo[langAnswer]
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// spec is one instruction id: the kwargs it takes and its builder.
type spec struct {
	keys  []string
	build builder
}

// IFEval's fixed texts.
var constrainedOptions = [...]string{"My answer is yes.", "My answer is no.", "My answer is maybe."}

// The reference's patterns, with its \s and \d as Python reads them.
var (
	bulletStar  = regexp.MustCompile(`(?m)^` + pyS + `*\*[^*].*$`)
	bulletDash  = regexp.MustCompile(`(?m)^` + pyS + `*-.*$`)
	highlight   = regexp.MustCompile(`\*[^\n*]*\*`)
	highlight2  = regexp.MustCompile(`\*\*[^\n*]*\*\*`)
	divider     = regexp.MustCompile(pyS + `?\*\*\*` + pyS + `?`)
	titleRE     = regexp.MustCompile(`<<[^\n]+>>`)
	postscriptS = regexp.MustCompile(`(?m)` + pyS + `*p\.` + pyS + `?s\..*$`)
	postscriptP = regexp.MustCompile(`(?m)` + pyS + `*p\.` + pyS + `?p\.` + pyS + `?s.*$`)
)

// specs returns the instruction ids rewardd checks: IFEval's 25,
// IFEvalG's (extendedSpecs) and IFBench's (ifbenchSpecs), whose ids are
// all different (TestIDSetsAreDisjoint). It is a function, so that nothing is built
// before it is needed.
func specs() map[string]spec {
	all := ifevalSpecs()
	for id, sp := range extendedSpecs() {
		all[id] = sp
	}
	for id, sp := range ifbenchSpecs() {
		all[id] = sp
	}
	all["letters:letter_counting2"] = all["keywords:letter_frequency"]
	return all
}

// ifevalSpecs returns the 25 instruction ids of IFEval (Zhou et al. 2023,
// the instructions_registry of google-research's
// instruction_following_eval).
func ifevalSpecs() map[string]spec {
	return map[string]spec{
		"keywords:existence": {[]string{"keywords"}, func(a *kwargs, _ *env) (check, error) {
			words := a.strs("keywords")
			ms := make([]matcher, len(words))
			for i, w := range words {
				ms[i] = a.pattern("keywords", w, true)
			}
			return func(v string) bool {
				for _, m := range ms {
					if m.count(v, 1) == 0 {
						return false
					}
				}
				return true
			}, a.err
		}},
		"keywords:frequency": {[]string{"keyword", "frequency", "relation"}, func(a *kwargs, _ *env) (check, error) {
			m := a.pattern("keyword", strip(a.str("keyword")), true)
			n, rel := a.count("frequency"), a.relation("relation")
			return func(v string) bool { return rel(m.count(v, -1), n) }, a.err
		}},
		"keywords:forbidden_words": {[]string{"forbidden_words"}, func(a *kwargs, _ *env) (check, error) {
			words := a.strs("forbidden_words")
			ms := make([]matcher, len(words))
			for i, w := range words {
				ms[i] = a.pattern("forbidden_words", w, true)
			}
			return func(v string) bool {
				for _, m := range ms {
					if m.wordIn(v) {
						return false
					}
				}
				return true
			}, a.err
		}},
		"keywords:letter_frequency": {[]string{"letter", "let_frequency", "let_relation"}, func(a *kwargs, _ *env) (check, error) {
			letter := a.str("letter")
			if a.err == nil && runeLen(letter) != 1 {
				a.fail("letter", fmt.Errorf("%q is not one character", letter))
			}
			letter = strings.ToLower(strip(letter))
			n, rel := a.count("let_frequency"), a.relation("let_relation")
			return func(v string) bool {
				if letter == "" {
					return rel(0, n)
				}
				return rel(strings.Count(strings.ToLower(v), letter), n)
			}, a.err
		}},
		"language:response_language": {[]string{"language"}, func(a *kwargs, e *env) (check, error) {
			lang := a.str("language")
			if a.err == nil {
				a.fail("language", e.checkLanguage(lang))
			}
			return func(v string) bool { return e.isLanguage(v, lang) }, a.err
		}},
		"length_constraints:number_sentences": {[]string{"num_sentences", "relation"}, func(a *kwargs, e *env) (check, error) {
			n, rel := a.count("num_sentences"), a.relation("relation")
			return func(v string) bool { return rel(e.sentences(v), n) }, a.err
		}},
		"length_constraints:number_paragraphs": {[]string{"num_paragraphs"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("num_paragraphs")
			return func(v string) bool {
				parts := divider.Split(v, -1)
				got := len(parts)
				for i, p := range parts {
					if strip(p) == "" {
						if i != 0 && i != len(parts)-1 {
							return false
						}
						got--
					}
				}
				return got == n
			}, a.err
		}},
		"length_constraints:number_words": {[]string{"num_words", "relation"}, func(a *kwargs, _ *env) (check, error) {
			n, rel := a.count("num_words"), a.relation("relation")
			return func(v string) bool { return rel(countWords(v), n) }, a.err
		}},
		"length_constraints:nth_paragraph_first_word": {[]string{"num_paragraphs", "nth_paragraph", "first_word"}, func(a *kwargs, _ *env) (check, error) {
			n, nth, word := a.count("num_paragraphs"), a.count("nth_paragraph"), strings.ToLower(a.str("first_word"))
			if a.err == nil && (nth <= 0 || nth > n) {
				a.fail("nth_paragraph", fmt.Errorf("%d is not in [1, num_paragraphs %d]", nth, n))
			}
			return func(v string) bool { return nthParagraphFirstWord(v, n, nth, word) }, a.err
		}},
		"detectable_content:number_placeholders": {[]string{"num_placeholders"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("num_placeholders")
			return func(v string) bool { return countPlaceholders(v) >= n }, a.err
		}},
		"detectable_content:postscript": {[]string{"postscript_marker"}, func(a *kwargs, _ *env) (check, error) {
			marker := strip(a.str("postscript_marker"))
			var re *regexp.Regexp
			switch marker {
			case "P.P.S":
				re = postscriptP
			case "P.S.":
				re = postscriptS
			default:
				m := a.pattern("postscript_marker", strings.ToLower(marker), false)
				return func(v string) bool { return m.count(strings.ToLower(v), 1) > 0 }, a.err
			}
			return func(v string) bool { return re.MatchString(strings.ToLower(v)) }, a.err
		}},
		"detectable_format:number_bullet_lists": {[]string{"num_bullets"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("num_bullets")
			return func(v string) bool {
				return len(bulletStar.FindAllStringIndex(v, -1))+len(bulletDash.FindAllStringIndex(v, -1)) == n
			}, a.err
		}},
		"detectable_format:constrained_response": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				v = strip(v)
				for _, o := range constrainedOptions {
					if strings.Contains(v, o) {
						return true
					}
				}
				return false
			}, a.err
		}},
		"detectable_format:number_highlighted_sections": {[]string{"num_highlights"}, func(a *kwargs, _ *env) (check, error) {
			n := a.count("num_highlights")
			return func(v string) bool { return countHighlights(v) >= n }, a.err
		}},
		"detectable_format:multiple_sections": {[]string{"section_spliter", "num_sections"}, func(a *kwargs, _ *env) (check, error) {
			splitter := strip(a.str("section_spliter"))
			n := a.count("num_sections")
			var re *regexp.Regexp
			if a.err == nil {
				var err error
				if re, err = regexp.Compile(pyS + "?" + splitter + pyS + "?" + pyD + "+" + pyS + "?"); err != nil {
					a.fail("section_spliter", err)
				}
			}
			return func(v string) bool { return len(re.FindAllStringIndex(v, -1)) >= n }, a.err
		}},
		"detectable_format:json_format": {nil, func(a *kwargs, _ *env) (check, error) {
			return isJSON, a.err
		}},
		"detectable_format:title": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				for _, t := range titleRE.FindAllString(v, -1) {
					if strip(strings.TrimRight(strings.TrimLeft(t, "<"), ">")) != "" {
						return true
					}
				}
				return false
			}, a.err
		}},
		"combination:two_responses": {nil, func(a *kwargs, _ *env) (check, error) {
			return twoResponses, a.err
		}},
		"combination:repeat_prompt": {[]string{"prompt_to_repeat"}, func(a *kwargs, _ *env) (check, error) {
			prompt := strings.ToLower(strip(a.str("prompt_to_repeat")))
			return func(v string) bool { return strings.HasPrefix(strings.ToLower(strip(v)), prompt) }, a.err
		}},
		"startend:end_checker": {[]string{"end_phrase"}, func(a *kwargs, _ *env) (check, error) {
			end := strings.ToLower(strip(a.str("end_phrase")))
			return func(v string) bool {
				return strings.HasSuffix(strings.ToLower(strings.Trim(strip(v), `"`)), end)
			}, a.err
		}},
		"startend:quotation": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool {
				v = strip(v)
				return runeLen(v) > 1 && v[0] == '"' && v[len(v)-1] == '"'
			}, a.err
		}},
		"change_case:capital_word_frequency": {[]string{"capital_frequency", "capital_relation"}, func(a *kwargs, _ *env) (check, error) {
			n, rel := a.integer("capital_frequency"), a.relation("capital_relation")
			return func(v string) bool { return rel(capitalWords(v), n) }, a.err
		}},
		"change_case:english_capital": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool { return isUpper(v) && e.isLanguage(v, "en") }, a.err
		}},
		"change_case:english_lowercase": {nil, func(a *kwargs, e *env) (check, error) {
			return func(v string) bool { return isLower(v) && e.isLanguage(v, "en") }, a.err
		}},
		"punctuation:no_comma": {nil, func(a *kwargs, _ *env) (check, error) {
			return func(v string) bool { return !strings.Contains(v, ",") }, a.err
		}},
	}
}

// countHighlights counts the reference's highlighted sections: *text* and
// **text** with something other than white space inside.
func countHighlights(v string) int {
	n := 0
	for _, h := range highlight.FindAllString(v, -1) {
		if strip(strings.Trim(h, "*")) != "" {
			n++
		}
	}
	for _, h := range highlight2.FindAllString(v, -1) {
		if strip(h[2:len(h)-2]) != "" {
			n++
		}
	}
	return n
}

// nthParagraphFirstWord is the reference's ParagraphFirstWordCheck.
func nthParagraphFirstWord(v string, want, nth int, word string) bool {
	paragraphs := strings.Split(v, "\n\n")
	got := len(paragraphs)
	for _, p := range paragraphs {
		if strip(p) == "" {
			got--
		}
	}
	if nth > got {
		return false
	}
	p := strip(paragraphs[nth-1])
	if p == "" {
		return false
	}
	first := strings.FieldsFunc(p, pySpace)[0]
	first = strings.TrimLeft(strings.TrimLeft(first, "'"), `"`)
	if i := strings.IndexAny(first, `.,?!'"`); i >= 0 {
		first = first[:i]
	}
	return got == want && strings.ToLower(first) == word
}

// twoResponses is the reference's TwoResponsesChecker: two different
// responses separated by ******.
func twoResponses(v string) bool {
	parts := strings.Split(v, "******")
	var valid []string
	for i, p := range parts {
		if strip(p) == "" {
			if i != 0 && i != len(parts)-1 {
				return false
			}
			continue
		}
		valid = append(valid, p)
	}
	return len(valid) == 2 && strip(valid[0]) != strip(valid[1])
}

// isJSON is the reference's JsonFormat: the response, less an outer
// ``` or ```json fence, is one JSON value. Python's json.loads also takes
// NaN, Infinity and -Infinity, which JSON does not; rewardd does not.
func isJSON(v string) bool {
	v = strip(v)
	for _, p := range []string{"```json", "```Json", "```JSON", "```"} {
		if strings.HasPrefix(v, p) {
			v = v[len(p):]
			break
		}
	}
	v = strip(strings.TrimSuffix(v, "```"))
	return json.Valid([]byte(v))
}

// matcher finds a pattern of the kwargs (a keyword, a marker) the way the
// reference's re.search and re.findall do: a plain word as a substring
// (case-insensitively when fold), anything else as a regular expression.
type matcher struct {
	lit  string // the literal, lower-cased when fold
	fold bool
	re   *regexp.Regexp
}

// count counts the non-overlapping matches in v, at most max (all with -1).
func (m matcher) count(v string, max int) int {
	if m.re != nil {
		return len(m.re.FindAllStringIndex(v, max))
	}
	if m.fold {
		v = strings.ToLower(v)
	}
	if max == 1 {
		return b2i(strings.Contains(v, m.lit))
	}
	if m.lit == "" {
		return runeLen(v) + 1
	}
	return strings.Count(v, m.lit)
}

// wordIn says whether the pattern occurs in v between word boundaries (\b
// as Python reads it: \w is Unicode).
func (m matcher) wordIn(v string) bool {
	if m.fold && m.re == nil {
		v = strings.ToLower(v)
	}
	for from := 0; from <= len(v); {
		var i, j int
		if m.re != nil {
			loc := m.re.FindStringIndex(v[from:])
			if loc == nil {
				return false
			}
			i, j = from+loc[0], from+loc[1]
		} else {
			k := strings.Index(v[from:], m.lit)
			if k < 0 {
				return false
			}
			i, j = from+k, from+k+len(m.lit)
		}
		if boundary(v, i) && boundary(v, j) {
			return true
		}
		from = i + 1
		for from < len(v) && v[from]&0xc0 == 0x80 {
			from++
		}
	}
	return false
}

// boundary reports whether position i of s is a \b: a \w character on
// exactly one side.
func boundary(s string, i int) bool {
	before, after := false, false
	if i > 0 {
		r, _ := lastRune(s[:i])
		before = pyWord(r)
	}
	if i < len(s) {
		r, _ := firstRune(s[i:])
		after = pyWord(r)
	}
	return before != after
}

// relation compares a count with a threshold.
type relation func(got, want int) bool

func lessThan(got, want int) bool { return got < want }
func atLeast(got, want int) bool  { return got >= want }

// kwargs reads one instruction's parameters, recording the first problem.
type kwargs struct {
	m   map[string]*structpb.Value
	err error
}

func (a *kwargs) fail(key string, err error) {
	if a.err == nil && err != nil {
		a.err = fmt.Errorf("kwarg %s: %w", key, err)
	}
}

// get returns the value of key, failing when it is missing or null (the
// reference then draws one at random).
func (a *kwargs) get(key string) *structpb.Value {
	v, ok := a.m[key]
	if !ok || v == nil || v.GetKind() == nil {
		a.fail(key, errors.New("is missing"))
		return nil
	}
	if _, null := v.GetKind().(*structpb.Value_NullValue); null {
		a.fail(key, errors.New("is missing"))
		return nil
	}
	return v
}

func (a *kwargs) str(key string) string {
	v := a.get(key)
	if v == nil {
		return ""
	}
	s, ok := v.GetKind().(*structpb.Value_StringValue)
	if !ok {
		a.fail(key, fmt.Errorf("is %s, want a string", scorers.KindName(v)))
		return ""
	}
	return s.StringValue
}

func (a *kwargs) strs(key string) []string {
	v := a.get(key)
	if v == nil {
		return nil
	}
	l, ok := v.GetKind().(*structpb.Value_ListValue)
	if !ok || len(l.ListValue.GetValues()) == 0 {
		a.fail(key, fmt.Errorf("is %s, want a non-empty list of strings", scorers.KindName(v)))
		return nil
	}
	out := make([]string, 0, len(l.ListValue.GetValues()))
	for _, e := range l.ListValue.GetValues() {
		s, ok := e.GetKind().(*structpb.Value_StringValue)
		if !ok {
			a.fail(key, fmt.Errorf("holds %s, want strings", scorers.KindName(e)))
			return nil
		}
		out = append(out, s.StringValue)
	}
	return out
}

// integer reads a whole number.
func (a *kwargs) integer(key string) int {
	v := a.get(key)
	if v == nil {
		return 0
	}
	n, ok := v.GetKind().(*structpb.Value_NumberValue)
	f := 0.5
	if ok {
		f = n.NumberValue
	}
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		a.fail(key, fmt.Errorf("is %s, want a whole number", describe(v)))
		return 0
	}
	return int(f)
}

// count reads a whole number that is not negative (the reference draws a
// negative one at random).
func (a *kwargs) count(key string) int {
	n := a.integer(key)
	if n < 0 {
		a.fail(key, fmt.Errorf("%d is negative", n))
	}
	return n
}

// positive reads a whole number above 0 (the reference draws one at
// random for 0 or a missing one).
func (a *kwargs) positive(key string) int {
	n := a.integer(key)
	if n < 1 && a.err == nil {
		a.fail(key, fmt.Errorf("%d is not positive", n))
	}
	return n
}

// relation reads "less than" or "at least".
func (a *kwargs) relation(key string) relation {
	switch s := a.str(key); s {
	case "less than":
		return lessThan
	case "at least":
		return atLeast
	default:
		if a.err == nil {
			a.fail(key, fmt.Errorf("%q is not \"less than\" or \"at least\"", s))
		}
		return atLeast
	}
}

// pattern makes the matcher of a keyword: the reference hands it to re as
// a pattern, so it is one unless it is a plain word.
func (a *kwargs) pattern(key, p string, fold bool) matcher {
	if regexp.QuoteMeta(p) == p {
		if fold {
			p = strings.ToLower(p)
		}
		return matcher{lit: p, fold: fold}
	}
	flags := ""
	if fold {
		flags = "(?i)"
	}
	re, err := regexp.Compile(flags + p)
	if err != nil {
		a.fail(key, fmt.Errorf("%q is not a pattern rewardd reads: %w", p, err))
		return matcher{lit: p}
	}
	return matcher{re: re}
}

// checkKeys fails on a key the instruction does not take. A null value is
// no value: the Hugging Face copy of IFEval gives every instruction every
// key, null where unused.
func (a *kwargs) checkKeys(known []string) {
	var unknown []string
	for k, v := range a.m {
		if _, null := v.GetKind().(*structpb.Value_NullValue); null || v.GetKind() == nil {
			continue
		}
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 && a.err == nil {
		sort.Strings(unknown)
		want := "none"
		if len(known) > 0 {
			want = strings.Join(known, ", ")
		}
		a.err = fmt.Errorf("unknown kwarg %s (it takes %s)", strings.Join(unknown, ", "), want)
	}
}

func describe(v *structpb.Value) string {
	if n, ok := v.GetKind().(*structpb.Value_NumberValue); ok {
		return fmt.Sprint(n.NumberValue)
	}
	return scorers.KindName(v)
}
