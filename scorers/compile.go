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
	// Canonical is the function's parameters, decoded and re-encoded in a
	// fixed order: two specs that mean the same have the same Canonical bytes.
	// It feeds the config fingerprint.
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

// Compile builds the function described by spec. Errors are *ParamError when a
// parameter is at fault, so that the caller can say which key and line.
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

// Kind adapts a kind's constructor to a Factory. The parameters are decoded
// strictly into a P: an unknown key is an error naming the key and listing the
// known ones. A constructor reports a bad value by returning a *ParamError with
// the Key set; Kind fills in its line and column.
func Kind[P any, S Scorer](newScorer func(P) (S, error)) Factory {
	return func(node *yaml.Node) (Scorer, []byte, error) {
		var p P
		if node != nil {
			if err := DecodeStrict(node, &p); err != nil {
				return nil, nil, err
			}
		}
		s, err := newScorer(p)
		if err != nil {
			var pe *ParamError
			if errors.As(err, &pe) && pe.Line == 0 && node != nil {
				if n := lookup(node, pe.Key); n != nil {
					pe.Line, pe.Column = n.Line, n.Column
				}
			}
			return nil, nil, err
		}
		var params any = p
		if c, ok := any(s).(canonicalizer); ok {
			params = c.CanonicalParams()
		}
		canonical, err := yaml.Marshal(params)
		if err != nil {
			return nil, nil, fmt.Errorf("encode canonical parameters: %w", err)
		}
		return s, canonical, nil
	}
}

// canonicalizer is the capability of a scorer that fills in defaults: its
// CanonicalParams are the parameters it runs with, defaults included, so that
// the config fingerprint changes when a default does.
type canonicalizer interface {
	CanonicalParams() any
}

// DecodeStrict decodes a YAML node into the struct v points to. A key that
// has no field in v, or a value of the wrong type, is a *ParamError naming the
// key (dotted for nested keys) with its line and column.
func DecodeStrict(node *yaml.Node, v any) error {
	if err := checkKeys(node, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	if err := node.Decode(v); err != nil {
		return decodeError(node, err)
	}
	return nil
}

// checkKeys reports the first key of a mapping node that the struct type t
// has no yaml field for, recursing into nested structs.
func checkKeys(node *yaml.Node, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	if t.Kind() != reflect.Struct || node.Kind != yaml.MappingNode {
		return nil
	}
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
			return &ParamError{
				Key: prefix + k.Value, Line: k.Line, Column: k.Column,
				Err: fmt.Errorf("unknown key (known keys: %s)", strings.Join(known, ", ")),
			}
		}
		if err := checkKeys(v, ft, prefix+k.Value+"."); err != nil {
			return err
		}
	}
	return nil
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

// decodeError turns a yaml type error ("line 3: cannot unmarshal !!str `x`
// into float64") into a ParamError at the offending key when it can be found.
func decodeError(node *yaml.Node, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		line := 0
		fmt.Sscanf(te.Errors[0], "line %d:", &line)
		key := keyAtLine(node, line, "")
		return &ParamError{Key: key, Line: line, Err: errors.New(strings.TrimSpace(afterColon(te.Errors[0])))}
	}
	return &ParamError{Line: node.Line, Column: node.Column, Err: err}
}

func afterColon(s string) string {
	if _, after, ok := strings.Cut(s, ": "); ok {
		return after
	}
	return s
}

// keyAtLine returns the dotted key whose value starts on line.
func keyAtLine(node *yaml.Node, line int, prefix string) string {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	if node.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		if k.Line == line || v.Line == line && v.Kind == yaml.ScalarNode {
			return prefix + k.Value
		}
		if inner := keyAtLine(v, line, prefix+k.Value+"."); inner != "" {
			return inner
		}
	}
	return ""
}
