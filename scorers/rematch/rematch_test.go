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
}

func TestSameAsRegexp(t *testing.T) {
	t.Logf("engine: %s", Engine())
	for _, p := range patterns {
		for _, s := range texts {
			same(t, p.expr, p.flags, s)
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
		if want := Engine() == "re2"; r.Fast() != want {
			expr, _ := re2Syntax(tree)
			t.Errorf("%q: on RE2 %v, want %v (RE2 was given %s)", p.expr, r.Fast(), want, expr)
		}
	}
}

// same fails t unless the pattern finds the same matches, submatches and
// answer in s on both engines.
func same(t *testing.T, expr string, flags syntax.Flags, s string) {
	t.Helper()
	tree, err := syntax.Parse(expr, flags)
	if err != nil {
		return
	}
	r, err := Compile(tree)
	if err != nil {
		return
	}
	std := regexp.MustCompile(tree.String())
	if got, want := r.MatchString(s), std.MatchString(s); got != want {
		t.Fatalf("%q on %q: MatchString %v, regexp says %v", expr, s, got, want)
	}
	for _, n := range []int{-1, 1, 3} {
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
// flags, matches any valid UTF-8 text exactly as Go's regexp does: the same
// matches at the same positions, the same count, the same submatches. Built
// without the re2_cgo tag both sides are Go's regexp, and it checks nothing.
func FuzzSameAsRegexp(f *testing.F) {
	for i, p := range patterns {
		f.Add(p.expr, uint8(i), texts[i%len(texts)])
	}
	f.Fuzz(func(t *testing.T, expr string, flagBits uint8, s string) {
		if Engine() != "re2" {
			t.Skip("built without the re2_cgo tag: both sides would be Go's regexp")
		}
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
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		same(t, expr, flags, s)
	})
}
