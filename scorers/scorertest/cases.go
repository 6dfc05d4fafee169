package scorertest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// MustNew returns newScorer(p), the constructor of the kind under test, and
// fails tb when it refuses p.
func MustNew[P any, S scorers.Scorer](tb testing.TB, newScorer func(P) (S, error), p P) S {
	tb.Helper()
	s, err := newScorer(p)
	if err != nil {
		tb.Fatalf("New(%+v): %v", p, err)
	}
	return s
}

// Compile builds a scorer the way a config file does: from the YAML text
// of the function's parameters (JSON is YAML) through factory, which is
// scorers.Kind of the kind's constructor.
func Compile(factory scorers.Factory, src string) (scorers.Scorer, []byte, error) {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(src), &node); err != nil {
		return nil, nil, err
	}
	return factory(&node)
}

// MustCompile is Compile for a spec that must compile: it fails the test
// on an error, and when the function has no canonical parameters.
func MustCompile(tb testing.TB, factory scorers.Factory, src string) scorers.Scorer {
	tb.Helper()
	s, canonical, err := Compile(factory, src)
	if err != nil {
		tb.Fatalf("compile %q: %v", src, err)
	}
	if len(canonical) == 0 {
		tb.Errorf("compile %q: no canonical parameters", src)
	}
	return s
}

// Rollout returns a rollout of completion whose row field "answer" (the
// default reference_field of the kinds that compare the completion with a
// reference) holds ref; with a nil ref the row has no fields.
func Rollout(completion string, ref *structpb.Value) *scorers.Rollout {
	r := &scorers.Rollout{Completion: completion}
	if ref != nil {
		r.Fields = map[string]*structpb.Value{"answer": ref}
	}
	return r
}

// RunCases runs, one subtest each, the cases of the table in path (a
// kind's testdata/cases.json) for a kind that compares the completion with
// a reference answer. The table is a JSON array of objects:
//
//   - name: the subtest's name;
//   - params: the function's parameters as a config file writes them,
//     compiled through factory (scorers.Kind of the kind's constructor);
//     absent means {};
//   - completion: the text scored;
//   - reference: any JSON value, put in the row field "answer" (see
//     Rollout); absent means the row has no field;
//   - want: the value of an OK result, or the name of the outcome
//     ("not_applicable", "error");
//   - reason: optional, text the result's reason must contain.
//
// An OK value must equal want exactly when tolerance is 0, else lie within
// tolerance of it; a zero value must have want's sign.
func RunCases(t *testing.T, factory scorers.Factory, path string, tolerance float64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name       string
		Params     json.RawMessage
		Completion string
		Reference  json.RawMessage // absent: no field
		Want       any             // a number, "not_applicable" or "error"
		Reason     string          // when set, the reason must contain it
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			params := string(c.Params)
			if params == "" {
				params = "{}"
			}
			s, _, err := Compile(factory, params) // JSON is YAML
			if err != nil {
				t.Fatalf("params %s: %v", c.Params, err)
			}
			var ref *structpb.Value
			if c.Reference != nil {
				var v any
				if err := json.Unmarshal(c.Reference, &v); err != nil {
					t.Fatal(err)
				}
				if ref, err = structpb.NewValue(v); err != nil {
					t.Fatal(err)
				}
			}
			got := s.Score(context.Background(), Rollout(c.Completion, ref))
			switch want := c.Want.(type) {
			case float64:
				off := got.Value != want
				if tolerance > 0 {
					off = math.Abs(got.Value-want) > tolerance
				}
				// A zero takes want's sign: -0 would print as -0.
				off = off || got.Value == 0 && math.Signbit(got.Value) != math.Signbit(want)
				if got.Outcome != scorers.OK || off {
					t.Errorf("got %v %v (%s), want ok %v", got.Outcome, got.Value, got.Reason, want)
				}
			case string:
				if got.Outcome.String() != want {
					t.Errorf("got %v %v (%s), want %s", got.Outcome, got.Value, got.Reason, want)
				}
			default:
				t.Fatalf("bad want %v", c.Want)
			}
			if !strings.Contains(got.Reason, c.Reason) {
				t.Errorf("reason %q, want it to contain %q", got.Reason, c.Reason)
			}
		})
	}
}

// BadParams is a spec that a kind must refuse, with every problem the
// refusal must name.
type BadParams struct {
	// Name is the subtest's name.
	Name string
	// Src is the function's parameters as a config file writes them.
	Src string
	// Want is each problem as "key:line", in line order: the refusal names
	// these problems and no others.
	Want []string
	// Mention, when set, is text the error message must hold.
	Mention string
}

// RunBadParams compiles each case's parameters through factory, one subtest
// each, and checks that the error lists exactly the problems the case wants.
func RunBadParams(t *testing.T, factory scorers.Factory, cases []BadParams) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			_, _, err := Compile(factory, c.Src)
			if err == nil {
				t.Fatalf("%q compiles, want problems %v", c.Src, c.Want)
			}
			var got []string
			for _, pe := range scorers.AllParamErrors(err) {
				got = append(got, fmt.Sprintf("%s:%d", pe.Key, pe.Line))
			}
			if !slices.Equal(got, c.Want) {
				t.Errorf("%q: problems %v (%v), want %v", c.Src, got, err, c.Want)
			}
			if !strings.Contains(err.Error(), c.Mention) {
				t.Errorf("%q: error %q does not mention %s", c.Src, err, c.Mention)
			}
		})
	}
}

// Refusal is parameters that a kind's constructor must refuse, and a key its
// refusal must name.
type Refusal[P any] struct {
	Name   string
	Params P
	Key    string
}

// RunRefusals calls newScorer, the constructor of the kind under test, on
// each case's parameters, and checks that it refuses them with a problem on
// the case's key.
func RunRefusals[P any, S scorers.Scorer](t *testing.T, newScorer func(P) (S, error), cases []Refusal[P]) {
	t.Helper()
	for _, c := range cases {
		_, err := newScorer(c.Params)
		keys := []string{}
		for _, pe := range scorers.AllParamErrors(err) {
			keys = append(keys, pe.Key)
		}
		if !slices.Contains(keys, c.Key) {
			t.Errorf("%s: New(%+v) gave %v, want a problem on %q", c.Name, c.Params, err, c.Key)
		}
	}
}
