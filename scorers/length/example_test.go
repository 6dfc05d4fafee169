package length_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/length"
)

// DAPO's soft overlong punishment, with the paper's sizes in tokens: no
// penalty up to 16,384 tokens, then linear down to −1 at 20,480.
func Example() {
	s, err := length.New(length.Params{
		Mode:         length.Overlong,
		Unit:         length.Tokens, // the trainer sends completion_tokens
		MaxLength:    new(20480),
		BufferLength: new(4096),
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, n := range []float64{1000, 16384, 18432, 20480, 30000} {
		r := &scorers.Rollout{Fields: map[string]*structpb.Value{"completion_tokens": structpb.NewNumberValue(n)}}
		fmt.Printf("%5v tokens: %v\n", n, s.Score(ctx, r).Value)
	}
	res := s.Score(ctx, &scorers.Rollout{Completion: "no count sent"})
	fmt.Printf("%v %q\n", res.Outcome, res.Reason)
	// Output:
	//  1000 tokens: 0
	// 16384 tokens: 0
	// 18432 tokens: -0.5
	// 20480 tokens: -1
	// 30000 tokens: -1
	// error "no token count in field \"completion_tokens\""
}

// The Kimi 1.5 length reward needs the whole group: Score alone refuses, and
// ScoreGroup compares each completion with the shortest and longest.
func ExampleScorer_ScoreGroup() {
	s, err := length.New(length.Params{Mode: length.Kimi})
	if err != nil {
		panic(err)
	}
	row := func(completion string, correct bool) *scorers.Rollout {
		return &scorers.Rollout{Completion: completion, Fields: map[string]*structpb.Value{
			"correct": structpb.NewBoolValue(correct),
		}}
	}
	group := []*scorers.Rollout{
		row("The answer is 18.", true),                                           // 4 words, the shortest
		row("16 - 3 - 4 = 9 eggs, sold at $2 each: 18.", true),                   // 13 words
		row("Janet has 16 eggs. She eats 3 and bakes 4, so 9 at $2: 20.", false), // 15 words
		row("Hmm.", false), // 1 word, but wrong: no bonus
	}
	ctx := context.Background()
	fmt.Println(s.Score(ctx, group[0]).Outcome)
	out := make([]scorers.Result, len(group))
	s.ScoreGroup(ctx, group, out)
	for _, res := range out {
		fmt.Printf("%.3f\n", res.Value)
	}
	// Output:
	// error
	// 0.286
	// -0.357
	// -0.500
	// 0.000
}
