package exactmatch_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
)

func Example() {
	s, err := exactmatch.New(exactmatch.Params{
		Extract:   []string{"boxed", "answer_tag", "gsm8k", "last_number"},
		Normalize: []string{"strip", "numeric"},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	row := map[string]*structpb.Value{"answer": structpb.NewStringValue("1234")}
	for _, completion := range []string{
		`So the total is $\boxed{1,234}$.`,
		"<answer>1234.0</answer>",
		"I think it is 1,243.",
		"I don't know.",
	} {
		res := s.Score(ctx, &scorers.Rollout{Completion: completion, Fields: row})
		fmt.Printf("%v %q\n", res.Value, res.Reason)
	}
	res := s.Score(ctx, &scorers.Rollout{Completion: "1234"}) // no reference
	fmt.Printf("%v %q\n", res.Outcome, res.Reason)
	// Output:
	// 1 ""
	// 1 ""
	// 0 ""
	// 0 "no answer found"
	// not_applicable "no reference in field \"answer\""
}
