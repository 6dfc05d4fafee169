package server_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// compatConfig weighs the functions so that sums are checkable.
const compatConfig = testConfig + `
weights: {accuracy: 1.0, format: 0.5, steps: 0.25}
`

// TestOpenRLHFGetReward posts OpenRLHF's remote reward body (queries are
// prompt + response) and checks rewards equal the weighted /v1/score values.
func TestOpenRLHFGetReward(t *testing.T) {
	st := newStack(t, compatConfig)
	rows := gsm8k(t)[:20]
	var queries, prompts, labels []string
	req := &rewardv1.ScoreRequest{}
	for i, r := range rows {
		completion := r.Answer
		if i%2 == 1 {
			completion = "<think>" + r.Answer + "</think><answer>" + goldNumber(r.Answer) + "1</answer>"
		}
		prompt := "Question: " + r.Question + "\nAnswer: "
		queries = append(queries, prompt+completion)
		prompts = append(prompts, prompt)
		labels = append(labels, goldNumber(r.Answer))
		req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Prompt: prompt, Completion: completion, Fields: answerField(goldNumber(r.Answer))})
	}
	want, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"query": queries, "prompts": prompts, "labels": labels})
	code, out := post(t, st.httpURL+"/get_reward", body)
	if code != http.StatusOK {
		t.Fatalf("POST /get_reward: %d %s", code, out)
	}
	var got struct {
		Rewards   []float64             `json:"rewards"`
		Scores    []float64             `json:"scores"`
		ExtraLogs map[string][]*float64 `json:"extra_logs"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	weights := map[string]float64{"accuracy": 1, "format": 0.5, "steps": 0.25}
	for i := range rows {
		sum := 0.0
		for _, fs := range want.GetFunctions() {
			v := fs.GetValues()[i]
			sum += weights[fs.GetName()] * v
			if lv := got.ExtraLogs[fs.GetName()][i]; lv == nil || *lv != v {
				t.Errorf("row %d %s: extra_logs %v, /v1/score %v", i, fs.GetName(), lv, v)
			}
		}
		if math.Abs(got.Rewards[i]-sum) > 1e-12 || got.Scores[i] != got.Rewards[i] {
			t.Errorf("row %d: reward %v score %v, want %v", i, got.Rewards[i], got.Scores[i], sum)
		}
	}

	// A single sample comes back as scalars.
	body, _ = json.Marshal(map[string]any{"query": queries[0], "prompts": prompts[0], "labels": labels[0]})
	code, out = post(t, st.httpURL+"/get_reward", body)
	var single struct {
		Rewards float64 `json:"rewards"`
	}
	if err := json.Unmarshal(out, &single); code != 200 || err != nil || single.Rewards != got.Rewards[0] {
		t.Errorf("single sample: %d %s, want rewards %v", code, out, got.Rewards[0])
	}
}

func TestCompatBadBodies(t *testing.T) {
	st := newStack(t, compatConfig)
	cases := []struct{ path, body, names string }{
		{"/get_reward", `{"query": [1, 2]}`, `"query"`},
		{"/get_reward", `{"prompts": ["a"]}`, `"query"`},
		{"/get_reward", `{"query": ["ab", "cd"], "prompts": ["a"]}`, `"prompts"`},
		{"/get_reward", `{"query": ["ab"], "prompts": ["x"]}`, "query[0]"},
		{"/get_reward", `{"query": ["ab"], "labels": ["1", "2"]}`, `"labels"`},
		{"/get_reward", `not json`, "JSON"},
		{"/verify", `{"response": {"output": "x"}}`, "output"},
		{"/verify", `{"responses_create_params": {"input": 3}, "response": {"output": []}}`, "response"},
		{"/verify", `[]`, "JSON object"},
		{"/aggregate_metrics", `{"verify_responses": 3}`, "JSON object"},
		{"/aggregate_metrics", `{}`, `"verify_responses"`},
	}
	for _, c := range cases {
		code, out := post(t, st.httpURL+c.path, []byte(c.body))
		var s struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal(out, &s)
		if code != http.StatusBadRequest || s.Code != int(codes.InvalidArgument) || !strings.Contains(s.Message, c.names) {
			t.Errorf("POST %s %s: %d %s; want 400 naming %s", c.path, c.body, code, out, c.names)
		}
	}
}

// TestNeMoGymVerify posts a verify body as NeMo Gym's simple agent sends it
// (Responses API params and response, plus the task's fields) and checks the
// body comes back with reward and its components.
func TestNeMoGymVerify(t *testing.T) {
	st := newStack(t, strings.Replace(compatConfig, "reference_field: answer", "reference_field: expected_answer", 1))
	body := `{
	  "responses_create_params": {"input": [
	    {"role": "system", "content": "Think, then answer in <answer> tags."},
	    {"role": "user", "content": [{"type": "input_text", "text": "What is 6*7?"}]}]},
	  "response": {"id": "resp_1", "object": "response", "output": [
	    {"type": "reasoning", "summary": []},
	    {"type": "message", "role": "assistant", "status": "completed",
	     "content": [{"type": "output_text", "text": "<think>6*7 = <<6*7=42>>42 and <<1*42=42>>42</think><answer>42</answer>", "annotations": []}]}]},
	  "expected_answer": "42",
	  "task_id": 7
	}`
	code, out := post(t, st.httpURL+"/verify", []byte(body))
	if code != http.StatusOK {
		t.Fatalf("POST /verify: %d %s", code, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got["reward"] != 1.75 || got["accuracy"] != 1.0 || got["format"] != 1.0 || got["steps"] != 1.0 {
		t.Errorf("reward %v, components accuracy %v format %v steps %v; want 1.75 = 1 + 0.5 + 0.25", got["reward"], got["accuracy"], got["format"], got["steps"])
	}
	if comps, _ := got["reward_components"].(map[string]any); len(comps) != 3 {
		t.Errorf("reward_components = %v", got["reward_components"])
	}
	if got["task_id"] != 7.0 || got["expected_answer"] != "42" || got["response"] == nil {
		t.Errorf("the request body is not echoed: %s", out)
	}
	code, out = post(t, st.httpURL+"/seed_session", []byte(`{}`))
	if code != http.StatusOK {
		t.Errorf("POST /seed_session: %d %s", code, out)
	}
}

// TestCompatUnscorable (finding: a null reward crashes OpenRLHF's
// torch.tensor(rewards)): a rollout no function could score gets the
// endpoint's unscorable_reward (0.0 by default), its index is listed under
// "unscorable" with the real outcomes beside it, and it is counted;
// ?unscorable=null asks for null instead.
func TestCompatUnscorable(t *testing.T) {
	st := newStack(t, "functions:\n  - {name: accuracy, kind: exact_match, reference_field: answer}\n"+
		"compat: {verify: {unscorable_reward: -1}}\n")
	body := []byte(`{"query": ["Q: 1+1? A: 2", "Q: 2+2? A: 4"], "prompts": ["Q: 1+1? A: ", "Q: 2+2? A: "]}`)
	for _, c := range []struct {
		query string
		want  string
	}{
		{"", `"rewards":[0,0]`},
		{"?unscorable=null", `"rewards":[null,null]`},
		{"?unscorable=zero", `"rewards":[0,0]`},
	} {
		code, out := post(t, st.httpURL+"/get_reward"+c.query, body)
		if code != http.StatusOK || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), `"unscorable":[0,1]`) ||
			!strings.Contains(string(out), `"outcomes":{"accuracy":["not_applicable","not_applicable"]}`) {
			t.Errorf("/get_reward%s without labels: %d %s, want %s, unscorable [0,1] and the outcomes", c.query, code, out, c.want)
		}
	}
	verify := []byte(`{"response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": "42"}]}]}}`)
	code, out := post(t, st.httpURL+"/verify", verify)
	if code != http.StatusOK || !strings.Contains(string(out), `"reward":-1`) || !strings.Contains(string(out), `"unscorable":true`) ||
		!strings.Contains(string(out), `"accuracy_outcome":"not_applicable"`) {
		t.Errorf("/verify without the task's answer: %d %s, want reward -1 (the config's), unscorable true, the outcome", code, out)
	}
	if code, out := post(t, st.httpURL+"/get_reward?unscorable=nan", body); code != http.StatusBadRequest {
		t.Errorf("?unscorable=nan: %d %s, want 400", code, out)
	}
	if got := metricValue(t, st.httpURL, "rewardd_unscorable_rollouts_total"); got != "7" {
		t.Errorf("rewardd_unscorable_rollouts_total = %s, want 7", got)
	}
}
