package mathverify_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
)

func Example() {
	s, err := mathverify.New(mathverify.Params{}) // the default extractor chain, exact comparison
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, c := range []struct{ gold, completion string }{
		{`\frac{1}{2}`, `So the probability is $\boxed{0.5}$.`},
		{`\frac{1}{2}`, `The answer is $\dfrac{2}{4}$.`},
		{`\frac{1}{2}`, `\boxed{2}`},
		{`2\sqrt{2}`, `<answer>\sqrt{8}</answer>`},
		{`x > 1`, `The solution set is $(1, \infty)$.`},
		{`x > 1`, `The solution set is $(-\infty, 1)$.`},
		{`\{1, 2\}`, `\boxed{(1, 2)}`},
		{`x = \pm 3`, `\boxed{x = 3 \text{ or } x = -3}`},
		{`x^2 + 2x + 1`, `\boxed{(x+1)^2}`},
		{`\frac{1}{3}`, `\boxed{0.333}`},
		{`18`, `I don't know.`},
	} {
		row := map[string]*structpb.Value{"answer": structpb.NewStringValue(c.gold)}
		res := s.Score(ctx, &scorers.Rollout{Completion: c.completion, Fields: row})
		fmt.Printf("%-14s %-45s %v", c.gold, c.completion, res.Value)
		if res.Reason != "" {
			fmt.Printf(" (%s)", res.Reason)
		}
		fmt.Println()
	}

	// A looser tolerance accepts rounded decimals.
	loose, err := mathverify.New(mathverify.Params{Tolerance: 0.01})
	if err != nil {
		panic(err)
	}
	row := map[string]*structpb.Value{"answer": structpb.NewStringValue(`\frac{1}{3}`)}
	fmt.Println(loose.Score(ctx, &scorers.Rollout{Completion: `\boxed{0.333}`, Fields: row}).Value)

	// No reference: not applicable. A reference that cannot be read (or is
	// undefined) is compared as normalised text.
	fmt.Println(s.Score(ctx, &scorers.Rollout{Completion: `\boxed{1}`}).Outcome)
	row = map[string]*structpb.Value{"answer": structpb.NewStringValue(`1/0`)}
	fmt.Println(s.Score(ctx, &scorers.Rollout{Completion: `\boxed{1}`, Fields: row}).Value)
	fmt.Println(s.Score(ctx, &scorers.Rollout{Completion: `\boxed{1 / 0}`, Fields: row}).Value)
	// Output:
	// \frac{1}{2}    So the probability is $\boxed{0.5}$.          1
	// \frac{1}{2}    The answer is $\dfrac{2}{4}$.                 1
	// \frac{1}{2}    \boxed{2}                                     0
	// 2\sqrt{2}      <answer>\sqrt{8}</answer>                     1
	// x > 1          The solution set is $(1, \infty)$.            1
	// x > 1          The solution set is $(-\infty, 1)$.           0
	// \{1, 2\}       \boxed{(1, 2)}                                0
	// x = \pm 3      \boxed{x = 3 \text{ or } x = -3}              1
	// x^2 + 2x + 1   \boxed{(x+1)^2}                               1
	// \frac{1}{3}    \boxed{0.333}                                 0
	// 18             I don't know.                                 0 (no answer found)
	// 1
	// not_applicable
	// 0
	// 1
}
