// Package builtin assembles the registry of every scorer kind that ships with
// rewardd. It is a constructor, not a global: each call returns a new map.
package builtin

import (
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/format"
	"github.com/rewardd/rewardd/scorers/instructions"
	"github.com/rewardd/rewardd/scorers/jsonschema"
	"github.com/rewardd/rewardd/scorers/length"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/multiplechoice"
	"github.com/rewardd/rewardd/scorers/regex"
	"github.com/rewardd/rewardd/scorers/repetition"
	"github.com/rewardd/rewardd/scorers/similarity"
	"github.com/rewardd/rewardd/scorers/toolcall"
)

// Registry returns the kinds rewardd serves, by their config names. Its
// code_exec functions have no sandbox: they compile, and score every rollout
// as an Error saying so. A process that runs code uses WithSandbox.
func Registry() scorers.Registry { return WithSandbox(nil) }

// WithSandbox returns the kinds rewardd serves, with code_exec functions
// running their programs in the sandbox sb gives.
func WithSandbox(sb codeexec.Sandbox) scorers.Registry {
	return scorers.Registry{
		"code_exec":   codeexec.Kind(sb),
		"exact_match": scorers.Kind(exactmatch.New),
		"regex":       scorers.Kind(regex.New),
		"format":      scorers.Kind(format.New),
		"math":        scorers.Kind(mathverify.New),
		"length":      scorers.Kind(length.New),
		"repetition":  scorers.Kind(repetition.New),
		"similarity":  scorers.Kind(similarity.New),

		"instruction_following": instructions.Kind(),
		"multiple_choice":       scorers.Kind(multiplechoice.New),
		"json_schema":           scorers.Kind(jsonschema.New),
		"tool_call":             scorers.Kind(toolcall.New),
	}
}
