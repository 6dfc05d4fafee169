package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// reasonRollouts are three rollouts of testConfig's accuracy and format:
// right (OK 1, no reason), no answer at all (OK 0, "no answer found"; format
// 0 with its reason) and no reference (NOT_APPLICABLE).
func reasonRollouts() []*rewardv1.Rollout {
	return []*rewardv1.Rollout{
		{Completion: "<think>6*7</think><answer>42</answer>", Fields: answerField("42")},
		{Completion: "I do not know.", Fields: answerField("42")},
		{Completion: "<answer>42</answer>"},
	}
}

// TestReasonsOfOKScores (issue 19, item 1: functionScores sent reasons for
// non-OK entries only, so a 0 for no answer looked like any other 0): an OK
// score's reason comes back on gRPC and on POST /v1/score, beside the
// NOT_APPLICABLE reason, unless the request sets omit_ok_reasons.
func TestReasonsOfOKScores(t *testing.T) {
	st := newStack(t, testConfig)
	req := &rewardv1.ScoreRequest{Functions: []string{"accuracy", "format"}, Rollouts: reasonRollouts()}
	resp, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	acc, format := resp.GetFunctions()[0], resp.GetFunctions()[1]
	if got := acc.GetStatus()[1]; got != rewardv1.ScoreStatus_SCORE_STATUS_OK || acc.GetValues()[1] != 0 {
		t.Fatalf("accuracy on rollout 1: %v %v, want OK 0", got, acc.GetValues()[1])
	}
	if got := acc.GetErrors()[1]; got != "no answer found" {
		t.Errorf("accuracy's reason for its OK 0: %q, want %q", got, "no answer found")
	}
	if _, ok := acc.GetErrors()[0]; ok {
		t.Errorf("accuracy's right answer has a reason: %q", acc.GetErrors()[0])
	}
	if acc.GetStatus()[2] != rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE || acc.GetErrors()[2] == "" {
		t.Errorf("accuracy without a reference: %v %q, want NOT_APPLICABLE with a reason", acc.GetStatus()[2], acc.GetErrors()[2])
	}
	if format.GetValues()[1] != 0 || format.GetErrors()[1] == "" {
		t.Errorf("format on a completion without tags: %v %q, want 0 with a reason", format.GetValues()[1], format.GetErrors()[1])
	}

	// The same over HTTP JSON.
	body, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	code, out := post(t, st.httpURL+"/v1/score", body)
	var got rewardv1.ScoreResponse
	if err := protojson.Unmarshal(out, &got); code != http.StatusOK || err != nil {
		t.Fatalf("POST /v1/score: %d %s (%v)", code, out, err)
	}
	if r := got.GetFunctions()[0].GetErrors()[1]; r != "no answer found" {
		t.Errorf("POST /v1/score: accuracy's reason for its OK 0: %q", r)
	}

	// omit_ok_reasons leaves them out, on both transports, and keeps the
	// others.
	req.OmitOkReasons = true
	resp, err = st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = protojson.Marshal(req)
	code, out = post(t, st.httpURL+"/v1/score", body)
	var omitted rewardv1.ScoreResponse
	if err := protojson.Unmarshal(out, &omitted); code != http.StatusOK || err != nil {
		t.Fatalf("POST /v1/score: %d %s (%v)", code, out, err)
	}
	for via, r := range map[string]*rewardv1.ScoreResponse{"gRPC": resp, "HTTP": &omitted} {
		for _, fs := range r.GetFunctions() {
			for i, reason := range fs.GetErrors() {
				if fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_OK {
					t.Errorf("%s, omit_ok_reasons: %s rollout %d (OK) has the reason %q", via, fs.GetName(), i, reason)
				}
			}
		}
		if r.GetFunctions()[0].GetErrors()[2] == "" {
			t.Errorf("%s, omit_ok_reasons: the NOT_APPLICABLE reason is gone too", via)
		}
	}
}

// TestCompatReasonsAndOutcomes: /get_reward and /verify name each
// function's outcome and give an OK score's reason apart from the errors
// of the entries with no score (null).
func TestCompatReasonsAndOutcomes(t *testing.T) {
	st := newStack(t, compatConfig)
	body, _ := json.Marshal(map[string]any{
		"query":  []string{"<answer>42</answer>", "I do not know.", "<answer>42</answer>"},
		"labels": []string{"42", "42", ""},
	})
	code, out := post(t, st.httpURL+"/get_reward?label_field=answer", body)
	if code != http.StatusOK {
		t.Fatalf("POST /get_reward: %d %s", code, out)
	}
	var got struct {
		Outcomes map[string][]string          `json:"outcomes"`
		Errors   map[string]map[string]string `json:"errors"`
		Reasons  map[string]map[string]string `json:"reasons"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if o := got.Outcomes["accuracy"]; len(o) != 3 || o[0] != "ok" || o[1] != "ok" {
		t.Errorf("outcomes of accuracy: %v, want ok, ok, …", o)
	}
	if r := got.Reasons["accuracy"]["1"]; r != "no answer found" {
		t.Errorf("reasons of accuracy: %v, want row 1: no answer found (%s)", got.Reasons["accuracy"], out)
	}
	if _, ok := got.Errors["accuracy"]["1"]; ok {
		t.Errorf("an OK score's reason is among the errors: %v", got.Errors["accuracy"])
	}

	code, out = post(t, st.httpURL+"/verify", []byte(`{"response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": "I do not know."}]}]}, "answer": "42"}`))
	var v map[string]any
	if err := json.Unmarshal(out, &v); code != http.StatusOK || err != nil {
		t.Fatalf("POST /verify: %d %s", code, out)
	}
	if v["accuracy"] != 0.0 || v["accuracy_outcome"] != "ok" || v["accuracy_reason"] != "no answer found" || v["accuracy_error"] != nil {
		t.Errorf("POST /verify: accuracy %v, outcome %v, reason %v, error %v; want 0, ok, no answer found, none",
			v["accuracy"], v["accuracy_outcome"], v["accuracy_reason"], v["accuracy_error"])
	}
}
