package server_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

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
// non-OK entries only, so a 0 for no answer looked like any other 0; issue
// 31: the errors map carried reasons of OK rows): an OK score's reason and
// a NOT_APPLICABLE one come back in reasons, errors holds the ERROR rows
// only, on gRPC and on POST /v1/score; omit_ok_reasons leaves out those of
// the OK scores.
func TestReasonsOfOKScores(t *testing.T) {
	st := newStack(t, testConfig)
	req := &rewardv1.ScoreRequest{Functions: []string{"accuracy", "format"}, Rollouts: append(reasonRollouts(),
		&rewardv1.Rollout{Completion: "<answer>42</answer>", Fields: &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewBoolValue(true)}}})}
	resp, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	check := func(via string, resp *rewardv1.ScoreResponse) {
		acc, format := resp.GetFunctions()[0], resp.GetFunctions()[1]
		if got := acc.GetStatus()[1]; got != rewardv1.ScoreStatus_SCORE_STATUS_OK || acc.GetValues()[1] != 0 {
			t.Fatalf("%s: accuracy on rollout 1: %v %v, want OK 0", via, got, acc.GetValues()[1])
		}
		if got := acc.GetReasons()[1]; got != "no answer found" {
			t.Errorf("%s: accuracy's reason for its OK 0: %q, want %q", via, got, "no answer found")
		}
		if _, ok := acc.GetReasons()[0]; ok {
			t.Errorf("%s: accuracy's right answer has a reason: %q", via, acc.GetReasons()[0])
		}
		if acc.GetStatus()[2] != rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE || acc.GetReasons()[2] == "" {
			t.Errorf("%s: accuracy without a reference: %v %q, want NOT_APPLICABLE with a reason", via, acc.GetStatus()[2], acc.GetReasons()[2])
		}
		if acc.GetStatus()[3] != rewardv1.ScoreStatus_SCORE_STATUS_ERROR || acc.GetErrors()[3] == "" {
			t.Errorf("%s: accuracy with a bool reference: %v %q, want ERROR with its reason in errors", via, acc.GetStatus()[3], acc.GetErrors()[3])
		}
		if len(acc.GetErrors()) != 1 || len(format.GetErrors()) != 0 {
			t.Errorf("%s: errors %v and %v, want the ERROR row only", via, acc.GetErrors(), format.GetErrors())
		}
		if format.GetValues()[1] != 0 || format.GetReasons()[1] == "" {
			t.Errorf("%s: format on a completion without tags: %v %q, want 0 with a reason", via, format.GetValues()[1], format.GetReasons()[1])
		}
	}
	check("gRPC", resp)

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
	check("HTTP", &got)

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
			for i, reason := range fs.GetReasons() {
				if fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_OK {
					t.Errorf("%s, omit_ok_reasons: %s rollout %d (OK) has the reason %q", via, fs.GetName(), i, reason)
				}
			}
		}
		if r.GetFunctions()[0].GetReasons()[2] == "" || r.GetFunctions()[0].GetErrors()[3] == "" {
			t.Errorf("%s, omit_ok_reasons: the NOT_APPLICABLE or the ERROR reason is gone too", via)
		}
	}
}

// TestReasonsAsLists: with reasons_as_lists the reasons come as
// reason_rollouts and reason_texts, the same entries in rollout order and
// no map, on gRPC and on POST /v1/score, with and without omit_ok_reasons;
// errors stay a map.
func TestReasonsAsLists(t *testing.T) {
	st := newStack(t, testConfig)
	for _, omit := range []bool{false, true} {
		req := &rewardv1.ScoreRequest{Functions: []string{"accuracy", "format"}, OmitOkReasons: omit, Rollouts: append(reasonRollouts(),
			&rewardv1.Rollout{Completion: "<answer>42</answer>", Fields: &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewBoolValue(true)}}})}
		want, err := st.client.Score(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		req.ReasonsAsLists = true
		got, err := st.client.Score(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := protojson.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		code, out := post(t, st.httpURL+"/v1/score", body)
		var viaHTTP rewardv1.ScoreResponse
		if err := protojson.Unmarshal(out, &viaHTTP); code != http.StatusOK || err != nil {
			t.Fatalf("POST /v1/score: %d %s (%v)", code, out, err)
		}
		for via, resp := range map[string]*rewardv1.ScoreResponse{"gRPC": got, "HTTP": &viaHTTP} {
			if n := len(resp.GetFunctions()[0].GetReasonRollouts()); n == 0 {
				t.Errorf("%s, omit %v: accuracy has no reasons as lists, want its NOT_APPLICABLE one at least", via, omit)
			}
			for k, fs := range resp.GetFunctions() {
				w := want.GetFunctions()[k]
				if len(fs.GetReasons()) != 0 || len(fs.GetReasonRollouts()) != len(fs.GetReasonTexts()) {
					t.Errorf("%s, omit %v: %s: reasons map %v, lists of %d and %d", via, omit, fs.GetName(), fs.GetReasons(), len(fs.GetReasonRollouts()), len(fs.GetReasonTexts()))
					continue
				}
				lists := map[int32]string{}
				for i, r := range fs.GetReasonRollouts() {
					if i > 0 && r <= fs.GetReasonRollouts()[i-1] {
						t.Errorf("%s, omit %v: %s: reason_rollouts %v not in rollout order", via, omit, fs.GetName(), fs.GetReasonRollouts())
					}
					lists[r] = fs.GetReasonTexts()[i]
				}
				if !maps.Equal(lists, w.GetReasons()) || !maps.Equal(fs.GetErrors(), w.GetErrors()) {
					t.Errorf("%s, omit %v: %s: reasons %v and errors %v as lists, want %v and %v", via, omit, fs.GetName(), lists, fs.GetErrors(), w.GetReasons(), w.GetErrors())
				}
			}
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
