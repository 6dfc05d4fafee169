package aggregate_test

import (
	"fmt"
	"math"

	"github.com/rewardd/rewardd/server/aggregate"
)

// Two prompts, two completions each, scored by an accuracy function and a
// format function weighted 0.2. The format function does not apply to the
// last completion (NaN: TRL's None), so that rollout's reward is its accuracy
// alone.
func ExampleCompute() {
	groups := []string{"q1", "q1", "q2", "q2"}
	scores := [][]float64{
		{1, 0, 0, 1},          // accuracy
		{1, 1, 0, math.NaN()}, // format
	}
	spec := aggregate.Spec{Mode: aggregate.SumThenNormalize, Scale: aggregate.ScaleGroup, Weights: []float64{1, 0.2}}
	res, err := aggregate.Compute(spec, groups, scores)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range groups {
		fmt.Printf("%s reward %.1f advantage %+.4f\n", groups[i], res.Rewards[i], res.Advantages[i])
	}
	// Output:
	// q1 reward 1.2 advantage +0.7070
	// q1 reward 0.2 advantage -0.7070
	// q2 reward 0.0 advantage -0.7070
	// q2 reward 1.0 advantage +0.7070
}

// Mode and scale come from configuration by name.
func ExampleParseMode() {
	mode, err := aggregate.ParseMode("normalize_then_sum")
	fmt.Println(mode, err)
	_, err = aggregate.ParseMode("gdpo")
	fmt.Println(err)
	// Output:
	// normalize_then_sum <nil>
	// unknown aggregation mode "gdpo" (valid: sum_then_normalize, normalize_then_sum, hatchery)
}
