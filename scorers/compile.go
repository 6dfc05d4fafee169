package scorers

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Spec is one reward function before compilation: a name, a kind, and the
// kind's parameters as a YAML mapping (from the config file, or converted from
// the JSON of an inline request spec).
type Spec struct {
	Name string
	Kind string
	// Params is a mapping node, or nil when the function takes all defaults.
	Params *yaml.Node
}

// Function is a compiled reward function.
type Function struct {
	Name   string
	Kind   string
	Scorer Scorer
	// Canonical is the parameters the function runs with, its defaults
	// filled in, encoded as YAML in a fixed order: two specs that mean the
	// same (one leaving a default out, one writing it) have the same
	// Canonical bytes, and a spec of these bytes compiles to the same
	// function. It feeds the config fingerprint and ListFunctions.
	Canonical []byte
}

// Factory builds a scorer from a spec's parameters. Kind builds one from a
// constructor; a Factory need not be written by hand.
type Factory func(params *yaml.Node) (s Scorer, canonical []byte, err error)

// Registry maps a kind name (as written in config files: "exact_match") to the
// factory that builds scorers of that kind. It is an ordinary value built by
// the caller.
type Registry map[string]Factory

// Kinds returns the registered kind names, sorted.
func (r Registry) Kinds() []string {
	kinds := make([]string, 0, len(r))
	for k := range r {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// Compile builds the function described by spec. When parameters are at
// fault the error is a ParamErrors with every problem found, each naming
// its key and line; AllParamErrors lists them.
func (r Registry) Compile(spec Spec) (*Function, error) {
	if spec.Name == "" {
		return nil, &ParamError{Key: "name", Err: errors.New("is empty")}
	}
	if spec.Kind == "" {
		return nil, &ParamError{Key: "kind", Err: fmt.Errorf("is missing (one of %s)", strings.Join(r.Kinds(), ", "))}
	}
	factory, ok := r[spec.Kind]
	if !ok {
		return nil, &ParamError{Key: "kind", Err: fmt.Errorf("unknown kind %q (one of %s)", spec.Kind, strings.Join(r.Kinds(), ", "))}
	}
	s, canonical, err := factory(spec.Params)
	if err != nil {
		return nil, err
	}
	return &Function{Name: spec.Name, Kind: spec.Kind, Scorer: s, Canonical: canonical}, nil
}

// ParamError reports a parameter of a function spec that is unknown, of the
// wrong type, or has a value the kind refuses.
type ParamError struct {
	// Key is the parameter at fault, as written in the config ("pattern",
	// "limits.cpu_seconds"). Empty when the error is about the spec as a whole.
	Key string
	// Line and Column locate the key in the YAML source; 0 when unknown.
	Line, Column int
	Err          error
}

func (e *ParamError) Error() string {
	if e.Key == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s: %v", e.Key, e.Err)
}

func (e *ParamError) Unwrap() error { return e.Err }

// ParamErrors is every problem found in one function's parameters, so that
// a config reports them all at once, not only the first. A constructor
// collects them with Add and Addf and returns Err.
type ParamErrors []*ParamError

// Add records that err is wrong with the parameter key. An err that is
// already a *ParamError or a ParamErrors is recorded as it is, whatever key
// says; a nil err is not recorded.
func (es *ParamErrors) Add(key string, err error) {
	if err == nil {
		return
	}
	if all := AllParamErrors(err); len(all) > 0 && !isPlain(err) {
		*es = append(*es, all...)
		return
	}
	*es = append(*es, &ParamError{Key: key, Err: err})
}

// isPlain says whether err is neither a *ParamError nor a ParamErrors.
func isPlain(err error) bool {
	var pe *ParamError
	var pes ParamErrors
	return !errors.As(err, &pe) && !errors.As(err, &pes)
}

// Addf records a problem with the parameter key, formatted as fmt.Errorf.
func (es *ParamErrors) Addf(key, format string, args ...any) {
	es.Add(key, fmt.Errorf(format, args...))
}

// Err returns es as an error, or nil when there is no problem.
func (es ParamErrors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Error prints the problems on one line, separated by "; ".
func (es ParamErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the problems, for errors.As and errors.Is.
func (es ParamErrors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// Optional fills in a number parameter that a config may leave out: a nil v
// (the key is absent) is def; a value the config gives must lie in
// [lo, hi], even 0: an explicit value is never taken for the default. A
// value out of range is recorded in bad under key, naming the range. It
// returns the pointer the effective parameters hold.
func Optional[T int | float64](bad *ParamErrors, key string, v *T, def, lo, hi T) *T {
	if v == nil {
		return &def
	}
	if !(*v >= lo && *v <= hi) { // NaN is out of every range
		bad.Addf(key, "%v is not in [%v, %v]", *v, lo, hi)
	}
	return v
}

// Choice fills in a parameter that names one of valid: an empty v (the key
// is absent) is def, and with def "" the key is required. A missing or
// unknown name is recorded in bad under key, listing the valid ones. It
// returns the effective value and whether it is one of valid.
func Choice(bad *ParamErrors, key, v, def string, valid ...string) (string, bool) {
	if v == "" {
		v = def
	}
	switch {
	case slices.Contains(valid, v):
		return v, true
	case v == "":
		bad.Addf(key, "is required (one of %s)", strings.Join(valid, ", "))
	default:
		bad.Addf(key, "unknown %s %q (one of %s)", key, v, strings.Join(valid, ", "))
	}
	return v, false
}

// AllParamErrors lists the parameter problems in err: each *ParamError it
// holds, through ParamErrors and errors.Join; any other error in it becomes
// a ParamError with no key. It returns nil for a nil err.
func AllParamErrors(err error) []*ParamError {
	switch e := err.(type) {
	case nil:
		return nil
	case *ParamError:
		return []*ParamError{e}
	case ParamErrors:
		return e
	case interface{ Unwrap() []error }:
		var all []*ParamError
		for _, inner := range e.Unwrap() {
			all = append(all, AllParamErrors(inner)...)
		}
		return all
	}
	var pe *ParamError
	if errors.As(err, &pe) {
		return []*ParamError{pe}
	}
	return []*ParamError{{Err: err}}
}

// Kind adapts a kind's constructor to a Factory. The parameters are decoded
// strictly into a P: an unknown key is an error naming the key and listing the
// known ones. A constructor reports bad values by returning a *ParamError, or
// a ParamErrors with one per bad value, with the Key set; Kind fills in their
// lines and columns. The constructor runs even when some keys are unknown or
// fail to decode, so that the error lists every problem at once; what it
// says about a key that failed to decode is left out (the key is at fault
// already).
func Kind[P any, S Configured[P]](newScorer func(P) (S, error)) Factory {
	return func(node *yaml.Node) (Scorer, []byte, error) {
		var p P
		var bad ParamErrors
		if node != nil {
			bad.Add("", DecodeStrict(node, &p))
		}
		decoded := len(bad)
		s, err := newScorer(p)
		for _, pe := range AllParamErrors(err) {
			if slices.ContainsFunc(bad[:decoded], func(d *ParamError) bool { return within(pe.Key, d.Key) }) {
				continue
			}
			if pe.Line == 0 && node != nil {
				// A missing key is put where its closest parent is,
				// else on the spec itself.
				at, key := node, pe.Key
				for key != "" {
					if n := lookup(node, key); n != nil {
						at = n
						break
					}
					key = cutLast(key)
				}
				pe.Line, pe.Column = at.Line, at.Column
			}
			bad = append(bad, pe)
		}
		if len(bad) > 0 {
			slices.SortStableFunc(bad, func(a, b *ParamError) int { return a.Line - b.Line })
			return nil, nil, bad
		}
		canonical, err := yaml.Marshal(s.Params())
		if err != nil {
			return nil, nil, fmt.Errorf("encode canonical parameters: %w", err)
		}
		return s, canonical, nil
	}
}

// Configured is what Kind needs of a kind's scorer: besides scoring, the
// parameters it runs with. Params returns every default filled in, so that
// a spec that leaves a default out and one that writes it give equal
// Params, and a changed default changes the config fingerprint; and it
// returns only parameters a spec may set together (none of another mode's),
// so that Params, encoded, compiles again to the same function.
type Configured[P any] interface {
	Scorer
	Params() P
}

// DecodeStrict decodes a YAML node into the struct v points to. Every key
// that has no field in v, and every value of the wrong type, is a problem in
// the ParamErrors it returns, naming the key (dotted for nested keys) with
// its line. The values that do decode are set in v.
func DecodeStrict(node *yaml.Node, v any) error {
	bad := checkKeys(node, reflect.TypeOf(v), "")
	if err := node.Decode(v); err != nil {
		bad = append(bad, decodeErrors(node, err)...)
	}
	return bad.Err()
}

// checkKeys reports each key of a mapping node that the struct type t has no
// yaml field for, recursing into nested structs.
func checkKeys(node *yaml.Node, t reflect.Type, prefix string) ParamErrors {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	if t.Kind() != reflect.Struct || node.Kind != yaml.MappingNode {
		return nil
	}
	var bad ParamErrors
	fields := yamlFields(t)
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			known := make([]string, 0, len(fields))
			for name := range fields {
				known = append(known, name)
			}
			slices.Sort(known)
			bad = append(bad, &ParamError{
				Key: prefix + k.Value, Line: k.Line, Column: k.Column,
				Err: fmt.Errorf("unknown key (known keys: %s)", strings.Join(known, ", ")),
			})
			continue
		}
		bad = append(bad, checkKeys(v, ft, prefix+k.Value+".")...)
	}
	return bad
}

// yamlFields maps the yaml names of t's exported fields to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields
}

// within says whether the dotted key is parent or parent's descendant.
func within(key, parent string) bool {
	return key == parent || strings.HasPrefix(key, parent+".")
}

// cutLast removes the last part of a dotted key: "a.b.c" → "a.b"; "a" → "".
func cutLast(key string) string {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return ""
	}
	return key[:i]
}

// lookup finds the value node for a dotted key in a mapping node.
func lookup(node *yaml.Node, key string) *yaml.Node {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	head, rest, nested := strings.Cut(key, ".")
	if node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value != head {
			continue
		}
		if nested {
			return lookup(node.Content[i+1], rest)
		}
		return node.Content[i+1]
	}
	return nil
}

// decodeErrors turns each error of a yaml type error ("line 3: cannot
// unmarshal !!str `x` into float64") into a ParamError at the offending key
// when it can be found.
func decodeErrors(node *yaml.Node, err error) ParamErrors {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return ParamErrors{{Line: node.Line, Column: node.Column, Err: err}}
	}
	bad := make(ParamErrors, 0, len(te.Errors))
	for _, msg := range te.Errors {
		line := 0
		fmt.Sscanf(msg, "line %d:", &line)
		bad = append(bad, &ParamError{Key: keyAtLine(node, line, ""), Line: line, Err: errors.New(strings.TrimSpace(afterColon(msg)))})
	}
	return bad
}

func afterColon(s string) string {
	if _, after, ok := strings.Cut(s, ": "); ok {
		return after
	}
	return s
}

// keyAtLine returns the dotted key whose value starts on line, the deepest
// one when a flow mapping puts several on the line.
func keyAtLine(node *yaml.Node, line int, prefix string) string {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	if node.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		if inner := keyAtLine(v, line, prefix+k.Value+"."); inner != "" {
			return inner
		}
		if k.Line == line || v.Line == line && v.Kind == yaml.ScalarNode {
			return prefix + k.Value
		}
	}
	return ""
}
