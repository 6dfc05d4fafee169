package regex_test

import (
	"context"
	"fmt"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/regex"
)

// A count function: one third of the reward per citation, up to three.
func Example() {
	s, err := regex.New(regex.Params{Pattern: `\[\d+\]`, Mode: regex.Count, CountTarget: new(3)})
	if err != nil {
		panic(err)
	}
	for _, text := range []string{"no sources", "see [1]", "see [1], [2], [3] and [4]"} {
		res := s.Score(context.Background(), &scorers.Rollout{Completion: text})
		fmt.Printf("%.2f %s\n", res.Value, text)
	}
	// Output:
	// 0.00 no sources
	// 0.33 see [1]
	// 1.00 see [1], [2], [3] and [4]
}

// Match mode anchors at the start of the completion, as Python's re.match.
func ExampleNew_match() {
	s, err := regex.New(regex.Params{Pattern: `(?s)^.*\n#### .+$`, Mode: regex.Match})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	fmt.Println(s.Score(ctx, &scorers.Rollout{Completion: "3+4=7\n#### 7"}).Value)
	fmt.Println(s.Score(ctx, &scorers.Rollout{Completion: "3+4=7, so 7"}).Value)
	// Output:
	// 1
	// 0
}
