// Package rematch runs a regular expression (RE2 syntax) with the semantics
// of Go's regexp package — the same matches, at the same positions, with the
// same submatches — on the fastest engine that takes it:
//
//   - a scanner of its own (scan.go) for alternations of literal-led
//     branches, the shape of open-r1's reasoning_steps pattern, in every
//     build;
//   - RE2's DFAs: through cgo when the binary is built with the re2_cgo tag
//     (and libre2, which `make deps` installs: Debian's libre2-dev; Engine
//     "re2"), and otherwise RE2 compiled to WebAssembly and translated to Go
//     by go-re2 (wasm2go: no cgo, no library; Engine "re2_wasm");
//   - Go's regexp for the rest, and for everything in a binary built with
//     the rematch_regexp tag (Engine "regexp").
//
// All take time linear in the text. Go's regexp runs its NFA (or a
// backtracker bounded to linear time) over every byte it searches, tens of
// nanoseconds a byte; RE2's DFA scans a byte in a nanosecond or two through
// cgo, a few times that as Go, and finds submatches only inside a match
// once the DFA has found its bounds.
//
// RE2 is given the pattern as Go's regexp/syntax parsed it, written out
// again with every class as explicit code point ranges and case folding as
// explicit classes (see re2Syntax): the two engines' Unicode tables and
// case-folding rules never come into it. A text that is not valid UTF-8
// (which Go's regexp reads as U+FFFD per bad byte, and RE2 does not) is
// matched with Go's regexp, and so is a pattern RE2 does not take.
package rematch

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Regexp is a compiled pattern. It is safe for concurrent use.
type Regexp struct {
	std *regexp.Regexp
	// fast is the same pattern on RE2, or nil.
	fast fastEngine
	// scan is the same pattern on the scanner, or nil: it finds the
	// matches (not the submatches) of any text when set.
	scan *scanner
}

// fastEngine is what Regexp needs of the RE2 engine: the methods of
// regexp.Regexp it calls, with the same results.
type fastEngine interface {
	MatchString(s string) bool
	FindAllStringIndex(s string, n int) [][]int
	FindAllStringSubmatchIndex(s string, n int) [][]int
}

// Compile compiles a pattern parsed by regexp/syntax (with the flags the
// caller chose).
func Compile(tree *syntax.Regexp) (*Regexp, error) {
	std, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, err
	}
	return withFast(std, tree), nil
}

// CompileStd is Compile without RE2: for patterns that come with requests
// (a row's pattern), whose RE2 programs could each hold up to RE2's memory
// limit (128 MiB in go-re2) outside the server's memory budget; Go's
// regexp and the scanner hold memory in proportion to the pattern.
func CompileStd(tree *syntax.Regexp) (*Regexp, error) {
	std, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, err
	}
	return &Regexp{std: std, scan: newScanner(tree)}, nil
}

// CompileString compiles pattern as regexp.Compile does (syntax.Perl); its
// String is pattern.
func CompileString(pattern string) (*Regexp, error) {
	std, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	return withFast(std, tree), nil
}

// withFast returns std with tree, the same pattern, compiled by RE2 where
// this build has it and RE2 takes the pattern.
func withFast(std *regexp.Regexp, tree *syntax.Regexp) *Regexp {
	r := &Regexp{std: std, scan: newScanner(tree)}
	if expr, ok := re2Syntax(tree); ok {
		r.fast = compileFast(expr)
	}
	return r
}

// Engine names the engine Regexps use when they can and the scanner
// cannot: "re2" (cgo), "re2_wasm" (RE2 as Go) or "regexp".
func Engine() string { return fastName }

// HasRE2 reports whether this build has RE2, through cgo or as Go: false
// only for a build with the rematch_regexp tag.
func HasRE2() bool { return fastName != "regexp" }

// Fast reports whether r runs on RE2 (for valid UTF-8 texts).
func (r *Regexp) Fast() bool { return r.fast != nil }

// Scanned reports whether r finds its matches with the scanner.
func (r *Regexp) Scanned() bool { return r.scan != nil }

// Std returns the pattern compiled by Go's regexp, for what does not depend
// on the text (SubexpIndex, NumSubexp, LiteralPrefix).
func (r *Regexp) Std() *regexp.Regexp { return r.std }

// engine returns what matches s.
func (r *Regexp) engine(s string) fastEngine {
	if r.fast != nil && utf8.ValidString(s) {
		return r.fast
	}
	return r.std
}

// MatchString reports whether s holds a match.
func (r *Regexp) MatchString(s string) bool {
	if r.scan != nil {
		return r.scan.MatchString(s)
	}
	return r.engine(s).MatchString(s)
}

// FindAllStringIndex is regexp.Regexp's.
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	if r.scan != nil {
		return r.scan.FindAllStringIndex(s, n)
	}
	return r.engine(s).FindAllStringIndex(s, n)
}

// FindAllStringSubmatchIndex is regexp.Regexp's.
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.engine(s).FindAllStringSubmatchIndex(s, n)
}

// String returns the pattern: CompileString's, or as regexp/syntax writes
// Compile's tree.
func (r *Regexp) String() string { return r.std.String() }

// re2Syntax writes tree in a syntax RE2 reads as Go's regexp reads tree:
// literals and classes as code points (\x{…}), case-folded literals as the
// class of their fold orbit, . and the assertions spelled out with their
// flags. ok is false for what it cannot write.
func re2Syntax(tree *syntax.Regexp) (string, bool) {
	var b strings.Builder
	ok := writeRE2(&b, tree)
	return b.String(), ok
}

// re2Fixed is the RE2 text of the operators that have no arguments, flags
// spelled out.
var re2Fixed = map[syntax.Op]string{
	syntax.OpNoMatch:        `[^\x00-\x{10FFFF}]`,
	syntax.OpEmptyMatch:     `(?:)`,
	syntax.OpAnyCharNotNL:   `[^\n]`,
	syntax.OpAnyChar:        `(?s:.)`,
	syntax.OpBeginLine:      `(?m:^)`,
	syntax.OpEndLine:        `(?m:$)`,
	syntax.OpBeginText:      `\A`,
	syntax.OpEndText:        `\z`,
	syntax.OpWordBoundary:   `\b`,
	syntax.OpNoWordBoundary: `\B`,
}

func writeRE2(b *strings.Builder, re *syntax.Regexp) bool {
	if text, ok := re2Fixed[re.Op]; ok {
		b.WriteString(text)
		return true
	}
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(`(?:`)
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				writeClass(b, foldOrbit(r))
			} else {
				writeRune(b, r)
			}
		}
		b.WriteString(`)`)
	case syntax.OpCharClass:
		writeClass(b, re.Rune)
	case syntax.OpCapture:
		b.WriteString(`(`)
		if !writeRE2(b, re.Sub[0]) {
			return false
		}
		b.WriteString(`)`)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return writeRepeat(b, re)
	case syntax.OpConcat, syntax.OpAlternate:
		b.WriteString(`(?:`)
		for i, sub := range re.Sub {
			if i > 0 && re.Op == syntax.OpAlternate {
				b.WriteString(`|`)
			}
			if !writeRE2(b, sub) {
				return false
			}
		}
		b.WriteString(`)`)
	default:
		return false
	}
	return true
}

// writeRepeat writes a repetition (*, +, ? or {m,n}) of re's one argument.
func writeRepeat(b *strings.Builder, re *syntax.Regexp) bool {
	b.WriteString(`(?:`)
	if !writeRE2(b, re.Sub[0]) {
		return false
	}
	b.WriteString(`)`)
	switch re.Op {
	case syntax.OpStar:
		b.WriteString(`*`)
	case syntax.OpPlus:
		b.WriteString(`+`)
	case syntax.OpQuest:
		b.WriteString(`?`)
	default:
		switch {
		case re.Max == -1:
			fmt.Fprintf(b, `{%d,}`, re.Min)
		case re.Max == re.Min:
			fmt.Fprintf(b, `{%d}`, re.Min)
		default:
			fmt.Fprintf(b, `{%d,%d}`, re.Min, re.Max)
		}
	}
	if re.Flags&syntax.NonGreedy != 0 {
		b.WriteString(`?`)
	}
	return true
}

// foldOrbit returns the ranges of the runes that r matches case-folded.
func foldOrbit(r rune) []rune {
	out := []rune{r, r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		out = append(out, f, f)
	}
	return out
}

// writeClass writes the class of the ranges lo-hi in ranges, leaving out
// the surrogates (which no valid UTF-8 text holds, and RE2 refuses).
func writeClass(b *strings.Builder, ranges []rune) {
	b.WriteString(`[`)
	empty := true
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for _, part := range [][2]rune{{lo, min(hi, 0xD7FF)}, {max(lo, 0xE000), hi}} {
			if part[0] > part[1] {
				continue
			}
			writeRune(b, part[0])
			if part[1] > part[0] {
				b.WriteString(`-`)
				writeRune(b, part[1])
			}
			empty = false
		}
	}
	if empty {
		// An empty class: RE2 reads [^\x00-\x{10FFFF}] as one.
		b.WriteString(`^\x00-\x{10FFFF}`)
	}
	b.WriteString(`]`)
}

func writeRune(b *strings.Builder, r rune) { fmt.Fprintf(b, `\x{%x}`, r) }
