package instructions_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/instructions"
)

// A row of IFEval: two instructions, one followed. Prompt-level scoring
// (all) gives 0 and names the one missed; instruction-level (fraction)
// gives 0.5. An unknown id is an error, never a 0.
func Example() {
	row, _ := structpb.NewStruct(map[string]any{
		"instruction_id_list": []any{"punctuation:no_comma", "length_constraints:number_words"},
		"kwargs":              []any{map[string]any{}, map[string]any{"num_words": 5, "relation": "less than"}},
	})
	r := &scorers.Rollout{Completion: "Short, and sweet.", Fields: row.GetFields()}
	ctx := context.Background()
	for _, scoring := range []string{instructions.All, instructions.Fraction} {
		s, err := instructions.New(instructions.Params{Scoring: scoring})
		if err != nil {
			panic(err)
		}
		res := s.Score(ctx, r)
		fmt.Printf("%s: %v (%s)\n", scoring, res.Value, res.Reason)
	}

	bad, _ := structpb.NewStruct(map[string]any{"instruction_id_list": []any{"punctuation:no_semicolon"}})
	s, _ := instructions.New(instructions.Params{})
	res := s.Score(ctx, &scorers.Rollout{Completion: "Text.", Fields: bad.GetFields()})
	fmt.Println(res.Outcome, res.Reason)
	// Output:
	// all: 0 (not followed: punctuation:no_comma)
	// fraction: 0.5 (not followed: punctuation:no_comma)
	// error instruction 0: unknown instruction id "punctuation:no_semicolon" (rewardd knows IFEval's, open-instruct IFEvalG's and IFBench's)
}
