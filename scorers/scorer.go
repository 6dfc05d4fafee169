// Package scorers defines what a reward function is to rewardd: the Scorer
// interface, the Result it returns, and the compiler that turns a function
// spec (name, kind, parameters) into a Scorer.
//
// Each kind lives in its own package (scorers/exactmatch, scorers/regex, …)
// with a concrete New(Params) constructor. The set of kinds a process serves is
// a Registry value built by the caller; nothing registers itself.
//
// Scorers are pure: no logging, no metrics, no globals. Anything that needs to
// be observed is returned in the Result.
package scorers

import (
	"context"
	"fmt"
	"math"

	"google.golang.org/protobuf/types/known/structpb"
)

// Outcome says what a scorer decided about one rollout. The numbering matches
// reward.v1.ScoreStatus. The zero value is not a valid outcome: a Result that
// nobody filled in is treated as an error, never as a score of 0.
type Outcome uint8

const (
	// OK means Value holds the score. A wrong answer is OK with a low value.
	OK Outcome = 1
	// NotApplicable means the function does not apply to this rollout (TRL's
	// None), e.g. the row has no reference answer. Value is NaN.
	NotApplicable Outcome = 2
	// Error means the verifier itself could not decide (sandbox failure,
	// internal timeout, malformed row field). Value is NaN and Reason says why.
	Error Outcome = 3
)

// String returns the outcome as it appears in metrics and JSON output.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case NotApplicable:
		return "not_applicable"
	case Error:
		return "error"
	default:
		return fmt.Sprintf("outcome(%d)", uint8(o))
	}
}

// Result is the verdict of one function on one rollout.
type Result struct {
	// Value is the score when Outcome is OK, NaN otherwise.
	Value float64
	// Outcome is OK, NotApplicable or Error.
	Outcome Outcome
	// Reason explains a NotApplicable or Error outcome, and may explain an OK
	// one (e.g. "no answer found"). It is meant for humans and logs.
	Reason string
	// Execution, when the scorer ran a program, is what running it found:
	// its verdict and each test's, with their time and memory. Nil
	// otherwise. Results may share one; nobody changes it.
	Execution *Execution
}

// Score returns an OK result with value v.
func Score(v float64) Result { return Result{Value: v, Outcome: OK} }

// ScoreWhy returns an OK result with value v and a reason (for example why a
// rollout scored 0).
func ScoreWhy(v float64, reason string) Result { return Result{Value: v, Outcome: OK, Reason: reason} }

// Skip returns a NotApplicable result.
func Skip(reason string) Result {
	return Result{Value: math.NaN(), Outcome: NotApplicable, Reason: reason}
}

// Errorf returns an Error result whose reason is formatted as fmt.Sprintf.
func Errorf(format string, args ...any) Result {
	return Result{Value: math.NaN(), Outcome: Error, Reason: fmt.Sprintf(format, args...)}
}

// Rollout is one completion as scorers see it.
type Rollout struct {
	// ID is the caller's identifier of the rollout; scorers do not use it.
	ID string
	// Group identifies the prompt the rollout answers (the GRPO group).
	Group string
	// Prompt is the prompt text (for chat format, as rendered by the caller).
	Prompt string
	// Completion is the text being scored.
	Completion string
	// Fields holds the dataset row's other columns (reference answers,
	// tests, per-row patterns). It may be nil.
	Fields map[string]*structpb.Value
}

// Field returns the row field called name, and whether it is present and not
// null.
func (r *Rollout) Field(name string) (*structpb.Value, bool) {
	v, ok := r.Fields[name]
	if !ok || v == nil {
		return nil, false
	}
	if _, null := v.Kind.(*structpb.Value_NullValue); null || v.Kind == nil {
		return nil, false
	}
	return v, true
}

// Scorer scores rollouts for one reward function.
//
// Score must be safe for concurrent use by many goroutines, deterministic (the
// same rollout always gives the same Result), and must never panic on any
// input; the engine still recovers a panic into an Error result for that one
// rollout. Score should return promptly once ctx is done; a scorer that does
// slow work (running a program) must stop it and return an Error result. A
// scorer whose work is a few microseconds of string processing may ignore ctx:
// the engine checks it between rollouts.
//
// An OK Result carries a finite Value; the engine turns a non-finite OK value
// into an Error so that a NaN never reaches a trainer disguised as a score.
type Scorer interface {
	Score(ctx context.Context, r *Rollout) Result
}

// GroupScorer is the capability of a scorer whose value for one rollout
// depends on the other rollouts of its group (the completions sampled for one
// prompt), such as the Kimi 1.5 length reward, which compares each length
// with the shortest and longest of the group. The engine calls ScoreGroup
// once per group instead of Score once per rollout.
//
// group holds every rollout of one group of the request, as the engine
// defines groups (a rollout's Group, or its Prompt when it has none; a
// rollout with neither is a group of its own). out has len(group) entries and
// ScoreGroup sets each one: out[i] is the result of group[i]. A group is
// scored as it is given: when a trainer sends part of a group, the missing
// rollouts do not count. Score on a GroupScorer still scores one rollout
// alone; when the value needs the group it returns an Error result saying so,
// never a silent 0.
type GroupScorer interface {
	Scorer
	ScoreGroup(ctx context.Context, group []*Rollout, out []Result)
}

// Cautious is the capability of a scorer whose parameters can be valid and
// still unsafe for training (a code_exec function that lets a program
// shadow the helpers its tests check it with): Cautions says what is, in
// sentences that name the parameter; `rewardd check` reports each as a
// warning.
type Cautious interface {
	Cautions() []string
}

// GroupIndices lists the indices 0 to n-1 of each group, in order of first
// appearance, as GroupScorer defines groups: key(i) is rollout i's Group,
// or its Prompt when it has none; a rollout whose key is "" is a group of
// its own.
func GroupIndices(n int, key func(i int) string) [][]int {
	var groups [][]int
	index := make(map[string]int)
	for i := range n {
		k := key(i)
		if k == "" {
			groups = append(groups, []int{i})
			continue
		}
		g, ok := index[k]
		if !ok {
			g = len(groups)
			index[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

type yieldKey struct{}

// Yield lets the process's other requests use the worker, if one that has
// used the workers less is waiting for one: a scorer whose work on one
// rollout can take much more than a millisecond calls it every millisecond
// or so of work, where it would check ctx. It returns ctx's error when ctx
// ends, before or while it waits. With no engine behind ctx it only checks
// ctx.
func Yield(ctx context.Context) error {
	if y, ok := ctx.Value(yieldKey{}).(func(context.Context) error); ok {
		return y(ctx)
	}
	return ctx.Err()
}

// WithYield returns ctx with y as what Yield calls (the engine's; y itself
// is called with the ctx the scorer passes to Yield).
func WithYield(ctx context.Context, y func(context.Context) error) context.Context {
	return context.WithValue(ctx, yieldKey{}, y)
}
