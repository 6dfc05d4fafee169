package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// TestScoreVerifiers runs `rewardd score` with one function of each of the
// kinds instruction_following, multiple_choice, json_schema and tool_call
// on rows that carry their fields as a dataset would (IFEval's lists of
// ids and kwargs dicts, a schema object, BFCL's expected calls): the row
// fields reach the scorers through JSONL, and each scores what it should;
// an unknown instruction id is an ERROR naming it.
func TestScoreVerifiers(t *testing.T) {
	cfg := writeConfig(t, `functions:
  - name: ifeval
    kind: instruction_following
    scoring: fraction
  - name: choice
    kind: multiple_choice
  - name: schema
    kind: json_schema
    schema_field: schema
  - name: tools
    kind: tool_call
`)
	rows := []string{
		`{"id": "ifeval", "completion": "all lowercase, no exclamation", "instruction_id_list": ["change_case:english_lowercase", "punctuation:no_comma"], "kwargs": [{}, null]}`,
		`{"id": "choice", "completion": "Thinking...\nThe answer is (C).", "answer": 2}`,
		`{"id": "schema", "completion": "` + "```json\\n{\\\"n\\\": \\\"x\\\"}\\n```" + `", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}`,
		`{"id": "tools", "completion": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"paris\"}}</tool_call>", "tool_calls": [{"get_weather": {"city": ["Paris"], "unit": ["celsius", ""]}}]}`,
		`{"id": "unknown-instruction", "completion": "x", "instruction_id_list": ["punctuation:no_semicolon"]}`,
	}
	// The unknown instruction is an ERROR, so rewardd score exits 1 after
	// writing every row, and says which row it was.
	out, stderr, exit := runRewardd(t, strings.Join(rows, "\n")+"\n", "score", "--config", cfg, "--in", "-")
	if exit != 1 || !strings.Contains(stderr, `"unknown-instruction"`) {
		t.Fatalf("exit %d, want 1 naming the row unknown-instruction: %s", exit, stderr)
	}
	want := map[string]map[string]any{
		"ifeval":              {"ifeval": 0.5},
		"choice":              {"choice": 1.0},
		"schema":              {"schema": 0.0},
		"tools":               {"tools": 1.0},
		"unknown-instruction": {"ifeval": nil},
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(rows) {
		t.Fatalf("%d output rows, want %d:\n%s", len(lines), len(rows), out)
	}
	for _, line := range lines {
		var o struct {
			ID       string
			Scores   map[string]*float64
			Outcomes map[string]string
			Reasons  map[string]string
			Errors   map[string]string
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		for fn, w := range want[o.ID] {
			got := o.Scores[fn]
			switch w := w.(type) {
			case float64:
				if got == nil || *got != w {
					t.Errorf("%s: %s scored %v (%s), want %v", o.ID, fn, got, o.Reasons[fn], w)
				}
			case nil:
				if got != nil || o.Outcomes[fn] != "error" || !strings.Contains(o.Errors[fn], "punctuation:no_semicolon") {
					t.Errorf("%s: %s scored %v, %s %q; want an error naming the id", o.ID, fn, got, o.Outcomes[fn], o.Errors[fn])
				}
			}
		}
		if o.ID == "schema" && !strings.Contains(o.Reasons["schema"], "at /n") {
			t.Errorf("schema reason %q does not name /n", o.Reasons["schema"])
		}
	}
}

// wireRow is one rollout of TestVerifiersOverTheWire and what its function
// must say of it: an OK value, or a status other than OK; with the reason
// (or error) containing reason.
type wireRow struct {
	prompt, completion string
	fields             map[string]any
	status             rewardv1.ScoreStatus
	value              float64
	reason             string
}

// TestVerifiersOverTheWire sends one request per kind
// (instruction_following, multiple_choice, json_schema, tool_call) to a
// real `rewardd serve` on the embedded default config, the function
// defined inline and the rows carrying their fields as datasets do (lists
// of kwargs dicts, a schema object, BFCL's expected calls), over gRPC Score
// and over HTTP POST /v1/score: a row that passes scores 1, one that fails
// 0 with a reason, and one without the field is NOT_APPLICABLE with a
// reason naming the field, as each scorer's contract says.
func TestVerifiersOverTheWire(t *testing.T) {
	ifeval := ifevalRows(t, 279, 1508)
	cases := []struct {
		kind   string
		params map[string]any
		rows   []wireRow
	}{
		{"instruction_following", nil, append(ifeval,
			wireRow{completion: "no instructions here", fields: map[string]any{"kwargs": []any{map[string]any{}}},
				status: rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE, reason: "instruction_id_list"},
			wireRow{completion: "x", fields: map[string]any{"instruction_id_list": []any{"punctuation:no_semicolon"}, "kwargs": []any{nil}},
				status: rewardv1.ScoreStatus_SCORE_STATUS_ERROR, reason: "punctuation:no_semicolon"},
		)},
		{"multiple_choice", nil, []wireRow{
			{completion: "Let me think.\nThe answer is (C).", fields: map[string]any{"answer": 2},
				status: rewardv1.ScoreStatus_SCORE_STATUS_OK, value: 1},
			{completion: "Answer: B", fields: map[string]any{"answer": "C"},
				status: rewardv1.ScoreStatus_SCORE_STATUS_OK, value: 0, reason: "answered B"},
			{completion: "Answer: B",
				status: rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE, reason: `"answer"`},
		}},
		{"json_schema", map[string]any{"schema_field": "schema"}, []wireRow{
			{completion: "Here it is:\n```json\n{\"name\": \"Ada\", \"age\": 36}\n```", fields: map[string]any{"schema": personSchema},
				status: rewardv1.ScoreStatus_SCORE_STATUS_OK, value: 1},
			{completion: `{"name": "Ada", "age": "36"}`, fields: map[string]any{"schema": personSchema},
				status: rewardv1.ScoreStatus_SCORE_STATUS_OK, value: 0, reason: "at /age"},
			{completion: `{"name": "Ada"}`,
				status: rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE, reason: `"schema"`},
		}},
		{"tool_call", nil, []wireRow{
			{completion: `{"tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"paris\"}"}}]}`,
				fields: map[string]any{"tool_calls": weatherCall},
				status: rewardv1.ScoreStatus_SCORE_STATUS_OK, value: 1},
			{completion: `<tool_call>{"name": "get_weather", "arguments": {"city": "London", "unit": "celsius"}}</tool_call>`,
				fields: map[string]any{"tool_calls": weatherCall},
				status: rewardv1.ScoreStatus_SCORE_STATUS_OK, value: 0, reason: "city"},
			{completion: `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`,
				status: rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE, reason: `"tool_calls"`},
		}},
	}

	srv := startServer(t) // no --config: the embedded default
	client := srv.client(t)
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			name := "inline_" + c.kind
			params, err := structpb.NewStruct(c.params)
			if err != nil {
				t.Fatal(err)
			}
			req := &rewardv1.ScoreRequest{Inline: []*rewardv1.FunctionSpec{{Name: name, Kind: c.kind, Params: params}}}
			httpRollouts := []map[string]any{}
			for _, r := range c.rows {
				fields, err := structpb.NewStruct(r.fields)
				if err != nil {
					t.Fatal(err)
				}
				req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Prompt: r.prompt, Completion: r.completion, Fields: fields})
				httpRollouts = append(httpRollouts, map[string]any{"prompt": r.prompt, "completion": r.completion, "fields": r.fields})
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			resp, err := client.Score(ctx, req)
			if err != nil {
				t.Fatalf("gRPC Score: %v", err)
			}
			checkWire(t, "gRPC", name, c.rows, resp)

			body, err := json.Marshal(map[string]any{
				"inline":   []any{map[string]any{"name": name, "kind": c.kind, "params": c.params}},
				"rollouts": httpRollouts,
			})
			if err != nil {
				t.Fatal(err)
			}
			code, out := httpPost(t, "http://"+srv.httpAddr+"/v1/score", string(body))
			if code != http.StatusOK {
				t.Fatalf("POST /v1/score: %d %s", code, out)
			}
			var hresp rewardv1.ScoreResponse
			if err := protojson.Unmarshal([]byte(out), &hresp); err != nil {
				t.Fatalf("POST /v1/score answered %s: %v", out, err)
			}
			checkWire(t, "HTTP", name, c.rows, &hresp)
		})
	}
}

// personSchema is a JSON Schema as a row carries it: a nested object.
var personSchema = map[string]any{
	"type":     "object",
	"required": []any{"name", "age"},
	"properties": map[string]any{
		"name": map[string]any{"type": "string"},
		"age":  map[string]any{"type": "integer"},
	},
}

// weatherCall is an expected call in BFCL's ground-truth form: the city
// must be Paris, the unit may be celsius or left out.
var weatherCall = []any{map[string]any{"get_weather": map[string]any{"city": []any{"Paris"}, "unit": []any{"celsius", ""}}}}

// checkWire checks the answer for function name against rows.
func checkWire(t *testing.T, surface, name string, rows []wireRow, resp *rewardv1.ScoreResponse) {
	t.Helper()
	if len(resp.GetFunctions()) != 1 || resp.GetFunctions()[0].GetName() != name {
		t.Fatalf("%s: answer has functions %v, want only %s", surface, resp.GetFunctions(), name)
	}
	fs := resp.GetFunctions()[0]
	if len(fs.GetValues()) != len(rows) || len(fs.GetStatus()) != len(rows) {
		t.Fatalf("%s: %d values and %d statuses for %d rollouts", surface, len(fs.GetValues()), len(fs.GetStatus()), len(rows))
	}
	for i, r := range rows {
		i32 := int32(i)
		got, status := fs.GetValues()[i], fs.GetStatus()[i]
		why := fs.GetReasons()[i32] + fs.GetErrors()[i32]
		switch {
		case status != r.status:
			t.Errorf("%s: rollout %d is %v (%v, %q), want %v", surface, i, status, got, why, r.status)
		case status == rewardv1.ScoreStatus_SCORE_STATUS_OK && got != r.value:
			t.Errorf("%s: rollout %d scored %v (%q), want %v", surface, i, got, why, r.value)
		case status != rewardv1.ScoreStatus_SCORE_STATUS_OK && !math.IsNaN(got):
			t.Errorf("%s: rollout %d is %v with the value %v, want NaN", surface, i, status, got)
		case !strings.Contains(why, r.reason):
			t.Errorf("%s: rollout %d's reason %q does not contain %q", surface, i, why, r.reason)
		}
		if status == rewardv1.ScoreStatus_SCORE_STATUS_ERROR && fs.GetErrors()[i32] == "" {
			t.Errorf("%s: rollout %d is an ERROR without an error", surface, i)
		}
	}
}

// ifevalRows returns, for each IFEval key, the prompt row and its published
// PaLM 2 response (scorers/instructions/testdata) as a wireRow that wants
// the reference evaluator's strict prompt-level verdict: 1 when it found
// every instruction followed, else 0 with a reason naming the first it
// found not followed.
func ifevalRows(t *testing.T, keys ...int) []wireRow {
	t.Helper()
	dir := filepath.Join("..", "..", "scorers", "instructions", "testdata")
	type row struct {
		Key               int
		Prompt, Response  string
		InstructionIDList []string `json:"instruction_id_list"`
		Kwargs            []any
		Strict            []bool
	}
	read := func(file string) map[int]row {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		rows := map[int]row{}
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var r row
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			rows[r.Key] = r
		}
		return rows
	}
	inputs, responses, refs := read("ifeval_input_data.jsonl"), read("ifeval_responses_palm2_156.jsonl"), read("ifeval_reference_palm2_156.jsonl")
	var out []wireRow
	for _, k := range keys {
		in, resp, ref := inputs[k], responses[k], refs[k]
		if in.Prompt == "" || resp.Response == "" || len(ref.Strict) != len(in.InstructionIDList) {
			t.Fatalf("IFEval key %d: no prompt, response or reference verdicts", k)
		}
		w := wireRow{
			prompt: in.Prompt, completion: resp.Response,
			fields: map[string]any{"instruction_id_list": anyList(in.InstructionIDList), "kwargs": in.Kwargs},
			status: rewardv1.ScoreStatus_SCORE_STATUS_OK, value: 1,
		}
		if i := slices.Index(ref.Strict, false); i >= 0 {
			w.value, w.reason = 0, in.InstructionIDList[i]
		}
		out = append(out, w)
	}
	if !slices.ContainsFunc(out, func(w wireRow) bool { return w.value == 1 }) || !slices.ContainsFunc(out, func(w wireRow) bool { return w.value == 0 }) {
		t.Fatalf("IFEval keys %v: want a response the reference passes and one it fails", keys)
	}
	return out
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
