package rematch

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// patterns are those of the default config, of open-r1's rewards and of
// the extractors users write, plus the shapes that tell engines apart
// (empty matches, case folding, assertions at the ends, non-ASCII).
var patterns = []struct {
	expr  string
	flags syntax.Flags
}{
	{`(Step \d+:|^\d+\.|\n-|\n\*|First,|Second,|Next,|Finally,)`, syntax.Perl &^ syntax.OneLine},
	{`^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$`, syntax.Perl&^syntax.OneLine | syntax.DotNL},
	{`<think>.*?</think>\s*<answer>.*?</answer>`, syntax.Perl | syntax.DotNL},
	{"```python\\n(.*?)```", syntax.Perl | syntax.DotNL},
	{`#### (-?[\d,]*\.?\d+)`, syntax.Perl},
	{`-?[\d,]*\.?\d+`, syntax.Perl},
	{`(?i)the answer is:?\s*(?P<answer>\S+)`, syntax.Perl},
	{`\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}`, syntax.Perl},
	{`a*`, syntax.Perl},
	{`(|a)*`, syntax.Perl},
	{`\b\w+\b`, syntax.Perl},
	{`(?i)straße|ǅ|k`, syntax.Perl},
	{`[^a-z]+$`, syntax.Perl &^ syntax.OneLine},
	{`\pL+|\p{Greek}`, syntax.Perl},
	{`x{2,5}?y`, syntax.Perl},
	// The scanner's shapes, and those it must turn down.
	{`\bFirst\b|^- |^\d+$|Step \d{1,3}[.:]`, syntax.Perl &^ syntax.OneLine},
	{`\A<think>|</answer>\z|\Bx+y\B`, syntax.Perl},
	{`\A<think>|\Bx+y?\B`, syntax.Perl},
	{`xa+b|ya+c|z[ab]+b`, syntax.Perl},
	{`a+b|a+c|[ab]+b|a*`, syntax.Perl},
	{`\n[*-] |Final answer: \d[\d,]*|\$\d+\.\d\d`, syntax.Perl},
	{`\$\d+(\.\d\d)?`, syntax.Perl},
}

var texts = []string{
	"",
	"Step 1: add.\n2. then\n- a bullet\n* star\nFirst, x. Second, y. Next, z. Finally, w.\n",
	"<think>\nwork\n</think>\n<answer>\n42\n</answer>",
	"<think>a</think>  <answer>b</answer> tail",
	"```python\nprint(1)\n```\ntext ```python\nx = 2\n```",
	"She has 1,234.5 apples and -3 pears.\n#### 1,234\n#### 7",
	"The Answer Is: 18. the answer is 19",
	`so \boxed{\frac{1}{2}} and \boxed{3}`,
	"aaa baa", "Ǆǅǆ KkK STRASSE straße", "αβγ δ café ÉTÉ\nxxyyxxxxxy",
	"Step 12: x\xff\n3. y\xe2\x80\n- z First,First, xFirst\n$5.25 aab abc 1,000\n</answer>",
}

// engine is one engine compiled into this build: compile returns a Regexp
// that matches with it alone, or nil when it does not take the pattern.
type engine struct {
	name    string
	compile func(tree *syntax.Regexp) *Regexp
}

// engines are the engines compiled into this build: Go's regexp always,
// RE2 (through cgo or as Go) unless the build has the rematch_regexp tag,
// and the scanner.
func engines() []engine {
	std := func(tree *syntax.Regexp) *regexp.Regexp { return regexp.MustCompile(tree.String()) }
	out := []engine{{"regexp", func(tree *syntax.Regexp) *Regexp { return &Regexp{std: std(tree)} }}}
	if HasRE2() {
		out = append(out, engine{Engine(), func(tree *syntax.Regexp) *Regexp {
			expr, ok := re2Syntax(tree)
			if !ok {
				return nil
			}
			if fast := compileFast(expr); fast != nil {
				return &Regexp{std: std(tree), fast: fast}
			}
			return nil
		}})
	}
	out = append(out, engine{"scan", func(tree *syntax.Regexp) *Regexp {
		if sc := newScanner(tree); sc != nil {
			return &Regexp{std: std(tree), scan: sc}
		}
		return nil
	}})
	return out
}

// TestSameAsRegexp runs the table on every engine compiled into the build
// (go test with no tag: regexp, re2_wasm and scan; -tags re2_cgo: regexp,
// re2 and scan; -tags rematch_regexp: regexp and scan), and then through
// Compile, which picks among them.
func TestSameAsRegexp(t *testing.T) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			taken := 0
			for _, p := range patterns {
				tree, err := syntax.Parse(p.expr, p.flags)
				if err != nil {
					t.Fatal(err)
				}
				r := e.compile(tree)
				if r == nil {
					continue
				}
				taken++
				for _, s := range texts {
					same(t, r, tree, p.expr, s)
				}
			}
			t.Logf("%s took %d of %d patterns", e.name, taken, len(patterns))
			if taken == 0 {
				t.Errorf("%s took none of the patterns: the table tests nothing on it", e.name)
			}
		})
	}
	t.Run("Compile", func(t *testing.T) {
		for _, p := range patterns {
			tree, err := syntax.Parse(p.expr, p.flags)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Compile(tree)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range texts {
				same(t, r, tree, p.expr, s)
			}
		}
	})
}

// TestScannerTakes: the scanner takes the default config's pattern and the
// shapes it is for, and turns down what it cannot match in one pass.
func TestScannerTakes(t *testing.T) {
	for _, c := range []struct {
		expr  string
		flags syntax.Flags
		want  bool
	}{
		{patterns[0].expr, patterns[0].flags, true}, // reasoning_steps
		{`\bFirst\b|^- |^\d+$|Step \d{1,3}[.:]`, syntax.Perl &^ syntax.OneLine, true},
		{`Final answer: \d[\d,]*`, syntax.Perl, true},
		{`xa+b|ya+c`, syntax.Perl, true},
		{`\A<think>|</answer>\z|\Bx+y\B`, syntax.Perl, true},
		{`[ab]+c`, syntax.Perl, false},     // no literal to find a start by
		{`z[ab]+b`, syntax.Perl, false},    // the repetition can give back a b
		{`a*`, syntax.Perl, false},         // matches empty text
		{`(?i)first`, syntax.Perl, false},  // case folding reaches beyond ASCII
		{`café`, syntax.Perl, false},       // not ASCII
		{`Step .*:`, syntax.Perl, false},   // . is not ASCII
		{`Step \d+?:`, syntax.Perl, false}, // not greedy
		{`x(?:ab|cd)`, syntax.Perl, false}, // an alternation inside a branch
		{`x\d+\b`, syntax.Perl, false},     // \b after a repetition
	} {
		tree, err := syntax.Parse(c.expr, c.flags)
		if err != nil {
			t.Fatal(err)
		}
		if got := newScanner(tree) != nil; got != c.want {
			t.Errorf("%q: scanner takes it %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestFastWhereBuilt(t *testing.T) {
	for _, p := range patterns {
		tree, err := syntax.Parse(p.expr, p.flags)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Compile(tree)
		if err != nil {
			t.Fatal(err)
		}
		if want := HasRE2(); r.Fast() != want {
			expr, _ := re2Syntax(tree)
			t.Errorf("%q: on RE2 %v, want %v (RE2 was given %s)", p.expr, r.Fast(), want, expr)
		}
	}
}

// same fails t unless r finds the same matches, submatches and answer in s
// as Go's regexp does with tree.
func same(t *testing.T, r *Regexp, tree *syntax.Regexp, expr, s string) {
	t.Helper()
	std := regexp.MustCompile(tree.String())
	if got, want := r.MatchString(s), std.MatchString(s); got != want {
		t.Fatalf("%q on %q: MatchString %v, regexp says %v", expr, s, got, want)
	}
	for _, n := range []int{-1, 0, 1, 3} {
		if got, want := r.FindAllStringIndex(s, n), std.FindAllStringIndex(s, n); !equal(got, want) {
			t.Fatalf("%q on %q: FindAllStringIndex(%d) %v, regexp says %v", expr, s, n, got, want)
		}
	}
	if got, want := r.FindAllStringSubmatchIndex(s, -1), std.FindAllStringSubmatchIndex(s, -1); !equal(got, want) {
		t.Fatalf("%q on %q: FindAllStringSubmatchIndex %v, regexp says %v", expr, s, got, want)
	}
}

func equal(a, b [][]int) bool { return slices.EqualFunc(a, b, slices.Equal[[]int]) }

// FuzzSameAsRegexp checks that any pattern, with any of the i, m and s
// flags, matches any text exactly as Go's regexp does on every engine
// compiled in that takes it: the same matches at the same positions, the
// same count, the same submatches. RE2 is given valid UTF-8 only (Regexp
// sends the rest to Go's regexp); the scanner any text.
func FuzzSameAsRegexp(f *testing.F) {
	for i, p := range patterns {
		f.Add(p.expr, uint8(i), texts[i%len(texts)])
	}
	f.Fuzz(func(t *testing.T, expr string, flagBits uint8, s string) {
		if len(expr) > 200 || len(s) > 4096 {
			return
		}
		flags := syntax.Perl
		if flagBits&1 != 0 {
			flags |= syntax.FoldCase
		}
		if flagBits&2 != 0 {
			flags &^= syntax.OneLine
		}
		if flagBits&4 != 0 {
			flags |= syntax.DotNL
		}
		tree, err := syntax.Parse(expr, flags)
		if err != nil {
			return
		}
		if _, err := regexp.Compile(tree.String()); err != nil {
			return
		}
		valid := strings.ToValidUTF8(s, "\uFFFD")
		for _, e := range engines()[1:] {
			r := e.compile(tree)
			if r == nil {
				continue
			}
			same(t, r, tree, expr, valid)
			if e.name == "scan" && !utf8.ValidString(s) {
				same(t, r, tree, expr, s)
			}
		}
	})
}

// scanPieces are what FuzzScanner builds patterns of: the scanner's items
// and some it must turn down, over a small alphabet so that texts match.
var scanPieces = []string{
	`Step `, `\d+`, `:`, `^`, `$`, `\b`, `\B`, `\A`, `\z`, "\n", `[*-]`, `First,`, `a`, `a+`, `b?`,
	`[ab]`, `[ab]+`, `x{1,3}`, `x{2}`, `\d`, `\.`, `\s*`, `(a)`, `.`, `é`, `a*?`,
}

// FuzzScanner checks the scanner on patterns built of its own items: on
// every one it takes, any text (valid UTF-8 or not) matches as with Go's
// regexp.
func FuzzScanner(f *testing.F) {
	f.Add([]byte{0, 1, 2, 255, 3, 1, 7, 255, 11}, uint8(2), "Step 12: x\n3. y\n- z First,")
	f.Add([]byte{4, 14, 13, 255, 18, 19, 8}, uint8(0), "aab ab\xffxxx b")
	f.Fuzz(func(t *testing.T, picks []byte, flagBits uint8, s string) {
		if len(picks) > 40 || len(s) > 2048 {
			return
		}
		var b strings.Builder
		for _, p := range picks {
			if p == 255 {
				b.WriteString("|")
				continue
			}
			b.WriteString(scanPieces[int(p)%len(scanPieces)])
		}
		flags := syntax.Perl
		if flagBits&1 != 0 {
			flags &^= syntax.OneLine
		}
		if flagBits&2 != 0 {
			flags |= syntax.DotNL
		}
		tree, err := syntax.Parse(b.String(), flags)
		if err != nil {
			return
		}
		if sc := newScanner(tree); sc != nil {
			same(t, &Regexp{std: regexp.MustCompile(tree.String()), scan: sc}, tree, b.String(), s)
		}
	})
}
