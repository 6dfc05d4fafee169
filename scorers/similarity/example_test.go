package similarity_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/similarity"
)

// The three metrics on the same completion and reference.
func Example() {
	ctx := context.Background()
	r := &scorers.Rollout{
		Completion: "The cat sat on the mat.",
		Fields:     map[string]*structpb.Value{"answer": structpb.NewStringValue("the cat is on the mat.")},
	}
	for _, metric := range []string{similarity.Fuzzy, similarity.RougeL, similarity.BLEU} {
		s, err := similarity.New(similarity.Params{Metric: metric, Normalize: []string{"lower"}})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-7s %.4f\n", metric, s.Score(ctx, r).Value)
	}
	// Output:
	// fuzzy   0.9333
	// rouge_l 0.8333
	// bleu    0.3799
}

// With several references the best match counts; without any, the function
// does not apply.
func ExampleScorer_Score_references() {
	s, err := similarity.New(similarity.Params{Metric: similarity.Fuzzy})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	refs, _ := structpb.NewValue([]any{"sitting", "mitten"})
	res := s.Score(ctx, &scorers.Rollout{Completion: "kitten", Fields: map[string]*structpb.Value{"answer": refs}})
	fmt.Printf("%.4f\n", res.Value)
	res = s.Score(ctx, &scorers.Rollout{Completion: "kitten"})
	fmt.Printf("%v %q\n", res.Outcome, res.Reason)
	// Output:
	// 0.8333
	// not_applicable "no reference in field \"answer\""
}
