// Package builtin assembles the registry of every scorer kind that ships with
// rewardd. It is a constructor, not a global: each call returns a new map.
package builtin

import (
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/format"
	"github.com/rewardd/rewardd/scorers/length"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/regex"
	"github.com/rewardd/rewardd/scorers/repetition"
	"github.com/rewardd/rewardd/scorers/similarity"
)

// Registry returns the kinds rewardd serves, by their config names.
func Registry() scorers.Registry {
	return scorers.Registry{
		"exact_match": scorers.Kind(exactmatch.New),
		"regex":       scorers.Kind(regex.New),
		"format":      scorers.Kind(format.New),
		"math":        scorers.Kind(mathverify.New),
		"length":      scorers.Kind(length.New),
		"repetition":  scorers.Kind(repetition.New),
		"similarity":  scorers.Kind(similarity.New),
	}
}
