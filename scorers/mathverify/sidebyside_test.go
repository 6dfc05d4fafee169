package mathverify_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// The side-by-side compares rewardd's math with two Python reference
// graders, PRM800K's and Minerva's, as testdata/sidebyside/graders.py
// transcribes their rules, on the same answers (see testdata/README.md).
// TestSideBySide checks agreement on a sample; -sidebyside.all runs it on
// every answer, and BenchmarkSideBySide times both sides in one run.
var sideBySideAll = flag.Bool("sidebyside.all", false, "TestSideBySide: grade every side-by-side answer, not a sample")

// python is Debian's interpreter, with python3-sympy and python3-pylatexenc.
const python = "/usr/bin/python3"

// sidePair is an answer graded side by side.
type sidePair struct {
	category   string // how the answer was made: "real", or a rewrite of the gold
	gold       string
	answer     string // the final answer as the Python graders get it
	completion string // what rewardd scores
	want       int    // what it should score: 1 or 0
}

// realAnswers reads testdata/sidebyside/real_answers.jsonl: the contents of
// the <answer> tags of GRPO rollouts of Qwen2.5-Math-1.5B on MATH training
// problems, from a public repository, with the gold and a verdict given by
// hand. The Python graders get the last \boxed{…} of the answer, or the
// answer without its dollar signs, as evaluation harnesses cut it.
func realAnswers(tb testing.TB) []sidePair {
	tb.Helper()
	data, err := os.ReadFile("testdata/sidebyside/real_answers.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	var pairs []sidePair
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var row struct {
			Gold      string `json:"gold"`
			AnswerTag string `json:"answer_tag"`
			Want      int    `json:"want"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			tb.Fatalf("real_answers.jsonl line %d: %v", i+1, err)
		}
		answer, ok := lastBoxed(row.AnswerTag)
		if !ok {
			answer = strings.TrimSpace(strings.ReplaceAll(row.AnswerTag, "$", ""))
		}
		pairs = append(pairs, sidePair{"real", row.Gold, answer, "<answer>" + row.AnswerTag + "</answer>", row.Want})
	}
	return pairs
}

var (
	simpleFrac = regexp.MustCompile(`^(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}$`)
	hasLetters = regexp.MustCompile(`[a-zA-Z]`)
	interval   = regexp.MustCompile(`^[(\[][^,()\[\]]+,[^,()\[\]]+[)\]]$`)
	choice     = regexp.MustCompile(`^\\text\{\(?([A-E])\)?\}$`)
	based      = regexp.MustCompile(`^(\d+)_\{?\d+\}?$`)
	withCommas = regexp.MustCompile(`^\d{1,3}(,\d{3})+$`)
)

// modelRewrites are ways of writing a right answer that models use, on top
// of the rewrites of TestMATHGolds.
var modelRewrites = []rewrite{
	{"decimal", func(g string) (string, bool) {
		m := simpleFrac.FindStringSubmatch(g)
		if m == nil {
			return "", false
		}
		r, _ := new(big.Rat).SetString(m[2] + "/" + m[3])
		for _, digits := range []int{1, 2, 3, 4, 5, 6} {
			if s := r.FloatString(digits); ratEqual(s, r) {
				return m[1] + s, true
			}
		}
		return "", false
	}},
	{"a/b", func(g string) (string, bool) {
		m := simpleFrac.FindStringSubmatch(g)
		if m == nil {
			return "", false
		}
		return m[1] + m[2] + "/" + m[3], true
	}},
	{"x = answer", func(g string) (string, bool) {
		return "x = " + g, !hasLetters.MatchString(g) && !strings.ContainsAny(g, ",=")
	}},
	{"with units", func(g string) (string, bool) { return g + `\text{ units}`, plainNumber.MatchString(g) }},
	{"unit as a word", func(g string) (string, bool) { return g + " cm", plainNumber.MatchString(g) }},
	{"dollars", func(g string) (string, bool) { return `\$` + g, plainNumber.MatchString(g) }},
	{"percent", func(g string) (string, bool) { return g + `\%`, plainNumber.MatchString(g) }},
	{"degrees in words", func(g string) (string, bool) { return g + " degrees", plainNumber.MatchString(g) }},
	{`x \in interval`, func(g string) (string, bool) {
		return `x \in ` + g, interval.MatchString(g)
	}},
	{"list reversed", func(g string) (string, bool) {
		items := strings.Split(g, ", ")
		if len(items) < 2 || strings.ContainsAny(g, "()[]{}") {
			return "", false
		}
		slices.Reverse(items)
		return strings.Join(items, ", "), true
	}},
	{"list in braces", func(g string) (string, bool) {
		return `\{` + g + `\}`, strings.Contains(g, ",") && !strings.ContainsAny(g, `()[]{}\`) && !withCommas.MatchString(g)
	}},
	{"Unicode minus", func(g string) (string, bool) {
		return "−" + g[1:], strings.HasPrefix(g, "-") && plainNumber.MatchString(g)
	}},
	{"mixed number", func(g string) (string, bool) {
		m := simpleFrac.FindStringSubmatch(g)
		if m == nil || m[1] != "" {
			return "", false
		}
		r, _ := new(big.Rat).SetString(m[2] + "/" + m[3])
		whole := new(big.Int).Quo(r.Num(), r.Denom())
		if whole.Sign() == 0 || r.IsInt() {
			return "", false
		}
		rest := new(big.Rat).Sub(r, new(big.Rat).SetInt(whole))
		return fmt.Sprintf(`%s\frac{%s}{%s}`, whole, rest.Num(), rest.Denom()), true
	}},
	{"choice letter", func(g string) (string, bool) {
		m := choice.FindStringSubmatch(g)
		if m == nil {
			return "", false
		}
		return m[1], true
	}},
	{"base left out", func(g string) (string, bool) {
		m := based.FindStringSubmatch(g)
		if m == nil {
			return "", false
		}
		return m[1], true
	}},
	{"unreduced fraction", func(g string) (string, bool) {
		m := simpleFrac.FindStringSubmatch(g)
		if m == nil {
			return "", false
		}
		return fmt.Sprintf(`%s\frac{%s0}{%s0}`, m[1], m[2], m[3]), true
	}},
	{"thousands separators", func(g string) (string, bool) {
		if !plainNumber.MatchString(g) || strings.Contains(g, ".") || len(strings.TrimPrefix(g, "-")) < 4 {
			return "", false
		}
		return scorertest.WithCommas(g), true
	}},
}

func ratEqual(s string, r *big.Rat) bool {
	v, ok := new(big.Rat).SetString(s)
	return ok && v.Cmp(r) == 0
}

// wrongAnswers are wrong answers derived from a gold: i is its problem, and
// golds all of them.
var wrongAnswers = []struct {
	name string
	f    func(golds []string, i int) (string, bool)
}{
	{"last digit changed", func(golds []string, i int) (string, bool) { return perturb(golds[i]) }},
	{"sign flipped", func(golds []string, i int) (string, bool) {
		g := golds[i]
		if strings.HasPrefix(g, "-") {
			return g[1:], plainNumber.MatchString(g)
		}
		return "-" + g, plainNumber.MatchString(g) && strings.Trim(g, "0.") != ""
	}},
	{"rounded", func(golds []string, i int) (string, bool) {
		m := simpleFrac.FindStringSubmatch(golds[i])
		if m == nil {
			return "", false
		}
		r, _ := new(big.Rat).SetString(m[2] + "/" + m[3])
		s := r.FloatString(2)
		return m[1] + s, !ratEqual(s, r)
	}},
	{"hedged", func(golds []string, i int) (string, bool) {
		return `\text{at least }` + golds[i], plainNumber.MatchString(golds[i])
	}},
	{"first of a list", func(golds []string, i int) (string, bool) {
		first, _, ok := strings.Cut(golds[i], ", ")
		return first, ok && !strings.ContainsAny(golds[i], "()[]{}")
	}},
	{"tuple as a set", func(golds []string, i int) (string, bool) {
		g := golds[i]
		if !strings.HasPrefix(g, "(") || !strings.HasSuffix(g, ")") || !strings.Contains(g, ",") {
			return "", false
		}
		return `\{` + g[1:len(g)-1] + `\}`, true
	}},
	{"another problem's answer", func(golds []string, i int) (string, bool) {
		other := golds[(i+1)%len(golds)]
		return other, strings.TrimSpace(other) != strings.TrimSpace(golds[i])
	}},
}

// derivedAnswers are answers made from the MATH test golds of every fifth
// problem: each rewrite of TestMATHGolds and of modelRewrites that applies
// (right), and each wrong answer.
func derivedAnswers(tb testing.TB) []sidePair {
	golds := mathGolds(tb)
	var pairs []sidePair
	boxed := func(a string) string { return `So the answer is $\boxed{` + a + `}$.` }
	for i := 0; i < len(golds); i += 5 {
		g := golds[i]
		for _, rw := range slices.Concat(rewrites, modelRewrites) {
			if a, ok := rw.f(g); ok {
				pairs = append(pairs, sidePair{rw.name, g, a, boxed(a), 1})
			}
		}
		for _, w := range wrongAnswers {
			if a, ok := w.f(golds, i); ok {
				pairs = append(pairs, sidePair{w.name, g, a, boxed(a), 0})
			}
		}
	}
	return pairs
}

// pythonVerdicts grades pairs with testdata/sidebyside/graders.py and
// returns its verdicts and the CPU time each grader spent per check. It
// skips the test when the interpreter or its packages are missing.
func pythonVerdicts(tb testing.TB, pairs []sidePair) (prm, minerva []bool, prmPer, minervaPer time.Duration) {
	tb.Helper()
	if err := exec.Command(python, "-c", "import sympy, pylatexenc").Run(); err != nil {
		tb.Skipf("%s with sympy and pylatexenc is needed for the side-by-side (make deps installs python3-sympy python3-pylatexenc): %v", python, err)
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, p := range pairs {
		if err := enc.Encode(map[string]string{"gold": p.gold, "answer": p.answer}); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.Command(python, "-I", "testdata/sidebyside/graders.py")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("graders.py: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var v struct {
			PRM800K        *bool   `json:"prm800k"`
			Minerva        *bool   `json:"minerva"`
			Checks         int     `json:"checks"`
			PRM800KSeconds float64 `json:"prm800k_seconds"`
			MinervaSeconds float64 `json:"minerva_seconds"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			tb.Fatalf("graders.py output line %d: %v", len(prm)+1, err)
		}
		if v.PRM800K == nil {
			if v.Checks != len(pairs) || len(prm) != len(pairs) {
				tb.Fatalf("graders.py graded %d answers (%d verdicts) of %d", v.Checks, len(prm), len(pairs))
			}
			per := func(s float64) time.Duration { return time.Duration(s * 1e9 / float64(v.Checks)) }
			return prm, minerva, per(v.PRM800KSeconds), per(v.MinervaSeconds)
		}
		prm, minerva = append(prm, *v.PRM800K), append(minerva, *v.Minerva)
	}
	tb.Fatalf("graders.py ended without its summary line\n%s", stderr.String())
	return
}

// TestSideBySide grades answers with rewardd and with the Python graders
// and checks that rewardd never returns ERROR, agrees with the graders on
// at least 99% of the real answers where they agree with each other, and is
// right on at least 99.5% of all answers, as they were made (the graders
// and rewardd differ on purpose in some categories: testdata/README.md). By
// default it grades the real answers and every tenth derived one;
// -sidebyside.all grades them all and logs every difference.
func TestSideBySide(t *testing.T) {
	pairs := realAnswers(t)
	for i, p := range derivedAnswers(t) {
		if *sideBySideAll || i%10 == 0 {
			pairs = append(pairs, p)
		}
	}
	prm, minerva, _, _ := pythonVerdicts(t, pairs)
	s := scorertest.MustNew(t, mathverify.New, mathverify.Params{})
	ctx := context.Background()

	type tally struct{ n, agreePRM, agreeMinerva, consensus, agreeConsensus, rightRewardd, rightPRM, rightMinerva int }
	total := map[string]*tally{}
	var differ []string
	for i, p := range pairs {
		res := s.Score(ctx, scorertest.Rollout(p.completion, str(p.gold)))
		if res.Outcome != scorers.OK {
			t.Errorf("%s: gold %q, answer %q: %v (%s)", p.category, p.gold, p.answer, res.Outcome, res.Reason)
			continue
		}
		rw := res.Value == 1
		for _, key := range []string{"all", p.category} {
			tl := total[key]
			if tl == nil {
				tl = &tally{}
				total[key] = tl
			}
			tl.n++
			tl.agreePRM += b2i(rw == prm[i])
			tl.agreeMinerva += b2i(rw == minerva[i])
			if prm[i] == minerva[i] {
				tl.consensus++
				tl.agreeConsensus += b2i(rw == prm[i])
			}
			tl.rightRewardd += b2i(rw == (p.want == 1))
			tl.rightPRM += b2i(prm[i] == (p.want == 1))
			tl.rightMinerva += b2i(minerva[i] == (p.want == 1))
		}
		if rw != prm[i] {
			differ = append(differ, fmt.Sprintf("%s: gold %q answer %q: rewardd %v, prm800k %v, minerva %v, want %d",
				p.category, p.gold, p.answer, b2i(rw), b2i(prm[i]), b2i(minerva[i]), p.want))
		}
	}
	keys := make([]string, 0, len(total))
	for k := range total {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	t.Logf("%-26s %6s %8s %8s %10s %8s | right: %7s %7s %7s", "category", "n", "=prm800k", "=minerva", "consensus", "=both", "rewardd", "prm800k", "minerva")
	for _, k := range keys {
		tl := total[k]
		pct := func(a, n int) string { return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(max(n, 1))) }
		t.Logf("%-26s %6d %8s %8s %10d %8s | right: %7s %7s %7s", k, tl.n, pct(tl.agreePRM, tl.n), pct(tl.agreeMinerva, tl.n),
			tl.consensus, pct(tl.agreeConsensus, tl.consensus), pct(tl.rightRewardd, tl.n), pct(tl.rightPRM, tl.n), pct(tl.rightMinerva, tl.n))
	}
	for i, d := range differ {
		if i == 40 && !*sideBySideAll {
			t.Logf("… %d more", len(differ)-i)
			break
		}
		t.Log(d)
	}
	for _, c := range []struct {
		key  string
		n, a int
		min  float64
		what string
	}{
		{"real", total["real"].consensus, total["real"].agreeConsensus, 0.99, "real answers where the graders agree"},
		{"all", total["all"].n, total["all"].rightRewardd, 0.995, "answers, right or wrong by construction"},
	} {
		if got := float64(c.a) / float64(max(c.n, 1)); c.n == 0 || got < c.min {
			t.Errorf("rewardd is right on %d of %d %s (%.2f%%), want at least %.1f%%", c.a, c.n, c.what, 100*got, 100*c.min)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkSideBySide times rewardd and the Python graders on the same
// answers in one run: rewardd's CPU time per check on one goroutine (the
// whole set scored 20 times) against the CPU time graders.py reports per
// check for each grader, and their ratio.
//
//	go test -run '^$' -bench SideBySide -benchtime 1x ./scorers/mathverify
func BenchmarkSideBySide(b *testing.B) {
	pairs := append(realAnswers(b), derivedAnswers(b)...)
	s := scorertest.MustNew(b, mathverify.New, mathverify.Params{})
	ctx := context.Background()
	rollouts := make([]*scorers.Rollout, len(pairs))
	for i, p := range pairs {
		rollouts[i] = scorertest.Rollout(p.completion, str(p.gold))
	}
	var rewardd, prm, minerva time.Duration
	for b.Loop() {
		const passes = 20
		start := time.Now()
		for range passes {
			for _, r := range rollouts {
				if res := s.Score(ctx, r); res.Outcome != scorers.OK {
					b.Fatal(res)
				}
			}
		}
		rewardd = time.Since(start) / time.Duration(passes*len(rollouts))
		_, _, prm, minerva = pythonVerdicts(b, pairs)
	}
	b.ReportMetric(float64(len(pairs)), "answers")
	b.ReportMetric(float64(rewardd.Nanoseconds()), "rewardd-ns/check")
	b.ReportMetric(float64(prm.Nanoseconds()), "prm800k-ns/check")
	b.ReportMetric(float64(minerva.Nanoseconds()), "minerva-ns/check")
	b.ReportMetric(float64(prm)/float64(rewardd), "prm800k/rewardd")
}
