package server_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// weightsConfig weighs its two functions in the config.
const weightsConfig = `
functions:
  - {name: a, kind: exact_match, reference_field: answer, extract: [answer_tag]}
  - {name: b, kind: format, mode: partial}
weights: {a: 2, b: 0.5}
`

// TestWeightPrecedence pins down which weight applies (docs/aggregation.md,
// "Which weight applies"): a request's aggregation.weights entry wins for
// its function, the config's weights for the others, 1 for an inline
// function the request does not weigh; GDPO weighs the normalized
// per-function advantages with the same weights; hatchery applies none
// (a warning names the config's, a request's other than 1 is refused);
// /get_reward and /verify weigh with the config's.
func TestWeightPrecedence(t *testing.T) {
	st := newStack(t, weightsConfig)
	// a: 1, 0, 1; b: 1, 0.5, 0.5; c (inline, regex 42): 1, 0, 1.
	completions := []string{"<think>x</think><answer>42</answer>", "<answer>41</answer>", "<answer>42</answer>"}
	request := func(mode rewardv1.AggregationMode, weights map[string]float64, inline bool) *rewardv1.ScoreRequest {
		req := &rewardv1.ScoreRequest{Aggregation: &rewardv1.Aggregation{Mode: mode, Weights: weights}}
		if mode == rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE {
			req.Aggregation.Scale = rewardv1.AggregationScale_AGGREGATION_SCALE_NONE
		}
		for _, c := range completions {
			req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Group: "g", Completion: c, Fields: answerField("42")})
		}
		if inline {
			params, _ := structpb.NewStruct(map[string]any{"pattern": "42"})
			req.Functions = []string{"a", "b"}
			req.Inline = []*rewardv1.FunctionSpec{{Name: "c", Kind: "regex", Params: params}}
		}
		return req
	}
	grpo := rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE
	for _, c := range []struct {
		name    string
		weights map[string]float64
		inline  bool
		want    []float64
	}{
		{"the config's", nil, false, []float64{2*1 + 0.5*1, 0.5 * 0.5, 2 + 0.5*0.5}},
		{"the request's for a, the config's for b", map[string]float64{"a": 1}, false, []float64{1 + 0.5, 0.25, 1 + 0.25}},
		{"the request's for both", map[string]float64{"a": 0, "b": 4}, false, []float64{4, 2, 2}},
		{"an inline function: 1", nil, true, []float64{2.5 + 1, 0.25, 2.25 + 1}},
		{"an inline function: the request's", map[string]float64{"c": 3}, true, []float64{2.5 + 3, 0.25, 2.25 + 3}},
	} {
		resp, err := st.client.Score(context.Background(), request(grpo, c.weights, c.inline))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i, want := range c.want {
			if got := resp.GetRewards()[i]; math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: reward %d = %v, want %v", c.name, i, got, want)
			}
		}
	}

	// GDPO: a request weight of 0 for b leaves a's normalized advantage
	// alone, whatever the config's weight of b.
	gdpo := rewardv1.AggregationMode_AGGREGATION_MODE_NORMALIZE_THEN_SUM
	zeroB, err := st.client.Score(context.Background(), request(gdpo, map[string]float64{"b": 0}, false))
	if err != nil {
		t.Fatal(err)
	}
	onlyA := request(gdpo, nil, false)
	onlyA.Functions = []string{"a"}
	aAlone, err := st.client.Score(context.Background(), onlyA)
	if err != nil {
		t.Fatal(err)
	}
	withB, err := st.client.Score(context.Background(), request(gdpo, nil, false))
	if err != nil {
		t.Fatal(err)
	}
	for i := range completions {
		if math.Abs(zeroB.GetAdvantages()[i]-aAlone.GetAdvantages()[i]) > 1e-9 {
			t.Errorf("GDPO with b weighed 0: advantage %d = %v, a alone gives %v", i, zeroB.GetAdvantages()[i], aAlone.GetAdvantages()[i])
		}
	}
	if math.Abs(withB.GetAdvantages()[1]-aAlone.GetAdvantages()[1]) < 1e-6 {
		t.Errorf("GDPO with the config's weight of b gives a's advantages alone (%v): the weight is not applied", withB.GetAdvantages())
	}

	// Hatchery: unweighted; the config's weights are named in a warning,
	// a request's other than 1 refused.
	hatchery := rewardv1.AggregationMode_AGGREGATION_MODE_HATCHERY
	resp, err := st.client.Score(context.Background(), request(hatchery, nil, false))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetRewards(); got[0] != 2 || got[1] != 0.5 || got[2] != 1.5 || !strings.Contains(strings.Join(resp.GetWarnings(), " "), "a: 2, b: 0.5") {
		t.Errorf("hatchery: rewards %v, warnings %q; want the unweighted sums 2, 0.5, 1.5 and a warning naming the config's weights", got, resp.GetWarnings())
	}
	if _, err := st.client.Score(context.Background(), request(hatchery, map[string]float64{"a": 2}, false)); status.Code(err) != codes.InvalidArgument {
		t.Errorf("hatchery with a request weight of 2: %v, want INVALID_ARGUMENT", err)
	}

	// The compatibility endpoints weigh with the config's weights.
	code, out := post(t, st.httpURL+"/get_reward", []byte(`{"query": ["<think>x</think><answer>42</answer>", "<answer>41</answer>"], "labels": ["42", "42"]}`))
	if code != 200 || !strings.Contains(string(out), `"rewards":[2.5,0.25]`) {
		t.Errorf("/get_reward: %d %s, want rewards [2.5, 0.25] (the config's weights)", code, out)
	}
}
