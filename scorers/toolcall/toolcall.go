// Package toolcall implements the tool_call scorer kind: the function
// call(s) a completion makes against the expected one(s), with the rules of
// the Berkeley Function-Calling Leaderboard's AST checker (BFCL).
//
// The calls are read from the completion as models write them: OpenAI's
// tool_calls (a message {"tool_calls": [{"function": {"name", "arguments"}}]},
// or the list alone; arguments a JSON object or a string of one), Hermes
// and Qwen's <tool_call>{"name": …, "arguments": …}</tool_call> blocks
// (several for parallel calls), or a JSON object {"name", "arguments"} (or
// "parameters"), or a list of them, alone or in a fenced block.
//
// The expected calls come from ReferenceField, in either of two forms:
//
//   - BFCL's ground truth: a list of {"function_name": {"param": [acceptable
//     values]}}; a param whose list holds "" may be left out;
//   - OpenAI's: {"name": …, "arguments": {…}} or a list of them, every
//     argument required with exactly its value.
//
// A call matches an expected one when the names are equal, every required
// parameter is there, no parameter is there that the expected call does
// not list, and each value equals one of the acceptable ones, type-aware:
// numbers by value, an integer accepted for a float (as BFCL); strings by
// StringMatch (BFCL's normalisation by default: case, spaces and ,./-_*^
// ignored); lists element by element in order, or as multisets when
// ListsAsSets; objects key by key; booleans and null exactly. With several
// expected calls, each must match a different call, in any order (BFCL's
// parallel calls), and the completion may make no other call.
//
// Scoring all (default) gives 1 when every expected call is matched, else
// 0 with a reason naming the call and argument at fault; fraction gives
// the fraction of expected calls matched (0 when the completion makes more
// calls than expected). A completion without a call scores 0 ("no tool
// call"); one whose call is not readable JSON scores 0 saying so. A row
// without the reference is NotApplicable; an unreadable reference is an
// Error.
package toolcall

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/rewardd/rewardd/scorers"
)

// Params configures a tool_call function.
type Params struct {
	// ReferenceField is the row field with the expected call(s). Default
	// tool_calls.
	ReferenceField string `yaml:"reference_field,omitempty"`
	// StringMatch is how strings compare: bfcl (default: lowercased, with
	// spaces and ,./-_*^ removed, as BFCL's standardize_string), exact, or
	// case_insensitive.
	StringMatch string `yaml:"string_match,omitempty"`
	// ListsAsSets compares lists as multisets. Default false.
	ListsAsSets *bool `yaml:"lists_as_sets,omitempty"`
	// Scoring is all (default) or fraction.
	Scoring string `yaml:"scoring,omitempty"`
}

// String matches.
const (
	BFCL            = "bfcl"
	Exact           = "exact"
	CaseInsensitive = "case_insensitive"
)

// Scorer scores tool calls. It is safe for concurrent use.
type Scorer struct {
	p     Params
	sets  bool
	all   bool
	noRef string
}

// New builds a scorer from p, filling in defaults.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	if p.ReferenceField == "" {
		p.ReferenceField = "tool_calls"
	}
	p.StringMatch, _ = scorers.Choice(&bad, "string_match", p.StringMatch, BFCL, BFCL, Exact, CaseInsensitive)
	p.Scoring, _ = scorers.Choice(&bad, "scoring", p.Scoring, "all", "all", "fraction")
	if p.ListsAsSets == nil {
		p.ListsAsSets = new(false)
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	return &Scorer{p: p, sets: *p.ListsAsSets, all: p.Scoring == "all", noRef: fmt.Sprintf("no expected call in field %q", p.ReferenceField)}, nil
}

// Params returns the parameters s runs with, defaults filled in.
func (s *Scorer) Params() Params { return s.p }

// Call is a function call: a name and its arguments.
type Call struct {
	Name      string
	Arguments map[string]any
}

// expected is an expected call: for each parameter, its acceptable values
// and whether it may be left out.
type expected struct {
	name   string
	params map[string]param
}

type param struct {
	values   []any
	optional bool
}

// Score compares the completion's calls with the expected ones. It costs a
// few passes over the completion and does not look at ctx.
func (s *Scorer) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	want, res := s.reference(r)
	if res.Outcome != 0 {
		return res
	}
	calls, why := Extract(r.Completion)
	if why != "" {
		return scorers.ScoreWhy(0, why)
	}
	matched, why := s.match(want, calls)
	switch {
	case matched == len(want) && len(calls) == len(want):
		return scorers.Score(1)
	case len(calls) > len(want):
		return scorers.ScoreWhy(0, fmt.Sprintf("%d calls, want %d", len(calls), len(want)))
	case s.all:
		return scorers.ScoreWhy(0, why)
	default:
		return scorers.ScoreWhy(float64(matched)/float64(len(want)), why)
	}
}

// match pairs expected calls with distinct calls, as many as can be (a
// bipartite matching by augmenting paths), and says why not all are.
func (s *Scorer) match(want []expected, calls []Call) (int, string) {
	fits := make([][]bool, len(want))
	why := ""
	for i, w := range want {
		fits[i] = make([]bool, len(calls))
		against, any := "no call", false
		for j, c := range calls {
			err := s.matchCall(w, c)
			fits[i][j] = err == ""
			any = any || fits[i][j]
			// The reason against the call of the same name, else the first.
			if err != "" && (j == 0 || c.Name == w.name) {
				against = err
			}
		}
		if !any && why == "" {
			why = against
			if len(want) > 1 {
				why = fmt.Sprintf("expected call %d (%s): %s", i+1, w.name, against)
			}
		}
	}
	owner := make([]int, len(calls)) // owner[j]: the expected call calls[j] serves, or -1
	for j := range owner {
		owner[j] = -1
	}
	var augment func(i int, seen []bool) bool
	augment = func(i int, seen []bool) bool {
		for j := range calls {
			if fits[i][j] && !seen[j] {
				seen[j] = true
				if owner[j] < 0 || augment(owner[j], seen) {
					owner[j] = i
					return true
				}
			}
		}
		return false
	}
	n := 0
	for i := range want {
		if augment(i, make([]bool, len(calls))) {
			n++
		}
	}
	if n < len(want) && why == "" {
		why = "two expected calls are matched only by the same call"
	}
	return n, why
}

// matchCall says why c does not match w, or "" when it does.
func (s *Scorer) matchCall(w expected, c Call) string {
	if c.Name != w.name {
		return fmt.Sprintf("called %q, want %q", c.Name, w.name)
	}
	names := make([]string, 0, len(c.Arguments))
	for k := range c.Arguments {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if _, ok := w.params[k]; !ok {
			return fmt.Sprintf("%s: unexpected argument %q", c.Name, k)
		}
	}
	wnames := make([]string, 0, len(w.params))
	for k := range w.params {
		wnames = append(wnames, k)
	}
	sort.Strings(wnames)
	for _, k := range wnames {
		p := w.params[k]
		v, ok := c.Arguments[k]
		if !ok {
			if p.optional {
				continue
			}
			return fmt.Sprintf("%s: missing argument %q", c.Name, k)
		}
		if !slices.ContainsFunc(p.values, func(a any) bool { return s.equal(v, a) }) {
			return fmt.Sprintf("%s: argument %q is %s, want %s", c.Name, k, show(v), showAll(p.values))
		}
	}
	return ""
}

// equal compares a value of a call with an acceptable one.
func (s *Scorer) equal(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return false
		}
		if g == w {
			return true
		}
		gf, err1 := g.Float64()
		wf, err2 := w.Float64()
		return err1 == nil && err2 == nil && gf == wf && !math.IsInf(gf, 0)
	case string:
		g, ok := got.(string)
		return ok && s.sameString(g, w)
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		if !s.sets {
			for i := range w {
				if !s.equal(g[i], w[i]) {
					return false
				}
			}
			return true
		}
		used := make([]bool, len(g))
	next:
		for _, wv := range w {
			for i, gv := range g {
				if !used[i] && s.equal(gv, wv) {
					used[i] = true
					continue next
				}
			}
			return false
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !s.equal(gv, wv) {
				return false
			}
		}
		return true
	}
	return false
}

var bfclStrip = strings.NewReplacer(" ", "", ",", "", ".", "", "/", "", "-", "", "_", "", "*", "", "^", "")

func (s *Scorer) sameString(got, want string) bool {
	switch s.p.StringMatch {
	case Exact:
		return got == want
	case CaseInsensitive:
		return strings.EqualFold(got, want)
	default:
		norm := func(x string) string {
			return strings.ReplaceAll(strings.ToLower(bfclStrip.Replace(x)), "'", `"`)
		}
		return norm(got) == norm(want)
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

func showAll(vs []any) string {
	if len(vs) == 1 {
		return show(vs[0])
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = show(v)
	}
	return "one of " + strings.Join(parts, ", ")
}

var toolCallRE = regexp.MustCompile(`(?s)<tool_call>(.*?)(?:</tool_call>|$)`)

// Extract reads the calls of a completion, or says why it has none.
func Extract(text string) ([]Call, string) {
	if ms := toolCallRE.FindAllStringSubmatch(text, -1); ms != nil {
		var calls []Call
		for i, m := range ms {
			v, err := decode(strings.TrimSpace(m[1]))
			if err != nil {
				return nil, fmt.Sprintf("<tool_call> %d is not JSON: %v", i+1, err)
			}
			cs, why := callsOf(v)
			if why != "" {
				return nil, fmt.Sprintf("<tool_call> %d: %s", i+1, why)
			}
			calls = append(calls, cs...)
		}
		if len(calls) == 0 {
			return nil, "no tool call"
		}
		return calls, ""
	}
	for _, candidate := range jsonCandidates(text) {
		v, err := decode(candidate)
		if err != nil {
			continue
		}
		if calls, why := callsOf(v); why == "" && len(calls) > 0 {
			return calls, ""
		}
	}
	return nil, "no tool call"
}

// jsonCandidates are the texts that may hold the calls as JSON: the whole
// completion, then its fenced blocks from the last.
func jsonCandidates(text string) []string {
	out := []string{strings.TrimSpace(text)}
	var blocks []string
	rest := text
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		after := rest[i+3:]
		nl := strings.IndexByte(after, '\n')
		if nl < 0 {
			break
		}
		body := after[nl+1:]
		end := strings.Index(body, "```")
		if end < 0 {
			break
		}
		blocks = append(blocks, strings.TrimSpace(body[:end]))
		rest = body[end+3:]
	}
	slices.Reverse(blocks)
	return append(out, blocks...)
}

func decode(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// callsOf reads the calls a JSON value holds, in any of the forms.
func callsOf(v any) ([]Call, string) {
	switch x := v.(type) {
	case []any:
		var out []Call
		for i, e := range x {
			cs, why := callsOf(e)
			if why != "" {
				return nil, fmt.Sprintf("call %d: %s", i+1, why)
			}
			out = append(out, cs...)
		}
		return out, ""
	case map[string]any:
		if tc, ok := x["tool_calls"]; ok {
			if _, isList := tc.([]any); !isList {
				return nil, "tool_calls is not a list"
			}
			return callsOf(tc)
		}
		if fn, ok := x["function"].(map[string]any); ok {
			return callsOf(fn)
		}
		name, ok := x["name"].(string)
		if !ok {
			return nil, "no function name"
		}
		args, ok := x["arguments"]
		if !ok {
			args, ok = x["parameters"]
		}
		if !ok {
			args = map[string]any{}
		}
		if str, isStr := args.(string); isStr {
			parsed, err := decode(str)
			if err != nil {
				return nil, fmt.Sprintf("%s: arguments are not JSON: %v", name, err)
			}
			args = parsed
		}
		obj, ok := args.(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("%s: arguments are not an object", name)
		}
		return []Call{{Name: name, Arguments: obj}}, ""
	default:
		return nil, "not a call"
	}
}

// reference reads the expected calls of r.
func (s *Scorer) reference(r *scorers.Rollout) ([]expected, scorers.Result) {
	v, ok := r.Field(s.p.ReferenceField)
	if !ok {
		return nil, scorers.Skip(s.noRef)
	}
	raw := v.AsInterface()
	if str, isStr := raw.(string); isStr {
		parsed, err := decode(str)
		if err != nil {
			return nil, scorers.Errorf("field %q is not JSON: %v", s.p.ReferenceField, err)
		}
		raw = parsed
	} else {
		// Numbers as json.Number, as the completion's.
		b, err := json.Marshal(raw)
		if err == nil {
			raw, err = decode(string(b))
		}
		if err != nil {
			return nil, scorers.Errorf("field %q: %v", s.p.ReferenceField, err)
		}
	}
	list, isList := raw.([]any)
	if !isList {
		list = []any{raw}
	}
	if len(list) == 0 {
		return nil, scorers.Skip(s.noRef)
	}
	out := make([]expected, 0, len(list))
	for i, e := range list {
		w, err := expectedOf(e)
		if err != "" {
			return nil, scorers.Errorf("field %q: expected call %d: %s", s.p.ReferenceField, i+1, err)
		}
		out = append(out, w)
	}
	return out, scorers.Result{}
}

// expectedOf reads one expected call, in BFCL's form or OpenAI's.
func expectedOf(v any) (expected, string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return expected{}, "not an object"
	}
	if _, hasName := obj["name"]; hasName || obj["function"] != nil {
		calls, why := callsOf(obj)
		if why != "" {
			return expected{}, why
		}
		c := calls[0]
		w := expected{name: c.Name, params: map[string]param{}}
		for k, a := range c.Arguments {
			w.params[k] = param{values: []any{a}}
		}
		return w, ""
	}
	if len(obj) != 1 {
		return expected{}, "want {\"name\", \"arguments\"} or BFCL's {\"function\": {\"param\": [values]}}"
	}
	for name, ps := range obj {
		pm, ok := ps.(map[string]any)
		if !ok {
			return expected{}, fmt.Sprintf("%s: parameters are not an object", name)
		}
		w := expected{name: name, params: map[string]param{}}
		for k, vals := range pm {
			list, ok := vals.([]any)
			if !ok {
				return expected{}, fmt.Sprintf("%s: parameter %q: want a list of acceptable values", name, k)
			}
			var p param
			for _, a := range list {
				if a == "" {
					p.optional = true
					continue
				}
				p.values = append(p.values, a)
			}
			w.params[k] = p
		}
		return w, ""
	}
	return expected{}, "empty"
}
