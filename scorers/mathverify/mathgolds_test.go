package mathverify_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// mathTestPath is the MATH test set (Hendrycks et al., 5,000 problems, MIT),
// as ToRA ships it, beside the repository.
const mathTestPath = "../../../shared/data/math_test.jsonl"

// mathGolds returns the gold answer of each problem of the MATH test set:
// the content of the last \boxed{…} of its solution, cut out here with the
// standard library, independently of the extractors under test. It skips
// the test when the file is absent, and fails it when a solution has no box.
func mathGolds(tb testing.TB) []string {
	tb.Helper()
	rows := scorertest.ReadJSONL[struct{ Solution string }](tb, mathTestPath)
	golds := make([]string, len(rows))
	for i, row := range rows {
		g, ok := lastBoxed(row.Solution)
		if !ok {
			tb.Fatalf("%s line %d: no \\boxed{…} in the solution", mathTestPath, i+1)
		}
		golds[i] = g
	}
	return golds
}

// lastBoxed returns the content of the last \boxed{…} of s.
func lastBoxed(s string) (string, bool) {
	i := strings.LastIndex(s, `\boxed{`)
	if i < 0 {
		return "", false
	}
	start := i + len(`\boxed{`)
	depth := 1
	for j := start; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return s[start:j], true
			}
		}
	}
	return "", false
}

// A rewrite turns a gold answer into another way of writing it that models
// use; it reports false when it does not apply to that gold.
type rewrite struct {
	name string
	f    func(string) (string, bool)
}

var (
	plainNumber = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
	textCommand = regexp.MustCompile(`\\text\{([^{}]*)\}`)
	zeroPoint   = regexp.MustCompile(`(^|[^\d])0\.(\d)`)
	barePoint   = regexp.MustCompile(`(^|[^\d.])\.(\d)`)
)

// rewrites are the ways of writing a gold answer that issue 18 lists.
var rewrites = []rewrite{
	{"as is", func(g string) (string, bool) { return g, true }},
	{`\frac and \dfrac`, func(g string) (string, bool) {
		if strings.Contains(g, `\dfrac`) || strings.Contains(g, `\tfrac`) {
			return strings.NewReplacer(`\dfrac`, `\frac`, `\tfrac`, `\frac`).Replace(g), true
		}
		return strings.ReplaceAll(g, `\frac`, `\dfrac`), strings.Contains(g, `\frac`)
	}},
	{`\left( and (`, func(g string) (string, bool) {
		if strings.Contains(g, `\left`) {
			return strings.NewReplacer(`\left`, "", `\right`, "").Replace(g), true
		}
		return strings.NewReplacer("(", `\left(`, ")", `\right)`).Replace(g), strings.Contains(g, "(")
	}},
	{"no spaces", func(g string) (string, bool) {
		var b strings.Builder
		for i := 0; i < len(g); i++ {
			if g[i] == ' ' && !afterCommand(g[:i]) && !strings.HasSuffix(g[:i], `\`) {
				continue
			}
			b.WriteByte(g[i])
		}
		return b.String(), strings.Contains(g, " ")
	}},
	{"more spaces", func(g string) (string, bool) {
		out := strings.NewReplacer(", ", ", ", ",", ", ", "=", " = ", "+", " + ").Replace(g)
		out = strings.ReplaceAll(out, `, \!`, `,\!`) // a thousands separator stays one
		return out, out != g
	}},
	{`^\circ`, func(g string) (string, bool) {
		if strings.Contains(g, `^\circ`) || strings.Contains(g, `^{\circ}`) {
			return strings.NewReplacer(`^\circ`, "", `^{\circ}`, "").Replace(g), true
		}
		return g + `^\circ`, plainNumber.MatchString(g)
	}},
	{`\text{}`, func(g string) (string, bool) {
		if textCommand.MatchString(g) {
			return textCommand.ReplaceAllString(g, "$1"), true
		}
		return `\text{` + g + "}", true
	}},
	{"leading zero", func(g string) (string, bool) {
		if zeroPoint.MatchString(g) {
			return zeroPoint.ReplaceAllString(g, "$1.$2"), true
		}
		return barePoint.ReplaceAllString(g, "${1}0.$2"), barePoint.MatchString(g)
	}},
}

// afterCommand reports whether s ends in the name of a TeX command (\pi),
// after which a space cannot be dropped.
func afterCommand(s string) bool {
	i := len(s)
	for i > 0 && ('a' <= s[i-1] && s[i-1] <= 'z' || 'A' <= s[i-1] && s[i-1] <= 'Z') {
		i--
	}
	return i < len(s) && i > 0 && s[i-1] == '\\'
}

// perturb changes the last digit of a gold answer (9 becomes 0, others go
// up by one), other than the power of a unit (cm^2); it reports false for
// a gold without such a digit.
func perturb(g string) (string, bool) {
	for i := len(g) - 1; i >= 0; i-- {
		if g[i] < '0' || g[i] > '9' || strings.HasSuffix(g[:i], "}^") || strings.HasSuffix(g[:i], "}^{") {
			continue
		}
		return g[:i] + string('0'+(g[i]-'0'+1)%10) + g[i+1:], true
	}
	return "", false
}

// TestMATHGolds scores the gold answer of each of the 5,000 MATH test
// problems against itself and against the rewrites models make of it (each
// a 1), and against a copy with its last digit changed (a 0), every answer
// boxed at the end of a sentence as a model writes it. No check may be an
// ERROR.
func TestMATHGolds(t *testing.T) {
	golds := mathGolds(t)
	if len(golds) != 5000 {
		t.Errorf("read %d golds, want 5000", len(golds))
	}
	s := scorertest.MustNew(t, mathverify.New, mathverify.Params{})
	ctx := context.Background()
	failures, checks := 0, 0
	per := map[string]int{}
	check := func(i int, what, gold, answer string, want float64) {
		checks++
		per[what]++
		res := s.Score(ctx, scorertest.Rollout(`So the answer is $\boxed{`+answer+`}$.`, str(gold)))
		if res.Outcome == scorers.OK && res.Value == want {
			return
		}
		if failures++; failures <= 20 {
			t.Errorf("problem %d, %s: gold %q, answer %q: %v %v (%s), want %v", i, what, gold, answer, res.Outcome, res.Value, res.Reason, want)
		}
	}
	for i, g := range golds {
		for _, rw := range rewrites {
			if answer, ok := rw.f(g); ok {
				check(i, rw.name, g, answer, 1)
			}
		}
		if answer, ok := perturb(g); ok {
			check(i, "last digit changed", g, answer, 0)
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d checks failed", failures, checks)
	}
	t.Logf("%d checks on %d golds: %v", checks, len(golds), per)
}

// TestMATHBare scores the same answers as TestMATHGolds written bare, as
// a dataset's answer field or an extracted span holds them (no $, box or
// tag), and requires the verdict of the boxed answer: a bare answer is
// read whole, never cut down to its last number.
func TestMATHBare(t *testing.T) {
	golds := mathGolds(t)
	s := scorertest.MustNew(t, mathverify.New, mathverify.Params{})
	ctx := context.Background()
	differ, checks := 0, 0
	check := func(i int, what, gold, answer string) {
		checks++
		boxed := s.Score(ctx, scorertest.Rollout(`\boxed{`+answer+`}`, str(gold)))
		bare := s.Score(ctx, scorertest.Rollout(answer, str(gold)))
		if bare.Outcome == boxed.Outcome && bare.Value == boxed.Value {
			return
		}
		if differ++; differ <= 20 {
			t.Errorf("problem %d, %s: gold %q, answer %q: bare %v %v (%s), boxed %v %v", i, what, gold, answer,
				bare.Outcome, bare.Value, bare.Reason, boxed.Outcome, boxed.Value)
		}
	}
	for i, g := range golds {
		for _, rw := range rewrites {
			if answer, ok := rw.f(g); ok {
				check(i, rw.name, g, answer)
			}
		}
		if answer, ok := perturb(g); ok {
			check(i, "last digit changed", g, answer)
		}
	}
	t.Logf("bare and boxed agree on %d of %d answers", checks-differ, checks)
	if differ > 0 {
		t.Errorf("%d of %d bare answers scored unlike their boxed form", differ, checks)
	}
}
