package server_test

import (
	"context"
	"strings"
	"testing"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// TestLooseRolloutsAreWarned (issue 19, item 6: rows with neither a group
// nor a prompt are each a group of their own, and their advantage was
// silently 0 under GRPO's batch and no scaling): the answer says how many
// there are and which comes first, in every mode and scale, and a request
// whose rollouts all have a group or a prompt gets no such warning.
func TestLooseRolloutsAreWarned(t *testing.T) {
	st := newStack(t, testConfig)
	loose := []*rewardv1.Rollout{
		{Group: "q1", Completion: "<answer>1</answer>", Fields: answerField("1")},
		{Group: "q1", Completion: "<answer>2</answer>", Fields: answerField("1")},
		{Completion: "<answer>1</answer>", Fields: answerField("1")},
		{Completion: "<answer>2</answer>", Fields: answerField("1")},
	}
	for _, agg := range []*rewardv1.Aggregation{
		{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE},
		{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE, Scale: rewardv1.AggregationScale_AGGREGATION_SCALE_BATCH},
		{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE, Scale: rewardv1.AggregationScale_AGGREGATION_SCALE_NONE},
		{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_NORMALIZE_THEN_SUM},
		{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_HATCHERY},
	} {
		resp, err := st.client.Score(context.Background(), &rewardv1.ScoreRequest{Aggregation: agg, Rollouts: loose})
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for _, w := range resp.GetWarnings() {
			if strings.Contains(w, "neither a group nor a prompt") {
				found = append(found, w)
			}
		}
		if len(found) != 1 || !strings.HasPrefix(found[0], "2 rollout(s)") || !strings.Contains(found[0], "first: rollout 2") {
			t.Errorf("%v %v: warnings %q; want one saying 2 rollouts have neither a group nor a prompt, the first rollout 2", agg.GetMode(), agg.GetScale(), resp.GetWarnings())
		}
	}

	grouped := []*rewardv1.Rollout{
		{Group: "q1", Completion: "<answer>1</answer>", Fields: answerField("1")},
		{Group: "q1", Completion: "<answer>2</answer>", Fields: answerField("1")},
		{Prompt: "What is 0+1?", Completion: "<answer>1</answer>", Fields: answerField("1")},
		{Prompt: "What is 0+1?", Completion: "<answer>2</answer>", Fields: answerField("1")},
	}
	resp, err := st.client.Score(context.Background(), &rewardv1.ScoreRequest{
		Aggregation: &rewardv1.Aggregation{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE, Scale: rewardv1.AggregationScale_AGGREGATION_SCALE_BATCH},
		Rollouts:    grouped,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetWarnings()) != 0 {
		t.Errorf("every rollout with a group or a prompt: warnings %q", resp.GetWarnings())
	}
}
