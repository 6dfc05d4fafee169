package mathverify

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tEOF   tokKind = iota
	tNum           // text: digits, optional '.' and digits, optional exponent; no separators
	tVar           // text: a variable name
	tConst         // text: "pi", "e" or "inf"
	tFunc          // text: a function name ("sin", "log", …)
	tFrac          // \frac, \dfrac, \tfrac, \cfrac
	tSqrt          // \sqrt (text ""), √ (text "u": its argument is a whole factor)
	tBinom         // \binom, \dbinom, \tbinom
	tPlus
	tMinus
	tPM
	tMP
	tMul
	tDiv
	tPow
	tSub // '_' other than a variable's subscript (\log_2)
	tBang
	tComma // text "or"/"and" when it came from a word
	tRel   // text: "=", "<", ">", "<=", ">=", "!=", "in"
	tLParen
	tRParen
	tLBrack
	tRBrack
	tLBrace // a TeX group {…}
	tRBrace
	tLSet // \{
	tRSet // \}
	tBar
	tLFloor
	tRFloor
	tLCeil
	tRCeil
	tCup
	tEmpty    // ∅
	tReals    // ℝ
	tColon    // ':' of a ratio or a clock time
	tMeridiem // text "am" or "pm", after the minutes of a clock time
	tLMatrix  // \begin{pmatrix} and its kin
	tRMatrix  // \end{pmatrix} and its kin
	tRow      // \\ inside a matrix: the end of a row
	tBigOp    // text "sum" or "prod": \sum, \prod
)

var tokNames = [...]string{
	tEOF: "end of answer", tNum: "number", tVar: "variable", tConst: "constant", tFunc: "function",
	tFrac: `\frac`, tSqrt: `\sqrt`, tBinom: `\binom`, tPlus: "'+'", tMinus: "'-'", tPM: `\pm`, tMP: `\mp`,
	tMul: "'*'", tDiv: "'/'", tPow: "'^'", tSub: "'_'", tBang: "'!'", tComma: "','", tRel: "relation",
	tLParen: "'('", tRParen: "')'", tLBrack: "'['", tRBrack: "']'", tLBrace: "'{'", tRBrace: "'}'",
	tLSet: `'\{'`, tRSet: `'\}'`, tBar: "'|'", tLFloor: `\lfloor`, tRFloor: `\rfloor`, tLCeil: `\lceil`,
	tRCeil: `\rceil`, tCup: `\cup`, tEmpty: `\emptyset`, tReals: `\mathbb{R}`, tColon: "':'", tMeridiem: "am/pm",
	tLMatrix: `\begin{matrix}`, tRMatrix: `\end{matrix}`, tRow: `\\`, tBigOp: "big operator",
}

type token struct {
	kind tokKind
	text string
}

func (t token) String() string {
	switch t.kind {
	case tNum, tVar, tConst, tFunc, tRel, tMeridiem:
		return fmt.Sprintf("%s %q", tokNames[t.kind], t.text)
	}
	return tokNames[t.kind]
}

// lexed is what the lexer makes of an answer: the tokens of its mathematics,
// and the words it dropped (units, prose). An answer with words and no
// mathematics is a text answer ("Monday", "{even}").
type lexed struct {
	toks  []token
	words []string
	math  int // tokens other than connectives ("or", "and") and TeX groups
}

// lexer turns an answer into tokens and, on the way, normalises it: TeX
// spacing and sizing (\, \! \left \right …), \text{} and \mathrm{} wrappers,
// units and other words, degrees (^\circ, °), percent and dollar signs,
// thousands separators (1,234 and 1{,}234 and 1\,234 and 5,\!525), \dfrac
// and \tfrac, \boxed and \overline around the answer, groups left empty
// once their words are dropped, and Unicode symbols (π ≤ √ ± …). Number
// literals keep what their digits mean: .38 is a number, 0.\overline{3} a
// repeating decimal, 52_8 and 152A_{11} numbers written in a base.
type lexer struct {
	s      string
	i      int
	out    lexed
	depth  int // bracket depth: thousands separators are only read at depth 0
	matrix int // inside \begin{pmatrix}…: & and \\ separate entries
	b      *budget
	err    error
}

// lex reads the answer s, spending one step per token and one per 8 bytes.
func lex(s string, b *budget) (lexed, error) {
	if err := b.spend(len(s)/8 + 1); err != nil {
		return lexed{}, err
	}
	lx := &lexer{s: s, b: b}
	lx.out.toks = make([]token, 0, min(len(s)/2+2, 1<<12))
	for lx.err == nil && lx.i < len(lx.s) {
		lx.step()
	}
	if lx.err == nil && lx.out.math > 0 {
		// Words around mathematics are dropped as units and prose, except
		// those that change the answer: "at least 5" is not 5.
		for _, w := range lx.out.words {
			if hedges[strings.ToLower(w)] {
				return lexed{}, fmt.Errorf("%q qualifies the answer", w)
			}
		}
	}
	return lx.out, lx.err
}

// hedges are words that change the value they qualify.
var hedges = map[string]bool{
	"not": true, "no": true, "nor": true, "neither": true, "never": true, "none": true, "except": true,
	"without": true, "least": true, "most": true, "more": true, "less": true, "fewer": true, "greater": true,
	"smaller": true, "larger": true, "bigger": true, "than": true, "over": true, "under": true, "above": true,
	"below": true, "between": true, "maybe": true, "perhaps": true, "either": true, "isn't": true, "aren't": true,
}

func (lx *lexer) fail(format string, args ...any) {
	if lx.err == nil {
		lx.err = fmt.Errorf(format, args...)
	}
	lx.i = len(lx.s)
}

func (lx *lexer) emit(k tokKind, text string) {
	if err := lx.b.spend(1); err != nil {
		lx.err = err
		lx.i = len(lx.s)
		return
	}
	if k == tRBrace && len(lx.out.toks) > 0 && lx.out.toks[len(lx.out.toks)-1].kind == tLBrace {
		// A group left empty (its words were dropped) is no group.
		lx.out.toks = lx.out.toks[:len(lx.out.toks)-1]
		return
	}
	lx.out.toks = append(lx.out.toks, token{k, text})
	switch {
	case k == tLBrace || k == tRBrace: // a group alone is not mathematics
	case k == tComma && text != "": // nor a connective
	default:
		lx.out.math++
	}
	switch k { // TeX groups {…} do not count: \boxed{1,000} is a number
	case tLParen, tLBrack, tLSet, tLMatrix:
		lx.depth++
	case tRParen, tRBrack, tRSet, tRMatrix:
		lx.depth = max(lx.depth-1, 0)
	}
}

func (lx *lexer) step() {
	s, c := lx.s, lx.s[lx.i]
	switch {
	case isDigit(c) || c == '.' && startsFraction(s[lx.i+1:]):
		lx.number() // .5 is a number: the period is not a trailing one
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '~' || c == '$' || c == '%' || c == '.' || c == '"':
		// White space, TeX's non-breaking space, math delimiters and
		// currency, percent, trailing periods, quotes.
		lx.i++
	case isLetter(c):
		lx.letters()
	case c == '\\':
		lx.command()
	case c >= utf8.RuneSelf:
		lx.unicode()
	default:
		lx.punct(c)
	}
}

// number reads a number literal: digits with optional thousands separators
// (a bare comma only outside brackets, where "1,234" could be a list; ",\!"
// and "{,}" anywhere), an optional
// fraction part (which may begin the literal: .5) ending in an optional
// repeating part (0.1\overline{6}), and then either an exponent (1e-3,
// 2.5E+6) or a base (52_8, 141_{13}, 152A_{11}: digits above 9 are capital
// letters). The token's text is the literal without its separators, and a
// base or repeating part in braces: "52_{8}", "0.1\overline{6}".
func (lx *lexer) number() {
	s, start := lx.s, lx.i
	i := start
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	text := s[start:i]
	if i-start <= 3 && i > start && s[start] != '0' {
		var b []byte
		for {
			sep := separator(s, i)
			if sep == 1 && lx.depth > 0 {
				sep = 0 // 1,234 in brackets is a list
			}
			if sep == 0 || i+sep+3 > len(s) || !isDigit(s[i+sep]) || !isDigit(s[i+sep+1]) || !isDigit(s[i+sep+2]) ||
				i+sep+3 < len(s) && isDigit(s[i+sep+3]) {
				break
			}
			if b == nil {
				b = append(b, text...)
			}
			b = append(b, s[i+sep:i+sep+3]...)
			i += sep + 3
		}
		if b != nil {
			text = string(b)
		}
	}
	fracStart := i
	repeat := ""
	if i < len(s) && s[i] == '.' && startsFraction(s[i+1:]) {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if digits, n := overline(s[i:]); n > 0 {
			repeat = digits
			i += n
		}
	}
	fracEnd := i
	if digits, base, n := baseSuffix(s[i:]); n > 0 && repeat == "" {
		lx.i = i + n
		lx.emit(tNum, text+s[fracStart:fracEnd]+digits+"_{"+base+"}")
		return
	}
	if repeat == "" && i+1 < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	switch {
	case repeat != "":
		text += s[fracStart:fracEnd-len(repeat)-len(`\overline{}`)] + `\overline{` + repeat + "}"
	case fracStart < i:
		text += s[fracStart:i]
	}
	lx.i = i
	lx.emit(tNum, text)
}

// startsFraction reports whether s, which follows a decimal point, holds the
// digits of a fraction part: a digit, or a repeating part.
func startsFraction(s string) bool {
	if s != "" && isDigit(s[0]) {
		return true
	}
	_, n := overline(s)
	return n > 0
}

// overline returns the digits of the repeating part \overline{digits} at the
// start of s and its length, or 0.
func overline(s string) (string, int) {
	rest, ok := strings.CutPrefix(s, `\overline{`)
	if !ok {
		return "", 0
	}
	end := strings.IndexByte(rest, '}')
	if end <= 0 || !allDigits(rest[:end]) {
		return "", 0
	}
	return rest[:end], len(s) - len(rest) + end + 1
}

// baseSuffix reads what turns the digits just read into a number written in
// a base: more digits written as capital letters (A for 10), then '_' and
// the base, in decimal digits, braced or not (52_8, 141_{13}, 1A_{16}). It
// returns the letter digits, the base and the length read, or 0.
func baseSuffix(s string) (letters, base string, n int) {
	i := 0
	for i < len(s) && 'A' <= s[i] && s[i] <= 'Z' {
		i++
	}
	if i >= len(s) || s[i] != '_' {
		return "", "", 0
	}
	j := i + 1
	braced := j < len(s) && s[j] == '{'
	if braced {
		j++
	}
	k := j
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	if k == j || k-j > 2 {
		return "", "", 0
	}
	end := k
	if braced {
		if k >= len(s) || s[k] != '}' {
			return "", "", 0
		}
		end++
	}
	return s[:i], s[j:k], end
}

// separator returns the length of the thousands separator at s[i:], or 0:
// "," or ",\!" (with the spaces after it: 32,\! 349) or "{,}" or "{, }" or "\," (a
// thin space) or "\ " or one space (1 000, as Math-Verify reads it).
func separator(s string, i int) int {
	switch {
	case strings.HasPrefix(s[i:], `,\!`):
		n := 3
		for i+n < len(s) && s[i+n] == ' ' {
			n++
		}
		return n
	case strings.HasPrefix(s[i:], " "):
		return 1
	case strings.HasPrefix(s[i:], `\ `):
		return 2
	case strings.HasPrefix(s[i:], ","):
		return 1
	case strings.HasPrefix(s[i:], "{,}"):
		return 3
	case strings.HasPrefix(s[i:], "{, }"):
		return 4
	case strings.HasPrefix(s[i:], `\,`):
		return 2
	}
	return 0
}

// letters reads a run of ASCII letters: a variable, a function name, a
// constant, a connective ("or", "and") or a word, which is dropped (a unit, or
// prose around the answer).
func (lx *lexer) letters() {
	s, start := lx.s, lx.i
	i := start
	for i < len(s) && isLetter(s[i]) {
		i++
	}
	lx.i = i
	w := s[start:i]
	if m, n := lx.meridiem(start); n > 0 {
		lx.i = start + n
		lx.emit(tMeridiem, m)
		return
	}
	switch {
	case len(w) == 1:
		lx.letter(w)
	case functions[w] && w != "sec": // "5 sec" is a duration
		lx.emit(tFunc, w)
	case w == "pi":
		lx.emit(tConst, "pi")
	case w == "inf" || w == "infty" || w == "infinity" || w == "Infinity":
		lx.emit(tConst, "inf")
	case w == "or" || w == "and":
		lx.out.words = append(lx.out.words, w)
		lx.emit(tComma, w)
	case len(w) <= 3 && !shortWords[strings.ToLower(w)], pointPair(w):
		// A product of variables: xy, abc, and two capitals that name a
		// segment (NO, IN) rather than say a word.
		for k := 0; k < len(w) && lx.err == nil; k++ {
			lx.letter(w[k : k+1])
		}
	default:
		lx.word(w)
	}
}

// pointPair reports whether w is two capital letters that are not a unit
// (CM, KG): points, as in \frac{NO}{BO}.
func pointPair(w string) bool {
	return len(w) == 2 && 'A' <= w[0] && w[0] <= 'Z' && 'A' <= w[1] && w[1] <= 'Z' && !units[strings.ToLower(w)]
}

// units are the short words of shortWords that are units.
var units = map[string]bool{
	"cm": true, "mm": true, "km": true, "kg": true, "mg": true, "ml": true, "ft": true, "yd": true, "mi": true,
	"oz": true, "lb": true, "hr": true, "pt": true, "qt": true, "gm": true, "mo": true, "yr": true, "wk": true, "ms": true,
}

// meridiem reads "am" or "pm" (any case, with or without periods: p.m.)
// at s[start:] after the number of a clock time ("4:30 pm", "9 am"), and
// returns it with its length, or 0.
func (lx *lexer) meridiem(start int) (string, int) {
	if !lx.afterNumber() {
		return "", 0
	}
	return meridiemAt(lx.s[start:])
}

// afterNumber reports whether the last token is a number.
func (lx *lexer) afterNumber() bool {
	toks := lx.out.toks
	return len(toks) > 0 && toks[len(toks)-1].kind == tNum
}

// meridiemAt reads "am" or "pm" at the start of s, as meridiem does.
func meridiemAt(s string) (string, int) {
	if s == "" || s[0]|0x20 != 'a' && s[0]|0x20 != 'p' {
		return "", 0
	}
	m := string(s[0]|0x20) + "m"
	i := 1
	dotted := i < len(s) && s[i] == '.'
	if dotted {
		i++
	}
	if i >= len(s) || s[i]|0x20 != 'm' {
		return "", 0
	}
	i++
	if dotted && i < len(s) && s[i] == '.' {
		i++
	}
	if i < len(s) && isLetter(s[i]) {
		return "", 0
	}
	return m, i
}

// word drops a word, and the exponent of a unit that follows it (cm^2).
func (lx *lexer) word(w string) {
	if s, i := lx.s, lx.i; i < len(s) && isDigit(s[i]) {
		// Digits glued to a word are part of it: cm2 is a unit (cm²) and
		// no number 2, as AZYUK2A holds none.
		for i < len(s) && (isDigit(s[i]) || isLetter(s[i])) {
			i++
		}
		w, lx.i = s[lx.i-len(w):i], i
	}
	lx.out.words = append(lx.out.words, w)
	lx.skipUnitPower()
}

// skipUnitPower skips the exponent of a unit just dropped: the ^2 of cm^2.
func (lx *lexer) skipUnitPower() {
	s, i := lx.s, lx.i
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if i < len(s) && s[i] == '^' {
		i++
		switch {
		case i < len(s) && isDigit(s[i]):
			lx.i = i + 1
		case i+2 < len(s) && s[i] == '{' && isDigit(s[i+1]) && s[i+2] == '}':
			lx.i = i + 3
		}
	}
}

// letter emits the one-letter variable l (or the constant e), with its
// subscript if one follows: x_1, a_{n}, x_{12}.
func (lx *lexer) letter(l string) {
	s, i := lx.s, lx.i
	if i+1 < len(s) && s[i] == '_' {
		if s[i+1] == '{' {
			if end := strings.IndexByte(s[i+2:], '}'); end >= 0 && end <= 16 {
				sub := strings.ReplaceAll(s[i+2:i+2+end], " ", "")
				if sub != "" && (isName(sub) || isIndex(sub)) {
					lx.i = i + 3 + end
					lx.emit(tVar, l+"_"+sub)
					return
				}
			}
		} else if isDigit(s[i+1]) || isLetter(s[i+1]) {
			lx.i = i + 2
			if i > 0 && s[i-1] == l[0] {
				lx.emit(tVar, s[i-1:i+2]) // x_1 as written: no allocation
			} else {
				lx.emit(tVar, l+"_"+s[i+1:i+2])
			}
			return
		}
	}
	if l == "e" {
		lx.emit(tConst, "e")
		return
	}
	lx.emit(tVar, l)
}

func (lx *lexer) punct(c byte) {
	s := lx.s
	next := byte(0)
	if lx.i+1 < len(s) {
		next = s[lx.i+1]
	}
	lx.i++
	switch c {
	case '+':
		lx.emit(tPlus, "")
	case '-':
		lx.emit(tMinus, "")
	case '*':
		if next == '*' {
			lx.i++
			lx.emit(tPow, "")
			return
		}
		lx.emit(tMul, "")
	case '/':
		lx.emit(tDiv, "")
	case '^':
		if n := degrees(s[lx.i:]); n > 0 {
			lx.i += n
			return
		}
		lx.emit(tPow, "")
	case '_':
		lx.emit(tSub, "")
	case '!':
		if next == '=' {
			lx.i++
			lx.emit(tRel, "!=")
			return
		}
		lx.emit(tBang, "")
	case ',', ';':
		lx.emit(tComma, "")
	case ':':
		lx.emit(tColon, "")
	case '=':
		if next == '=' {
			lx.i++
		}
		lx.emit(tRel, "=")
	case '<', '>':
		if next == '=' {
			lx.i++
			lx.emit(tRel, string(c)+"=")
			return
		}
		lx.emit(tRel, string(c))
	case '(':
		lx.emit(tLParen, "")
	case ')':
		lx.emit(tRParen, "")
	case '[':
		lx.emit(tLBrack, "")
	case ']':
		lx.emit(tRBrack, "")
	case '{':
		if next == '}' { // an empty group, as in {}^\circ
			lx.i++
			return
		}
		lx.emit(tLBrace, "")
	case '}':
		lx.emit(tRBrace, "")
	case '|':
		lx.emit(tBar, "")
	case '&':
		if lx.matrix > 0 {
			lx.emit(tComma, "")
		}
	default:
		lx.fail("unexpected %q", c)
	}
}

// degrees returns the length of a degree sign after a '^' at the start of s
// ("\circ", "{\circ}", " { \circ } "), or 0.
func degrees(s string) int {
	t := strings.TrimLeft(s, " ")
	braced := strings.HasPrefix(t, "{")
	if braced {
		t = strings.TrimLeft(t[1:], " ")
	}
	rest, ok := strings.CutPrefix(t, `\circ`)
	if !ok || rest != "" && isLetter(rest[0]) {
		return 0
	}
	if braced {
		rest = strings.TrimLeft(rest, " ")
		if !strings.HasPrefix(rest, "}") {
			return 0
		}
		rest = rest[1:]
	}
	return len(s) - len(rest)
}

func (lx *lexer) command() {
	s := lx.s
	i := lx.i + 1
	if i >= len(s) {
		// A backslash that ends the answer escapes what was cut off: the
		// \} of \boxed{1, 3\} whose box closed on it.
		lx.fail("a backslash at the end")
		return
	}
	if c := s[i]; !isLetter(c) {
		lx.escaped(c, i)
		return
	}
	j := i
	for j < len(s) && isLetter(s[j]) {
		j++
	}
	name := s[i:j]
	lx.i = j
	if k, text, ok := commandToken(name); ok {
		lx.emit(k, text)
		return
	}
	switch name {
	case "left", "right", "middle", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr",
		"Biggl", "Biggr", "displaystyle", "textstyle", "scriptstyle", "quad", "qquad", "limits", "nolimits",
		"circ", "degree", "boxed", "fbox", "overline", "enspace", "thinspace", "medspace", "thickspace", "negthinspace":
		// Sizing, spacing and degrees are dropped; \boxed is a group, and so
		// is \overline other than over the digits of a repeating decimal
		// (\overline{CD} is the segment CD).
		if (name == "left" || name == "right") && j < len(s) && s[j] == '.' {
			lx.i++
		}
	case "text", "textrm", "textbf", "textit", "textsf", "texttt", "textnormal", "mathrm", "mathbf", "mathit",
		"mathsf", "mathtt", "mbox", "hbox", "operatorname", "boldsymbol", "bm", "emph":
		lx.text()
	case "mathbb":
		arg, ok := lx.braced()
		if !ok {
			return
		}
		if strings.TrimSpace(arg) != "R" {
			lx.fail(`unsupported \mathbb{%s}`, arg)
			return
		}
		lx.emit(tReals, "")
	case "textcolor", "color":
		if _, ok := lx.braced(); ok && name == "textcolor" {
			// \textcolor{red}{x}: the second argument is a group.
			return
		}
	case "begin", "end":
		lx.environment(name == "begin")
	default:
		for _, space := range []string{"qquad", "quad"} {
			if strings.HasPrefix(name, space) {
				// \quadx_{2}: spacing glued to the letters after it.
				lx.i = i + len(space)
				return
			}
		}
		if len(name) > 20 {
			name = name[:20] + "…"
		}
		lx.fail(`unknown command \%s`, name)
	}
}

// escaped lexes a backslash followed by c, not a letter, at s[i]: spacing,
// an escaped sign, set braces or a row break.
func (lx *lexer) escaped(c byte, i int) {
	lx.i = i + 1
	if lx.matrix > 0 && (isDigit(c) || c == '-' || c == '+' || c == '.') {
		// A row break that lost one of its backslashes: -6\6.
		lx.i = i
		lx.emit(tRow, "")
		return
	}
	switch c {
	case ',', '!', ';', ':', ' ', '>', '%', '$', '#', '&', '(', ')', '[', ']', '\n', '\t', '\r':
		// Spacing, escaped signs, math delimiters.
	case '{':
		lx.emit(tLSet, "")
	case '}':
		lx.emit(tRSet, "")
	case '\\':
		if doubledCommand(lx.s[i+1:]) {
			// \\frac, \\left: a command whose backslash was escaped twice
			// (Python source, JSON), not a line break before a word.
			lx.i = i
			return
		}
		if lx.matrix > 0 {
			lx.emit(tRow, "")
			return
		}
		lx.emit(tComma, "")
	default:
		lx.fail(`unknown command \%c`, c)
	}
}

// doubledCommand reports whether s, which follows \\, starts with the
// name of a command that no line break is followed by as a word.
func doubledCommand(s string) bool {
	j := 0
	for j < len(s) && isLetter(s[j]) {
		j++
	}
	switch s[:j] {
	case "frac", "dfrac", "tfrac", "cfrac", "sqrt", "left", "right", "boxed", "text", "mathrm", "mathbf",
		"pi", "infty", "cdot", "times", "pm", "le", "leq", "ge", "geq", "neq", "cup", "cap", "in", "begin", "end":
		return true
	}
	return false
}

// environment lexes the braced name after \begin (begin true) or \end: a
// matrix's opening or closing bracket.
func (lx *lexer) environment(begin bool) {
	env, ok := lx.braced()
	if !ok {
		return
	}
	switch {
	case !isMatrix(env):
		lx.fail(`unsupported environment %q`, env)
	case begin:
		lx.matrix++
		lx.emit(tLMatrix, "")
		if env == "array" && lx.i < len(lx.s) && lx.s[lx.i] == '{' {
			lx.braced() // the column specification: {cc}, {c|c}
		}
	default:
		lx.matrix = max(lx.matrix-1, 0)
		lx.emit(tRMatrix, "")
	}
}

// isMatrix reports whether env is a matrix environment. All read the same,
// since a matrix is the same whatever brackets it is printed with
// (bmatrix, pmatrix, array).
func isMatrix(env string) bool {
	switch env {
	case "pmatrix", "bmatrix", "Bmatrix", "smallmatrix", "matrix", "array":
		return true
	}
	return false
}

// commandToken maps a command that is one token by itself.
func commandToken(name string) (tokKind, string, bool) {
	switch name {
	case "frac", "dfrac", "tfrac", "cfrac":
		return tFrac, "", true
	case "sqrt":
		return tSqrt, "", true
	case "binom", "dbinom", "tbinom":
		return tBinom, "", true
	case "sum", "prod":
		return tBigOp, name, true
	case "cdot", "times", "ast":
		return tMul, "", true
	case "div":
		return tDiv, "", true
	case "pm":
		return tPM, "", true
	case "mp":
		return tMP, "", true
	case "colon":
		return tColon, "", true
	case "le", "leq", "leqslant", "leqq":
		return tRel, "<=", true
	case "ge", "geq", "geqslant", "geqq":
		return tRel, ">=", true
	case "lt":
		return tRel, "<", true
	case "gt":
		return tRel, ">", true
	case "ne", "neq":
		return tRel, "!=", true
	case "approx", "eq":
		return tRel, "=", true
	case "in":
		return tRel, "in", true
	case "cup":
		return tCup, "", true
	case "emptyset", "varnothing":
		return tEmpty, "", true
	case "infty", "infin":
		return tConst, "inf", true
	case "pi":
		return tConst, "pi", true
	case "lbrace":
		return tLSet, "", true
	case "rbrace":
		return tRSet, "", true
	case "langle":
		return tLParen, "", true
	case "rangle":
		return tRParen, "", true
	case "lvert", "rvert", "vert", "mid":
		return tBar, "", true
	case "lfloor":
		return tLFloor, "", true
	case "rfloor":
		return tRFloor, "", true
	case "lceil":
		return tLCeil, "", true
	case "rceil":
		return tRCeil, "", true
	}
	if functions[name] {
		return tFunc, name, true
	}
	if greek[name] {
		return tVar, name, true
	}
	return 0, "", false
}

// braced reads the balanced {…} group after the current position (white
// space allowed before it) and returns its content.
func (lx *lexer) braced() (string, bool) {
	s, i := lx.s, lx.i
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if i >= len(s) || s[i] != '{' {
		lx.fail("missing {…} argument")
		return "", false
	}
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				lx.i = j + 1
				if err := lx.b.spend((j - i) / 8); err != nil {
					lx.err = err
					lx.i = len(s)
				}
				return s[i+1 : j], true
			}
		}
	}
	lx.fail("unclosed {")
	return "", false
}

// text handles \text{…} and its kin. Words are dropped, as units and prose
// ("\text{ cm}", "\text{dollars}"), "or" and "and" separate answers, a single
// letter is a variable (\mathrm{e} is e) and anything else is read as
// mathematics ("\text{(A)}", "\textbf{5}").
func (lx *lexer) text() {
	start := lx.i
	content, ok := lx.braced()
	if !ok {
		return
	}
	t := strings.TrimSpace(content)
	var words []string // the words of t, apostrophes inside them kept (Evelyn's)
	for _, w := range strings.FieldsFunc(t, func(r rune) bool { return !isLetterRune(r) && r != '\'' }) {
		if w = strings.Trim(w, "'"); w != "" {
			words = append(words, w)
		}
	}
	switch {
	case functions[t]:
		lx.emit(tFunc, t)
	case isWords(t) && len(words) == 1 && len(words[0]) == 1 && isLetter(words[0][0]):
		lx.letter(words[0]) // \mathrm{e}, \text{(C)}
	case isWords(t) && lx.afterNumber():
		if m, n := meridiemAt(t); n == len(t) {
			lx.emit(tMeridiem, m) // \text{ p.m.}
			return
		}
		fallthrough
	case isWords(t):
		for _, w := range words {
			lx.out.words = append(lx.out.words, w)
			if strings.EqualFold(w, "or") || strings.EqualFold(w, "and") {
				lx.emit(tComma, w)
			}
		}
		lx.skipUnitPower()
	default:
		// Read the content as mathematics: back up to the brace.
		lx.i = start
		for lx.s[lx.i] != '{' {
			lx.i++
		}
	}
}

// isWords reports whether t is prose: letters with spaces and light
// punctuation, and no digits or TeX.
func isWords(t string) bool {
	letters := 0
	for _, r := range t {
		switch {
		case isLetterRune(r):
			letters++
		case r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\'' || r == '-' || r == '.' || r == ',' || r == ':' || r == '!' || r == '?':
		default:
			return false
		}
	}
	return letters > 0 || t == ""
}

func (lx *lexer) unicode() {
	r, size := utf8.DecodeRuneInString(lx.s[lx.i:])
	lx.i += size
	switch r {
	case utf8.RuneError:
		lx.fail("invalid UTF-8")
	case 'π':
		lx.emit(tConst, "pi")
	case '∞':
		lx.emit(tConst, "inf")
	case '√':
		lx.emit(tSqrt, "u")
	case '×', '·', '⋅', '∙', '∗':
		lx.emit(tMul, "")
	case '÷':
		lx.emit(tDiv, "")
	case '−', '–':
		lx.emit(tMinus, "")
	case '≤', '⩽':
		lx.emit(tRel, "<=")
	case '≥', '⩾':
		lx.emit(tRel, ">=")
	case '≠':
		lx.emit(tRel, "!=")
	case '≈':
		lx.emit(tRel, "=")
	case '∈':
		lx.emit(tRel, "in")
	case '±':
		lx.emit(tPM, "")
	case '∓':
		lx.emit(tMP, "")
	case '∪':
		lx.emit(tCup, "")
	case '∅':
		lx.emit(tEmpty, "")
	case 'ℝ':
		lx.emit(tReals, "")
	case '²', '³':
		lx.emit(tPow, "")
		lx.emit(tNum, map[rune]string{'²': "2", '³': "3"}[r])
	case '°', '\u00a0', '\u2002', '\u2003', '\u2009', '\u200a', '\u200b', '\u202f', '\u3000', '’', '“', '”':
		// Degrees, spaces, quotes.
	default:
		if 'α' <= r && r <= 'ω' || 'Α' <= r && r <= 'Ω' {
			lx.emit(tVar, string(r))
			return
		}
		if isLetterRune(r) {
			// A word in another script: prose.
			lx.out.words = append(lx.out.words, string(r))
			return
		}
		lx.fail("unexpected %q", r)
	}
}

// functions are the names read as functions, with or without a backslash.
var functions = map[string]bool{
	"sin": true, "cos": true, "tan": true, "sec": true, "csc": true, "cot": true,
	"arcsin": true, "arccos": true, "arctan": true, "sinh": true, "cosh": true, "tanh": true,
	"log": true, "ln": true, "lg": true, "exp": true, "sqrt": true,
}

var greek = map[string]bool{
	"alpha": true, "beta": true, "gamma": true, "delta": true, "epsilon": true, "varepsilon": true,
	"zeta": true, "eta": true, "theta": true, "vartheta": true, "iota": true, "kappa": true,
	"lambda": true, "mu": true, "nu": true, "xi": true, "rho": true, "varrho": true, "sigma": true,
	"tau": true, "upsilon": true, "phi": true, "varphi": true, "chi": true, "psi": true, "omega": true,
	"Gamma": true, "Delta": true, "Theta": true, "Lambda": true, "Xi": true, "Sigma": true,
	"Upsilon": true, "Phi": true, "Psi": true, "Omega": true,
}

// shortWords are words of two or three letters that are prose or units, not a
// product of variables.
var shortWords = map[string]bool{
	"no": true, "yes": true, "is": true, "it": true, "of": true, "to": true, "in": true, "at": true,
	"by": true, "an": true, "as": true, "on": true, "so": true, "the": true, "are": true, "be": true,
	"we": true, "if": true, "per": true, "for": true, "not": true, "nor": true, "all": true,
	"cm": true, "mm": true, "km": true, "kg": true, "mg": true, "ml": true, "ft": true, "yd": true,
	"mi": true, "oz": true, "lb": true, "lbs": true, "hr": true, "hrs": true, "min": true, "sec": true,
	"day": true, "mph": true, "kph": true, "usd": true, "cup": true, "pt": true, "qt": true, "gal": true,
	"sq": true, "cu": true, "ms": true, "am": true, "pm": true, "rad": true, "deg": true, "cents": true,
	"mL": true, "ton": true, "tsp": true, "yr": true, "yrs": true, "wk": true, "mo": true, "one": true, "ago": true,
	"two": true, "six": true, "ten": true, "gm": true, "pct": true,
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isLetterRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isLetter(byte(r))
	}
	return r >= 0xC0 && r != '×' && r != '÷' && !('α' <= r && r <= 'ω') && !('Α' <= r && r <= 'Ω') && r < 0x2000
}

// isName reports whether s is a subscript that can be part of a variable
// name: letters and digits.
// isIndex reports whether s is a computed subscript, n+1 or n-k-1: a
// variable a_{n+1} is one name, as in Math-Verify (SymPy's Symbol).
func isIndex(s string) bool {
	if s == "" || !isName(s[:1]) || !isName(s[len(s)-1:]) {
		return false
	}
	return isName(strings.NewReplacer("+", "", "-", "").Replace(s))
}

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && !isLetter(s[i]) {
			return false
		}
	}
	return true
}
