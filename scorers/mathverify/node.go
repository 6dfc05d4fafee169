package mathverify

import (
	"math/big"
	"strings"
)

// kind is the kind of a syntax node.
type kind uint8

// Scalar kinds (an arithmetic expression) come first, structures after
// nScalarEnd.
const (
	nNum   kind = iota // val; name is the literal as lexed ("0.50", "52_{8}"), base its base if written
	nVar               // name: "x", "x_1", "alpha"
	nConst             // name: "pi", "e", "inf"
	nAdd
	nSub
	nMul
	nDiv
	nPow
	nNeg
	nPM    // a ± b (two args) or ± a (one)
	nMP    // a ∓ b or ∓ a
	nFunc  // name(args[0]); args[1], when present, is the base of a log
	nSqrt  // √args[0]
	nRoot  // args[1]-th root of args[0]
	nAbs   // |args[0]|
	nFloor // ⌊args[0]⌋
	nCeil  // ⌈args[0]⌉
	nFact  // args[0]!
	nBinom // C(args[0], args[1])
	nSum   // Σ args[0] for the variable name from args[1] to args[2] (integers)
	nProd  // Π, likewise
	nScalarEnd

	nList    // a bare comma list, "1, 2": several answers, order does not matter
	nSet     // \{a, b\}; also what a ± expands to
	nBracket // (a, b), [a, b), … : open and close say which; a tuple or an interval; a matrix when cols > 0
	nUnion   // A ∪ B
	nRel     // a chain args[0] ops[0] args[1] ops[1] …, ops in = < > <= >= != in
	nText    // name: an answer in words ("Monday"), compared in any case
	nReals   // ℝ, the interval (-∞, ∞)
	nRatio   // args[0]:args[1]:…; a clock time when name is "am" or "pm"
)

// node is a node of the syntax tree of an answer. Trees are built once per
// check and never shared between goroutines.
type node struct {
	kind        kind
	name        string
	val         *big.Rat // nNum
	f           float64  // nNum: val as a float64
	args        []*node
	ops         []string // nRel
	open, close byte     // nBracket: '(' or '[', ')' or ']'
	base        uint8    // nNum written in a base (52_8): the base; else 0
	cols        uint16   // nBracket read from a matrix: its columns, the entries row by row (open and close are '(' and ')')
	height      int      // 1 + the height of the tallest child

	// exact caches the value of a scalar without free variables once the
	// evaluator has computed it: a gold element is compared with every
	// predicted one. Trees belong to one check, so this needs no lock.
	exact     value
	exactMag  float64 // the largest magnitude met evaluating it (see evaluator)
	evaluated bool
}

func (n *node) isScalar() bool { return n.kind < nScalarEnd }

// hasVars reports whether a free variable occurs in n.
func (n *node) hasVars() bool {
	if n.kind == nVar {
		return true
	}
	for _, a := range n.args {
		if a.hasVars() {
			return true
		}
	}
	return false
}

// isInf reports whether n is ∞ or -∞.
func (n *node) isInf() bool {
	if n.kind == nNeg {
		n = n.args[0]
	}
	return n.kind == nConst && n.name == "inf"
}

// String writes n back as LaTeX that parses to the same tree: for messages,
// for the last resort comparison of two expressions that cannot be evaluated,
// and for the parser's round-trip fuzz test.
func (n *node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

var opText = [...]string{nAdd: "+", nSub: "-", nMul: `\cdot `, nDiv: "/", nPow: "^"}

func (n *node) write(b *strings.Builder) {
	switch n.kind {
	case nNum, nVar, nConst, nText, nReals:
		n.writeLeaf(b)
	case nAdd, nSub, nMul, nDiv, nPow, nNeg, nPM, nMP, nFact:
		n.writeOperation(b)
	case nFunc, nSqrt, nRoot, nAbs, nFloor, nCeil, nBinom:
		n.writeFunction(b)
	case nSum, nProd:
		b.WriteString(map[kind]string{nSum: `(\sum_{`, nProd: `(\prod_{`}[n.kind] + n.name + "=")
		n.args[1].write(b)
		b.WriteString("}^{")
		n.args[2].write(b)
		b.WriteString("} ")
		n.args[0].write(b)
		b.WriteByte(')')
	case nList:
		writeList(b, "", n.args, "")
	case nSet:
		writeList(b, `\{`, n.args, `\}`)
	case nBracket:
		if n.cols > 0 {
			n.writeMatrix(b)
			return
		}
		writeList(b, string(n.open), n.args, string(n.close))
	case nUnion:
		writeJoined(b, n.args, func(int) string { return ` \cup ` })
	case nRel:
		writeJoined(b, n.args, func(i int) string {
			if op := n.ops[i-1]; op != "in" {
				return " " + op + " "
			}
			return ` \in `
		})
	case nRatio:
		writeJoined(b, n.args, func(int) string { return ":" })
		if n.name != "" {
			b.WriteString(" " + n.name)
		}
	}
}

// writeLeaf writes a node without arguments: a number, variable, constant,
// text or the reals.
func (n *node) writeLeaf(b *strings.Builder) {
	switch n.kind {
	case nNum:
		if n.name == "" {
			b.WriteString(n.val.RatString())
		}
		b.WriteString(n.name)
	case nVar:
		name, sub, ok := strings.Cut(n.name, "_")
		if greek[name] {
			b.WriteByte('\\')
		}
		b.WriteString(name)
		if ok {
			b.WriteString("_{" + sub + "}")
		}
	case nConst:
		b.WriteString(map[string]string{"pi": `\pi `, "e": "e", "inf": `\infty `}[n.name])
	case nText:
		b.WriteString(`\text{` + n.name + "}")
	case nReals:
		b.WriteString(`\mathbb{R}`)
	}
}

// writeOperation writes an arithmetic operation in parentheses.
func (n *node) writeOperation(b *strings.Builder) {
	switch n.kind {
	case nAdd, nSub, nMul, nDiv, nPow:
		b.WriteByte('(')
		n.args[0].write(b)
		b.WriteString(opText[n.kind])
		if n.kind == nPow {
			b.WriteByte('{')
			n.args[1].write(b)
			b.WriteByte('}')
		} else {
			n.args[1].write(b)
		}
		b.WriteByte(')')
	case nNeg, nPM, nMP:
		b.WriteString(map[kind]string{nNeg: "(-", nPM: `(\pm `, nMP: `(\mp `}[n.kind])
		if len(n.args) == 2 {
			n.args[0].write(b)
			b.WriteString(map[kind]string{nPM: `\pm `, nMP: `\mp `}[n.kind])
			n.args[1].write(b)
		} else {
			n.args[0].write(b)
		}
		b.WriteByte(')')
	case nFact:
		b.WriteByte('(')
		n.args[0].write(b)
		b.WriteString(")!")
	}
}

// writeFunction writes a named function, a root, or a bracketing function
// (absolute value, floor, ceiling, binomial).
func (n *node) writeFunction(b *strings.Builder) {
	switch n.kind {
	case nFunc:
		b.WriteString(`\` + n.name)
		if len(n.args) == 2 {
			b.WriteString("_{")
			n.args[1].write(b)
			b.WriteByte('}')
		}
		b.WriteByte('(')
		n.args[0].write(b)
		b.WriteByte(')')
	case nSqrt:
		writeCommand(b, `\sqrt`, n.args...)
	case nRoot:
		b.WriteString(`\sqrt[`)
		n.args[1].write(b)
		b.WriteByte(']')
		writeCommand(b, "", n.args[0])
	case nAbs:
		writeCommand(b, `\left|`, n.args[0])
		b.WriteString(`\right|`)
	case nFloor:
		writeCommand(b, `\lfloor`, n.args[0])
		b.WriteString(`\rfloor `)
	case nCeil:
		writeCommand(b, `\lceil`, n.args[0])
		b.WriteString(`\rceil `)
	case nBinom:
		writeCommand(b, `\binom`, n.args...)
	}
}

// writeJoined writes args with sep(i) before the i-th of them, i ≥ 1.
func writeJoined(b *strings.Builder, args []*node, sep func(i int) string) {
	for i, a := range args {
		if i > 0 {
			b.WriteString(sep(i))
		}
		a.write(b)
	}
}

// writeCommand writes a command with its arguments in braces.
func writeCommand(b *strings.Builder, cmd string, args ...*node) {
	b.WriteString(cmd)
	for _, a := range args {
		b.WriteByte('{')
		a.write(b)
		b.WriteByte('}')
	}
}

func writeList(b *strings.Builder, open string, args []*node, close string) {
	b.WriteString(open)
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		a.write(b)
	}
	b.WriteString(close)
}

// writeMatrix writes a matrix as a pmatrix environment.
func (n *node) writeMatrix(b *strings.Builder) {
	b.WriteString(`\begin{pmatrix}`)
	for i, a := range n.args {
		switch {
		case i == 0:
		case i%int(n.cols) == 0:
			b.WriteString(` \\ `)
		default:
			b.WriteString(" & ")
		}
		a.write(b)
	}
	b.WriteString(`\end{pmatrix}`)
}
