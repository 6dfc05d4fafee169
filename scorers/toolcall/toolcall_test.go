package toolcall_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/scorertest"
	"github.com/rewardd/rewardd/scorers/toolcall"
)

// weather is BFCL's form: unit may be left out, or be "celsius"; the city
// may be written two ways.
const weather = `[{"get_weather": {"city": ["San Francisco, CA", "San Francisco"], "unit": ["celsius", ""], "days": [3]}}]`

// forms are completions as models write them, each with the score against
// the reference (weather unless ref is set) and text its reason holds.
var forms = []struct {
	name, completion, ref string
	params                toolcall.Params
	want                  float64
	why                   string
}{
	// how the call is written
	{name: "hermes block", completion: `<tool_call>{"name": "get_weather", "arguments": {"city": "San Francisco", "days": 3}}</tool_call>`, want: 1},
	{name: "hermes block with prose", completion: "I'll check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"San Francisco, CA\", \"unit\": \"celsius\", \"days\": 3}}\n</tool_call>", want: 1},
	{name: "unclosed hermes block", completion: `<tool_call>{"name": "get_weather", "arguments": {"city": "San Francisco", "days": 3}}`, want: 1},
	{name: "openai message", completion: `{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"San Francisco\", \"days\": 3}"}}]}`, want: 1},
	{name: "openai list", completion: `[{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "San Francisco", "days": 3}}}]`, want: 1},
	{name: "bare object", completion: `{"name": "get_weather", "arguments": {"city": "San Francisco", "days": 3}}`, want: 1},
	{name: "parameters key", completion: `{"name": "get_weather", "parameters": {"city": "San Francisco", "days": 3}}`, want: 1},
	{name: "fenced", completion: "Calling:\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"San Francisco\", \"days\": 3}}\n```", want: 1},
	{name: "arguments string", completion: `{"name": "get_weather", "arguments": "{\"city\": \"San Francisco\", \"days\": 3}"}`, want: 1},
	// values
	{name: "bfcl string rules", completion: `{"name": "get_weather", "arguments": {"city": "san francisco", "days": 3}}`, want: 1},
	{name: "bfcl punctuation ignored", completion: `{"name": "get_weather", "arguments": {"city": "San-Francisco.", "days": 3}}`, want: 1},
	{name: "exact strings", completion: `{"name": "get_weather", "arguments": {"city": "san francisco", "days": 3}}`, params: toolcall.Params{StringMatch: toolcall.Exact}, want: 0, why: `argument "city" is "san francisco"`},
	{name: "case-insensitive strings", completion: `{"name": "get_weather", "arguments": {"city": "SAN FRANCISCO", "days": 3}}`, params: toolcall.Params{StringMatch: toolcall.CaseInsensitive}, want: 1},
	{name: "wrong city", completion: `{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}`, want: 0, why: `argument "city" is "Paris", want one of "San Francisco, CA", "San Francisco"`},
	{name: "number as string", completion: `{"name": "get_weather", "arguments": {"city": "San Francisco", "days": "3"}}`, want: 0, why: `argument "days" is "3"`},
	{name: "float for an int", completion: `{"name": "get_weather", "arguments": {"city": "San Francisco", "days": 3.0}}`, want: 1},
	{name: "optional given a wrong value", completion: `{"name": "get_weather", "arguments": {"city": "San Francisco", "days": 3, "unit": "kelvin"}}`, want: 0, why: `argument "unit"`},
	{name: "missing required", completion: `{"name": "get_weather", "arguments": {"city": "San Francisco"}}`, want: 0, why: `missing argument "days"`},
	{name: "unexpected argument", completion: `{"name": "get_weather", "arguments": {"city": "San Francisco", "days": 3, "lang": "en"}}`, want: 0, why: `unexpected argument "lang"`},
	{name: "wrong function", completion: `{"name": "get_forecast", "arguments": {"city": "San Francisco", "days": 3}}`, want: 0, why: `called "get_forecast", want "get_weather"`},
	{name: "list in order", completion: `{"name": "sum", "arguments": {"xs": [1, 2, 3]}}`, ref: `{"name": "sum", "arguments": {"xs": [1, 2, 3]}}`, want: 1},
	{name: "list out of order", completion: `{"name": "sum", "arguments": {"xs": [3, 2, 1]}}`, ref: `{"name": "sum", "arguments": {"xs": [1, 2, 3]}}`, want: 0, why: `"xs"`},
	{name: "list as a set", completion: `{"name": "sum", "arguments": {"xs": [3, 2, 1]}}`, ref: `{"name": "sum", "arguments": {"xs": [1, 2, 3]}}`, params: toolcall.Params{ListsAsSets: new(true)}, want: 1},
	{name: "multiset counts", completion: `{"name": "sum", "arguments": {"xs": [1, 1, 2]}}`, ref: `{"name": "sum", "arguments": {"xs": [1, 2, 2]}}`, params: toolcall.Params{ListsAsSets: new(true)}, want: 0, why: `"xs"`},
	{name: "nested object", completion: `{"name": "book", "arguments": {"guest": {"name": "Ada", "age": 36}}}`, ref: `{"name": "book", "arguments": {"guest": {"age": 36, "name": "ada"}}}`, want: 1},
	{name: "nested object with a key more", completion: `{"name": "book", "arguments": {"guest": {"name": "Ada", "age": 36, "vip": true}}}`, ref: `{"name": "book", "arguments": {"guest": {"age": 36, "name": "Ada"}}}`, want: 0, why: `"guest"`},
	{name: "booleans exactly", completion: `{"name": "f", "arguments": {"on": "true"}}`, ref: `{"name": "f", "arguments": {"on": true}}`, want: 0, why: `"on"`},
	{name: "null", completion: `{"name": "f", "arguments": {"x": null}}`, ref: `{"name": "f", "arguments": {"x": null}}`, want: 1},
	{name: "no arguments", completion: `<tool_call>{"name": "now"}</tool_call>`, ref: `{"name": "now", "arguments": {}}`, want: 1},
	// several calls
	{name: "parallel any order", completion: "<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1}}</tool_call>", ref: `[{"a": {"x": [1]}}, {"b": {}}]`, want: 1},
	{name: "parallel one missing", completion: `<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>`, ref: `[{"a": {"x": [1]}}, {"b": {}}]`, want: 0, why: "expected call 2 (b)"},
	{name: "parallel fraction", completion: `<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>`, ref: `[{"a": {"x": [1]}}, {"b": {}}]`, params: toolcall.Params{Scoring: "fraction"}, want: 0.5, why: "expected call 2 (b)"},
	{name: "a call too many", completion: "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1}}</tool_call><tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1}}</tool_call>", ref: `[{"a": {"x": [1]}}]`, want: 0, why: "2 calls, want 1"},
	{name: "same call for two", completion: "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1}}</tool_call>\n<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 3}}</tool_call>", ref: `[{"a": {"x": [1, 2]}}, {"a": {"x": [1]}}]`, want: 0, why: "only by the same call"},
	// no call
	{name: "prose only", completion: "The weather in San Francisco is sunny.", want: 0, why: "no tool call"},
	{name: "broken block", completion: `<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>`, want: 0, why: "is not JSON"},
	{name: "arguments string broken", completion: `{"name": "get_weather", "arguments": "{city: SF}"}`, want: 0, why: "no tool call"},
	{name: "block arguments string broken", completion: `<tool_call>{"name": "get_weather", "arguments": "{city: SF}"}</tool_call>`, want: 0, why: "arguments are not JSON"},
	{name: "JSON that is not a call", completion: `{"city": "San Francisco"}`, want: 0, why: "no tool call"},
}

func TestForms(t *testing.T) {
	if len(forms) < 30 {
		t.Fatalf("%d forms, want 30 at least", len(forms))
	}
	ctx := context.Background()
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			s := scorertest.MustNew(t, toolcall.New, f.params)
			ref := f.ref
			if ref == "" {
				ref = weather
			}
			r := &scorers.Rollout{Completion: f.completion, Fields: map[string]*structpb.Value{"tool_calls": structpb.NewStringValue(ref)}}
			got := s.Score(ctx, r)
			if got.Outcome != scorers.OK || got.Value != f.want || !strings.Contains(got.Reason, f.why) {
				t.Errorf("got %v %v (%s), want %v (%s)", got.Outcome, got.Value, got.Reason, f.want, f.why)
			}
		})
	}
}

func TestReference(t *testing.T) {
	s := scorertest.MustNew(t, toolcall.New, toolcall.Params{})
	call := `{"name": "f", "arguments": {"x": 1}}`
	ctx := context.Background()
	for _, c := range []struct {
		ref  any // nil: no field
		want string
		why  string
	}{
		{map[string]any{"name": "f", "arguments": map[string]any{"x": 1}}, "ok", ""},
		{[]any{map[string]any{"f": map[string]any{"x": []any{1, 2}}}}, "ok", ""},
		{nil, "not_applicable", "no expected call"},
		{[]any{}, "not_applicable", "no expected call"},
		{"{", "error", "not JSON"},
		{3.0, "error", "not an object"},
		{map[string]any{"f": map[string]any{"x": 1}}, "error", "list of acceptable values"},
		{map[string]any{"f": 1, "g": 2}, "error", "want"},
	} {
		r := &scorers.Rollout{Completion: call}
		if c.ref != nil {
			v, err := structpb.NewValue(c.ref)
			if err != nil {
				t.Fatal(err)
			}
			r.Fields = map[string]*structpb.Value{"tool_calls": v}
		}
		got := s.Score(ctx, r)
		if got.Outcome.String() != c.want || !strings.Contains(got.Reason, c.why) {
			t.Errorf("%v: got %v %v (%s), want %s (%s)", c.ref, got.Outcome, got.Value, got.Reason, c.want, c.why)
		}
	}
}

func TestConformance(t *testing.T) {
	s := scorertest.MustNew(t, toolcall.New, toolcall.Params{Scoring: "fraction"})
	var rollouts []*scorers.Rollout
	for _, f := range forms {
		rollouts = append(rollouts, &scorers.Rollout{Completion: f.completion, Fields: map[string]*structpb.Value{"tool_calls": structpb.NewStringValue(weather)}})
	}
	scorertest.Run(t, s, scorertest.Unit, rollouts, "tool_calls")
}
