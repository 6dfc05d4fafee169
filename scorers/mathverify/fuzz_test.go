package mathverify

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// seeds are answers every fuzz target starts from: one of each category of
// testdata/equivalence.tsv, and malformed ones.
var seeds = []string{
	`\frac{1}{2}`, `\dfrac34`, `2\frac{1}{2}`, `\sqrt[3]{8}`, `2\sqrt{2}`, `x^{-1}`, `2^10`, `2 \times 10^{3}`,
	`\left( 1, 2 \right]`, `\text{Monday}`, `5\text{ cm}^2`, `30^\circ`, `50\%`, `1,000,000`, `1{,}000`, `18.`,
	`\pi`, `-\infty`, `2\,x`, `0.1+0.2`, `(x+1)^2`, `\sin^2 x + \cos^2 x`, `\{1,2\}`, `(-\infty, 1) \cup (2, \infty)`,
	`x \ge 1`, `y = 2x+1`, `1 < x \le 3`, `x \in [0,1]`, `1 \pm \sqrt{2}`, `x = \pm 3`, `1, 2 \text{ or } 3`,
	`\log_2 8`, `\binom{5}{2}`, `5!`, `\lfloor 2.5 \rfloor`, `|x|`, `\begin{pmatrix} 1 \\ 2 \end{pmatrix}`,
	`\mathbb{R}`, `\emptyset`, `x_1 + x_{12}`, `\alpha + β`, `1e-3`, `√2`, `x ≤ 2`, ``, `(`, `\frac{`, `((1,2]`,
	`1/0`, `0^0`, `\sqrt{-1}`, `2^{2^{2^{2^{2}}}}`, `\foo`, "\xff", `$5 and $10`, `{}^\circ`,
	`\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix} \begin{pmatrix}5 \\ 6\end{pmatrix}`, `-2\begin{bmatrix}x & 1\\\end{bmatrix}/3`,
	`(-8)^{1/3}`, `\sum_{k=1}^{n} k^2 + 1`, `\prod^{5}_{i=-2} (i+3)`, `\sum_{i=1}^{n}\sum_{j=1}^{i} a_{i+j}`, `1\le|z|<2`,
}

// FuzzParse checks the lexer and parser: no panic, no more work than the
// budget, the same tree twice, and a tree that prints as LaTeX which parses
// back to the same tree (or is beyond a limit of the parser once printed).
func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, 10_000)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = 1 + abs(limit)%100_000
		b := newBudget(context.Background(), limit)
		n, err := parse(s, b)
		if b.used() > limit {
			t.Fatalf("used %d steps of %d", b.used(), limit)
		}
		if err != nil {
			if n != nil {
				t.Fatalf("parse(%q) returned %v with the error %v", s, n, err)
			}
			return
		}
		again, err := parse(s, newBudget(context.Background(), limit))
		if err != nil || again.String() != n.String() {
			t.Fatalf("parse(%q) twice: %v then %v (%v)", s, n, again, err)
		}
		printed := n.String()
		back, err := parse(printed, newBudget(context.Background(), 10_000_000))
		var lim *limitError
		if errors.As(err, &lim) {
			return // the brackets printing adds can take it beyond a limit: --0 is (-(-0))
		}
		if err != nil {
			t.Fatalf("parse(%q) = %s, which does not parse: %v", s, printed, err)
		}
		if back.String() != printed {
			t.Fatalf("parse(%q) = %s, which parses to %s", s, printed, back)
		}
	})
}

// FuzzScore checks Score on any completion and reference: no panic, one of
// the three outcomes with a reason where one is due, and honest accounting
// of the step budget: the check never uses more steps than its budget, gives
// the same result with exactly the steps it used, and is an Error naming the
// budget with one step fewer: no work escapes the budget, and running out of
// it is never a silent 0.
func FuzzScore(f *testing.F) {
	for i, s := range seeds {
		f.Add(`The answer is $\boxed{`+s+`}$.`, seeds[(i+1)%len(seeds)], 0)
		f.Add(s, s, 1)
	}
	f.Add("#### 1,600", "1600", 2)
	f.Add("<answer>x = 5</answer>", "5", 3)
	configs := make([]*Scorer, 4)
	for i, p := range []Params{{}, {Tolerance: 0.01}, {Extract: []string{"none"}}, {ReferenceExtract: []string{"boxed", "none"}}} {
		var err error
		if configs[i], err = New(p); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, completion, ref string, which int) {
		s := configs[abs(which)%len(configs)]
		r := &scorers.Rollout{Completion: completion, Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(ref)}}
		ctx := context.Background()
		res, used := s.check(ctx, r, s.budget)
		checkOutcome(t, res)
		if used > s.budget {
			t.Fatalf("used %d steps of %d", used, s.budget)
		}
		if again, usedAgain := s.check(ctx, r, used); !same(again, res) || usedAgain != used {
			t.Fatalf("with a budget of exactly %d steps: %+v (%d steps), first %+v", used, again, usedAgain, res)
		}
		if used > 0 && !strings.Contains(res.Reason, "step budget") {
			short, _ := s.check(ctx, r, used-1)
			if short.Outcome != scorers.Error || !strings.Contains(short.Reason, "step budget") {
				t.Fatalf("with %d steps, one fewer than needed: %+v, want an Error naming the budget (full: %+v)", used-1, short, res)
			}
		}
	})
}

// TestStepsOfRealChecks checks the headroom of the default step budget: the
// checks of testdata/equivalence.tsv, after a paragraph of reasoning, and a
// few larger realistic answers use at most a twentieth of it.
func TestStepsOfRealChecks(t *testing.T) {
	data, err := os.ReadFile("testdata/equivalence.tsv")
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]string{
		{`\begin{pmatrix} 1 & 2 & 3 \\ 4 & 5 & 6 \\ 7 & 8 & 9 \end{pmatrix}`, `\begin{pmatrix} 1 & 2 & 3 \\ 4 & 5 & 6 \\ 7 & 8 & 9 \end{pmatrix}`},
		{`x^5 - 5x^4 + 10x^3 - 10x^2 + 5x - 1`, `(x-1)^5`},
		{`\frac{(a+b)(a-b)}{a^2+2ab+b^2}`, `\frac{a-b}{a+b}`},
		{`1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12`, `12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1`},
		{`(-\infty, -2) \cup (-1, 0) \cup (1, 2) \cup (3, \infty)`, `(3, \infty) \cup (1, 2) \cup (-1, 0) \cup (-\infty, -2)`},
		{`\frac{1 \pm \sqrt{5}}{2}`, `\frac{1+\sqrt5}{2}, \frac{1-\sqrt5}{2}`},
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, "\t"); len(f) == 4 && !strings.HasPrefix(line, "#") {
			pairs = append(pairs, [2]string{f[1], f[2]})
		}
	}
	s, err := New(Params{})
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, pair := range pairs {
		r := &scorers.Rollout{
			Completion: strings.Repeat("Some reasoning, with $x$ and 12 and 3/4. ", 10) + `The answer is $\boxed{` + pair[1] + `}$.`,
			Fields:     map[string]*structpb.Value{"answer": structpb.NewStringValue(pair[0])},
		}
		_, used := s.check(context.Background(), r, DefaultStepBudget)
		if used > DefaultStepBudget/20 {
			t.Errorf("%s ~ %s: %d steps", pair[0], pair[1], used)
		}
		most = max(most, used)
	}
	t.Logf("at most %d steps over %d checks", most, len(pairs))
}

// FuzzSpans checks the math span and "answer is" extractors: no panic, and
// a non-blank answer made of substrings of the input (joined by ", ").
func FuzzSpans(f *testing.F) {
	for _, s := range []string{"$x$", "$$x$$", `\(x\)`, `\[x\]`, "$5 and $10", `\$5$`, "The answer is $5$.", "answer: 3",
		"ANSWER IS", "$ x$", "$x $", `\(`, "$$", "answer is $$", "$\n$", "$1$ and $2$", `\(a\), \[b\] or $c$`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, find := range map[string]func(string) (string, bool){"lastLatex": lastLatex, "firstLatex": firstLatex, "answerIs": answerIs} {
			got, ok := find(s)
			if !ok {
				if got != "" {
					t.Fatalf("%s(%q): not found but returned %q", name, s, got)
				}
				continue
			}
			if strings.TrimSpace(got) == "" {
				t.Fatalf("%s(%q) = %q: blank", name, s, got)
			}
			// lastLatex joins spans with ", ": each piece is from s.
			for _, piece := range strings.Split(got, ", ") {
				if !strings.Contains(s, piece) {
					t.Fatalf("%s(%q) = %q: %q is not from the input", name, s, got, piece)
				}
			}
		}
	})
}

func checkOutcome(t *testing.T, res scorers.Result) {
	t.Helper()
	switch res.Outcome {
	case scorers.OK:
		if res.Value != 0 && res.Value != 1 {
			t.Fatalf("OK with value %v", res.Value)
		}
	case scorers.NotApplicable, scorers.Error:
		if !isNaN(res.Value) || res.Reason == "" {
			t.Fatalf("%v with value %v and reason %q", res.Outcome, res.Value, res.Reason)
		}
	default:
		t.Fatalf("invalid outcome %v", res.Outcome)
	}
}

func same(a, b scorers.Result) bool {
	return a.Outcome == b.Outcome && a.Reason == b.Reason && (a.Value == b.Value || isNaN(a.Value) && isNaN(b.Value))
}

func isNaN(f float64) bool { return f != f }

// TestBudgetEverywhere runs checks concurrently with every budget from 1 to
// what they need, so that the budget runs out at every step of the lexer,
// parser, evaluator and comparer in turn (run it with -race): each check is
// the full result or an Error naming the budget.
func TestBudgetEverywhere(t *testing.T) {
	s, err := New(Params{})
	if err != nil {
		t.Fatal(err)
	}
	rollouts := []*scorers.Rollout{}
	for _, pair := range [][2]string{
		{`x = \pm \sqrt{y_1} + \sin^2 \alpha`, `\boxed{x = \sqrt{y_1} + \sin^2\alpha, x = -\sqrt{y_1} + \sin^2 \alpha}`},
		{`(-\infty, \frac{1}{2}] \cup \{3\}`, `$x \le 0.5$`},
		{`\text{Monday}`, `<answer>\text{monday}</answer>`},
		{`(x, y) = (1, 2)`, `The answer is y = 2, x = 1.`},
		{`\log_2 8 + 3!`, `\boxed{\binom{4}{2} + |{-3}|}`},
	} {
		rollouts = append(rollouts, &scorers.Rollout{
			Completion: pair[1], Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(pair[0])},
		})
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, r := range rollouts {
		full, need := s.check(ctx, r, DefaultStepBudget)
		for g := range 2 {
			wg.Go(func() {
				for limit := g; limit <= need; limit += 2 {
					res, _ := s.check(ctx, r, limit)
					if !same(res, full) && (res.Outcome != scorers.Error || !strings.Contains(res.Reason, "step budget")) {
						t.Errorf("%q with %d of %d steps: %+v, want %+v or a budget error", r.Completion, limit, need, res, full)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

// junkGolds are the golds FuzzNoPayForJunk breaks: numbers and structures
// without variables, so that no junk can rebuild them by algebra; and no
// lone 0, which junk letters would rebuild as a product (0A is 0: the
// fuzzer found [0A, 1) equal to [0, 1), rightly).
var junkGolds = []string{`2`, `34`, `-12`, `\frac{7}{3}`, `3.25`, `(1, 2)`, `2\sqrt{2}`, `\{1, 3\}`, `[2, 5)`, `1000`}

// FuzzNoPayForJunk checks "no parse, no pay" with the default parameters:
// junk around a gold and junk inside it never score 1 unless the gold
// itself is there. The junk has no digits and no operators (+ - * / ^ = <
// > ! |), so the only digits of the completion are the gold's and junk
// cannot write a value of its own; junk inserted inside the gold breaks it
// unless it is TeX that means nothing (spaces, braces, \, \! \quad …),
// and so does a letter glued before it (AZYUK2A). A
// completion with a broken gold may score 1 only when the answer the
// scorer read holds the whole broken gold, so that the verdict is on all
// of it (junk letters are variables: \frac{7}{3B}B is 7/3); never when
// it read a fragment, as last_number once read the 2 of AZYUK2A.
func FuzzNoPayForJunk(f *testing.F) {
	for i, j := range []string{"", " ", "AZYUK", `\foo{`, "$", `\boxed{`, "}", "The answer is ", "x_", `\text{ and }`,
		"$$", `\(`, `\)`, ",", ".", `\%`, `\$`, "{", `\,`, "e", "\n", "answer: ", `\left(`, `\sqrt`, `\frac`} {
		f.Add(j, "", j, uint8(i), uint8(i))
		f.Add("", j, "", uint8(i), uint8(0))
	}
	s, err := New(Params{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, before, inside, after string, which, at uint8) {
		before, inside, after = junk(before), junk(inside), junk(after)
		gold := junkGolds[int(which)%len(junkGolds)]
		k := int(at) % (len(gold) + 1)
		broken := gold[:k] + inside + gold[k:]
		// Junk breaks the gold when it is inside it and means something,
		// or glued by a letter before a gold that starts with a digit:
		// AZYUK2A holds no number 2. (A letter after a number may be its
		// unit, 34cm, as Math-Verify reads 1,000.99m²; and a letter before
		// \{1, 3\} makes no word with it: "Answeris\{1, 3\}" reads the set,
		// which the fuzzer found.)
		breaks := 0 < k && k < len(gold) && !neutralTeX(inside) ||
			k == 0 && inside != "" && isLetter(inside[len(inside)-1]) && isDigit(gold[0])
		completion := before + broken + after
		r := &scorers.Rollout{Completion: completion, Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(gold)}}
		res := s.Score(context.Background(), r)
		checkOutcome(t, res)
		if res.Outcome != scorers.OK || res.Value != 1 || !breaks {
			return
		}
		// It paid for a broken gold: only a verdict on the whole of it, read
		// as one answer, may do that (\frac{7}{3B}B is 7/3), never one on a
		// fragment.
		p, err := s.answer(completion, newBudget(context.Background(), s.budget))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.text, broken) {
			t.Fatalf("gold %q broken by %q into %q: the completion %q scores 1 on the answer %q", gold, inside, broken, completion, p.text)
		}
	})
}

// junk removes from s what could write a value: digits, operators and
// non-ASCII characters (a Unicode minus, superscripts, fractions).
func junk(s string) string {
	return strings.Map(func(r rune) rune {
		if '0' <= r && r <= '9' || strings.ContainsRune("+-*/^=<>!|", r) || r > 0x7f {
			return -1
		}
		return r
	}, s)
}

// neutralTeX reports whether s means nothing inside an answer: white space,
// braces, TeX spacing, and the characters the lexer drops wherever they are
// (~ is TeX's space; quotes, dollar and percent signs are not part of a
// value: the fuzzer found \frac"{7}{3} read as \frac{7}{3}).
func neutralTeX(s string) bool {
	for _, tex := range []string{`\qquad`, `\quad`, `\,`, `\!`, `\;`, `\:`, `\ `, `\left`, `\right`, `\displaystyle`} {
		s = strings.ReplaceAll(s, tex, "")
	}
	return strings.Trim(s, " \t\n\r\v\f{}~\"$%") == ""
}
