package toolcall_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/toolcall"
)

// A BFCL-style expected call (the unit may be left out; two spellings of
// the city are accepted) against calls written as Hermes blocks and as
// OpenAI tool_calls.
func Example() {
	s, err := toolcall.New(toolcall.Params{})
	if err != nil {
		panic(err)
	}
	ref := map[string]*structpb.Value{"tool_calls": structpb.NewStringValue(
		`[{"get_weather": {"city": ["Paris", "Paris, France"], "unit": ["celsius", ""]}}]`)}
	for _, completion := range []string{
		`<tool_call>{"name": "get_weather", "arguments": {"city": "paris"}}</tool_call>`,
		`{"tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris, France\", \"unit\": \"celsius\"}"}}]}`,
		`<tool_call>{"name": "get_weather", "arguments": {"city": "Lyon"}}</tool_call>`,
		`It is sunny in Paris.`,
	} {
		res := s.Score(context.Background(), &scorers.Rollout{Completion: completion, Fields: ref})
		fmt.Printf("%v %q\n", res.Value, res.Reason)
	}
	// Output:
	// 1 ""
	// 1 ""
	// 0 "get_weather: argument \"city\" is \"Lyon\", want one of \"Paris\", \"Paris, France\""
	// 0 "no tool call"
}
