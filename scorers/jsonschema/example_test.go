package jsonschema_test

import (
	"context"
	"fmt"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/jsonschema"
)

// Structured output: the completion's JSON (here in a fenced block) must
// validate; the reason of a 0 names the JSON pointer that fails, and
// partial credit counts the required properties present and valid.
func Example() {
	schema := `{"type": "object", "required": ["city", "temp_c"],
		"properties": {"city": {"type": "string"}, "temp_c": {"type": "number"}}}`
	for _, partial := range []bool{false, true} {
		s, err := jsonschema.New(jsonschema.Params{Schema: schema, Partial: &partial})
		if err != nil {
			panic(err)
		}
		for _, completion := range []string{
			"```json\n{\"city\": \"Oslo\", \"temp_c\": -3.5}\n```",
			`{"city": "Oslo", "temp_c": "cold"}`,
		} {
			res := s.Score(context.Background(), &scorers.Rollout{Completion: completion})
			fmt.Printf("partial %v: %v %q\n", partial, res.Value, res.Reason)
		}
	}
	// Output:
	// partial false: 1 ""
	// partial false: 0 "at /temp_c: got string, want number"
	// partial true: 1 ""
	// partial true: 0.5 "at /temp_c: got string, want number"
}
