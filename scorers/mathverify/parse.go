package mathverify

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Limits of the parser, within which the step budget then bounds the work.
// An answer beyond one of them is reported with a *limitError.
const (
	maxNesting = 64   // brackets, braces and unary signs inside each other
	maxHeight  = 2000 // height of a syntax tree (a+a+…+a is a tall tree)
	maxExp10   = 4000 // |exponent| of a number written in scientific notation
	maxDigits  = 4000 // digits of a number literal
	maxPM      = 4    // ± signs in one expression (2⁴ alternatives)
)

// parse reads the answer text into a syntax tree. A text with words and no
// mathematics ("Monday") is a text answer. Errors are errBudget, the
// context's error, a *limitError when the answer is beyond one of the
// parser's limits, or a description of what could not be read.
func parse(text string, b *budget) (*node, error) {
	lx, err := lex(text, b)
	if err != nil {
		return nil, err
	}
	return parseLexed(lx, b)
}

// parseLexed parses what the lexer made of an answer.
func parseLexed(lx lexed, b *budget) (*node, error) {
	if lx.math == 0 {
		if len(lx.words) == 0 {
			return nil, errors.New("nothing to compare")
		}
		return &node{kind: nText, name: strings.Join(lx.words, " ")}, nil
	}
	p := &parser{toks: lx.toks, b: b}
	n := p.list()
	if p.err == nil && p.peek().kind != tEOF {
		p.fail("unexpected %v", p.peek())
	}
	if p.err != nil {
		return nil, p.err
	}
	return expandPM(n, b)
}

// parser is a recursive descent parser over the tokens of one answer. Its
// error is sticky: after the first one every method returns at once (the
// position jumps to the end), and parse reports it.
//
// The grammar, loosest first:
//
//	list    = item {"," {connective} item}    several answers: 1, 2, and 3
//	item    = ratio {relation ratio}          x = 5, 1 < x <= 3, x \in [0,1]
//	ratio   = union {":" union} [am | pm]     3:1, 4:30 pm
//	union   = sum {"\cup" sum}
//	sum     = term {("+" | "-" | "\pm" | "\mp") term}
//	term    = factor {("*" | "/" | juxtaposition) factor}
//	factor  = ("-" | "+" | "\pm" | "\mp") factor | power
//	power   = postfix ["^" exponent]
//	postfix = primary {"!"}
//	primary = number | variable | constant | function | \frac | \sqrt | \binom
//	        | "(" list ")" | "[" list ")" | … | "\{" list "\}" | "|" sum "|" | …
type parser struct {
	toks    []token
	pos     int
	b       *budget
	err     error
	nesting int
	abs     int // inside |…|: a bar closes rather than opens
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{kind: tEOF}
}

func (p *parser) peekAt(k int) token {
	if p.pos+k < len(p.toks) {
		return p.toks[p.pos+k]
	}
	return token{kind: tEOF}
}

func (p *parser) next() token {
	t := p.peek()
	if p.pos < len(p.toks) {
		p.pos++
	}
	return t
}

func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
	p.pos = len(p.toks)
}

// limit fails with a *limitError.
func (p *parser) limit(format string, args ...any) {
	if p.err == nil {
		p.err = &limitError{fmt.Sprintf(format, args...)}
	}
	p.pos = len(p.toks)
}

// limitError reports an answer beyond one of the parser's limits (nesting,
// size, ± signs): not an answer that cannot be read, but one too big to be.
type limitError struct{ what string }

func (e *limitError) Error() string { return e.what }

func (p *parser) expect(k tokKind) {
	if t := p.next(); t.kind != k && p.err == nil {
		p.fail("expected %s, found %v", tokNames[k], t)
	}
}

// enter and leave bound the nesting of recursive calls.
func (p *parser) enter() bool {
	p.nesting++
	if p.nesting > maxNesting {
		p.limit("nested too deeply")
		return false
	}
	return true
}

func (p *parser) leave() { p.nesting-- }

// mk builds a node, spending a step. A structure (a tuple, a set) is refused
// as an operand of arithmetic.
func (p *parser) mk(k kind, args ...*node) *node {
	if p.err != nil {
		return p.bad()
	}
	if err := p.b.spend(1); err != nil {
		p.err = err
		p.pos = len(p.toks)
		return p.bad()
	}
	n := &node{kind: k, args: args, height: 1}
	for _, a := range args {
		if k < nScalarEnd && !a.isScalar() {
			if slices.ContainsFunc(args, isMatrixNode) {
				return p.matrixOp(k, args)
			}
			p.fail("arithmetic on %v", a)
			return p.bad()
		}
		n.height = max(n.height, a.height+1)
	}
	if n.height > maxHeight {
		p.limit("expression too long")
		return p.bad()
	}
	return n
}

// bad returns a node that stands in for one after an error: parse drops the
// tree. It is a new node each time, since callers may set its fields.
func (p *parser) bad() *node { return &node{kind: nNum, val: new(big.Rat), height: 1} }

func (p *parser) list() *node {
	first := p.item()
	if p.peek().kind != tComma {
		return first
	}
	items := []*node{first}
	for p.err == nil && p.peek().kind == tComma {
		p.next()
		for p.peek().kind == tComma && p.peek().text != "" {
			p.next() // a connective after a comma: "1, 2, and 3"
		}
		if closes(p.peek().kind) { // a trailing comma
			break
		}
		items = append(items, p.item())
	}
	if len(items) == 1 { // "5," is 5
		return first
	}
	return p.mk(nList, items...)
}

func closes(k tokKind) bool {
	switch k {
	case tEOF, tRParen, tRBrack, tRBrace, tRSet, tRMatrix, tRow:
		return true
	}
	return false
}

func (p *parser) item() *node {
	first := p.ratio()
	if p.peek().kind != tRel {
		return first
	}
	rel := p.mk(nRel, first)
	for p.err == nil && p.peek().kind == tRel {
		rel.ops = append(rel.ops, p.next().text)
		side := p.ratio()
		rel.args = append(rel.args, side)
		rel.height = max(rel.height, side.height+1)
	}
	return rel
}

// ratio reads a ratio of expressions (3:1, a:b:c), or a clock time with its
// am or pm (4:30 pm; 9 am is 9:00 am).
func (p *parser) ratio() *node {
	first := p.union()
	if k := p.peek().kind; k != tColon && k != tMeridiem {
		return first
	}
	args := []*node{first}
	for p.err == nil && p.peek().kind == tColon {
		p.next()
		args = append(args, p.union())
	}
	if len(args) == 1 {
		args = append(args, p.number("00"))
	}
	for _, a := range args {
		if !a.isScalar() {
			p.fail("ratio of %v", a)
			return p.bad()
		}
	}
	n := p.mk(nRatio, args...)
	if p.peek().kind == tMeridiem {
		n.name = p.next().text
	}
	return n
}

func (p *parser) union() *node {
	first := p.sum()
	if p.peek().kind != tCup {
		return first
	}
	args := []*node{first}
	for p.err == nil && p.peek().kind == tCup {
		p.next()
		args = append(args, p.sum())
	}
	return p.mk(nUnion, args...)
}

func (p *parser) sum() *node {
	n := p.term()
	for p.err == nil {
		var k kind
		switch p.peek().kind {
		case tPlus:
			k = nAdd
		case tMinus:
			k = nSub
		case tPM:
			k = nPM
		case tMP:
			k = nMP
		default:
			return n
		}
		p.next()
		n = p.mk(k, n, p.term())
	}
	return n
}

func (p *parser) term() *node {
	n := p.factor()
	for p.err == nil {
		switch k := p.peek().kind; {
		case k == tMul:
			p.next()
			n = p.mk(nMul, n, p.factor())
		case k == tDiv:
			p.next()
			n = p.mk(nDiv, n, p.factor())
		case p.juxtaposed(k):
			n = p.mk(nMul, n, p.factor())
		default:
			return n
		}
	}
	return n
}

// juxtaposed reports whether a token of kind k, right after a factor, starts
// another factor of an implicit product: 2x, 2\pi, x(x+1), 2\sqrt{3}. A
// number does not ("2 3" is not 6), nor a bar inside |…|.
func (p *parser) juxtaposed(k tokKind) bool {
	switch k {
	case tVar, tConst, tFunc, tFrac, tSqrt, tBinom, tLParen, tLBrace, tLFloor, tLCeil, tLMatrix, tBigOp:
		return true
	case tBar:
		return p.abs == 0
	}
	return false
}

func (p *parser) factor() *node {
	var k kind
	switch p.peek().kind {
	case tMinus:
		k = nNeg
	case tPlus:
		p.next()
		return p.factor()
	case tPM:
		k = nPM
	case tMP:
		k = nMP
	default:
		return p.power()
	}
	p.next()
	if !p.enter() {
		return p.bad()
	}
	defer p.leave()
	return p.mk(k, p.factor())
}

func (p *parser) power() *node {
	base := p.postfix()
	if p.peek().kind != tPow {
		return base
	}
	p.next()
	return p.mk(nPow, base, p.exponent())
}

// exponent reads what follows '^': a group, a signed exponent, a whole number
// (2^10 is 1024, as a plain-text answer means it) or a primary; exponents
// associate to the right (2^3^2 is 2^9).
func (p *parser) exponent() *node {
	if !p.enter() {
		return p.bad()
	}
	defer p.leave()
	switch p.peek().kind {
	case tMinus:
		p.next()
		return p.mk(nNeg, p.exponent())
	case tPlus:
		p.next()
		return p.exponent()
	}
	e := p.postfix()
	if p.peek().kind == tPow {
		p.next()
		e = p.mk(nPow, e, p.exponent())
	}
	return e
}

func (p *parser) postfix() *node {
	n := p.primary()
	for p.err == nil && p.peek().kind == tBang {
		p.next()
		n = p.mk(nFact, n)
	}
	return n
}

func (p *parser) primary() *node {
	if !p.enter() {
		return p.bad()
	}
	defer p.leave()
	t := p.peek()
	switch t.kind {
	case tNum:
		p.next()
		n := p.number(t.text)
		if p.mixedFraction(t.text) {
			// 2\frac{1}{2} is two and a half.
			n = p.mk(nAdd, n, p.primary())
		}
		return n
	case tVar:
		p.next()
		n := p.mk(nVar)
		n.name = t.text
		return n
	case tConst:
		p.next()
		n := p.mk(nConst)
		n.name = t.text
		return n
	case tLParen, tLBrack:
		return p.bracket()
	case tLMatrix:
		return p.matrix()
	case tLBrace, tLSet, tBar, tLFloor, tLCeil:
		return p.delimited(t.kind)
	case tFrac:
		p.next()
		num := p.arg()
		return p.mk(nDiv, num, p.arg())
	case tBinom:
		p.next()
		n := p.arg()
		return p.mk(nBinom, n, p.arg())
	case tSqrt:
		return p.root(t)
	case tFunc:
		return p.function()
	case tBigOp:
		return p.bigOp()
	case tEmpty:
		p.next()
		return p.mk(nSet)
	case tReals:
		p.next()
		return p.mk(nReals)
	}
	p.fail("unexpected %v", t)
	return p.bad()
}

// delimited parses what stands between a pair of delimiters opened by a
// token of kind open: a set in braces, an absolute value, a floor or a
// ceiling.
func (p *parser) delimited(open tokKind) *node {
	p.next()
	switch open {
	case tLBrace:
		inner := p.list()
		p.expect(tRBrace)
		if inner.kind == nList { // {1, 2} written without backslashes
			inner.kind = nSet
		}
		return inner
	case tLSet:
		if p.peek().kind == tRSet {
			p.next()
			return p.mk(nSet)
		}
		inner := p.list()
		p.expect(tRSet)
		if inner.kind == nList {
			inner.kind = nSet
			return inner
		}
		return p.mk(nSet, inner)
	case tBar:
		p.abs++
		inner := p.sum()
		p.abs--
		p.expect(tBar)
		return p.mk(nAbs, inner)
	}
	inner := p.sum()
	if open == tLFloor {
		p.expect(tRFloor)
		return p.mk(nFloor, inner)
	}
	p.expect(tRCeil)
	return p.mk(nCeil, inner)
}

// root parses a square root after its token t (\sqrt or √), or an n-th root
// written \sqrt[n]{x}.
func (p *parser) root(t token) *node {
	p.next()
	if t.text == "u" { // √2, √(x+1), √x
		return p.mk(nSqrt, p.postfix())
	}
	if p.peek().kind == tLBrack { // \sqrt[3]{x}
		p.next()
		index := p.sum()
		p.expect(tRBrack)
		return p.mk(nRoot, p.arg(), index)
	}
	return p.mk(nSqrt, p.arg())
}

// mixedFraction reports whether the integer just read is followed by a
// fraction of two integers written \frac{a}{b}: a mixed number.
func (p *parser) mixedFraction(text string) bool {
	if !allDigits(text) || p.peek().kind != tFrac {
		return false
	}
	want := []tokKind{tFrac, tLBrace, tNum, tRBrace, tLBrace, tNum, tRBrace}
	for k, kind := range want {
		t := p.peekAt(k)
		if t.kind != kind || kind == tNum && !allDigits(t.text) {
			return false
		}
	}
	return true
}

// bracket reads "(" list ")" and its kin. One item in matching brackets is a
// group; several make a tuple or an interval: (1, 2), [0, 1), (-\infty, 3].
func (p *parser) bracket() *node {
	open := p.next()
	inner := p.list()
	closeTok := p.next()
	if p.err != nil {
		return p.bad()
	}
	if closeTok.kind != tRParen && closeTok.kind != tRBrack {
		p.fail("expected ')' or ']', found %v", closeTok)
		return p.bad()
	}
	if inner.kind != nList {
		if open.kind == tLParen && closeTok.kind == tRParen || open.kind == tLBrack && closeTok.kind == tRBrack {
			return inner
		}
		p.fail("mismatched brackets around %v", inner)
		return p.bad()
	}
	inner.kind = nBracket
	inner.open, inner.close = '(', ')'
	if open.kind == tLBrack {
		inner.open = '['
	}
	if closeTok.kind == tRBrack {
		inner.close = ']'
	}
	return inner
}

// maxTerms bounds the terms of a sum or product with integer bounds that
// the parser writes out (\sum_{k=1}^{10} k is 1 + 2 + … + 10, computed
// exactly); evaluation (see evaluator.bigOp) takes more in floating point.
const maxTerms = 64

// bigOp reads \sum or \prod with its bounds, _{k=lo}^{hi} (either one
// first), and its body: a term, so \sum_{k=1}^{n} k^2 + 1 is the sum plus
// one. With integer bounds and at most maxTerms terms it is written out as
// the sum or product of its terms; otherwise it stays a node, which the
// evaluator computes where the bounds are integers.
func (p *parser) bigOp() *node {
	op := p.next().text
	var index string
	var lo, hi *node
	for p.err == nil && (lo == nil || hi == nil) {
		switch t := p.next(); {
		case t.kind == tSub && lo == nil:
			from := p.arg()
			if from.kind != nRel || len(from.args) != 2 || from.ops[0] != "=" || from.args[0].kind != nVar {
				p.fail(`\%s without k = start below`, op)
				return p.bad()
			}
			index, lo = from.args[0].name, from.args[1]
		case t.kind == tPow && hi == nil:
			hi = p.exponent()
		default:
			p.fail(`\%s without both bounds`, op)
			return p.bad()
		}
	}
	body := p.term()
	k := map[string]kind{"sum": nSum, "prod": nProd}[op]
	if p.err != nil {
		return p.bad()
	}
	if n := p.expand(k, index, body, lo, hi); n != nil {
		return n
	}
	n := p.mk(k, body, lo, hi)
	n.name = index
	return n
}

// expand writes out a sum or product whose bounds are integer literals
// and which has at most maxTerms terms; nil otherwise. An empty sum is 0,
// an empty product 1.
func (p *parser) expand(k kind, index string, body, lo, hi *node) *node {
	from, ok1 := integerLiteral(lo)
	to, ok2 := integerLiteral(hi)
	if !ok1 || !ok2 || to-from+1 > maxTerms {
		return nil
	}
	op := nAdd
	if k == nProd {
		op = nMul
	}
	var out *node
	for i := from; i <= to && p.err == nil; i++ {
		term := p.substitute(body, index, i)
		if out == nil {
			out = term
		} else {
			out = p.mk(op, out, term)
		}
	}
	if out == nil {
		return p.number(map[kind]string{nSum: "0", nProd: "1"}[k])
	}
	return out
}

// integerLiteral returns the value of an integer literal, maybe negated,
// of at most 9 digits.
func integerLiteral(n *node) (int64, bool) {
	lit, neg, ok := literal(n)
	if !ok || lit.base != 0 || !lit.val.IsInt() || !lit.val.Num().IsInt64() {
		return 0, false
	}
	v := lit.val.Num().Int64()
	if v > 999_999_999 {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// substitute returns a copy of n with the number v for the variable name,
// a step per node copied.
func (p *parser) substitute(n *node, name string, v int64) *node {
	if err := p.b.spend(1); err != nil && p.err == nil {
		p.err = err
		p.pos = len(p.toks)
	}
	if p.err != nil {
		return p.bad()
	}
	switch {
	case n.kind == nVar && n.name == name:
		if v < 0 {
			return p.mk(nNeg, p.number(fmt.Sprint(-v)))
		}
		return p.number(fmt.Sprint(v))
	case len(n.args) == 0:
		return n
	case (n.kind == nSum || n.kind == nProd) && n.name == name:
		// An inner operator with the same index binds it in its body.
		out := *n
		out.args = []*node{n.args[0], p.substitute(n.args[1], name, v), p.substitute(n.args[2], name, v)}
		return &out
	}
	out := *n
	out.args = make([]*node, len(n.args))
	for i, a := range n.args {
		out.args[i] = p.substitute(a, name, v)
	}
	out.evaluated = false
	return &out
}

// matrix reads a matrix environment: rows of entries separated by \\,
// entries by &, a row break before the end ignored. A 1×1 matrix is its
// entry; any other is a tuple of its entries, row by row, that knows its
// columns, so that arithmetic on matrices (see matrixOp) can be done.
func (p *parser) matrix() *node {
	p.next()
	var entries []*node
	rows, cols := 0, 0
	for p.err == nil && p.peek().kind != tRMatrix {
		if p.peek().kind == tRow { // an empty row: a trailing or doubled \\
			p.next()
			continue
		}
		n := 0
		for p.err == nil {
			entries = append(entries, p.item())
			n++
			if p.peek().kind != tComma {
				break
			}
			p.next()
		}
		switch {
		case p.err != nil:
		case rows > 0 && n != cols:
			p.fail("matrix rows of %d and %d entries", cols, n)
		case p.peek().kind == tRow:
			p.next()
		case p.peek().kind != tRMatrix:
			p.fail("unexpected %v in a matrix", p.peek())
		}
		rows, cols = rows+1, n
	}
	p.expect(tRMatrix)
	if p.err != nil {
		return p.bad()
	}
	switch len(entries) {
	case 0:
		p.fail("empty matrix")
		return p.bad()
	case 1:
		return entries[0]
	}
	return p.shaped(entries, cols)
}

func isMatrixNode(n *node) bool { return n.kind == nBracket && n.cols > 0 }

// matrixOp does the arithmetic operation k on args when one of them is a
// matrix: the sum, difference or product of two matrices of fitting shapes,
// a matrix times or divided by a scalar, the negation of a matrix. The
// result is a matrix of expressions (the entries are not evaluated here),
// which compare entry by entry as any matrix does. Anything else (a matrix
// plus a number, A/B, A^2) cannot be read.
func (p *parser) matrixOp(k kind, args []*node) *node {
	a := args[0]
	var b *node
	if len(args) == 2 {
		b = args[1]
	}
	each := func(m *node, f func(*node) *node) *node {
		out := make([]*node, len(m.args))
		for i, e := range m.args {
			out[i] = f(e)
		}
		return p.shaped(out, int(m.cols))
	}
	switch {
	case k == nNeg:
		return each(a, func(e *node) *node { return p.mk(nNeg, e) })
	case (k == nAdd || k == nSub) && isMatrixNode(a) && isMatrixNode(b):
		if len(a.args) != len(b.args) || a.cols != b.cols {
			p.fail("matrices of different shapes added or subtracted")
			return p.bad()
		}
		out := make([]*node, len(a.args))
		for i := range a.args {
			out[i] = p.mk(k, a.args[i], b.args[i])
		}
		return p.shaped(out, int(a.cols))
	case k == nMul && isMatrixNode(a) && isMatrixNode(b):
		inner := int(a.cols)
		if inner != len(b.args)/int(b.cols) {
			p.fail("product of a matrix with %d columns and one with %d rows", inner, len(b.args)/int(b.cols))
			return p.bad()
		}
		rows, cols := len(a.args)/inner, int(b.cols)
		out := make([]*node, 0, rows*cols)
		for i := range rows {
			for j := range cols {
				var sum *node
				for l := range inner {
					term := p.mk(nMul, a.args[i*inner+l], b.args[l*cols+j])
					if sum == nil {
						sum = term
					} else {
						sum = p.mk(nAdd, sum, term)
					}
				}
				out = append(out, sum)
			}
		}
		return p.shaped(out, cols)
	case k == nMul && isMatrixNode(a) && b.isScalar():
		return each(a, func(e *node) *node { return p.mk(nMul, e, b) })
	case k == nMul && a.isScalar():
		return each(b, func(e *node) *node { return p.mk(nMul, a, e) })
	case k == nDiv && isMatrixNode(a) && b.isScalar():
		return each(a, func(e *node) *node { return p.mk(nDiv, e, b) })
	}
	p.fail("arithmetic on %v", args)
	return p.bad()
}

// shaped builds a matrix of entries, cols of them a row.
func (p *parser) shaped(entries []*node, cols int) *node {
	if cols > math.MaxUint16 {
		p.limit("matrix too wide")
		return p.bad()
	}
	m := p.mk(nBracket, entries...)
	if p.err != nil {
		return m
	}
	m.open, m.close, m.cols = '(', ')', uint16(cols)
	return m
}

// arg reads the argument of a TeX command: a {group}, or a single token as
// TeX reads it (\frac12 is one half, \sqrt2 the root of 2).
func (p *parser) arg() *node {
	t := p.peek()
	switch t.kind {
	case tLBrace:
		p.next()
		if !p.enter() {
			return p.bad()
		}
		defer p.leave()
		inner := p.list()
		p.expect(tRBrace)
		return inner
	case tNum:
		if len(t.text) > 1 && allDigits(t.text) {
			p.toks[p.pos].text = t.text[1:]
			return p.number(t.text[:1])
		}
		p.next()
		return p.number(t.text)
	case tVar, tConst, tFrac, tSqrt, tBinom:
		return p.primary()
	}
	p.fail("expected an argument, found %v", t)
	return p.bad()
}

// function reads a function application: \sin x, \sin(x), \sin 2x,
// \sin^2 x, \sin^{-1} x, \log_2 8, \ln|x|.
func (p *parser) function() *node {
	name := p.next().text
	var power, base *node
	for p.err == nil {
		switch p.peek().kind {
		case tPow:
			p.next()
			power = p.exponent()
			continue
		case tSub:
			p.next()
			base = p.arg()
			continue
		}
		break
	}
	if power != nil && isMinusOne(power) && inverses[name] != "" {
		name, power = inverses[name], nil
	}
	var arg *node
	if p.peek().kind == tLParen {
		arg = p.bracket()
	} else {
		// The argument runs to the end of the implicit product: \sin 2x.
		arg = p.power()
		for p.err == nil {
			k := p.peek().kind
			if k != tVar && k != tConst && k != tFrac && k != tSqrt && k != tLBrace {
				break
			}
			arg = p.mk(nMul, arg, p.power())
		}
	}
	var n *node
	switch {
	case name == "sqrt":
		n = p.mk(nSqrt, arg)
	case base != nil:
		if name != "log" {
			p.fail("subscript on %s", name)
			return p.bad()
		}
		n = p.mk(nFunc, arg, base)
	default:
		n = p.mk(nFunc, arg)
	}
	n.name = name
	if power != nil {
		n = p.mk(nPow, n, power)
	}
	return n
}

var inverses = map[string]string{"sin": "arcsin", "cos": "arccos", "tan": "arctan"}

func isMinusOne(n *node) bool {
	return n.kind == nNeg && n.args[0].kind == nNum && n.args[0].val.Cmp(big.NewRat(1, 1)) == 0
}

// number builds the node of a number literal, exactly: "0.1" is 1/10,
// "0.\overline{3}" is 1/3, "52_{8}" is 42.
func (p *parser) number(text string) *node {
	n := p.mk(nNum)
	if p.err != nil {
		return n
	}
	n.name = text
	if digits, base, ok := strings.Cut(text, "_{"); ok {
		return p.based(n, digits, strings.TrimSuffix(base, "}"))
	}
	if head, rep, ok := strings.Cut(text, `\overline{`); ok {
		return p.repeating(n, head, strings.TrimSuffix(rep, "}"))
	}
	mant, exp, _ := strings.Cut(strings.ToLower(text), "e")
	var e10 int
	if exp != "" {
		if _, err := fmt.Sscan(exp, &e10); err != nil || e10 > maxExp10 || e10 < -maxExp10 {
			p.limit("exponent of %s out of range", text)
			return p.bad()
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if len(digits) > maxDigits {
		p.limit("number too long")
		return p.bad()
	}
	// Reading n digits costs about n²/1000 word operations.
	if err := p.b.spend(len(digits) + len(digits)*len(digits)/1000 + abs(e10)/8); err != nil {
		p.err = err
		p.pos = len(p.toks)
		return p.bad()
	}
	e10 -= len(frac)
	r := new(big.Rat)
	if len(digits) <= 18 && e10 == 0 {
		var v int64
		for i := 0; i < len(digits); i++ {
			v = v*10 + int64(digits[i]-'0')
		}
		n.val, n.f = r.SetInt64(v), float64(v)
		return n
	}
	defer func() { n.f, _ = n.val.Float64() }()
	num, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		p.fail("bad number %q", text)
		return p.bad()
	}
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e10))), nil)
	if e10 >= 0 {
		n.val = r.SetInt(num.Mul(num, pow))
	} else {
		n.val = r.SetFrac(num, pow)
	}
	return n
}

// based sets n to the value of digits (with an optional fraction part)
// written in base, and records the base.
func (p *parser) based(n *node, digits, base string) *node {
	b, err := strconv.Atoi(base)
	if err != nil || b < 2 || b > 36 {
		p.fail("%s is not a base", base)
		return p.bad()
	}
	intPart, frac, _ := strings.Cut(digits, ".")
	if err := p.b.spend(len(digits)); err != nil {
		p.err = err
		p.pos = len(p.toks)
		return p.bad()
	}
	v, err := digitsValue(intPart+frac, b)
	if err != nil {
		p.fail("%s in base %d: %v", digits, b, err)
		return p.bad()
	}
	bb := big.NewInt(int64(b))
	den := new(big.Int).Exp(bb, big.NewInt(int64(len(frac))), nil)
	n.val = new(big.Rat).SetFrac(v, den)
	n.f, _ = n.val.Float64()
	n.base = uint8(b)
	return n
}

// digitsValue returns the value of digits (0-9, then A-Z) in base b.
func digitsValue(digits string, b int) (*big.Int, error) {
	if len(digits) > maxDigits {
		return nil, &limitError{"number too long"}
	}
	v := new(big.Int)
	bb := big.NewInt(int64(b))
	for i := 0; i < len(digits); i++ {
		d := int(digits[i] - '0')
		if c := digits[i]; 'A' <= c && c <= 'Z' {
			d = int(c-'A') + 10
		}
		if d >= b {
			return nil, fmt.Errorf("%q is not a digit", digits[i])
		}
		v.Mul(v, bb)
		v.Add(v, big.NewInt(int64(d)))
	}
	return v, nil
}

// repeating sets n to the value of the decimal head (such as "0.1" or
// ".") followed by the digits rep repeated forever: 0.1\overline{6} is 1/6.
func (p *parser) repeating(n *node, head, rep string) *node {
	intPart, frac, _ := strings.Cut(head, ".")
	if len(intPart)+len(frac)+len(rep) > maxDigits {
		p.limit("number too long")
		return p.bad()
	}
	if err := p.b.spend(len(head) + len(rep)); err != nil {
		p.err = err
		p.pos = len(p.toks)
		return p.bad()
	}
	// head + rep / (10^len(frac) · (10^len(rep) - 1))
	v, _ := digitsValue(intPart+frac, 10)
	ten := big.NewInt(10)
	scale := new(big.Int).Exp(ten, big.NewInt(int64(len(frac))), nil)
	r, _ := digitsValue(rep, 10)
	nines := new(big.Int).Exp(ten, big.NewInt(int64(len(rep))), nil)
	nines.Sub(nines, big.NewInt(1))
	val := new(big.Rat).SetFrac(v, scale)
	n.val = val.Add(val, new(big.Rat).SetFrac(r, nines.Mul(nines, scale)))
	n.f, _ = n.val.Float64()
	return n
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// expandPM replaces each expression holding ± or ∓ with the set of its
// alternatives: 1 \pm \sqrt{2} is {1+√2, 1-√2}, and in a list its
// alternatives join the list ("\pm 1, 3" is three answers).
func expandPM(n *node, b *budget) (*node, error) {
	if n.isScalar() {
		k := countPM(n)
		if k == 0 {
			return n, nil
		}
		if k > maxPM {
			return nil, &limitError{fmt.Sprintf("more than %d ± signs", maxPM)}
		}
		set := &node{kind: nSet, height: n.height + 1}
		for mask := 0; mask < 1<<k; mask++ {
			idx := 0
			alt, err := substitutePM(n, mask, &idx, b)
			if err != nil {
				return nil, err
			}
			set.args = append(set.args, alt)
		}
		return set, nil
	}
	out := *n
	out.args = make([]*node, 0, len(n.args))
	for _, a := range n.args {
		e, err := expandPM(a, b)
		if err != nil {
			return nil, err
		}
		if n.kind == nList && e.kind == nSet && a.kind != nSet {
			out.args = append(out.args, e.args...)
			continue
		}
		out.args = append(out.args, e)
	}
	return &out, nil
}

func countPM(n *node) int {
	k := 0
	if n.kind == nPM || n.kind == nMP {
		k++
	}
	for _, a := range n.args {
		k += countPM(a)
	}
	return k
}

// substitutePM copies n choosing, for the i-th ± sign met in a pre-order
// walk, + when bit i of mask is clear and - when it is set (∓ the reverse).
func substitutePM(n *node, mask int, idx *int, b *budget) (*node, error) {
	if err := b.spend(1); err != nil {
		return nil, err
	}
	if len(n.args) == 0 {
		return n, nil
	}
	out := *n
	if n.kind == nPM || n.kind == nMP {
		minus := mask>>*idx&1 == 1
		*idx++
		if n.kind == nMP {
			minus = !minus
		}
		switch {
		case len(n.args) == 1 && minus:
			out.kind = nNeg
		case len(n.args) == 1:
			return substitutePM(n.args[0], mask, idx, b)
		case minus:
			out.kind = nSub
		default:
			out.kind = nAdd
		}
	}
	out.args = make([]*node, len(n.args))
	for i, a := range n.args {
		var err error
		if out.args[i], err = substitutePM(a, mask, idx, b); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// parseBare reads a whole completion as one bare answer, one with no math
// delimiters, box or tag ("\frac{1}{2}", "-\frac{7}{3}", "x^2+1", "28
// percent"): it fails when the text has delimiters or more than one line,
// or reads as prose: mathematics with a word that is not a unit ("the
// answer is 5", "AZYUK2A"), or more than two words and no mathematics.
func parseBare(text string, b *budget) (*node, error) {
	if hasDollar(text) || strings.Contains(text, "\n") || strings.Contains(text, `\(`) || strings.Contains(text, `\[`) ||
		strings.Contains(text, `\boxed`) || strings.Contains(text, `\fbox`) || strings.Contains(text, "<answer>") ||
		strings.Contains(text, "####") {
		return nil, errors.New("not a bare answer")
	}
	lx, err := lex(text, b)
	if err != nil {
		return nil, err
	}
	if len(lx.words) > 0 {
		// Words in \text{…} are the writer's text, units or labels; the
		// others must be units, or at most two words with no mathematics
		// (Evelyn), or the text is prose.
		plain, err := lex(withoutText(text), b)
		if err != nil {
			return nil, err
		}
		if lx.math == 0 && len(plain.words) > 2 {
			return nil, errors.New("prose")
		}
		for _, w := range plain.words {
			if lx.math > 0 && !bareWords[strings.ToLower(w)] {
				return nil, fmt.Errorf("prose: %q", w)
			}
		}
	}
	return parseLexed(lx, b)
}

// hasDollar reports whether s holds a $ that is not escaped (\$5 is a
// dollar amount, $5$ math).
func hasDollar(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '$':
			return true
		}
	}
	return false
}

// withoutText returns s with its \text{…} groups (and their kin) taken
// out.
func withoutText(s string) string {
	for _, cmd := range []string{`\text`, `\textbf`, `\textit`, `\textrm`, `\mathrm`, `\mbox`, `\operatorname`} {
		for from := 0; ; {
			i := strings.Index(s[from:], cmd)
			if i < 0 {
				break
			}
			i += from
			j := i + len(cmd)
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j >= len(s) || s[j] != '{' {
				from = i + len(cmd) // \textbf seen as \text, or no group
				continue
			}
			depth := 1
			j++
			for ; j < len(s) && depth > 0; j++ {
				switch s[j] {
				case '{':
					depth++
				case '}':
					depth--
				}
			}
			s = s[:i] + " " + s[j:]
		}
	}
	return s
}

// bareWords are the words a bare answer may hold beside its mathematics:
// units and connectives.
var bareWords = map[string]bool{
	"and": true, "or": true, "percent": true, "percentage": true, "pct": true, "degree": true, "degrees": true,
	"cm": true, "mm": true, "km": true, "kg": true, "mg": true, "ml": true, "ft": true, "yd": true, "mi": true,
	"oz": true, "lb": true, "lbs": true, "hr": true, "hrs": true, "min": true, "sec": true, "mph": true,
	"units": true, "unit": true, "meters": true, "inches": true, "feet": true, "dollars": true, "cents": true,
	"hours": true, "minutes": true, "seconds": true, "days": true, "years": true, "cm^2": true,
	"square": true, "cubic": true, "sq": true, "inch": true, "foot": true, "pound": true,
	"pounds": true, "meter": true, "miles": true, "mile": true, "dollar": true, "cent": true,
}
