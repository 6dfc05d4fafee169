package repetition_test

import (
	"context"
	"fmt"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/repetition"
)

// open-r1's defaults: trigrams of words, at most −1.
func Example() {
	s, err := repetition.New(repetition.Params{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, text := range []string{
		"She sells 9 eggs at $2 each, so she makes $18.",
		"So the answer is 18. So the answer is 18. So the answer is 18.",
		"18",
	} {
		res := s.Score(ctx, &scorers.Rollout{Completion: text})
		fmt.Printf("%.3f %q\n", res.Value, res.Reason)
	}
	// Output:
	// 0.000 ""
	// -0.615 ""
	// 0.000 "shorter than 3 words"
}
