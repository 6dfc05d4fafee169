package rematch

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// scanner matches the patterns of one shape without an automaton, with
// Go's regexp's leftmost-first semantics: an alternation (or a single
// branch) whose branches are each a sequence of ASCII literals, ASCII
// classes, greedy repetitions of a class that nothing after them could
// give back a byte to, and the assertions ^ $ \A \z \b \B. open-r1's
// reasoning_steps pattern, `(Step \d+:|^\d+\.|\n-|\n\*|First,|…)`, is one.
//
// Each branch finds its candidates with strings.Index on the literal it
// starts with (or at line starts, after ^), and checks one in a single
// pass: a branch of this shape has at most one way to match at a place. A
// match is the leftmost of the branches' next matches, the first branch on
// a tie, as Go's regexp prefers; every branch consumes at least one byte,
// so there are no empty matches to step over.
//
// Every byte a scanner compares is ASCII, and Go's regexp, which reads
// invalid UTF-8 a byte at a time, never reads an ASCII byte as part of
// another rune: a scanner matches any text, valid UTF-8 or not, as Go's
// regexp does.
type scanner struct {
	branches []branch
}

type branch struct {
	items []item
	// Where its matches can start: at the text's start (text); at an
	// occurrence of lead; at a line start (line).
	lead       string
	line, text bool
}

type itemKind uint8

const (
	itemLiteral itemKind = iota
	itemClass
	itemAssert
)

// item is one step of a branch: literal text, a class repeated min to max
// times (max -1: no bound) taking as many as it can, or an assertion.
type item struct {
	kind     itemKind
	lit      string
	set      *[256]bool
	min, max int
	op       syntax.Op
}

// newScanner returns a scanner for tree, or nil when tree is not of the
// scanner's shape.
func newScanner(tree *syntax.Regexp) *scanner {
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	alts := []*syntax.Regexp{tree}
	if tree.Op == syntax.OpAlternate {
		alts = tree.Sub
	}
	sc := &scanner{}
	for _, alt := range alts {
		b, ok := newBranch(alt)
		if !ok {
			return nil
		}
		sc.branches = append(sc.branches, b)
	}
	return sc
}

func newBranch(re *syntax.Regexp) (branch, bool) {
	var b branch
	if !appendItems(&b.items, re) {
		return b, false
	}
	width := 0
	for i, it := range b.items {
		switch it.kind {
		case itemLiteral:
			width += len(it.lit)
		case itemClass:
			width += it.min
			if it.min != it.max && !givesNothingBack(it, b.items[i+1:]) {
				return b, false
			}
		}
	}
	if width == 0 {
		return b, false // it could match empty text
	}
	// The first consuming item says where matches can start.
	for _, it := range b.items {
		switch {
		case it.kind == itemAssert && it.op == syntax.OpBeginLine:
			b.line = true
		case it.kind == itemAssert && it.op == syntax.OpBeginText:
			b.text = true
		case it.kind == itemLiteral:
			b.lead = it.lit
		case it.kind == itemClass && it.min >= 1:
			b.lead = onlyByte(it.set) // x+ starts with x
		}
		if it.kind != itemAssert {
			break
		}
	}
	return b, b.lead != "" || b.line || b.text
}

// givesNothingBack reports whether a greedy repetition followed by rest
// matches only by taking all it can: rest starts with a literal or class
// none of whose first bytes the repetition takes, with $ (the repetition
// takes no newline), with \z, or is empty.
func givesNothingBack(rep item, rest []item) bool {
	if len(rest) == 0 {
		return true
	}
	switch next := rest[0]; {
	case next.kind == itemLiteral:
		return !rep.set[next.lit[0]]
	case next.kind == itemClass && next.min >= 1:
		for c, in := range next.set {
			if in && rep.set[c] {
				return false
			}
		}
		return true
	case next.kind == itemAssert && next.op == syntax.OpEndLine:
		return !rep.set['\n']
	case next.kind == itemAssert && next.op == syntax.OpEndText:
		return true
	}
	return false
}

// appendItems appends re's items to *items, or returns false when re is
// not of the scanner's shape.
func appendItems(items *[]item, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return true
	case syntax.OpCapture:
		return appendItems(items, re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !appendItems(items, sub) {
				return false
			}
		}
		return true
	case syntax.OpLiteral:
		lit, ok := asciiLiteral(re)
		if !ok {
			return false
		}
		if n := len(*items); n > 0 && (*items)[n-1].kind == itemLiteral {
			(*items)[n-1].lit += lit
		} else {
			*items = append(*items, item{kind: itemLiteral, lit: lit})
		}
		return true
	case syntax.OpCharClass:
		set, ok := asciiSet(re)
		if ok {
			*items = append(*items, item{kind: itemClass, set: set, min: 1, max: 1})
		}
		return ok
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if re.Flags&syntax.NonGreedy != 0 {
			return false
		}
		set, ok := asciiSet(re.Sub[0])
		if !ok {
			return false
		}
		it := item{kind: itemClass, set: set, min: re.Min, max: re.Max}
		switch re.Op {
		case syntax.OpStar:
			it.min, it.max = 0, -1
		case syntax.OpPlus:
			it.min, it.max = 1, -1
		case syntax.OpQuest:
			it.min, it.max = 0, 1
		}
		*items = append(*items, it)
		return true
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		*items = append(*items, item{kind: itemAssert, op: re.Op})
		return true
	}
	return false
}

// asciiLiteral returns a literal's text when it is ASCII and not
// case-folded (folding pairs k with the Kelvin sign, s with ſ).
func asciiLiteral(re *syntax.Regexp) (string, bool) {
	if re.Flags&syntax.FoldCase != 0 {
		return "", false
	}
	b := make([]byte, 0, len(re.Rune))
	for _, r := range re.Rune {
		if r >= utf8.RuneSelf {
			return "", false
		}
		b = append(b, byte(r))
	}
	return string(b), len(b) > 0
}

// asciiSet returns the bytes a one-character item matches, when all are
// ASCII: a class, or a literal of one rune.
func asciiSet(re *syntax.Regexp) (*[256]bool, bool) {
	set := new([256]bool)
	switch re.Op {
	case syntax.OpLiteral:
		lit, ok := asciiLiteral(re)
		if !ok || len(lit) != 1 {
			return nil, false
		}
		set[lit[0]] = true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1] >= utf8.RuneSelf {
				return nil, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set[r] = true
			}
		}
	default:
		return nil, false
	}
	return set, true
}

// onlyByte returns the one byte in set as a string, or "".
func onlyByte(set *[256]bool) string {
	only := ""
	for c, in := range set {
		if in {
			if only != "" {
				return ""
			}
			only = string(rune(c))
		}
	}
	return only
}

// at returns the end of the branch's match starting at p, if there is one.
func (b *branch) at(s string, p int) (end int, ok bool) {
	i := p
	for _, it := range b.items {
		switch it.kind {
		case itemLiteral:
			if !strings.HasPrefix(s[i:], it.lit) {
				return 0, false
			}
			i += len(it.lit)
		case itemClass:
			n := 0
			for (it.max < 0 || n < it.max) && i+n < len(s) && it.set[s[i+n]] {
				n++
			}
			if n < it.min {
				return 0, false
			}
			i += n
		case itemAssert:
			if !holdsAt(it.op, s, i) {
				return 0, false
			}
		}
	}
	return i, true
}

// holdsAt reports whether the assertion op holds at i in s.
func holdsAt(op syntax.Op, s string, i int) bool {
	switch op {
	case syntax.OpBeginLine:
		return i == 0 || s[i-1] == '\n'
	case syntax.OpEndLine:
		return i == len(s) || s[i] == '\n'
	case syntax.OpBeginText:
		return i == 0
	case syntax.OpEndText:
		return i == len(s)
	}
	boundary := (i > 0 && isWordByte(s[i-1])) != (i < len(s) && isWordByte(s[i]))
	return boundary == (op == syntax.OpWordBoundary)
}

// isWordByte is Go's regexp's word character, [0-9A-Za-z_]; no other rune
// is one, so a byte of a multi-byte or invalid sequence is not.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// candidate returns the first place at or after from where the branch's
// match can start, or -1.
func (b *branch) candidate(s string, from int) int {
	switch {
	case from > len(s):
		return -1
	case b.text:
		if from == 0 {
			return 0
		}
		return -1
	case b.lead != "":
		if i := strings.Index(s[from:], b.lead); i >= 0 {
			return from + i
		}
		return -1
	default: // b.line
		if from == 0 {
			return 0
		}
		if i := strings.IndexByte(s[from-1:], '\n'); i >= 0 {
			return from + i
		}
		return -1
	}
}

// next returns the branch's first match starting at or after from, or
// start -1.
func (b *branch) next(s string, from int) (start, end int) {
	for p := b.candidate(s, from); p >= 0; p = b.candidate(s, p+1) {
		if e, ok := b.at(s, p); ok {
			return p, e
		}
	}
	return -1, -1
}

// MatchString reports whether s holds a match.
func (sc *scanner) MatchString(s string) bool {
	for i := range sc.branches {
		if start, _ := sc.branches[i].next(s, 0); start >= 0 {
			return true
		}
	}
	return false
}

// FindAllStringIndex is regexp.Regexp's: the first n (all when n < 0)
// leftmost-first matches, nil when there is none.
func (sc *scanner) FindAllStringIndex(s string, n int) [][]int {
	if n < 0 {
		n = len(s) + 1
	}
	var out [][]int
	// next[k] is branch k's first match at or after the last match's end
	// (start -1: none), found lazily.
	type match struct{ start, end int }
	next := make([]match, len(sc.branches))
	for k := range next {
		next[k].start = -2 // not looked for yet
	}
	from := 0
	for len(out) < n {
		best := -1
		for k := range sc.branches {
			m := &next[k]
			if m.start == -2 || m.start >= 0 && m.start < from {
				m.start, m.end = sc.branches[k].next(s, from)
			}
			if m.start >= 0 && (best < 0 || m.start < next[best].start) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		out = append(out, []int{next[best].start, next[best].end})
		from = next[best].end
	}
	return out
}
