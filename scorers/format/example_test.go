package format_test

import (
	"context"
	"fmt"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/format"
)

// Strict and partial scoring of the same completions.
func Example() {
	strict, err := format.New(format.Params{Mode: format.Strict, Tags: []string{"think", "answer"}})
	if err != nil {
		panic(err)
	}
	partial, err := format.New(format.Params{Mode: format.Partial})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, text := range []string{
		"<think>\n7 is prime\n</think>\n<answer>\nyes\n</answer>",
		"<think>7 is prime</think> so: <answer>yes</answer>",
		"<think>7 is prime</think>",
	} {
		r := &scorers.Rollout{Completion: text}
		s, p := strict.Score(ctx, r), partial.Score(ctx, r)
		fmt.Printf("strict %v %-38q partial %.2f\n", s.Value, s.Reason, p.Value)
	}
	// Output:
	// strict 1 ""                                     partial 1.00
	// strict 0 "text between </think> and <answer>"   partial 1.00
	// strict 0 "tag <answer> missing"                 partial 0.50
}

// JSON mode reads the last ```json block when there is one.
func ExampleNew_json() {
	s, err := format.New(format.Params{Mode: format.JSON, RequiredKeys: []string{"answer"}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, text := range []string{
		"Result:\n```json\n{\"answer\": 42}\n```",
		`{"result": 42}`,
	} {
		res := s.Score(ctx, &scorers.Rollout{Completion: text})
		fmt.Printf("%v %q\n", res.Value, res.Reason)
	}
	// Output:
	// 1 ""
	// 0 "key \"answer\" missing"
}
