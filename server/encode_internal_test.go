package server

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// TestMarshalResponse: marshalResponse's bytes decode to the response it
// was given, whatever its functions hold, and it leaves the response as it
// was.
func TestMarshalResponse(t *testing.T) {
	ok, na, bad := rewardv1.ScoreStatus_SCORE_STATUS_OK, rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE, rewardv1.ScoreStatus_SCORE_STATUS_ERROR
	many := &rewardv1.FunctionScores{Name: "format", Errors: map[int32]string{}}
	for i := range 1000 {
		many.Values = append(many.Values, 0)
		many.Status = append(many.Status, ok)
		many.Errors[int32(i)] = "missing <think> tags"[:i%20]
	}
	cases := map[string]*rewardv1.ScoreResponse{
		"empty":        {},
		"no functions": {BatchId: "b", Warnings: []string{"w"}, ConfigFingerprint: "sha256:x"},
		"every field": {
			BatchId: "step-3", ConfigFingerprint: "sha256:x", Unscorable: 1, Warnings: []string{"a", "b"},
			Rewards: []float64{1, 0, 0}, Advantages: []float64{0.7, -0.7, 0},
			Functions: []*rewardv1.FunctionScores{
				{Name: "accuracy", Values: []float64{1, 0, math.NaN()}, Status: []rewardv1.ScoreStatus{ok, ok, na},
					Errors: map[int32]string{1: "no answer found", 2: `row has no "answer"`, 0: ""}},
				{Name: "tests", Values: []float64{0.5, math.NaN(), math.NaN()}, Status: []rewardv1.ScoreStatus{ok, bad, na},
					Errors:     map[int32]string{1: "sandbox: fork server died twice", -1: "negative key"},
					Executions: map[int32]*rewardv1.Execution{0: {Language: "python", Verdict: rewardv1.Verdict_VERDICT_WRONG_ANSWER, Passed: 1, Total: 2}}},
				{Name: "empty"},
			},
		},
		"a reason per rollout": {Functions: []*rewardv1.FunctionScores{many, many}},
	}
	for name, resp := range cases {
		t.Run(name, func(t *testing.T) {
			before := proto.Clone(resp)
			b, err := marshalResponse(resp, func(size int) []byte { return make([]byte, size) })
			if err != nil {
				t.Fatal(err)
			}
			var got rewardv1.ScoreResponse
			if err := proto.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(&got, resp) {
				t.Errorf("decodes to another response")
			}
			if !proto.Equal(resp, before) || len(resp.GetFunctions()) != len(before.(*rewardv1.ScoreResponse).GetFunctions()) {
				t.Errorf("the response changed")
			}
			if want := proto.Size(resp); len(b) != want {
				t.Errorf("%d bytes, proto.Marshal makes %d", len(b), want)
			}
		})
	}
}
