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
	"strconv"
	"strings"

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
// null. A name with dots is a path into the row's objects and lists, as
// LookupField reads it: verification_info.answer, test_cases.0.input.
func (r *Rollout) Field(name string) (*structpb.Value, bool) {
	v, err := LookupField(r.Fields, name)
	return v, err == nil
}

// MissingField says which part of name is missing when Field(name) finds
// nothing ("verification_info" has no key "answer"), and "" when it is there.
func (r *Rollout) MissingField(name string) string {
	if _, err := LookupField(r.Fields, name); err != nil {
		return err.Error()
	}
	return ""
}

// WhyMissing is the reason a scorer gives for a rollout without the field
// name: reason itself for a plain name, and for a path reason followed by
// the part that is missing ("no reference in field \"a.b\": \"a\" has no
// key \"b\"").
func (r *Rollout) WhyMissing(reason, name string) string {
	if !strings.Contains(name, ".") {
		return reason
	}
	if why := r.MissingField(name); why != "" {
		return reason + ": " + why
	}
	return reason
}

// LookupField finds the field name in fields. A key of fields that is name
// itself wins; otherwise a name with dots is a path: each part after the
// first is a key of an object or the index (from 0) of an item of a list.
// The error names the first part that is missing, null, or inside a value
// that is neither an object nor a list. It allocates only for the error.
func LookupField(fields map[string]*structpb.Value, name string) (*structpb.Value, error) {
	if v, ok := fields[name]; ok || !strings.Contains(name, ".") {
		if !present(v) {
			return nil, fmt.Errorf("no field %q", name)
		}
		return v, nil
	}
	head, rest, _ := strings.Cut(name, ".")
	v, ok := fields[head]
	if !ok || !present(v) {
		return nil, fmt.Errorf("no field %q", head)
	}
	at := head
	for rest != "" {
		var part string
		part, rest, _ = strings.Cut(rest, ".")
		switch k := v.GetKind().(type) {
		case *structpb.Value_StructValue:
			if v, ok = k.StructValue.GetFields()[part]; !ok {
				return nil, fmt.Errorf("%q has no key %q", at, part)
			}
		case *structpb.Value_ListValue:
			items := k.ListValue.GetValues()
			i, err := strconv.Atoi(part)
			switch {
			case err != nil || i < 0:
				return nil, fmt.Errorf("%q is a list: %q is not an item number", at, part)
			case i >= len(items):
				return nil, fmt.Errorf("%q has %d item(s), no item %d", at, len(items), i)
			}
			v = items[i]
		default:
			return nil, fmt.Errorf("%q is %s, not an object or a list: no %q in it", at, KindName(v), part)
		}
		at += "." + part
		if !present(v) {
			return nil, fmt.Errorf("%q is null", at)
		}
	}
	return v, nil
}

// present reports whether v holds a value other than null.
func present(v *structpb.Value) bool {
	if v == nil || v.Kind == nil {
		return false
	}
	_, null := v.Kind.(*structpb.Value_NullValue)
	return !null
}

// KindName names what a row field holds, for messages: "a string", "a
// number", "a bool", "a list", "an object" or "null".
func KindName(v *structpb.Value) string {
	switch v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return "a string"
	case *structpb.Value_NumberValue:
		return "a number"
	case *structpb.Value_BoolValue:
		return "a bool"
	case *structpb.Value_ListValue:
		return "a list"
	case *structpb.Value_StructValue:
		return "an object"
	default:
		return "null"
	}
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
