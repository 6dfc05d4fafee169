package instructions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/neurosnap/sentences/data"
)

// punkt counts sentences as NLTK 3.8's PunktSentenceTokenizer does with its
// English model, which IFEval's length_constraints:number_sentences uses:
// the same candidate ends, word tokens, two annotation passes and
// realignment of closing quotes and brackets, written from NLTK's
// punkt.py. The model's parameters (abbreviations, collocations, sentence
// starters, orthographic contexts) are those github.com/neurosnap/sentences
// ships, exported from NLTK's english.pickle.
type punkt struct {
	abbrevs      map[string]bool
	collocations map[[2]string]bool
	starters     map[string]bool
	ortho        map[string]int
}

// NLTK's orthographic context flags.
const (
	orthoBegUC = 1 << 1
	orthoMidUC = 1 << 2
	orthoUnkUC = 1 << 3
	orthoBegLC = 1 << 4
	orthoMidLC = 1 << 5
	orthoUnkLC = 1 << 6
	orthoUC    = orthoBegUC | orthoMidUC | orthoUnkUC
	orthoLC    = orthoBegLC | orthoMidLC | orthoUnkLC
)

// newPunkt loads the English parameters.
func newPunkt() (*punkt, error) {
	asset, err := data.Asset("data/english.json")
	if err != nil {
		return nil, err
	}
	raw, err := readPunktParams(asset)
	if err != nil {
		return nil, fmt.Errorf("data/english.json: %w", err)
	}
	p := &punkt{abbrevs: map[string]bool{}, collocations: map[[2]string]bool{}, starters: map[string]bool{}, ortho: raw["OrthoContext"]}
	for k := range raw["AbbrevTypes"] {
		p.abbrevs[k] = true
	}
	for k := range raw["SentStarters"] {
		p.starters[k] = true
	}
	for k := range raw["Collocations"] {
		a, b, _ := strings.Cut(k, ",")
		p.collocations[[2]string{a, b}] = true
	}
	return p, nil
}

// readPunktParams reads the Punkt parameters file: a JSON object of
// objects of whole numbers. It is json.Unmarshal into a
// map[string]map[string]int, read by hand because encoding/json took 8 ms
// on its 20,000 keys, a sixth of the kind's loading (bench/README.md);
// a string with an escape, which the file does not have, is left to
// encoding/json. TestReadPunktParams holds the two to the same answer.
func readPunktParams(b []byte) (map[string]map[string]int, error) {
	if bytes.IndexByte(b, '\\') >= 0 {
		var out map[string]map[string]int
		err := json.Unmarshal(b, &out)
		return out, err
	}
	r := jsonReader{b: b}
	out := map[string]map[string]int{}
	r.expect('{')
	for r.err == nil && !r.next('}') {
		if len(out) > 0 {
			r.expect(',')
		}
		section := r.str()
		r.expect(':')
		m := map[string]int{}
		r.expect('{')
		for r.err == nil && !r.next('}') {
			if len(m) > 0 {
				r.expect(',')
			}
			k := r.str()
			r.expect(':')
			m[k] = r.integer()
		}
		out[section] = m
	}
	if r.err == nil && r.skipSpace() < len(r.b) {
		r.fail("text after the object")
	}
	return out, r.err
}

// jsonReader reads the few JSON forms readPunktParams needs, remembering
// the first error.
type jsonReader struct {
	b   []byte
	i   int
	err error
}

func (r *jsonReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("offset %d: %s", r.i, what)
	}
}

func (r *jsonReader) skipSpace() int {
	for r.i < len(r.b) && (r.b[r.i] == ' ' || r.b[r.i] == '\n' || r.b[r.i] == '\t' || r.b[r.i] == '\r') {
		r.i++
	}
	return r.i
}

// next consumes c if it comes next.
func (r *jsonReader) next(c byte) bool {
	if r.skipSpace() < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *jsonReader) expect(c byte) {
	if r.err == nil && !r.next(c) {
		r.fail(fmt.Sprintf("want %q", c))
	}
}

// str reads a string without escapes.
func (r *jsonReader) str() string {
	r.expect('"')
	if r.err != nil {
		return ""
	}
	end := bytes.IndexByte(r.b[r.i:], '"')
	if end < 0 {
		r.fail("unterminated string")
		return ""
	}
	s := string(r.b[r.i : r.i+end])
	r.i += end + 1
	return s
}

func (r *jsonReader) integer() int {
	start := r.skipSpace()
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	n, err := strconv.Atoi(string(r.b[start:r.i]))
	if err != nil {
		r.fail("want a whole number")
	}
	return n
}

// count returns len(tokenizer.tokenize(text)).
func (p *punkt) count(text string) int { return len(p.spans(text)) }

// sentences returns tokenizer.tokenize(text): the sentences of text.
func (p *punkt) sentences(text string) []string {
	spans := p.spans(text)
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = text[s[0]:s[1]]
	}
	return out
}

// spans returns the byte ranges of the sentences of text, as NLTK's
// span_tokenize does: candidate breaks (_slices_from_text), then closing
// quotes and brackets moved to the sentence before (_realign_boundaries).
func (p *punkt) spans(text string) [][2]int {
	var slices [][2]int
	lastBreak := 0
	for _, c := range p.endContexts(text) {
		if p.containsBreak(c.context) {
			slices = append(slices, [2]int{lastBreak, c.end})
			if c.nextTok >= 0 {
				lastBreak = c.nextTok
			} else {
				lastBreak = c.end
			}
		}
	}
	slices = append(slices, [2]int{lastBreak, len(strings.TrimRightFunc(text, unicode.IsSpace))})
	var out [][2]int
	realign := 0
	for i, s1 := range slices {
		s1[0] += realign
		nonEmpty := s1[0] < s1[1]
		if i+1 == len(slices) {
			if nonEmpty {
				out = append(out, s1)
			}
			continue
		}
		s2 := slices[i+1]
		s2text := ""
		if s2[0] < s2[1] {
			s2text = text[s2[0]:s2[1]]
		}
		if m := boundaryRealignment(s2text); m > 0 {
			out = append(out, [2]int{s1[0], s2[0] + len(strings.TrimRightFunc(s2text[:m], unicode.IsSpace))})
			realign = m
		} else {
			realign = 0
			if nonEmpty {
				out = append(out, s1)
			}
		}
	}
	return out
}

// boundaryRealignment is the length of the match of NLTK's
// re_boundary_realignment, ["')\]}]+?(?:\s+|(?=--)|$), at the start of s
// (0 when none).
func boundaryRealignment(s string) int {
	for k := 0; k < len(s) && strings.IndexByte(`"')]}`, s[k]) >= 0; {
		k++
		if k == len(s) || s[k] == '\n' && !spaceAt(s, k) {
			return k
		}
		if spaceAt(s, k) {
			j := k
			for j < len(s) && spaceAt(s, j) {
				_, size := utf8.DecodeRuneInString(s[j:])
				j += size
			}
			return j
		}
		if strings.HasPrefix(s[k:], "--") {
			return k
		}
	}
	return 0
}

func spaceAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

// endContext is a candidate sentence end: the text deciding it, where the
// candidate ends, and where the next token starts (-1 when the end char
// is followed by punctuation rather than space).
type endContext struct {
	context      string
	end, nextTok int
}

// nonWord are the characters of NLTK's _re_non_word_chars.
const nonWord = `)";}]*:@'({[?!`

// endContexts is _match_potential_end_contexts.
func (p *punkt) endContexts(text string) []endContext {
	type match struct {
		start, end, nextTok int
		afterTok            string
	}
	var out []endContext
	var prev *match
	prevStart, prevStop := 0, 0
	emit := func(m *match, start, stop int) {
		out = append(out, endContext{context: text[start:stop] + text[m.start:m.end] + m.afterTok, end: m.end, nextTok: m.nextTok})
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '.' && c != '?' && c != '!' {
			continue
		}
		m := &match{start: i, end: i + 1, nextTok: -1}
		switch {
		case i+1 < len(text) && strings.IndexByte(nonWord, text[i+1]) >= 0:
			m.afterTok = text[i+1 : i+2]
		case i+1 < len(text) && spaceAt(text, i+1):
			j := i + 1
			for j < len(text) && spaceAt(text, j) {
				_, size := utf8.DecodeRuneInString(text[j:])
				j += size
			}
			if j == len(text) {
				continue
			}
			k := j
			for k < len(text) && !spaceAt(text, k) {
				_, size := utf8.DecodeRuneInString(text[k:])
				k += size
			}
			m.afterTok, m.nextTok = text[i+1:k], j
		default:
			continue
		}
		before := text[prevStop:m.start]
		idx := lastASCIISpace(before)
		if idx != 0 {
			idx += prevStop + 1
		} else {
			idx = prevStart
		}
		if prev != nil && prevStop <= idx {
			emit(prev, prevStart, prevStop)
		}
		prev, prevStart, prevStop = m, idx, m.start
	}
	if prev != nil {
		emit(prev, prevStart, prevStop)
	}
	return out
}

// lastASCIISpace is _get_last_whitespace_index: the index of the last
// character of string.whitespace in s, 0 when none.
func lastASCIISpace(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if strings.IndexByte(" \t\n\r\v\f", s[i]) >= 0 {
			return i
		}
	}
	return 0
}

// token is a PunktToken with the annotations counting needs.
type token struct {
	tok, typ                    string
	periodFinal                 bool
	sentbreak, abbr, ellipsis   bool
	firstUpper, firstLower      bool
	initial, number, isEllipsis bool
}

var numericRE = regexp.MustCompile(`^-?[.,]?\p{Nd}[\p{Nd},.\-]*\.?$`)

func (p *punkt) newToken(tok string) *token {
	t := &token{tok: tok, periodFinal: strings.HasSuffix(tok, ".")}
	lower := strings.ToLower(tok)
	if numericRE.MatchString(lower) {
		t.typ = "##number##"
	} else {
		t.typ = lower
	}
	t.number = strings.HasPrefix(t.typ, "##number##")
	r, _ := utf8.DecodeRuneInString(tok)
	t.firstUpper, t.firstLower = unicode.IsUpper(r), unicode.IsLower(r)
	t.isEllipsis = len(tok) >= 2 && strings.Trim(tok, ".") == ""
	t.initial = isInitial(tok)
	// First pass.
	switch {
	case tok == "." || tok == "?" || tok == "!":
		t.sentbreak = true
	case t.isEllipsis:
		t.ellipsis = true
	case t.periodFinal && !strings.HasSuffix(tok, ".."):
		base := strings.ToLower(tok[:len(tok)-1])
		last := base[strings.LastIndexByte(base, '-')+1:]
		if p.abbrevs[base] || p.abbrevs[last] {
			t.abbr = true
		} else {
			t.sentbreak = true
		}
	}
	return t
}

// isInitial is _RE_INITIAL: one letter (a \w that is not a digit) and a
// period.
func isInitial(tok string) bool {
	r, size := utf8.DecodeRuneInString(tok)
	return size > 0 && tok[size:] == "." && (unicode.IsLetter(r) || unicode.IsNumber(r) && !unicode.IsDigit(r) || r == '_')
}

func (t *token) typeNoPeriod() string {
	if len(t.typ) > 1 && strings.HasSuffix(t.typ, ".") {
		return t.typ[:len(t.typ)-1]
	}
	return t.typ
}

func (t *token) typeNoSentPeriod() string {
	if t.sentbreak {
		return t.typeNoPeriod()
	}
	return t.typ
}

// containsBreak is text_contains_sentbreak: some token but the last is a
// sentence break after both annotation passes.
func (p *punkt) containsBreak(text string) bool {
	var toks []*token
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimFunc(line, unicode.IsSpace) == "" {
			continue
		}
		for _, w := range wordTokenize(line) {
			toks = append(toks, p.newToken(w))
		}
	}
	for i, t := range toks {
		if i+1 < len(toks) {
			p.secondPass(t, toks[i+1])
		}
		if t.sentbreak && i+1 < len(toks) {
			return true
		}
	}
	return false
}

// secondPass is _second_pass_annotation.
func (p *punkt) secondPass(t1, t2 *token) {
	if !t1.periodFinal {
		return
	}
	typ, next := t1.typeNoPeriod(), t2.typeNoSentPeriod()
	if p.collocations[[2]string{typ, next}] {
		t1.sentbreak, t1.abbr = false, true
		return
	}
	if (t1.abbr || t1.ellipsis) && !t1.initial {
		h := p.orthoHeuristic(t2)
		if h == yes {
			t1.sentbreak = true
			return
		}
		if t2.firstUpper && p.starters[next] {
			t1.sentbreak = true
			return
		}
	}
	if t1.initial || typ == "##number##" {
		h := p.orthoHeuristic(t2)
		if h == no {
			t1.sentbreak, t1.abbr = false, true
			return
		}
		if h == unknown && t1.initial && t2.firstUpper && p.ortho[next]&orthoLC == 0 {
			t1.sentbreak, t1.abbr = false, true
		}
	}
}

type tristate int

const (
	unknown tristate = iota
	yes
	no
)

// orthoHeuristic is _ortho_heuristic.
func (p *punkt) orthoHeuristic(t *token) tristate {
	switch t.tok {
	case ";", ":", ",", ".", "!", "?":
		return no
	}
	ctx := p.ortho[t.typeNoSentPeriod()]
	if t.firstUpper && ctx&orthoLC != 0 && ctx&orthoMidUC == 0 {
		return yes
	}
	if t.firstLower && (ctx&orthoUC != 0 || ctx&orthoBegLC == 0) {
		return no
	}
	return unknown
}

// wordTokenize is PunktLanguageVars.word_tokenize of one line: runs of
// dashes or dots (and ". . ."), words up to where they end, and single
// other characters.
func wordTokenize(line string) []string {
	var out []string
	for i := 0; i < len(line); {
		if spaceAt(line, i) {
			_, size := utf8.DecodeRuneInString(line[i:])
			i += size
			continue
		}
		if n := multiChar(line, i); n > 0 {
			out = append(out, line[i:i+n])
			i += n
			continue
		}
		if strings.IndexByte("(\"`{[:;&#*@)}]-,", line[i]) < 0 {
			// The shortest run of non-space characters followed by a
			// word's end.
			_, size := utf8.DecodeRuneInString(line[i:])
			j := i + size
			for j < len(line) && !wordEnd(line, j) {
				_, size := utf8.DecodeRuneInString(line[j:])
				j += size
			}
			out = append(out, line[i:j])
			i = j
			continue
		}
		_, size := utf8.DecodeRuneInString(line[i:])
		out = append(out, line[i:i+size])
		i += size
	}
	return out
}

// wordEnd says whether a word may end before position j: white space,
// the end, a non-word character, a multi-character punctuation, or a
// comma that ends the word.
func wordEnd(s string, j int) bool {
	if j >= len(s) || spaceAt(s, j) || strings.IndexByte(nonWord, s[j]) >= 0 || multiChar(s, j) > 0 {
		return true
	}
	if s[j] == ',' {
		k := j + 1
		return k >= len(s) || spaceAt(s, k) || strings.IndexByte(nonWord, s[k]) >= 0 || multiChar(s, k) > 0
	}
	return false
}

// multiChar is the length of _re_multi_char_punct at i: -{2,}, .{2,} or
// (?:\.\s){2,}\. (0 when none).
func multiChar(s string, i int) int {
	run := func(c byte) int {
		j := i
		for j < len(s) && s[j] == c {
			j++
		}
		return j - i
	}
	if n := run('-'); n >= 2 {
		return n
	}
	if n := run('.'); n >= 2 {
		return n
	}
	// ". . .": as many ". " pairs as there are, then a period; when the
	// last pair is not followed by one, backtracking gives that pair up
	// and ends on its period.
	var ends []int // where each pair ends
	j := i
	for j+1 < len(s) && s[j] == '.' && spaceAt(s, j+1) {
		_, size := utf8.DecodeRuneInString(s[j+1:])
		j += 1 + size
		ends = append(ends, j)
	}
	for k := len(ends); k >= 2; k-- {
		if e := ends[k-1]; e < len(s) && s[e] == '.' {
			return e + 1 - i
		}
	}
	return 0
}
