package regex

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rewardd/rewardd/scorers/rematch"
)

// check decides whether a text holds a match of one pattern. It derives from
// the pattern's syntax tree literal strings that every match must contain, and
// tests them with the strings package first: most texts that do not match are
// rejected without running the regexp engine, and those that may match are
// narrowed to the part where the matches lie.
type check struct {
	// re is the pattern compiled; exists may rewrite it first (see trimRepeats).
	re *rematch.Regexp
	// begin and end report that every match starts at the start of the text
	// (\A, or ^ without the m flag) or ends at its end (\z, $ without m).
	begin, end bool
	// prefix is what the text must start with when begin is set; suffix is
	// what it must end with when end is set.
	prefix, suffix string
	// lead is, when the pattern is not anchored at the start, a literal every
	// match starts with: the text before its first occurrence can be skipped.
	lead string
	// need is a literal every match contains ("" when none is known, or when
	// the checks above already imply it).
	need string
	// literal reports that the pattern is its anchors around exactly the text
	// lit: the string checks decide alone and re is not needed.
	literal bool
	lit     string
	// starts, when the pattern is an alternation with no lead (open-r1's
	// `(Step \d+:|^\d+\.|\n-|…)`), says where each branch's matches can
	// begin: no match starts before the first such place.
	starts *starts
}

// starts are the places where the matches of a top-level alternation can
// begin: at an occurrence of one of lits, or (lineClass non-nil) at a line
// start whose first byte is in lineClass.
type starts struct {
	lits      []string
	lineClass *[256]bool
}

// first returns the first place in s where a match can begin, or -1.
func (st *starts) first(s string) int {
	best := -1
	for _, lit := range st.lits {
		hay := s
		if best >= 0 {
			hay = s[:min(len(s), best+len(lit)-1)]
		}
		if i := strings.Index(hay, lit); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if st.lineClass != nil {
		for i := 0; i < len(s) && (best < 0 || i < best); {
			if st.lineClass[s[i]] {
				return i
			}
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
		}
	}
	return best
}

// maxStartLits bounds the literals of starts: each costs a scan.
const maxStartLits = 16

// alternationStarts derives starts for items whose first item is an
// alternation, or returns nil. Each branch must begin with literal text
// (small character classes are expanded: \n[*-] is "\n*" or "\n-") or with
// ^ (the m flag) then a byte class. The caller makes sure the pattern holds
// no \A: cutting the text at a line start would make \A true there.
func alternationStarts(items []*syntax.Regexp) *starts {
	if len(items) == 0 || items[0].Op != syntax.OpAlternate {
		return nil
	}
	st := &starts{}
	for _, branch := range items[0].Sub {
		b := flatten(branch, nil)
		if len(b) > 0 && b[0].Op == syntax.OpBeginLine {
			class, ok := firstBytes(b[1:])
			if !ok {
				return nil
			}
			if st.lineClass == nil {
				st.lineClass = new([256]bool)
			}
			for c, in := range class {
				st.lineClass[c] = st.lineClass[c] || in
			}
			continue
		}
		lits := []string{""}
		for _, it := range b {
			next, whole := expand(it)
			if len(next) == 0 || len(lits)*len(next) > maxStartLits {
				break
			}
			var grown []string
			for _, l := range lits {
				for _, n := range next {
					grown = append(grown, l+n)
				}
			}
			lits = grown
			if !whole {
				break
			}
		}
		if lits[0] == "" {
			return nil
		}
		st.lits = append(st.lits, lits...)
		if len(st.lits) > maxStartLits {
			return nil
		}
	}
	return st
}

// expand returns the texts re can start with when it is a literal, a small
// ASCII class or a repetition of one at least once, and whether re matches
// exactly one of them.
func expand(re *syntax.Regexp) (texts []string, whole bool) {
	if s, ok := exact(re, true); ok {
		if s == "" {
			return nil, false
		}
		return []string{s}, true
	}
	switch re.Op {
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r >= utf8.RuneSelf || len(out) == 4 {
					return nil, false
				}
				out = append(out, string(r))
			}
		}
		return out, true
	case syntax.OpPlus:
		t, _ := expand(re.Sub[0])
		return t, false
	case syntax.OpRepeat:
		if re.Min >= 1 {
			t, _ := expand(re.Sub[0])
			return t, false
		}
	case syntax.OpCapture:
		return expand(re.Sub[0])
	}
	return nil, false
}

// firstBytes returns the bytes a match of the concatenation of items can
// start with, when that is an ASCII literal or class (possibly repeated).
func firstBytes(items []*syntax.Regexp) (class [256]bool, ok bool) {
	if len(items) == 0 {
		return class, false
	}
	re := items[0]
	for re.Op == syntax.OpPlus || re.Op == syntax.OpCapture || re.Op == syntax.OpRepeat && re.Min >= 1 {
		re = re.Sub[0]
	}
	switch {
	case re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0 && len(re.Rune) > 0 && re.Rune[0] < utf8.RuneSelf:
		class[re.Rune[0]] = true
		return class, true
	case re.Op == syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1] >= utf8.RuneSelf {
				return class, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				class[r] = true
			}
		}
		return class, true
	}
	return class, false
}

// holds reports whether re contains an op node.
func holds(re *syntax.Regexp, op syntax.Op) bool {
	if re.Op == op {
		return true
	}
	for _, sub := range re.Sub {
		if holds(sub, op) {
			return true
		}
	}
	return false
}

// newCheck compiles tree and derives its literal checks. With exists set, the
// check answers only whether a match exists, which allows rewriting the
// pattern first (trimRepeats); without it, the check's re finds the same
// matches as tree. compile is rematch.Compile or, for a pattern a request
// brought, rematch.CompileStd.
func newCheck(tree *syntax.Regexp, exists bool, compile func(*syntax.Regexp) (*rematch.Regexp, error)) (*check, error) {
	items := flatten(tree, nil)
	if exists {
		items = trimRepeats(items)
	}
	c := analyze(items)
	if exists {
		tree = concat(items)
	}
	re, err := compile(tree)
	if err != nil {
		return nil, err
	}
	c.re = re
	return c, nil
}

// exists reports whether s holds a match.
func (c *check) exists(s string) bool {
	if c.literal {
		switch {
		case c.begin && c.end:
			return s == c.lit
		case c.begin:
			return strings.HasPrefix(s, c.lit)
		case c.end:
			return strings.HasSuffix(s, c.lit)
		default:
			return strings.Contains(s, c.lit)
		}
	}
	s, ok := c.narrow(s)
	return ok && c.re.MatchString(s)
}

// count returns the number of non-overlapping matches in s, counting at most
// n. c must have been built without exists.
func (c *check) count(s string, n int) int {
	if c.literal && !c.begin && !c.end && c.lit != "" {
		return min(n, strings.Count(s, c.lit))
	}
	s, ok := c.narrow(s)
	if !ok {
		return 0
	}
	return len(c.re.FindAllStringIndex(s, n))
}

// narrow applies the literal checks to s. It returns ok=false when s cannot
// hold a match, and otherwise the suffix of s that holds all the matches.
func (c *check) narrow(s string) (_ string, ok bool) {
	if c.begin && !strings.HasPrefix(s, c.prefix) || c.end && !strings.HasSuffix(s, c.suffix) {
		return s, false
	}
	if c.lead != "" {
		// Every match starts with lead, so none starts before its first
		// occurrence; lead's first rune makes every zero-width assertion in
		// the pattern look only at text at or after that occurrence.
		i := strings.Index(s, c.lead)
		if i < 0 {
			return s, false
		}
		s = s[i:]
	}
	if c.need != "" && !strings.Contains(s, c.need) {
		return s, false
	}
	if c.starts != nil {
		// No match begins before i. Cut at the start of i's line: ^, \b
		// and \B see the same there as in the whole text (a newline
		// before, or nothing); the pattern has no \A.
		i := c.starts.first(s)
		if i < 0 {
			return s, false
		}
		s = s[strings.LastIndexByte(s[:i], '\n')+1:]
	}
	return s, true
}

// analyze derives the literal checks for the concatenation of items.
func analyze(items []*syntax.Regexp) *check {
	c := new(check)
	// Leading and trailing zero-width assertions hold at the match's ends.
	// When every item is zero-width, the match is empty and both runs are
	// the whole list.
	i, j := 0, len(items)
	for i < len(items) && zeroWidth(items[i]) {
		c.begin = c.begin || items[i].Op == syntax.OpBeginText
		i++
	}
	for j > 0 && zeroWidth(items[j-1]) {
		c.end = c.end || items[j-1].Op == syntax.OpEndText
		j--
	}
	if c.begin {
		c.prefix = head(items[i:])
	} else if len(items) > 0 {
		if s, _ := affix(items[0], true); s != "" {
			c.lead = head(items)
		}
	}
	if c.end {
		c.suffix = tail(items[:j])
	}
	if !c.begin && c.lead == "" && i < j {
		if !holds(concat(items), syntax.OpBeginText) {
			c.starts = alternationStarts(items[i:j])
		}
	}
	c.lit, c.literal = literal(items)
	c.need = required(concat(items))
	if strings.Contains(c.prefix, c.need) || strings.Contains(c.suffix, c.need) || strings.Contains(c.lead, c.need) {
		c.need = ""
	}
	return c
}

// literal reports whether items are some \A, then literal text, then some
// \z, and returns the text.
func literal(items []*syntax.Regexp) (string, bool) {
	for len(items) > 0 && items[0].Op == syntax.OpBeginText {
		items = items[1:]
	}
	for len(items) > 0 && items[len(items)-1].Op == syntax.OpEndText {
		items = items[:len(items)-1]
	}
	var b strings.Builder
	for _, it := range items {
		s, ok := exact(it, true)
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return b.String(), true
}

// trimRepeats rewrites a concatenation whose matches are only tested for
// existence. A repetition at an unanchored end can match less: x* and x? go,
// x+ becomes x and x{n,m} becomes x{n} (if x+y matches, so does the last x
// with y). At an end anchored by \A or \z only (?s:.*) and (?s:.+) can: they
// match any text, so they and the anchors go ((?s:.+) leaves (?s:.), at least
// one more character). So `(?s)^.*\n#### .+$` in match mode is searched as
// `(?s:\n#### .)`, and `\s*####` as `####`.
func trimRepeats(items []*syntax.Regexp) []*syntax.Regexp {
	items = slices.Clone(items)
	// The start.
	i := 0
	for i < len(items) && items[i].Op == syntax.OpBeginText {
		i++
	}
	for i < len(items) && (i == 0 || anyRun(items[i])) {
		less, ok := shorten(items[i])
		if !ok {
			break
		}
		items = append(less, items[i+1:]...)
		i = 0
		if len(less) > 0 {
			break
		}
	}
	// The end.
	j := len(items)
	for j > 0 && items[j-1].Op == syntax.OpEndText {
		j--
	}
	for j > 0 && (j == len(items) || anyRun(items[j-1])) {
		less, ok := shorten(items[j-1])
		if !ok {
			break
		}
		items = append(items[:j-1:j-1], less...)
		j = len(items)
		if len(less) > 0 {
			break
		}
	}
	return items
}

// shorten returns what repetition re can be cut down to when only the
// existence of a match matters: nothing for x* and x?, x for x+, x{n} for
// x{n,m}. ok is false when re is not a repetition.
func shorten(re *syntax.Regexp) (less []*syntax.Regexp, ok bool) {
	switch re.Op {
	case syntax.OpStar, syntax.OpQuest:
		return nil, true
	case syntax.OpPlus:
		return []*syntax.Regexp{re.Sub[0]}, true
	case syntax.OpRepeat:
		switch {
		case re.Min == 0:
			return nil, true
		case re.Min == 1:
			return []*syntax.Regexp{re.Sub[0]}, true
		case re.Max != re.Min:
			exact := *re
			exact.Max = re.Min
			return []*syntax.Regexp{&exact}, true
		}
	}
	return nil, false
}

// anyRun reports whether re is (?s:.*) or (?s:.+), greedy or not: a run of
// any characters, newlines included.
func anyRun(re *syntax.Regexp) bool {
	return (re.Op == syntax.OpStar || re.Op == syntax.OpPlus) && re.Sub[0].Op == syntax.OpAnyChar
}

// flatten appends to out the items of re seen as a concatenation, looking
// through captures (which do not change what matches).
func flatten(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return flatten(re.Sub[0], out)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = flatten(sub, out)
		}
		return out
	case syntax.OpEmptyMatch:
		return out
	}
	return append(out, re)
}

func concat(items []*syntax.Regexp) *syntax.Regexp {
	if len(items) == 1 {
		return items[0]
	}
	if len(items) == 0 {
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: items}
}

// required returns the longest literal it can find that every match of re
// contains, or "". Concatenation: the longest of the children's literals and
// of the runs of text that adjacent children must start or end with (see
// affix); capture, plus, repeat at least once: the child's; alternation,
// star, quest, classes, case-folded letters: none.
func required(re *syntax.Regexp) string {
	if s, ok := exact(re, false); ok {
		return s
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		best, run := "", ""
		longest := func(s string) {
			if len(s) > len(best) {
				best = s
			}
		}
		for _, sub := range re.Sub {
			s, whole := affix(sub, false)
			run += s
			if whole {
				continue
			}
			longest(run)
			longest(required(sub))
			run = s
		}
		longest(run)
		return best
	}
	return ""
}

// head returns the text every match of the concatenation of items starts
// with: the exact items' text up to the first item that is not exact, plus
// what that item starts with.
func head(items []*syntax.Regexp) string {
	var b strings.Builder
	for _, it := range items {
		s, whole := affix(it, false)
		b.WriteString(s)
		if !whole {
			break
		}
	}
	return b.String()
}

// tail is head for the end of the matches.
func tail(items []*syntax.Regexp) string {
	i := len(items)
	for i > 0 {
		if _, whole := affix(items[i-1], false); !whole {
			break
		}
		i--
	}
	if i == 0 {
		return head(items)
	}
	s, _ := affix(items[i-1], false)
	return s + head(items[i:])
}

// affix returns text every match of re both starts and ends with, and whether
// re matches exactly that text: the text itself for an exact re; x repeated
// min times for x+ or x{min,max} with exact x and min ≥ 1; otherwise "".
func affix(re *syntax.Regexp, pure bool) (s string, whole bool) {
	if s, ok := exact(re, pure); ok {
		return s, true
	}
	switch re.Op {
	case syntax.OpCapture:
		return affix(re.Sub[0], pure)
	case syntax.OpPlus:
		s, _ := exact(re.Sub[0], pure)
		return s, false
	case syntax.OpRepeat:
		if s, ok := exact(re.Sub[0], pure); ok && re.Min >= 1 {
			return strings.Repeat(s, re.Min), false
		}
	}
	return "", false
}

// exact reports whether re matches exactly one string, and returns it. A
// zero-width assertion matches "" (it is then a constraint on the context, so
// it counts only when pure is false).
func exact(re *syntax.Regexp, pure bool) (string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return "", true
	case syntax.OpLiteral:
		return literalText(re)
	case syntax.OpCapture:
		return exact(re.Sub[0], pure)
	case syntax.OpConcat:
		var b strings.Builder
		for _, sub := range re.Sub {
			s, ok := exact(sub, pure)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), true
	case syntax.OpRepeat:
		if re.Min == re.Max {
			if s, ok := exact(re.Sub[0], pure); ok {
				return strings.Repeat(s, re.Min), true
			}
		}
	}
	if zeroWidth(re) {
		return "", !pure
	}
	return "", false
}

// literalText returns the UTF-8 text a literal node matches, if it matches
// only that byte string: not under case folding (unless no rune has another
// case), and no U+FFFD (which the engine also matches against invalid UTF-8).
func literalText(re *syntax.Regexp) (string, bool) {
	fold := re.Flags&syntax.FoldCase != 0
	for _, r := range re.Rune {
		if r == utf8.RuneError || !utf8.ValidRune(r) || fold && unicode.SimpleFold(r) != r {
			return "", false
		}
	}
	return string(re.Rune), true
}

func zeroWidth(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	return false
}
