package server_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
)

// nemoGymConfig scores a NeMo Gym task's expected_answer and the think
// format of the completion.
const nemoGymConfig = `
functions:
  - {name: accuracy, kind: exact_match, reference_field: expected_answer, extract: [answer_tag, last_number], normalize: [strip, numeric]}
  - {name: format, kind: format, mode: partial}
`

// nemoGymCall is one request as NeMo Gym's code sends it, and the check
// its code makes on the answer.
type nemoGymCall struct {
	name, method, path, body string
	check                    func(answer []byte) error
}

// verifyAnswer is what NeMo Gym's simple agent checks of a /verify answer
// (responses_api_agents/simple_agent/app.py): a 2xx (raise_for_status),
// then SimpleAgentVerifyResponse.model_validate: the request's
// responses_create_params and response echoed, and reward a float: a
// null fails validation and aborts the rollout collection.
func verifyAnswer(want float64) func([]byte) error {
	return func(answer []byte) error {
		var got map[string]any
		if err := json.Unmarshal(answer, &got); err != nil {
			return err
		}
		reward, ok := got["reward"].(float64)
		switch {
		case !ok:
			return fmt.Errorf("reward %v is not a float", got["reward"])
		case got["responses_create_params"] == nil || got["response"] == nil:
			return fmt.Errorf("responses_create_params or response not echoed")
		case reward != want:
			return fmt.Errorf("reward %v, want %v", reward, want)
		}
		return nil
	}
}

// response is a Responses API response with these output items.
func response(items ...string) string {
	return `{"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "parallel_tool_calls": true, "tool_choice": "auto", "tools": [], "output": [` + strings.Join(items, ",") + `]}`
}

const (
	reasoningItem = `{"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "<think>6*7 is 42</think>"}]}`
	messageItem   = `{"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "<answer>42</answer>", "annotations": []}]}`
	callItem      = `{"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "calc", "arguments": "{\"x\": 6}"}`
	callOutput    = `{"type": "function_call_output", "call_id": "c1", "output": "42"}`
	createParams  = `{"input": [{"role": "user", "content": "What is 6*7?"}], "tools": []}`
)

func verifyBody(resp string, extra string) string {
	return `{"responses_create_params": ` + createParams + `, "response": ` + resp + `, "expected_answer": "42", "_ng_task_index": 0, "_ng_rollout_index": 0` + extra + `}`
}

// TestNeMoGymCallShapes sends each request NeMo Gym's client code sends
// to a resources server (nemo_gym/base_resources_server.py's routes, as
// the simple agent, rollout collection and re-verification call them) and
// makes the checks that code makes on the answers.
func TestNeMoGymCallShapes(t *testing.T) {
	plain := newStack(t, nemoGymConfig)
	reasoning := newStack(t, nemoGymConfig+"compat: {verify: {include_reasoning: true}}\n")
	object := func(answer []byte) error {
		var m map[string]any
		return json.Unmarshal(answer, &m)
	}
	calls := []struct {
		st *stack
		nemoGymCall
	}{
		{plain, nemoGymCall{"seed_session with the run body", "POST", "/seed_session", `{"responses_create_params": ` + createParams + `, "expected_answer": "42"}`, object}},
		{plain, nemoGymCall{"seed_session empty", "POST", "/seed_session", `{}`, object}},
		{plain, nemoGymCall{"verify: a message", "POST", "/verify", verifyBody(response(messageItem), ""), verifyAnswer(1 + 0.5)}},
		{plain, nemoGymCall{"verify: reasoning then a message", "POST", "/verify", verifyBody(response(reasoningItem, messageItem), ""), verifyAnswer(1.5)}},
		{plain, nemoGymCall{"verify: reasoning only", "POST", "/verify", verifyBody(response(reasoningItem), ""), verifyAnswer(0)}},
		{reasoning, nemoGymCall{"verify: reasoning only, include_reasoning", "POST", "/verify", verifyBody(response(reasoningItem), ""), verifyAnswer(1 + 0.5)}},
		{reasoning, nemoGymCall{"verify: reasoning and a message, include_reasoning", "POST", "/verify", verifyBody(response(reasoningItem, messageItem), ""), verifyAnswer(2)}},
		{plain, nemoGymCall{"verify: tool call, its output, a message", "POST", "/verify", verifyBody(response(callItem, callOutput, messageItem), ""), verifyAnswer(1.5)}},
		{plain, nemoGymCall{"verify: a tool call only", "POST", "/verify", verifyBody(response(callItem), ""), verifyAnswer(0)}},
		{plain, nemoGymCall{"verify: empty output", "POST", "/verify", verifyBody(response(), ""), verifyAnswer(0)}},
		{plain, nemoGymCall{"verify: input as a string", "POST", "/verify", strings.Replace(verifyBody(response(messageItem), ""), createParams, `{"input": "What is 6*7?"}`, 1), verifyAnswer(1.5)}},
		{plain, nemoGymCall{"verify: several text parts", "POST", "/verify", verifyBody(response(strings.Replace(messageItem, `{"type": "output_text", "text": "<answer>42</answer>", "annotations": []}`, `{"type": "output_text", "text": "<answer>4"}, {"type": "output_text", "text": "2</answer>"}`, 1)), ""), verifyAnswer(1.5)}},
		{plain, nemoGymCall{"verify: a task without its answer", "POST", "/verify", strings.Replace(verifyBody(response(messageItem), ""), `"expected_answer": "42", `, "", 1), verifyAnswer(0.5)}},
		{plain, nemoGymCall{"aggregate_metrics", "POST", "/aggregate_metrics", `{"verify_responses": [
			{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1, "accuracy": 1, "response": {"usage": {"output_tokens": 10}}},
			{"_ng_task_index": 0, "_ng_rollout_index": 1, "reward": 0, "accuracy": 0, "response": {"usage": {"output_tokens": 20}}},
			{"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": 1, "accuracy": null, "unscorable": true}]}`, checkAggregate}},
		{plain, nemoGymCall{"reverify_mode", "GET", "/reverify_mode", "", func(answer []byte) error {
			var mode string
			if err := json.Unmarshal(answer, &mode); err != nil || mode != "stateless" {
				return fmt.Errorf("%s: want a ReverifyMode, stateless (%v)", answer, err)
			}
			return nil
		}}},
	}
	ok := 0
	for _, c := range calls {
		req, err := http.NewRequest(c.method, c.st.httpURL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		code, answer := readResponse(t)(http.DefaultClient.Do(req))
		switch {
		case code/100 != 2:
			t.Errorf("%s: HTTP %d %s", c.name, code, answer)
		case c.check(answer) != nil:
			t.Errorf("%s: %v in %s", c.name, c.check(answer), answer)
		default:
			ok++
		}
	}
	t.Logf("%d/%d of NeMo Gym's call shapes answered as its client expects", ok, len(calls))
}

// checkAggregate is what rollout collection does with the answer:
// AggregateMetrics.model_validate (group_level_metrics a list of objects,
// agent_metrics and key_metrics objects), then it logs them; the numbers
// are NeMo Gym's RewardProfiler's for these three responses.
func checkAggregate(answer []byte) error {
	var got struct {
		Groups []map[string]any `json:"group_level_metrics"`
		Agent  map[string]any   `json:"agent_metrics"`
		Key    map[string]any   `json:"key_metrics"`
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		return err
	}
	near := func(v any, want float64) bool { f, ok := v.(float64); return ok && math.Abs(f-want) < 1e-12 }
	switch {
	case len(got.Groups) != 2:
		return fmt.Errorf("%d groups, want 2", len(got.Groups))
	case !near(got.Agent["mean/reward"], 2.0/3) || !near(got.Agent["std/reward"], math.Sqrt(1.0/3)) || !near(got.Agent["median/reward"], 1):
		return fmt.Errorf("agent metrics %v", got.Agent)
	case !near(got.Agent["mean/accuracy"], 0.5) || !near(got.Agent["mean/output_tokens"], 15) || !near(got.Agent["mean/unscorable"], 1):
		return fmt.Errorf("agent metrics over fields some responses lack: %v", got.Agent)
	case !near(got.Groups[0]["std/reward"], math.Sqrt(0.5)) || !near(got.Groups[0][`_ng_task_index`], 0) || !near(got.Groups[1]["mean/reward"], 1):
		return fmt.Errorf("group metrics %v", got.Groups)
	case !near(got.Groups[1]["std/reward"], 0) || got.Groups[1]["mean/accuracy"] != nil:
		// pandas: every std of a one-row group is NaN, so the columns
		// the row has get 0; a column it lacks (null) has no statistics.
		return fmt.Errorf("the group of one: %v, want std/reward 0 and no accuracy", got.Groups[1])
	case got.Agent["std/unscorable"] != nil:
		return fmt.Errorf("std of a field one response has: %v, want none (NaN, dropped)", got.Agent["std/unscorable"])
	case len(got.Key) == 0 || got.Key["mean/reward"] == nil || got.Key["max/reward"] != nil:
		return fmt.Errorf("key metrics %v, want the mean/ entries", got.Key)
	}
	return nil
}
