package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// promptOnce rewrites req (rollouts with their own prompts and fields) in
// the prompt-once form: each distinct prompt once, the fields named in
// perPrompt as prompt columns, the others as rollout columns, except the
// fields named in keep, which stay in the rollout's own fields.
func promptOnce(t *testing.T, req *rewardv1.ScoreRequest, perPrompt, keep []string) *rewardv1.ScoreRequest {
	t.Helper()
	out := &rewardv1.ScoreRequest{BatchId: req.BatchId, Functions: req.Functions, Aggregation: req.Aggregation}
	index := map[string]int{}
	columns := map[string]*rewardv1.FieldColumn{}
	column := func(list *[]*rewardv1.FieldColumn, name string, n int) *rewardv1.FieldColumn {
		c := columns[name]
		if c == nil {
			c = &rewardv1.FieldColumn{Name: name}
			columns[name] = c
			*list = append(*list, c)
		}
		for len(c.Values) < n {
			c.Values = append(c.Values, structpb.NewNullValue())
		}
		return c
	}
	contains := func(names []string, s string) bool {
		for _, n := range names {
			if n == s {
				return true
			}
		}
		return false
	}
	for i, r := range req.Rollouts {
		p, seen := index[r.Prompt]
		if !seen {
			p = len(out.Prompts)
			index[r.Prompt] = p
			out.Prompts = append(out.Prompts, r.Prompt)
		}
		nr := &rewardv1.Rollout{Id: r.Id, Group: r.Group, Completion: r.Completion, PromptIndex: uint32(p)}
		for name, v := range r.GetFields().GetFields() {
			switch {
			case contains(keep, name):
				if nr.Fields == nil {
					nr.Fields = &structpb.Struct{Fields: map[string]*structpb.Value{}}
				}
				nr.Fields.Fields[name] = v
			case contains(perPrompt, name):
				c := column(&out.PromptFields, name, p)
				if len(c.Values) == p {
					c.Values = append(c.Values, v)
				} else if !proto.Equal(c.Values[p], v) {
					t.Fatalf("field %q differs between rollouts of prompt %d", name, p)
				}
			default:
				c := column(&out.RolloutFields, name, i)
				c.Values = append(c.Values, v)
			}
		}
		out.Rollouts = append(out.Rollouts, nr)
	}
	for _, c := range out.PromptFields {
		column(&out.PromptFields, c.Name, len(out.Prompts))
	}
	for _, c := range out.RolloutFields {
		column(&out.RolloutFields, c.Name, len(out.Rollouts))
	}
	return out
}

// TestPromptOnceScoresAsRows: a batch sent with each prompt once and its
// fields as columns (over gRPC, and as JSON over HTTP) is scored exactly as
// the same batch sent row by row, advantages included.
func TestPromptOnceScoresAsRows(t *testing.T) {
	st := newStack(t, testConfig)
	req := &rewardv1.ScoreRequest{BatchId: "b", Aggregation: &rewardv1.Aggregation{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE}}
	for q, r := range gsm8k(t)[:64] {
		for k := range 4 {
			c := r.Answer
			switch k {
			case 1:
				c = "<think>hmm</think><answer>" + goldNumber(r.Answer) + "</answer>"
			case 2:
				c = strings.Replace(c, "#### ", "#### 1", 1)
			}
			fields := map[string]*structpb.Value{
				"answer": structpb.NewStringValue(goldNumber(r.Answer)),
				"tokens": structpb.NewNumberValue(float64(len(c) / 4)),
			}
			if q%5 == 0 {
				delete(fields, "answer") // not applicable, in both forms
			}
			if k == 3 {
				fields["note"] = structpb.NewStringValue(fmt.Sprint("own ", q))
			}
			req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Id: fmt.Sprint(q, "-", k), Prompt: r.Question, Completion: c,
				Fields: &structpb.Struct{Fields: fields}})
		}
	}
	want, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []struct {
		name            string
		perPrompt, keep []string
		inlinePrompts   bool
	}{
		{"prompt columns", []string{"answer"}, []string{"note"}, false},
		{"rollout columns only", nil, nil, false},
		{"prompt columns, own fields", []string{"answer"}, []string{"tokens", "note"}, false},
		{"rollout columns, prompts in the rollouts", nil, []string{"note"}, true},
	} {
		once := promptOnce(t, req, form.perPrompt, form.keep)
		if len(once.Prompts) != 64 {
			t.Fatalf("%d prompts, want 64", len(once.Prompts))
		}
		if form.inlinePrompts {
			for _, r := range once.Rollouts {
				r.Prompt, r.PromptIndex = once.Prompts[r.PromptIndex], 0
			}
			once.Prompts = nil
		}
		got, err := st.client.Score(context.Background(), once)
		if err != nil {
			t.Fatalf("%s over gRPC: %v", form.name, err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s over gRPC: scored otherwise than row by row", form.name)
		}
		body, err := protojson.Marshal(once)
		if err != nil {
			t.Fatal(err)
		}
		code, out := post(t, st.httpURL+"/v1/score", body)
		if code != http.StatusOK {
			t.Fatalf("%s over HTTP: %d %s", form.name, code, out)
		}
		var hgot rewardv1.ScoreResponse
		if err := protojson.Unmarshal(out, &hgot); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&hgot, want) {
			t.Errorf("%s over HTTP: scored otherwise than row by row", form.name)
		}
	}
}

// TestPromptOnceBadRequests: a malformed prompt-once request fails whole,
// with INVALID_ARGUMENT naming the rollout, column or field at fault.
func TestPromptOnceBadRequests(t *testing.T) {
	st := newStack(t, testConfig)
	str := structpb.NewStringValue
	col := func(name string, vals ...string) *rewardv1.FieldColumn {
		c := &rewardv1.FieldColumn{Name: name}
		for _, v := range vals {
			c.Values = append(c.Values, str(v))
		}
		return c
	}
	two := []*rewardv1.Rollout{{Completion: "a"}, {Completion: "b", PromptIndex: 1}}
	for _, c := range []struct {
		name     string
		req      *rewardv1.ScoreRequest
		mentions string
	}{
		{"prompt columns without prompts", &rewardv1.ScoreRequest{Rollouts: two, PromptFields: []*rewardv1.FieldColumn{col("answer", "1")}}, "no prompts"},
		{"index out of range", &rewardv1.ScoreRequest{Prompts: []string{"p"}, Rollouts: two}, "rollout 1: prompt_index 1"},
		{"prompt and prompts", &rewardv1.ScoreRequest{Prompts: []string{"p", "q"}, Rollouts: []*rewardv1.Rollout{{Prompt: "p"}}}, "rollout 0 has a prompt"},
		{"short prompt column", &rewardv1.ScoreRequest{Prompts: []string{"p", "q"}, Rollouts: two, PromptFields: []*rewardv1.FieldColumn{col("answer", "1")}}, `prompt_fields[0] "answer" has 1 values for 2 prompts`},
		{"long rollout column", &rewardv1.ScoreRequest{Rollouts: two, RolloutFields: []*rewardv1.FieldColumn{col("t", "1", "2", "3")}}, `rollout_fields[0] "t" has 3 values for 2 rollouts`},
		{"a column twice", &rewardv1.ScoreRequest{Prompts: []string{"p", "q"}, Rollouts: two,
			PromptFields: []*rewardv1.FieldColumn{col("answer", "1", "2")}, RolloutFields: []*rewardv1.FieldColumn{col("answer", "1", "2")}}, `field "answer" is already a column of prompt_fields`},
		{"own field and column", &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{{Completion: "a", Fields: answerField("1")}},
			RolloutFields: []*rewardv1.FieldColumn{col("answer", "1")}}, `rollout 0: field "answer" is in its fields and in rollout_fields`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := st.client.Score(context.Background(), c.req)
			s := status.Convert(err)
			if s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), c.mentions) {
				t.Errorf("got %v %q, want INVALID_ARGUMENT naming %q", s.Code(), s.Message(), c.mentions)
			}
		})
	}
}
