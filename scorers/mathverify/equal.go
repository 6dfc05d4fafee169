package mathverify

import (
	"hash/fnv"
	"math"
	"math/big"
	"slices"
	"strings"
)

// Tolerances of comparisons made in floating point.
const (
	// floatTol is the relative tolerance of values computed in floating
	// point (√2, π, free variables): the rounding of float64, not a
	// difference between answers. A larger configured tolerance wins.
	floatTol = 1e-9
	// magTol, times the largest magnitude met while evaluating the gold, is
	// the absolute tolerance near zero (sin π is 1e-16, not 0). It scales
	// with the gold only, so that a prediction cannot widen it.
	magTol = 1e-10
	// numPoints are the points at which expressions with free variables are
	// compared; at least minPoints must be where both are defined.
	numPoints = 6
	minPoints = 3
)

// comparer decides whether a predicted answer matches a gold one. Its
// methods take the gold first: the comparison is asymmetric.
type comparer struct {
	b   *budget
	ev  evaluator
	tol float64 // the configured relative tolerance
	// setRelation allows an inequality for a gold interval or set
	// (inequality_for_interval).
	setRelation bool
	// prec is the configured precision: the decimal places two numbers
	// are rounded to when one of them is written as a decimal; -1 for none.
	prec int
}

func newComparer(b *budget, tol float64, prec int, setRelation bool) *comparer {
	return &comparer{b: b, ev: evaluator{b: b}, tol: tol, prec: prec, setRelation: setRelation}
}

// isInequality reports whether n is an inequality (x > 1, 1 < x \le 3,
// x \ne 2) or a list of them (x < 1 or x > 2).
func isInequality(n *node) bool {
	switch n.kind {
	case nList:
		for _, a := range n.args {
			if !isInequality(a) {
				return false
			}
		}
		return len(n.args) > 0
	case nRel:
		return !slices.ContainsFunc(n.ops, func(o string) bool { return o == "=" || o == "in" })
	}
	return false
}

// match reports whether the prediction p is an acceptable answer for the
// gold g.
//
//   - Two relations are equivalent when their members are (x > 1 and 1 < x;
//     y = 2x+1 and 2x - y + 1 = 0: the differences of their sides are
//     proportional, by a positive factor for an inequality).
//   - An assignment (x = 5, x \in [0, 1]) stands for its right-hand side on
//     either side: x = 5 and 5 match. Values given to several variables
//     match by name: (x, y) = (1, 2) and y = 2, x = 1.
//   - An inequality in one variable matches the intervals it describes:
//     x >= 1 and [1, \infty).
//   - A gold written as a label and its value (AB = 4, \frac{p}{q} =
//     \frac{2}{\sqrt{5}}, S_1:S_2 = 3:8, f(x) = 1) stands for its value
//     against a prediction that is not a relation (see labelledValue).
//   - A chain "2 + 3 = 5" predicted for a bare gold 5 matches when every
//     member does.
//   - Otherwise the answers compare structurally (see equal).
func (c *comparer) match(g, p *node) (bool, error) {
	ok, err := c.matchAsWritten(g, p)
	if err != nil || ok {
		return ok, err
	}
	v, ordered, ok := labelledValue(g)
	if !ok {
		return false, nil
	}
	if ps := stripAssign(p); ps.kind == nRel {
		return false, nil
	} else if ordered && ps.kind == nList && len(ps.args) == len(v.args) {
		return c.inOrder(v.args, ps.args)
	}
	return c.match(v, p)
}

// labelledValue returns the value a gold states when it is written as a
// label and its value, "LHS = value" with a left side that names a
// quantity rather than computing one (see isLabel): AB = 4 gives 4,
// \frac{NO}{BO} = \frac{1}{\sqrt{6}} gives \frac{1}{\sqrt{6}}, S_1:S_2 = 3:8
// gives 3:8, f(x) = 1 gives 1. In a list, each labelled item gives its
// value and the others stay (a = 4, -8, -10 gives 4, -8, -10); ordered
// says that the values belong to two or more different labels (AB = 4, CD
// = 5; x = -5, p = 14/3), so that a bare list of values must give them in
// the gold's order. ok is false when g has no label.
func labelledValue(g *node) (v *node, ordered, ok bool) {
	value := func(n *node) (*node, bool) {
		if n.kind == nRel && len(n.args) == 2 && n.ops[0] == "=" && isLabel(n.args[0]) {
			return n.args[1], true
		}
		return n, false
	}
	switch g.kind {
	case nRel:
		v, ok := value(g)
		return v, false, ok
	case nList:
		out := &node{kind: nList, height: g.height}
		labels := map[string]bool{}
		for _, item := range g.args {
			v, labelled := value(item)
			if labelled {
				labels[item.args[0].String()] = true
			} else if item.kind == nRel {
				return nil, false, false
			}
			out.args = append(out.args, v)
		}
		return out, len(labels) > 1, len(labels) > 0
	}
	return nil, false, false
}

// isLabel reports whether n names a quantity rather than computes one: a
// variable, a product, quotient or ratio of labels, or the absolute value
// of one (AB, x_1, \frac{NO}{BO}, |AB|, S_1:S_2, f(x) read as f·x); no
// numbers, sums or differences (x + z = 1 is an equation, not a label).
func isLabel(n *node) bool {
	switch n.kind {
	case nVar:
		return true
	case nMul, nDiv, nRatio, nAbs:
		for _, a := range n.args {
			if !isLabel(a) {
				return false
			}
		}
		return len(n.args) > 0
	}
	return false
}

// matchAsWritten is match without reading a labelled gold as its value.
func (c *comparer) matchAsWritten(g, p *node) (bool, error) {
	if g.kind == nRel && p.kind == nRel {
		if ok, err := c.relEqual(g, p); err != nil || ok {
			return ok, err
		}
	}
	if gt, ok := solutionTuples(g); ok {
		g = gt
	}
	if pt, ok := solutionTuples(p); ok {
		p = pt
	}
	if gb, ok := bindings(g); ok && len(gb) > 1 {
		if pb, ok := bindings(p); ok {
			return c.sameBindings(gb, pb)
		}
	}
	// A gold interval or set is not matched by an inequality unless the
	// function allows it, as Math-Verify's allow_set_relation_comp; an
	// inequality gold is matched by its interval always.
	setForRelation := c.setRelation || !isInequality(p) || isInequality(g)
	g, p = stripAssign(g), stripAssign(p)
	if (isIntervalish(g) || isIntervalish(p)) && setForRelation {
		gi, gok := intervals(g)
		pi, pok := intervals(p)
		if gok && pok {
			return c.intervalsEqual(gi, pi)
		}
	}
	if g.kind == nRel {
		return false, nil
	}
	if p.kind == nRel && allOps(p, "=") {
		matched := false
		for _, side := range p.args {
			if side.kind == nVar {
				continue
			}
			if ok, err := c.equal(g, side); err != nil || !ok {
				return false, err
			}
			matched = true
		}
		return matched, nil
	}
	return c.equal(g, p)
}

// equal compares two answers structurally: numbers and expressions by value,
// bare lists and sets without order (a list or set of one is its element),
// tuples and intervals in order with the same brackets, unions without order,
// ratios and clock times as ratioEqual says, texts as words in any case (a
// word written without \text, which reads as a product of variables, is the
// same word: odd and \text{odd}).
func (c *comparer) equal(g, p *node) (bool, error) {
	if err := c.b.spend(1); err != nil {
		return false, err
	}
	switch {
	case g.isScalar() && p.isScalar():
		return c.scalarEqual(g, p)
	case g.kind == nText || p.kind == nText:
		gw, gok := words(g)
		pw, pok := words(p)
		return gok && pok && strings.EqualFold(gw, pw), nil
	case isCollection(g) && isCollection(p):
		return c.sameElements(g.args, p.args)
	case isCollection(g) && len(g.args) == 1:
		return c.equal(g.args[0], p)
	case isCollection(p) && len(p.args) == 1:
		return c.equal(g, p.args[0])
	case g.kind == nRatio || p.kind == nRatio:
		return c.ratioEqual(g, p)
	case g.kind == nBracket && p.kind == nBracket:
		if g.open != p.open || g.close != p.close || len(g.args) != len(p.args) ||
			g.cols > 0 && p.cols > 0 && g.cols != p.cols { // a matrix is also a tuple of its entries
			return false, nil
		}
		for i := range g.args {
			if ok, err := c.equal(g.args[i], p.args[i]); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case g.kind == nUnion && p.kind == nUnion:
		return c.sameElements(g.args, p.args)
	case g.kind == nReals && p.kind == nReals:
		return true, nil
	case g.kind == nRel && p.kind == nRel:
		return c.relEqual(g, p)
	}
	return false, nil
}

func isCollection(n *node) bool { return n.kind == nList || n.kind == nSet }

// words returns the words of a text answer, or of an answer that reads as
// words: single letters juxtaposed (odd is o·d·d), and lists of them (A, C,
// F), with one space between words.
func words(n *node) (string, bool) {
	switch n.kind {
	case nText:
		return n.name, true
	case nList, nSet:
		ws := make([]string, len(n.args))
		for i, a := range n.args {
			w, ok := words(a)
			if !ok {
				return "", false
			}
			ws[i] = w
		}
		return strings.Join(ws, " "), true
	}
	var b strings.Builder
	return b.String(), letters(n, &b)
}

// letters writes the letters of a product of one-letter variables (e is a
// letter too) and reports whether n is one.
func letters(n *node, b *strings.Builder) bool {
	switch {
	case n.kind == nVar && len(n.name) == 1 || n.kind == nConst && n.name == "e":
		b.WriteString(n.name)
		return true
	case n.kind == nMul:
		return letters(n.args[0], b) && letters(n.args[1], b)
	}
	return false
}

// ratioEqual compares a ratio or a clock time with an answer. Ratios with
// the same number of terms are equal when proportional (2:4 is 1:2), a
// two-term ratio equals the number it stands for (1:2 is 1/2), and clock
// times (a ratio with am or pm, or with two-digit minutes: 4:30, 1:03 pm,
// 9 am) are equal when they are the same time of day, a time without am or
// pm being read on a 24-hour clock (4:30 pm is 16:30, not 4:30), and a
// whole number being an hour (9 am is 9, 9 pm is 21).
func (c *comparer) ratioEqual(g, p *node) (bool, error) {
	gr, pr := g.kind == nRatio, p.kind == nRatio
	if gr && isClock(g) && !pr || pr && isClock(p) && !gr {
		gm, gok := clockMinutes(g)
		pm, pok := clockMinutes(p)
		return gok && pok && gm == pm, nil
	}
	switch {
	case gr && pr:
		if len(g.args) != len(p.args) {
			return false, nil
		}
		if isClock(g) || isClock(p) {
			gm, gok := clockMinutes(g)
			pm, pok := clockMinutes(p)
			return gok && pok && gm == pm, nil
		}
		return c.sameRatio(g.args, p.args)
	case gr && p.isScalar() && len(g.args) == 2 && !isClock(g):
		return c.scalarEqual(&node{kind: nDiv, args: g.args}, p)
	case pr && g.isScalar() && len(p.args) == 2 && !isClock(p):
		return c.scalarEqual(g, &node{kind: nDiv, args: p.args})
	}
	return false, nil
}

// sameRatio reports whether the terms ps are the terms gs times a positive
// factor; a zero term must be zero in both.
func (c *comparer) sameRatio(gs, ps []*node) (bool, error) {
	for i := 1; i < len(gs); i++ {
		// gs[i]·ps[0] = ps[i]·gs[0]
		l := &node{kind: nMul, args: []*node{gs[i], ps[0]}}
		r := &node{kind: nMul, args: []*node{ps[i], gs[0]}}
		if ok, err := c.scalarEqual(l, r); err != nil || !ok {
			return false, err
		}
	}
	// The same signs, and no term zero in one only.
	for i := range gs {
		c.ev.mag = 0
		vg, err := c.ev.exact(gs[i])
		if err != nil {
			return false, err
		}
		vp, err := c.ev.exact(ps[i])
		if err != nil {
			return false, err
		}
		if sign(vg.f) != sign(vp.f) {
			return false, nil
		}
	}
	return true, nil
}

func sign(f float64) int {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return 0
}

// isClock reports whether a ratio is a clock time: it has am or pm, or its
// last term is a two-digit number literal (4:30, 12:00).
func isClock(n *node) bool {
	if n.name != "" {
		return true
	}
	last := n.args[len(n.args)-1]
	return len(n.args) == 2 && last.kind == nNum && len(last.name) == 2 && allDigits(last.name)
}

// clockMinutes returns the minutes since midnight of a clock time h:mm,
// read on a 12-hour clock when it has am or pm, else on a 24-hour clock; a
// whole number is an hour.
func clockMinutes(n *node) (int64, bool) {
	if n.kind == nNum {
		n = &node{kind: nRatio, args: []*node{n, {kind: nNum, val: new(big.Rat)}}}
	}
	if n.kind != nRatio || len(n.args) != 2 {
		return 0, false
	}
	var hm [2]int64
	for i, a := range n.args {
		if a.kind != nNum || !a.val.IsInt() || !a.val.Num().IsInt64() || a.val.Sign() < 0 {
			return 0, false
		}
		hm[i] = a.val.Num().Int64()
	}
	h, m := hm[0], hm[1]
	if m >= 60 || h > 24 || n.name != "" && (h < 1 || h > 12) {
		return 0, false
	}
	switch n.name {
	case "am":
		h %= 12
	case "pm":
		h = h%12 + 12
	}
	return h*60 + m, true
}

// sameElements reports whether every gold element matches a predicted one
// and every predicted element a gold one.
func (c *comparer) sameElements(gs, ps []*node) (bool, error) {
	return sameBy(gs, ps, c.equal)
}

func sameBy[T any](gs, ps []T, eq func(g, p T) (bool, error)) (bool, error) {
	covered := make([]bool, len(ps))
	for _, g := range gs {
		found := false
		for j, p := range ps {
			ok, err := eq(g, p)
			if err != nil {
				return false, err
			}
			if ok {
				found, covered[j] = true, true
			}
		}
		if !found {
			return false, nil
		}
	}
	return !slices.Contains(covered, false), nil
}

// scalarEqual compares two expressions. Without free variables they are
// evaluated (exactly where possible) and compared as numbers; with free
// variables both are evaluated at numPoints deterministic pseudo-random
// points and must agree wherever the gold or the prediction is defined.
func (c *comparer) scalarEqual(g, p *node) (bool, error) {
	if ok, decided := baseEqual(g, p); decided {
		return ok, nil
	}
	vars := varNames(g, p)
	if len(vars) == 0 {
		c.ev.mag = 0
		vg, err := c.ev.exact(g)
		if err != nil {
			return false, err
		}
		magG := c.ev.mag
		vp, err := c.ev.exact(p)
		if err != nil {
			return false, err
		}
		if c.prec >= 0 && (isDecimal(g) || isDecimal(p)) && roundedEqual(vg, vp, c.prec) {
			return true, nil
		}
		return c.numEqual(vg, vp, magG), nil
	}
	ints := boundVars(g, p)
	valid := 0
	for k := range numPoints {
		fg, magG, fp, err := c.floats(g, p, point(vars, ints, k))
		if err != nil {
			return false, err
		}
		gNaN, pNaN := math.IsNaN(fg), math.IsNaN(fp)
		switch {
		case gNaN && pNaN:
			continue
		case gNaN || pNaN || !c.floatEqual(fg, fp, magG):
			return false, nil
		}
		valid++
	}
	if valid < minPoints {
		// Undefined almost everywhere we looked: the same writing at least.
		return g.String() == p.String(), nil
	}
	return true, nil
}

// floats evaluates the gold g and the prediction p at the point e: their
// values, and magG, the magnitude of g's terms, by which the rounding in fg
// is judged.
func (c *comparer) floats(g, p *node, e *env) (fg, magG, fp float64, err error) {
	c.ev.mag = 0
	if fg, err = c.ev.float(g, e); err != nil {
		return 0, 0, 0, err
	}
	magG = c.ev.mag
	fp, err = c.ev.float(p, e)
	return fg, magG, fp, err
}

// baseEqual decides the comparison of two number literals (each maybe
// negated) when one of them is written in a base (52_8). The other must be
// written in the same base, or, for a prediction, with no base at all, its
// digits then being read in the gold's base (52 for 52_8: the answer's
// digits, the base left out). It reports decided=false for anything else.
func baseEqual(g, p *node) (ok, decided bool) {
	gv, gneg, gok := literal(g)
	pv, pneg, pok := literal(p)
	if !gok || !pok || gv.base == 0 && pv.base == 0 {
		return false, false
	}
	gb := uint8(10)
	if gv.base != 0 {
		gb = gv.base
	}
	var pval *big.Rat
	switch pv.base {
	case gb:
		pval = pv.val
	case 0: // a gold in a base other than 10
		intPart, frac, _ := strings.Cut(pv.name, ".")
		if !allDigits(intPart+frac) || intPart+frac == "" {
			return false, true
		}
		v, err := digitsValue(intPart+frac, int(gb))
		if err != nil {
			return false, true
		}
		den := new(big.Int).Exp(big.NewInt(int64(gb)), big.NewInt(int64(len(frac))), nil)
		pval = new(big.Rat).SetFrac(v, den)
	default:
		return false, true
	}
	gval := gv.val
	if gneg {
		gval = new(big.Rat).Neg(gval)
	}
	if pneg {
		pval = new(big.Rat).Neg(pval)
	}
	return gval.Cmp(pval) == 0, true
}

// literal returns the number literal n is, or negates.
func literal(n *node) (lit *node, neg, ok bool) {
	if n.kind == nNeg {
		n, neg = n.args[0], true
	}
	return n, neg, n.kind == nNum
}

// numEqual compares two numbers. Two exact integers are equal only when
// they are the same integer, whatever the tolerance; other exact numbers
// are equal when they are the same rational or within the configured
// relative tolerance (0.333 and 1/3 under 1e-2, not under the default 0);
// values computed in floating point are compared with floatEqual.
func (c *comparer) numEqual(g, p value, magG float64) bool {
	if g.r != nil && p.r != nil {
		if g.r.Cmp(p.r) == 0 {
			return true
		}
		if g.r.IsInt() && p.r.IsInt() {
			return false
		}
		return c.tol > 0 && within(g.f, p.f, c.tol)
	}
	return c.floatEqual(g.f, p.f, magG)
}

// floatEqual compares a gold value computed in floating point with a
// predicted one: within max(tolerance, floatTol) relative, or magTol times
// the gold's magnitude absolute. Infinities are equal to themselves only.
// isDecimal reports whether n is a number written with a decimal point
// (0.25, -2.6667), as Math-Verify's Float atoms are.
func isDecimal(n *node) bool {
	if n.kind == nNeg {
		n = n.args[0]
	}
	return n.kind == nNum && n.base == 0 && strings.Contains(n.name, ".")
}

// roundedEqual reports whether g and p are equal once rounded to prec
// decimal places (half away from zero), exactly when both are rationals.
func roundedEqual(g, p value, prec int) bool {
	if g.r != nil && p.r != nil {
		scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil))
		return roundRat(new(big.Rat).Mul(g.r, scale)).Cmp(roundRat(new(big.Rat).Mul(p.r, scale))) == 0
	}
	if math.IsNaN(g.f) || math.IsNaN(p.f) || math.IsInf(g.f, 0) || math.IsInf(p.f, 0) {
		return false
	}
	scale := math.Pow(10, float64(prec))
	return math.Round(g.f*scale) == math.Round(p.f*scale)
}

// roundRat rounds r to the nearest integer, halves away from zero.
func roundRat(r *big.Rat) *big.Int {
	num := new(big.Int).Abs(r.Num())
	q, m := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if r.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

func (c *comparer) floatEqual(g, p, magG float64) bool {
	if math.IsNaN(g) || math.IsNaN(p) {
		return false
	}
	if math.IsInf(g, 0) || math.IsInf(p, 0) {
		return g == p
	}
	return within(g, p, max(c.tol, floatTol)) || math.Abs(g-p) <= magTol*magG
}

func within(x, y, tol float64) bool {
	if math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsNaN(y) {
		return x == y
	}
	return math.Abs(x-y) <= tol*max(math.Abs(x), math.Abs(y))
}

// relEqual compares two relations. Their operators must be the same once
// > and >= are turned around (x > 1 is 1 < x). A single relation with free
// variables matches when the differences of the sides, gold and predicted,
// are proportional at every sample point: by a positive factor for an
// inequality (x > 1 and 2x > 2, not x < 1), by any non-zero factor for an
// equation (y = 2x + 1 and 2x - y + 1 = 0). Otherwise the members compare
// in order (either way round for = and ≠).
func (c *comparer) relEqual(g, p *node) (bool, error) {
	gs, gops := orient(g)
	ps, pops := orient(p)
	if !slices.Equal(gops, pops) {
		return false, nil
	}
	if len(gops) == 1 && gops[0] != "in" && allScalar(gs) && allScalar(ps) &&
		(gs[0].hasVars() || gs[1].hasVars() || ps[0].hasVars() || ps[1].hasVars()) {
		dg := &node{kind: nSub, args: gs}
		dp := &node{kind: nSub, args: ps}
		return c.proportional(dg, dp, gops[0] == "<" || gops[0] == "<=")
	}
	ok, err := c.inOrder(gs, ps)
	if err != nil || ok || gops[0] != "=" && gops[0] != "!=" || !allOps(g, gops[0]) {
		return ok, err
	}
	reversed := slices.Clone(ps)
	slices.Reverse(reversed)
	return c.inOrder(gs, reversed)
}

func (c *comparer) inOrder(gs, ps []*node) (bool, error) {
	if len(gs) != len(ps) {
		return false, nil
	}
	for i := range gs {
		if ok, err := c.equal(gs[i], ps[i]); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// proportional reports whether dg = k·dp for a constant k (k > 0 when
// positive), at the sample points where dg is defined and not zero.
func (c *comparer) proportional(dg, dp *node, positive bool) (bool, error) {
	vars := varNames(dg, dp)
	ints := boundVars(dg, dp)
	valid := 0
	var k0 float64
	for k := range numPoints {
		fg, magG, fp, err := c.floats(dg, dp, point(vars, ints, k))
		if err != nil {
			return false, err
		}
		switch {
		case math.IsNaN(fg) && math.IsNaN(fp):
			continue
		case math.IsNaN(fg) || math.IsNaN(fp) || math.IsInf(fg, 0) || math.IsInf(fp, 0):
			return false, nil
		case math.Abs(fg) <= magTol*magG:
			continue // the gold's sides are equal here: no ratio to take
		case fp == 0:
			return false, nil
		}
		r := fg / fp
		if positive && r <= 0 || r == 0 {
			return false, nil
		}
		if valid == 0 {
			k0 = r
		} else if !within(r, k0, max(c.tol, floatTol)) {
			return false, nil
		}
		valid++
	}
	if valid < minPoints {
		return dg.String() == dp.String(), nil
	}
	return true, nil
}

// orient returns the members and operators of a relation with > and >=
// turned into < and <= (a chain of them is read backwards).
func orient(n *node) ([]*node, []string) {
	greater := true
	for _, op := range n.ops {
		greater = greater && (op == ">" || op == ">=")
	}
	if !greater {
		return n.args, n.ops
	}
	args := slices.Clone(n.args)
	slices.Reverse(args)
	ops := make([]string, len(n.ops))
	for i, op := range n.ops {
		ops[len(ops)-1-i] = map[string]string{">": "<", ">=": "<="}[op]
	}
	return args, ops
}

func allOps(n *node, op string) bool {
	for _, o := range n.ops {
		if o != op {
			return false
		}
	}
	return n.kind == nRel
}

func allScalar(ns []*node) bool {
	for _, n := range ns {
		if !n.isScalar() {
			return false
		}
	}
	return true
}

// stripAssign returns the right-hand side of an assignment (x = 5,
// (x, y) = (1, 2), x \in [0, 1], x = 2 + 3 = 5 gives 2 + 3 = 5), and the
// list of right-hand sides of a list of assignments to the same variable
// (x = 1, x = 2), where an item after the first may be a bare value of the
// same shape ((x, y) = (5, 8) and (8, 5); x = 1, 2); anything else as it is.
func stripAssign(n *node) *node {
	switch n.kind {
	case nRel:
		if !assignable(n.args[0]) || !(allOps(n, "=") || len(n.ops) == 1 && n.ops[0] == "in") {
			return n
		}
		if len(n.args) == 2 {
			return n.args[1]
		}
		return &node{kind: nRel, args: n.args[1:], ops: n.ops[1:], height: n.height}
	case nList:
		var lhs string
		var first *node // the left side of the first item
		out := &node{kind: nList, height: n.height}
		for i, item := range n.args {
			if i > 0 && item.kind != nRel && sameShape(first, item) {
				// (x, y) = (5, 8) and (8, 5): more values of the same unknowns.
				out.args = append(out.args, item)
				continue
			}
			if item.kind != nRel || len(item.args) != 2 || item.ops[0] != "=" || !assignable(item.args[0]) {
				return n
			}
			if i == 0 {
				first = item.args[0]
			}
			if name := item.args[0].String(); i == 0 {
				lhs = name
			} else if name != lhs {
				return n
			}
			if rhs := item.args[1]; rhs.kind == nSet {
				out.args = append(out.args, rhs.args...)
			} else {
				out.args = append(out.args, rhs)
			}
		}
		return out
	}
	return n
}

// solutionTuples returns a list of assignments that gives several
// solutions to the same unknowns, one after the other in the same order
// (p = 5, q = 2; p = 7, q = 2), as the list of their tuples ((5, 2), (7,
// 2)); ok is false for anything else.
func solutionTuples(n *node) (*node, bool) {
	if n.kind != nList {
		return nil, false
	}
	var names []string
	for _, item := range n.args {
		if item.kind != nRel || len(item.args) != 2 || item.ops[0] != "=" || item.args[0].kind != nVar {
			return nil, false
		}
		name := item.args[0].name
		if len(names) > 0 && name == names[0] {
			break
		}
		if slices.Contains(names, name) {
			return nil, false
		}
		names = append(names, name)
	}
	k := len(names)
	if k < 2 || len(n.args)%k != 0 || len(n.args) == k {
		return nil, false
	}
	out := &node{kind: nList, height: n.height}
	for i := 0; i < len(n.args); i += k {
		tuple := &node{kind: nBracket, open: '(', close: ')', height: n.height}
		for j, item := range n.args[i : i+k] {
			if item.args[0].name != names[j] {
				return nil, false
			}
			tuple.args = append(tuple.args, item.args[1])
		}
		out.args = append(out.args, tuple)
	}
	return out, true
}

// sameShape reports whether v can be a value of the unknowns lhs: a scalar
// for a variable, a tuple of as many for a tuple of variables.
func sameShape(lhs, v *node) bool {
	if lhs.kind == nBracket {
		return v.kind == nBracket && v.cols == 0 && len(v.args) == len(lhs.args) && allScalar(v.args)
	}
	return v.isScalar()
}

// bindings returns the values an answer gives to variables by name, when it
// is an assignment ((x, y) = (1, 2), x = 1) or a list of assignments to
// distinct variables (x = 1, y = 2).
func bindings(n *node) (map[string]*node, bool) {
	m := map[string]*node{}
	bind := func(rel *node) bool {
		if rel.kind != nRel || len(rel.args) != 2 || rel.ops[0] != "=" || !assignable(rel.args[0]) {
			return false
		}
		lhs, rhs := rel.args[:1], rel.args[1:]
		if t := rel.args[0]; t.kind == nBracket { // (x, y) = (1, 2)
			r := rel.args[1]
			if r.kind != nBracket || r.open != '(' || r.close != ')' || len(r.args) != len(t.args) {
				return false
			}
			lhs, rhs = t.args, r.args
		}
		for i, v := range lhs {
			if _, dup := m[v.name]; dup {
				return false
			}
			m[v.name] = rhs[i]
		}
		return true
	}
	if n.kind == nList {
		for _, item := range n.args {
			if !bind(item) {
				return nil, false
			}
		}
		return m, true
	}
	return m, bind(n)
}

func (c *comparer) sameBindings(g, p map[string]*node) (bool, error) {
	if len(g) != len(p) {
		return false, nil
	}
	for name, gv := range g {
		pv, ok := p[name]
		if !ok {
			return false, nil
		}
		if ok, err := c.equal(gv, pv); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// assignable reports whether n can be the left side of an assignment: a
// variable or a tuple of variables.
func assignable(n *node) bool {
	switch n.kind {
	case nVar:
		return true
	case nBracket:
		if n.open != '(' || n.close != ')' {
			return false
		}
		for _, a := range n.args {
			if a.kind != nVar {
				return false
			}
		}
		return true
	}
	return false
}

// interval is a real interval; an end is open or closed, and the bracket of
// an infinite end does not count.
type interval struct {
	lo, hi             *node
	loClosed, hiClosed bool
}

// posInf and negInf build ∞ and -∞. (Fresh nodes: evaluation caches values
// in nodes, so no node is shared between checks.)
func posInf() *node { return &node{kind: nConst, name: "inf", height: 1} }
func negInf() *node { return &node{kind: nNeg, args: []*node{posInf()}, height: 2} }

func isIntervalish(n *node) bool {
	switch n.kind {
	case nBracket:
		return len(n.args) == 2 && allScalar(n.args) && n.cols == 0 // a 1×2 matrix is no interval
	case nUnion, nReals:
		return true
	}
	return false
}

// intervals returns the set of reals that n describes as a union of
// intervals, when it describes one: an interval, a union, ℝ, the empty set,
// an inequality in one variable (1 < x <= 3, x != 2) or a list of them (x < 1
// or x > 2).
func intervals(n *node) ([]interval, bool) {
	switch n.kind {
	case nBracket:
		if !isIntervalish(n) {
			return nil, false
		}
		return []interval{{n.args[0], n.args[1], n.open == '[', n.close == ']'}}, true
	case nReals:
		return []interval{{negInf(), posInf(), false, false}}, true
	case nSet:
		return nil, len(n.args) == 0
	case nUnion, nList:
		var all []interval
		for _, a := range n.args {
			if n.kind == nList && a.kind != nRel {
				return nil, false
			}
			iv, ok := intervals(a)
			if !ok {
				return nil, false
			}
			all = append(all, iv...)
		}
		return all, true
	case nRel:
		return relIntervals(n)
	}
	return nil, false
}

func relIntervals(n *node) ([]interval, bool) {
	args, ops := orient(n)
	v := -1
	for i, a := range args {
		switch {
		case (a.kind == nVar || a.kind == nMul && isLabel(a) || isAbsOfVar(a)) && v < 0:
			v = i // x, or a name such as f(x) (read f·x): 0 < f(x) < 1 is (0, 1)
		case !a.isScalar() || a.hasVars():
			return nil, false
		}
	}
	if v < 0 {
		return nil, false
	}
	for _, op := range ops {
		if op != "<" && op != "<=" && (op != "!=" || len(ops) != 1) {
			return nil, false
		}
	}
	if isAbsOfVar(args[v]) {
		return absIntervals(args, ops, v)
	}
	switch {
	case len(args) == 2 && ops[0] == "!=":
		c := args[1-v]
		return []interval{{negInf(), c, false, false}, {c, posInf(), false, false}}, true
	case len(args) == 2 && v == 0:
		return []interval{{negInf(), args[1], false, ops[0] == "<="}}, true
	case len(args) == 2:
		return []interval{{args[0], posInf(), ops[0] == "<=", false}}, true
	case len(args) == 3 && v == 1:
		return []interval{{args[0], args[2], ops[0] == "<=", ops[1] == "<="}}, true
	}
	return nil, false
}

func isAbsOfVar(n *node) bool { return n.kind == nAbs && n.args[0].kind == nVar }

// absIntervals returns the intervals of a relation on |x|, args[v]: 1 \le
// |x| \le 2 is [-2, -1] ∪ [1, 2], |x| < 2 is (-2, 2), |x| > 1 is (-∞, -1) ∪
// (1, ∞). The bounds are not evaluated: with a negative lower bound the
// union is still the right set (-1 \le |x| \le 2 gives [-2, 1] ∪ [-1, 2]),
// written otherwise than a prediction would.
func absIntervals(args []*node, ops []string, v int) ([]interval, bool) {
	neg := func(n *node) *node { return &node{kind: nNeg, args: []*node{n}, height: n.height + 1} }
	switch {
	case len(args) == 3 && v == 1:
		lo, hi := args[0], args[2]
		loClosed, hiClosed := ops[0] == "<=", ops[1] == "<="
		return []interval{{neg(hi), neg(lo), hiClosed, loClosed}, {lo, hi, loClosed, hiClosed}}, true
	case len(args) == 2 && v == 0 && ops[0] != "!=":
		hi := args[1]
		return []interval{{neg(hi), hi, ops[0] == "<=", ops[0] == "<="}}, true
	case len(args) == 2 && v == 1 && ops[0] != "!=":
		lo := args[0]
		return []interval{{negInf(), neg(lo), false, ops[0] == "<="}, {lo, posInf(), ops[0] == "<=", false}}, true
	}
	return nil, false
}

func (c *comparer) intervalsEqual(gs, ps []interval) (bool, error) {
	return sameBy(gs, ps, func(g, p interval) (bool, error) {
		if !g.lo.isInf() && g.loClosed != p.loClosed || !g.hi.isInf() && g.hiClosed != p.hiClosed {
			return false, nil
		}
		if ok, err := c.equal(g.lo, p.lo); err != nil || !ok {
			return false, err
		}
		return c.equal(g.hi, p.hi)
	})
}

// varNames returns the names of the free variables of g and p, sorted.
func varNames(g, p *node) []string {
	var names []string
	collectVars(g, &names)
	collectVars(p, &names)
	slices.Sort(names)
	return slices.Compact(names)
}

func collectVars(n *node, names *[]string) {
	if n.kind == nVar {
		*names = append(*names, n.name)
	}
	for _, a := range n.args {
		collectVars(a, names)
	}
}

// boundVars returns the free variables of the bounds of the sums and
// products in g and p (n in \sum_{k=1}^{n}): they take integer values.
func boundVars(g, p *node) []string {
	var names []string
	var walk func(n *node)
	walk = func(n *node) {
		if n.kind == nSum || n.kind == nProd {
			collectVars(n.args[1], &names)
			collectVars(n.args[2], &names)
		}
		for _, a := range n.args {
			walk(a)
		}
	}
	walk(g)
	walk(p)
	return names
}

// point returns the k-th sample point for the variables names. Each
// variable's value depends only on its name and k (a fixed hash, no
// global random state), so checks are deterministic and a variable has the
// same value in the gold and in the prediction. The first points are in
// [0.5, 2.5), then two in (-2.5, -0.5] (|x| is not x), then one in [3, 10);
// a variable among ints (a bound of a sum) is an integer in [1, 9].
func point(names, ints []string, k int) *env {
	vals := make([]float64, len(names))
	for i, name := range names {
		h := fnv.New64a()
		h.Write([]byte(name))
		u := float64(splitmix(h.Sum64()^uint64(k+1)*0x9E3779B97F4A7C15)>>11) / (1 << 53)
		switch {
		case slices.Contains(ints, name):
			vals[i] = 1 + math.Floor(9*u)
		case k < 3:
			vals[i] = 0.5 + 2*u
		case k < 5:
			vals[i] = -0.5 - 2*u
		default:
			vals[i] = 3 + 7*u
		}
	}
	return &env{names: names, vals: vals}
}

func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// textReplacer deletes from a TeX answer what does not change it: white
// space, spacing and sizing commands, math delimiters, degree and percent
// signs; and it writes \dfrac and \tfrac as \frac. It is safe for
// concurrent use.
var textReplacer = strings.NewReplacer(
	" ", "", "\n", "", "\t", "", "\r", "", "~", "",
	`\,`, "", `\!`, "", `\;`, "", `\:`, "", `\ `, "", `\$`, "", "$", "",
	`\left`, "", `\right`, "", `\displaystyle`, "",
	`\dfrac`, `\frac`, `\tfrac`, `\frac`,
	`^\circ`, "", `^{\circ}`, "", `\%`, "", "%", "",
)

// normalizeText returns the text an answer that cannot be read is compared
// by: textReplacer's deletions, then no trailing period and no \text{…},
// \mathrm{…} or {…} around the whole. It costs a step per 8 bytes.
func normalizeText(s string, b *budget) (string, error) {
	if err := b.spend(len(s)/8 + 1); err != nil {
		return "", err
	}
	s = strings.TrimRight(textReplacer.Replace(s), ".")
	for {
		inner := s
		for _, cmd := range []string{`\text`, `\textbf`, `\mathrm`, `\mbox`, ""} {
			if rest, ok := strings.CutPrefix(s, cmd+"{"); ok && strings.HasSuffix(rest, "}") && balanced(rest[:len(rest)-1]) {
				inner = rest[:len(rest)-1]
				break
			}
		}
		if inner == s {
			return s, nil
		}
		s = inner
	}
}

// balanced reports whether the braces of s pair up.
func balanced(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// simplified reports whether an answer is in simplest form (see
// Params.RequireSimplified): no operation on numbers alone left to carry
// out, and fractions of integers in lowest terms.
func simplified(n *node) bool {
	if n.kind != nNum && onlyNumbers(n) {
		switch n.kind {
		case nNeg:
			return simplified(n.args[0])
		case nDiv:
			return lowestTerms(n)
		case nAdd: // a mixed number: 2\frac{1}{2}
			a, f := n.args[0], n.args[1]
			return isInteger(a) && a.val.Sign() > 0 && lowestTerms(f) && f.args[0].kind == nNum &&
				f.args[0].val.Cmp(f.args[1].val) < 0
		}
		return false
	}
	for _, a := range n.args {
		if !simplified(a) {
			return false
		}
	}
	return true
}

// onlyNumbers reports whether n is arithmetic on number literals only.
func onlyNumbers(n *node) bool {
	switch n.kind {
	case nNum:
		return true
	case nAdd, nSub, nMul, nDiv, nPow, nNeg:
		for _, a := range n.args {
			if !onlyNumbers(a) {
				return false
			}
		}
		return true
	}
	return false
}

// lowestTerms reports whether n is a fraction of integers (the numerator
// possibly negated) in lowest terms, with a denominator above 1.
func lowestTerms(n *node) bool {
	if n.kind != nDiv {
		return false
	}
	num, den := n.args[0], n.args[1]
	if num.kind == nNeg {
		num = num.args[0]
	}
	if !isInteger(num) || !isInteger(den) || den.val.Cmp(big.NewRat(1, 1)) <= 0 {
		return false
	}
	return new(big.Int).GCD(nil, nil, new(big.Int).Abs(num.val.Num()), den.val.Num()).Cmp(big.NewInt(1)) == 0
}

// isInteger reports whether n is an integer literal written in base 10.
func isInteger(n *node) bool {
	return n.kind == nNum && n.base == 0 && n.val != nil && n.val.IsInt() && !strings.Contains(n.name, ".")
}
