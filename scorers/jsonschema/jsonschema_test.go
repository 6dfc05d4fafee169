package jsonschema_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/jsonschema"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

const person = `{
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer", "minimum": 0},
    "tags": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["name", "age", "tags"],
  "additionalProperties": false
}`

func TestScore(t *testing.T) {
	factory := builtin.Registry()["json_schema"]
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		params     string
		completion string
		row        map[string]any // nil: no fields
		want       any
		why        string
	}{
		{"valid", "schema: " + oneLine(person), `{"name": "Ada", "age": 36, "tags": []}`, nil, 1.0, ""},
		{"fenced json", "schema: " + oneLine(person), "Here it is:\n```json\n{\"name\": \"Ada\", \"age\": 36, \"tags\": [\"x\"]}\n```\nDone.", nil, 1.0, ""},
		{"last fenced block that parses", "schema: " + oneLine(person), "```json\n{\"name\": 1}\n```\nFixed:\n```\n{\"name\": \"Ada\", \"age\": 36, \"tags\": []}\n```\n```\nnot json\n```", nil, 1.0, ""},
		{"json in prose", "schema: " + oneLine(person), `Sure! {"name": "Ada", "age": 36, "tags": []} Hope it helps.`, nil, 1.0, ""},
		{"last object in prose", "schema: " + oneLine(person), `First {"name": 2} then {"name": "Ada", "age": 36, "tags": []}.`, nil, 1.0, ""},
		{"wrong type names the pointer", "schema: " + oneLine(person), `{"name": "Ada", "age": "36", "tags": []}`, nil, 0.0, "at /age:"},
		{"nested pointer", "schema: " + oneLine(person), `{"name": "Ada", "age": 36, "tags": ["a", 2]}`, nil, 0.0, "at /tags/1:"},
		{"several errors", "schema: " + oneLine(person), `{"name": 1, "age": -1, "tags": []}`, nil, 0.0, "(and 1 more)"},
		{"missing property at the root", "schema: " + oneLine(person), `{"name": "Ada"}`, nil, 0.0, `at "" (the document)`},
		{"pointer escapes", `schema: {"properties": {"a/b~c": {"type": "string"}}}`, `{"a/b~c": 1}`, nil, 0.0, "at /a~1b~0c:"},
		{"partial", "partial: true\nschema: " + oneLine(person), `{"name": "Ada", "age": -1}`, nil, 1.0 / 3, "missing property 'tags' (and 1 more)"},
		{"partial, not an object", "partial: true\nschema: " + oneLine(person), `[1]`, nil, 0.0, "at"},
		{"partial, all valid", "partial: true\nschema: " + oneLine(person), `{"name": "Ada", "age": 1, "tags": []}`, nil, 1.0, ""},
		{"partial, an extra property", "partial: true\nschema: " + oneLine(person), `{"name": "Ada", "age": 1, "tags": [], "x": 0}`, nil, 1.0, "additional"},
		{"no JSON", "schema: " + oneLine(person), "I cannot do that.", nil, 0.0, "no JSON found"},
		{"big integer keeps its digits", `schema: {"type": "integer", "maximum": 9007199254740993}`, `9007199254740993`, nil, 1.0, ""},
		{"1.0 is an integer in 2020-12", `schema: {"type": "integer"}`, `1.0`, nil, 1.0, ""},
		{"draft 7 by $schema", `schema: {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]}`, `[1]`, nil, 0.0, "at /0"},
		{"draft 7 by the key", "draft: '7'\nschema: {\"items\": [{\"type\": \"string\"}]}", `[1]`, nil, 0.0, "at /0"},
		{"2020-12 prefixItems", `schema: {"prefixItems": [{"type": "string"}]}`, `[1]`, nil, 0.0, "at /0"},
		{"internal $ref", `schema: {"$defs": {"n": {"type": "number"}}, "items": {"$ref": "#/$defs/n"}}`, `[1, "x"]`, nil, 0.0, "at /1"},
		{"format is an annotation", `schema: {"type": "string", "format": "email"}`, `"not an email"`, nil, 1.0, ""},
		{"schema from the row", "schema_field: schema", `{"a": 1}`, map[string]any{"schema": map[string]any{"required": []any{"b"}}}, 0.0, "missing property"},
		{"schema from the row as text", "schema_field: schema", `{"b": 1}`, map[string]any{"schema": `{"required": ["b"]}`}, 1.0, ""},
		{"no schema in the row", "schema_field: schema", `{}`, map[string]any{}, "not_applicable", "no schema"},
		{"row schema that does not compile", "schema_field: schema", `{}`, map[string]any{"schema": map[string]any{"type": 3}}, "error", "does not compile"},
		{"row schema that is not JSON", "schema_field: schema", `{}`, map[string]any{"schema": `{"type":`}, "error", "not JSON"},
		{"row schema with a remote $ref", "schema_field: schema", `{}`, map[string]any{"schema": map[string]any{"$ref": "http://example.com/s.json"}}, "error", "loads no schema"},
		{"row schema reading a file", "schema_field: schema", `{}`, map[string]any{"schema": map[string]any{"$ref": "file:///etc/passwd"}}, "error", "loads no schema"},
		{"row schema of the wrong type", "schema_field: schema", `{}`, map[string]any{"schema": 3.0}, "error", "no schema"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := scorertest.MustCompile(t, factory, c.params)
			r := &scorers.Rollout{Completion: c.completion}
			if c.row != nil {
				pb, err := structpb.NewStruct(c.row)
				if err != nil {
					t.Fatal(err)
				}
				r.Fields = pb.GetFields()
			}
			got := s.Score(ctx, r)
			switch want := c.want.(type) {
			case float64:
				if got.Outcome != scorers.OK || got.Value != want {
					t.Errorf("got %v %v (%s), want %v", got.Outcome, got.Value, got.Reason, want)
				}
			case string:
				if got.Outcome.String() != want {
					t.Errorf("got %v (%s), want %s", got.Outcome, got.Reason, want)
				}
			}
			if !strings.Contains(got.Reason, c.why) {
				t.Errorf("reason %q, want %q in it", got.Reason, c.why)
			}
		})
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		p    jsonschema.Params
		want string
	}{
		{jsonschema.Params{}, "schema"},
		{jsonschema.Params{Schema: map[string]any{}, SchemaField: "s"}, "schema_field"},
		{jsonschema.Params{Schema: map[string]any{"type": 3}}, "schema"},
		{jsonschema.Params{Schema: map[string]any{"$ref": "http://example.com/x"}}, "loads no schema"},
		{jsonschema.Params{Schema: "{", Draft: "8"}, "draft"},
	} {
		if _, err := jsonschema.New(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.p, err, c.want)
		}
	}
}

func TestConformance(t *testing.T) {
	s := scorertest.MustNew(t, jsonschema.New, jsonschema.Params{Schema: person, Partial: new(true)})
	var rollouts []*scorers.Rollout
	for _, text := range []string{`{"name": "Ada", "age": 36, "tags": []}`, `{"name": 1}`, "```json\n[1]\n```", `{"a": {"b": [`} {
		rollouts = append(rollouts, &scorers.Rollout{Completion: text})
	}
	scorertest.Run(t, s, scorertest.Unit, rollouts)
	row := scorertest.MustNew(t, jsonschema.New, jsonschema.Params{SchemaField: "schema"})
	scorertest.Run(t, row, scorertest.Unit, rollouts, "schema")
}
