package mathverify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// reasoning is a GSM8K/MATH-sized (about 400 bytes) chain of thought put
// before each benchmark answer, with the dollar signs, numbers and inline
// math that the extractors must scan past.
const reasoning = "Let the number of apples be $a$. Janet buys 16 eggs at $2 each and sells 3 of them, " +
	"so she has 16 - 3 = 13 left; the ratio is $\\frac{13}{16}$ of the total. Then we square both sides: " +
	"$(x+1)^2 = x^2 + 2x + 1$, and since $x > 0$ we may divide by $x$. Checking the case x = 2 gives 9, " +
	"which is consistent with the 1,000 trials above (error below 0.5%). Therefore, collecting terms, we get:\n"

// mixedRollouts returns one rollout per row of the equivalence table (every
// category, right and wrong answers, errors left out) after the reasoning.
func mixedRollouts(b *testing.B) []*scorers.Rollout {
	var rs []*scorers.Rollout
	for _, c := range loadEquivalence(b) {
		if c.want == "error" || c.params != "{}" {
			continue
		}
		rs = append(rs, scorertest.Rollout(reasoning+c.completion(), str(c.gold)))
	}
	return rs
}

func gsm8kRollouts(b *testing.B) []*scorers.Rollout {
	rows := scorertest.GSM8K(b)
	rs := make([]*scorers.Rollout, len(rows))
	for i, row := range rows {
		rs[i] = scorertest.Rollout(row.Solution, str(row.Final))
	}
	return rs
}

// BenchmarkScore is one check (one rollout against its gold) with the
// default configuration; checks/s is per core (one goroutine).
//
//   - mixed: every case of testdata/equivalence.tsv after 400 bytes of
//     reasoning;
//   - gsm8k: the 1,319 GSM8K gold solutions (answer found by last_number
//     after the other extractors find nothing);
//   - budget: adversarial answers that spend the whole default step budget
//     (the worst case of a check).
func BenchmarkScore(b *testing.B) {
	s := scorertest.MustNew(b, mathverify.New, mathverify.Params{})
	for _, bc := range []struct {
		name     string
		rollouts func(*testing.B) []*scorers.Rollout
	}{
		{"mixed", mixedRollouts},
		{"gsm8k", gsm8kRollouts},
		{"budget", budgetRollouts},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rs := bc.rollouts(b)
			scorertest.Bench(b, s, rs, applies)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
		})
	}
}

// BenchmarkScoreParallel is the mixed workload on all cores (GOMAXPROCS,
// see -cpu).
func BenchmarkScoreParallel(b *testing.B) {
	s := scorertest.MustNew(b, mathverify.New, mathverify.Params{})
	rs := mixedRollouts(b)
	scorertest.BenchParallel(b, s, rs, applies, "checks/s")
}

// applies is a want for the benchmarks: a check of any outcome but
// NotApplicable (the budget rollouts are Errors).
func applies(res scorers.Result) bool { return res.Outcome != scorers.NotApplicable }

// budgetRollouts are checks that exhaust the default step budget.
func budgetRollouts(b *testing.B) []*scorers.Rollout {
	var rs []*scorers.Rollout
	for _, answer := range adversarial {
		r := scorertest.Rollout(`\boxed{`+answer+`}`, str(answer))
		if res := scorertest.MustNew(b, mathverify.New, mathverify.Params{}).Score(context.Background(), r); !strings.Contains(res.Reason, "step budget") {
			continue
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		b.Fatal("no adversarial answer exhausts the budget")
	}
	return rs
}

// adversarial are answers built to cost as much as possible.
var adversarial = []string{
	strings.Repeat("(x+1)*", 3000) + "1",
	strings.Repeat("x+", 20000) + "x",
	strings.Repeat("1, ", 3000) + "1",
	strings.Repeat(`\sqrt{`, 60) + "2" + strings.Repeat("}", 60),
	strings.Repeat(`(`, 5000) + "1" + strings.Repeat(`)`, 5000),
	strings.Repeat(`\frac{x}{`, 60) + "2" + strings.Repeat("}", 60),
	strings.Repeat("x_1 y_2 ", 5000),
	strings.Repeat("(1,2), ", 2000) + "(1,2)",
	`2^{2^{2^{2^{2^{2}}}}}`,
	`(10^{4000})!`,
	"9" + strings.Repeat("9", 3999) + "e4000",
	strings.Repeat(`\pm 1`, 4),
}
