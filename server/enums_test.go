package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// TestHTTPConfigEnumNames (issue 19, item 12): POST /v1/score takes the
// aggregation's mode and scale as the config file spells them, beside the
// proto's names, and answers the same; a value that is neither is a 400
// listing the valid ones.
func TestHTTPConfigEnumNames(t *testing.T) {
	st := newStack(t, testConfig)
	const rollouts = `"rollouts": [{"group": "q", "completion": "<answer>42</answer>", "fields": {"answer": "42"}},
		{"group": "q", "completion": "<answer>41</answer>", "fields": {"answer": "42"}},
		{"group": "q", "completion": "no idea", "fields": {"answer": "42"}}]`
	score := func(agg string) (int, []byte) {
		return post(t, st.httpURL+"/v1/score", []byte(`{"aggregation": `+agg+`, `+rollouts+`}`))
	}
	for short, long := range map[string]string{
		`{"mode": "sum_then_normalize", "scale": "batch"}`: `{"mode": "AGGREGATION_MODE_SUM_THEN_NORMALIZE", "scale": "AGGREGATION_SCALE_BATCH"}`,
		`{"mode": "normalize_then_sum"}`:                   `{"mode": "AGGREGATION_MODE_NORMALIZE_THEN_SUM"}`,
		`{"mode": "hatchery", "scale": "group"}`:           `{"mode": 3, "scale": "AGGREGATION_SCALE_GROUP"}`,
	} {
		code, out := score(short)
		var got, want rewardv1.ScoreResponse
		if err := protojson.Unmarshal(out, &got); code != http.StatusOK || err != nil {
			t.Errorf("%s: %d %s", short, code, out)
			continue
		}
		code, out = score(long)
		if err := protojson.Unmarshal(out, &want); code != http.StatusOK || err != nil {
			t.Fatalf("%s: %d %s", long, code, out)
		}
		if len(got.GetAdvantages()) != 3 || !slices.Equal(got.GetAdvantages(), want.GetAdvantages()) {
			t.Errorf("%s: advantages %v, %s gives %v", short, got.GetAdvantages(), long, want.GetAdvantages())
		}
	}
	for _, c := range []struct{ agg, names string }{
		{`{"mode": "grpo"}`, "sum_then_normalize, normalize_then_sum, hatchery"},
		{`{"mode": "hatchery", "scale": "groups"}`, "group, batch, none"},
	} {
		code, out := score(c.agg)
		var s struct{ Message string }
		if json.Unmarshal(out, &s); code != http.StatusBadRequest || !strings.Contains(s.Message, c.names) || !strings.Contains(s.Message, "AGGREGATION_") {
			t.Errorf("%s: %d %s; want a 400 listing %s and the proto names", c.agg, code, out, c.names)
		}
	}
}

// TestHatcheryWithWeightedConfig (issue 19, item 12): a request may ask for
// Hatchery's unweighted sum from a server whose config weighs its
// functions: the config's weights are not applied, and the answer says so;
// a weight the request itself gives is refused, naming its function.
func TestHatcheryWithWeightedConfig(t *testing.T) {
	st := newStack(t, testConfig+"weights: {accuracy: 1.0, format: 0.2}\n")
	req := &rewardv1.ScoreRequest{
		Functions:   []string{"accuracy", "format"},
		Aggregation: &rewardv1.Aggregation{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_HATCHERY},
		Rollouts: []*rewardv1.Rollout{
			{Group: "q", Completion: "<think>x</think><answer>42</answer>", Fields: answerField("42")},
			{Group: "q", Completion: "<answer>41</answer>", Fields: answerField("42")},
		},
	}
	resp, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatalf("hatchery on a weighted config: %v", err)
	}
	if got := resp.GetRewards(); len(got) != 2 || got[0] != 2 || got[1] != 0 {
		t.Errorf("rewards %v, want the unweighted sums [2 0]", got)
	}
	if w := resp.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "format: 0.2") {
		t.Errorf("warnings %q, want one naming the weight not applied (format: 0.2)", w)
	}
	req.Aggregation.Weights = map[string]float64{"format": 0.5}
	_, err = st.client.Score(context.Background(), req)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), `aggregation.weights["format"]`) {
		t.Errorf("hatchery with a request weight: %v, want INVALID_ARGUMENT naming aggregation.weights[\"format\"]", err)
	}
}

// TestHTTPNaN (issue 19, item 12): what the JSON endpoints send for a
// function that gave no score, as the README says. POST /v1/score follows
// the proto's JSON mapping: the value is the string "NaN" (which protojson
// and Python's json_format read back as NaN), its status beside it; the
// other trainers' bodies send null, their outcome beside it. Rewards and
// advantages are numbers.
func TestHTTPNaN(t *testing.T) {
	st := newStack(t, compatConfig)
	code, out := post(t, st.httpURL+"/v1/score", []byte(`{"functions": ["accuracy"], "aggregation": {"mode": "sum_then_normalize"},
		"rollouts": [{"group": "q", "completion": "<answer>42</answer>", "fields": {"answer": "42"}}, {"group": "q", "completion": "<answer>42</answer>"}]}`))
	var raw struct {
		Functions []struct {
			Values []any    `json:"values"`
			Status []string `json:"status"`
		} `json:"functions"`
		Rewards    []any `json:"rewards"`
		Advantages []any `json:"advantages"`
	}
	if err := json.Unmarshal(out, &raw); code != http.StatusOK || err != nil || len(raw.Functions) != 1 {
		t.Fatalf("POST /v1/score: %d %s", code, out)
	}
	fs := raw.Functions[0]
	if fs.Values[0] != 1.0 || fs.Status[0] != "SCORE_STATUS_OK" || fs.Values[1] != "NaN" || fs.Status[1] != "SCORE_STATUS_NOT_APPLICABLE" {
		t.Errorf("/v1/score values %v, status %v; want [1 \"NaN\"], [SCORE_STATUS_OK SCORE_STATUS_NOT_APPLICABLE]", fs.Values, fs.Status)
	}
	for _, v := range append(raw.Rewards, raw.Advantages...) {
		if _, ok := v.(float64); !ok {
			t.Errorf("/v1/score rewards %v advantages %v: want numbers", raw.Rewards, raw.Advantages)
		}
	}

	code, out = post(t, st.httpURL+"/get_reward", []byte(`{"query": ["<answer>42</answer>", "<answer>42</answer>"], "labels": ["42", "42"]}`+"\n"))
	var gr struct {
		ExtraLogs map[string][]*float64 `json:"extra_logs"`
		Outcomes  map[string][]string   `json:"outcomes"`
	}
	if err := json.Unmarshal(out, &gr); code != http.StatusOK || err != nil {
		t.Fatalf("POST /get_reward: %d %s", code, out)
	}
	if gr.ExtraLogs["accuracy"][0] == nil || gr.Outcomes["accuracy"][0] != "ok" {
		t.Errorf("/get_reward: %s", out)
	}
	code, out = post(t, st.httpURL+"/verify", []byte(`{"response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": "42"}]}]}}`))
	var v map[string]any
	if err := json.Unmarshal(out, &v); code != http.StatusOK || err != nil {
		t.Fatalf("POST /verify: %d %s", code, out)
	}
	if got, ok := v["accuracy"]; !ok || got != nil || v["accuracy_outcome"] != "not_applicable" || v["accuracy_error"] == nil {
		t.Errorf("/verify without a reference: accuracy %v, outcome %v, error %v; want null, not_applicable, a reason", v["accuracy"], v["accuracy_outcome"], v["accuracy_error"])
	}
}
