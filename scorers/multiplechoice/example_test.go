package multiplechoice_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/multiplechoice"
)

// GPQA-style completions against the correct letter C: the letter is read
// from the forms models write; several letters, or none, score 0 with a
// reason.
func Example() {
	s, err := multiplechoice.New(multiplechoice.Params{})
	if err != nil {
		panic(err)
	}
	ref := map[string]*structpb.Value{"answer": structpb.NewStringValue("C")}
	for _, completion := range []string{
		`Comparing the energies, the answer is \boxed{C}.`,
		"**Final Answer:** (C)",
		"The answer is B.",
		"It is either A or C.\nThe answer is A or C.",
		"I don't know.",
	} {
		res := s.Score(context.Background(), &scorers.Rollout{Completion: completion, Fields: ref})
		fmt.Printf("%v %q\n", res.Value, res.Reason)
	}
	// Output:
	// 1 ""
	// 1 ""
	// 0 "answered B, the answer is C"
	// 0 "several letters (A, C)"
	// 0 "abstained"
}
