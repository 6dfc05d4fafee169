package regex

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// mustMatcher builds the matcher New would build for p.
func mustMatcher(t testing.TB, p Params) *matcher {
	t.Helper()
	s, err := New(p)
	if err != nil {
		t.Fatalf("New(%+v): %v", p, err)
	}
	return s.fixed
}

func TestAnalyze(t *testing.T) {
	type want struct {
		begin, end           bool
		prefix, suffix, lead string
		need                 string
		literal              bool
		lit                  string
		expr                 string // the pattern the engine runs, "" = do not check
	}
	tests := []struct {
		pat, mode, flags string
		want             want
	}{
		{`#### (-?[\d,]*\.?\d+)`, Search, "", want{lead: "#### "}},
		{`(?i)#### (-?[\d,]*\.?\d+)`, Search, "", want{lead: "#### "}},
		{`(?s)^.*\n#### .+$`, Match, "", want{lead: "\n#### ", expr: `(?s:\n#### .)`}},
		{`^.*\n#### .+$`, Match, "", want{begin: true, end: true, need: "\n#### "}},
		{`(?s)^.*\n#### .+$`, Search, "", want{lead: "\n#### "}},
		{`hello`, Search, "", want{lead: "hello", literal: true, lit: "hello"}},
		{`hello`, Match, "", want{begin: true, prefix: "hello", literal: true, lit: "hello"}},
		{`hello`, FullMatch, "", want{begin: true, end: true, prefix: "hello", suffix: "hello", literal: true, lit: "hello"}},
		{`(hel)(lo)`, FullMatch, "", want{begin: true, end: true, prefix: "hello", suffix: "hello", literal: true, lit: "hello"}},
		{`hello`, Search, "i", want{}},
		{`(?i)hello`, Search, "", want{}},
		{`^abc$`, Search, "", want{begin: true, end: true, prefix: "abc", suffix: "abc", literal: true, lit: "abc"}},
		{`abc\z`, Search, "", want{end: true, suffix: "abc", lead: "abc", literal: true, lit: "abc"}},
		{`a+bc`, Search, "", want{lead: "abc", literal: true, lit: "abc"}},
		{`a+bc`, Count, "", want{lead: "a", need: "abc"}},
		{`\s*#### \d+`, Search, "", want{lead: "#### ", expr: `#### [0-9]`}},
		{`\s*#### \d+`, Count, "", want{need: "#### "}},
		{`a+bc`, Match, "", want{begin: true, prefix: "a", need: "abc"}},
		{`xa{2,}b`, FullMatch, "", want{begin: true, end: true, prefix: "xaa", suffix: "aab"}},
		{`foo|bar`, Search, "", want{}},
		{`x(abc)+y`, Search, "", want{lead: "xabc"}},
		{`x(abc)+yz`, Search, "", want{lead: "xabc", need: "abcyz"}},
		{`\bfoo\b`, Search, "", want{need: "foo"}},
		{`[ab]cd{3}`, Search, "", want{need: "cddd"}},
		{`a\bb`, Search, "", want{lead: "ab"}},
		{`(?m)^abc$`, Match, "", want{begin: true, prefix: "abc"}},
		{`^abc$`, Match, "m", want{begin: true, prefix: "abc"}},
		{`\x{FFFD}x`, Search, "", want{}},
		{`.*abc.*`, Search, "s", want{lead: "abc", literal: true, lit: "abc"}},
		{`.*abc.*`, Search, "", want{lead: "abc", literal: true, lit: "abc"}},
		{`.*abc.*`, Count, "", want{need: "abc"}},
		{`.*abc`, Match, "", want{begin: true, need: "abc"}},
		{`.*`, FullMatch, "s", want{end: true, literal: true}},
		{`\A\z`, Search, "", want{begin: true, end: true, literal: true}},
		{`\[\d+\]`, Count, "", want{lead: "["}},
		{`(?s).+x.+`, FullMatch, "", want{need: "x", expr: `(?s:.x.)`}},
		{`a{2}b{0,1}`, Search, "", want{lead: "aa", literal: true, lit: "aa"}},
		{`a{2}b{0,1}`, Count, "", want{lead: "aa"}},
		{`x{2,5}y`, Match, "", want{begin: true, prefix: "xx", need: "xxy"}},
		{`\Aa*b`, Search, "", want{begin: true, need: "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"/"+tt.flags+"/"+tt.pat, func(t *testing.T) {
			p := Params{Pattern: tt.pat, Mode: tt.mode, Flags: tt.flags}
			if tt.mode == Count {
				p.CountTarget = new(2)
			}
			m := mustMatcher(t, p)
			c := m.find
			if c == nil {
				c = m.all
			}
			got := want{c.begin, c.end, c.prefix, c.suffix, c.lead, c.need, c.literal, c.lit, ""}
			if tt.want.expr != "" {
				got.expr = c.re.String()
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestLiteralPrefix checks that the derived prefix (match mode) and lead
// (search mode) always know at least what regexp.LiteralPrefix knows.
func TestLiteralPrefix(t *testing.T) {
	for _, pat := range agreePatterns {
		prefix, _ := regexp.MustCompile(pat).LiteralPrefix()
		if c := mustMatcher(t, Params{Pattern: pat, Mode: Match}).find; c.begin && !strings.HasPrefix(c.prefix, prefix) {
			t.Errorf("match %q: prefix %q, regexp.LiteralPrefix %q", pat, c.prefix, prefix)
		}
		if c := mustMatcher(t, Params{Pattern: pat}).find; !c.begin && !c.literal && !strings.HasPrefix(c.lead, prefix) {
			t.Errorf("search %q: lead %q, regexp.LiteralPrefix %q", pat, c.lead, prefix)
		}
	}
}

// agreePatterns are the patterns whose prefiltered verdicts are compared
// against plain regexp verdicts. They cover each rule of the analysis.
var agreePatterns = []string{
	`#### (-?[\d,]*\.?\d+)`,
	`(?s)^.*\n#### .+$`,
	`^.*\n#### .+$`,
	`A:\s*\$?(-?[\d,]*\.?\d+)`,
	`hello`, `(?i)hello`, `(?i)#### \d`,
	`^abc$`, `abc\z`, `\Aabc`, `abc$`, `^(abc)`,
	`a+bc`, `foo|bar`, `x(abc)+y`, `\bfoo\b`, `\Bfoo`, `foo\b`, `[ab]cd{3}`, `(?m)^abc$`,
	`\x{FFFD}x`, `\x{FFFD}`, `.*abc.*`, `(?s).*`, `.*`, `.+`, `(?s).+`, `(?s).+x.+`, `(?s).*?x`,
	`\[\d+\]`, `a*`, `\b`, `\A\z`, `$`, `^`, `(?s)^.+$`, `k`, `(?i)k`, `(a|b)*abc`,
	`(?U)a+?b`, `a{2}b{0,1}`, `(ab){2}`, `a\bb`, `x^y`, `x\Ay`,
	`<think>.*?</think>`, `(?s)<think>.*</think>\s*<answer>.*</answer>`,
	`(?s)\A.*\z`, `\A\A(?s:.*)abc`, `(?s)\A.*a*b`, `\s*#### \d+`, `x{2,5}y`, `x{2,5}`, `a{0,3}b`,
	`\Aa*b`, `(?s)\A.+`, `a+`, `x*`, `(?m)^\d+\.`, `(\ba)+x`, `\d+x\b`, `(?s)abc.*\z\z`, `()`, `(?:)x`, `\n`, `(?m)$`,
	`(Step \d+:|^\d+\.|\n-|\n\*|First,|Second,|Next,|Finally,)`, `(?m)(Step \d+:|^\d+\.|\n-|\n\*|First,|Second,|Next,|Finally,)`,
	`(?m)(^\d|x\b|\bab)`, `(?m)(a$|^b|c)`, `(foo|bar)baz`, `(ab|cd)\Ax`, `(?m)(^[a-c]+|#)`, `(x[0-9]|y)`,
}

var agreeModes = []struct {
	mode string
	n    *int
}{{Search, nil}, {Match, nil}, {FullMatch, nil}, {Count, nil}, {Count, new(2)}, {Count, new(3)}}

var agreeFlags = []string{"", "i", "m", "s", "ims"}

// plain returns a scorer for p built the obvious way: the pattern wrapped
// for its mode and flags as a string, then regexp's MatchString or
// FindAllStringIndex. ok is false when that does not compile.
func plain(p Params) (score func(string) float64, ok bool) {
	if _, err := regexp.Compile(p.Pattern); err != nil {
		return nil, false // wrapping could hide the error: ")(" → "(?:)()"
	}
	var b strings.Builder
	if p.Flags != "" {
		b.WriteString("(?" + p.Flags + ")")
	}
	if p.Mode == Match || p.Mode == FullMatch {
		b.WriteString(`\A`)
	}
	b.WriteString("(?:" + p.Pattern + ")")
	if p.Mode == FullMatch {
		b.WriteString(`\z`)
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, false
	}
	if p.Mode == Count {
		n := 1.0
		if p.CountTarget != nil {
			n = float64(*p.CountTarget)
		}
		return func(s string) float64 { return min(1, float64(len(re.FindAllStringIndex(s, -1)))/n) }, true
	}
	return func(s string) float64 {
		if re.MatchString(s) {
			return 1
		}
		return 0
	}, true
}

// pair is a scorer for p built by New and one built by plain.
type pair struct {
	p     Params
	m     *matcher
	plain func(string) float64
}

func newPair(t testing.TB, p Params) pair {
	t.Helper()
	ref, ok := plain(p)
	if !ok {
		t.Fatalf("plain regexp for %+v does not compile", p)
	}
	return pair{p, mustMatcher(t, p), ref}
}

// agree fails t when the two scorers disagree on text.
func (x pair) agree(t testing.TB, text string) {
	t.Helper()
	want := x.plain(text)
	if got := x.m.score(text); got.Value != want {
		t.Fatalf("%+v on %q: prefiltered %v, plain regexp %v", x.p, text, got.Value, want)
	}
}

// textPieces build random texts that hit the patterns' literals often.
var textPieces = []string{
	"#### ", "\n", "\n#### ", "a", "A", "b", "abc", "ABC", "x", "y", "[", "]", "[12]",
	"1", "-", ",", ".", " ", "\xff", "\uFFFD", "K", "\u212A", "k", "<think>", "</think>",
	"<answer>", "</answer>", "hello", "HELLO", "foo", "bar", "cddd", "d", "A: $", "\t",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(textPieces[r.IntN(len(textPieces))])
	}
	return b.String()
}

// TestAgree compares prefiltered and plain verdicts on random texts for every
// pattern, mode and flag set.
func TestAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "\n", "abc", "\xff"}
	n := 120 // FuzzPrefilter and FuzzPattern search further
	if testing.Short() {
		n = 20
	}
	for range n {
		texts = append(texts, randomText(r))
	}
	for _, pat := range agreePatterns {
		for _, md := range agreeModes {
			for _, fl := range agreeFlags {
				x := newPair(t, Params{Pattern: pat, Mode: md.mode, CountTarget: md.n, Flags: fl})
				for _, text := range texts {
					x.agree(t, text)
				}
			}
		}
	}
}

// FuzzPrefilter checks on fuzzed texts that the prefiltered verdict of every
// pattern in agreePatterns, in every mode, equals the plain regexp verdict.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{"", "#### 42", "x\n#### 1,000.5\n", "hello\n", "A: $-3", "<think>a</think> <answer>b</answer>", "\xffx", "[1][2][3]"} {
		f.Add(s)
	}
	var all []pair
	for _, pat := range agreePatterns {
		for _, md := range agreeModes {
			for _, fl := range []string{"", "ims"} {
				all = append(all, newPair(f, Params{Pattern: pat, Mode: md.mode, CountTarget: md.n, Flags: fl}))
			}
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, x := range all {
			x.agree(t, text)
		}
	})
}

// FuzzPattern fuzzes the pattern too: any pattern that compiles both ways
// must give the same verdict both ways.
func FuzzPattern(f *testing.F) {
	for _, pat := range agreePatterns {
		f.Add(pat, "x\n#### 12\nabc hello [3]", uint8(0), uint8(0))
	}
	f.Add(`(?s)^.*\n#### .+$`, "a\n#### 1", uint8(1), uint8(4))
	f.Fuzz(func(t *testing.T, pat, text string, mode, flags uint8) {
		if pat == "" || strings.Contains(pat, `\Q`) {
			return // New refuses ""; \Q…(no \E) would swallow plain's ")"
		}
		md := agreeModes[int(mode)%len(agreeModes)]
		p := Params{Pattern: pat, Mode: md.mode, CountTarget: md.n, Flags: []string{"", "i", "m", "s", "ims"}[flags%5]}
		ref, ok := plain(p)
		if !ok {
			return
		}
		s, err := New(p)
		if err != nil {
			t.Fatalf("New(%+v) = %v, but plain regexp compiles", p, err)
		}
		pair{p, s.fixed, ref}.agree(t, text)
	})
}
