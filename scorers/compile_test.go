package scorers_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/rewardd/rewardd/scorers"
)

type toyParams struct {
	Size  *int     `yaml:"size"`
	Ratio *float64 `yaml:"ratio"`
	Inner struct {
		Name string `yaml:"name"`
	} `yaml:"inner"`
}

type toy struct{ p toyParams }

func (t *toy) Score(context.Context, *scorers.Rollout) scorers.Result { return scorers.Score(0) }
func (t *toy) Params() toyParams                                      { return t.p }

// newToy refuses a size over 10 and a ratio outside [0, 1], and always says
// something about inner.name when it is empty.
func newToy(p toyParams) (*toy, error) {
	var bad scorers.ParamErrors
	p.Size = scorers.Optional(&bad, "size", p.Size, 3, 1, 10)
	p.Ratio = scorers.Optional(&bad, "ratio", p.Ratio, 0.5, 0, 1)
	if p.Inner.Name == "" {
		bad.Add("inner.name", errors.New("is missing"))
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	return &toy{p}, nil
}

// TestKindEveryProblem checks what Kind reports of one spec: every unknown
// key (nested ones dotted), every value of the wrong type, every problem the
// constructor finds, in line order, but not what the constructor says of a
// key that failed to decode.
func TestKindEveryProblem(t *testing.T) {
	factory := scorers.Kind(newToy)
	compile := func(src string) ([]string, error) {
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(src), &node); err != nil {
			t.Fatal(err)
		}
		_, _, err := factory(&node)
		var got []string
		for _, pe := range scorers.AllParamErrors(err) {
			got = append(got, fmt.Sprintf("%s:%d", pe.Key, pe.Line))
		}
		return got, err
	}
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"size: 0\nratio: 2\ninner: {name: a}\n", []string{"size:1", "ratio:2"}},
		{"sise: 3\ninner: {nam: a}\nratio: 1\n", []string{"sise:1", "inner.nam:2", "inner.name:2"}},
		{"size: big\ninner: {name: a}\nratio: .nan\n", []string{"size:1", "ratio:3"}},
		{"inner: {name: [a]}\n", []string{"inner.name:1"}},
	} {
		got, err := compile(c.src)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: problems %v (%v), want %v", c.src, got, err, c.want)
		}
	}
	_, canonical, err := factory(nil)
	if err == nil || canonical != nil {
		t.Errorf("no parameters: canonical %q, err %v; want inner.name missing", canonical, err)
	}
	var node yaml.Node
	yaml.Unmarshal([]byte("inner: {name: a}\nsize: 3\n"), &node)
	_, canonical, err = factory(&node)
	if want := "size: 3\nratio: 0.5\ninner:\n    name: a\n"; err != nil || string(canonical) != want {
		t.Errorf("canonical %q, err %v; want %q", canonical, err, want)
	}
}

func TestOptional(t *testing.T) {
	var bad scorers.ParamErrors
	if v := scorers.Optional(&bad, "k", nil, 7, 1, 10); *v != 7 {
		t.Errorf("absent: %d, want the default 7", *v)
	}
	zero := 0
	scorers.Optional(&bad, "k", &zero, 7, 1, 10)
	nan := math.NaN()
	scorers.Optional(&bad, "f", &nan, 0.5, 0, 1)
	if len(bad) != 2 || bad[0].Error() != "k: 0 is not in [1, 10]" || bad[1].Key != "f" {
		t.Errorf("problems %v, want an explicit 0 and NaN refused", bad)
	}
}

func TestChoice(t *testing.T) {
	var bad scorers.ParamErrors
	if v, ok := scorers.Choice(&bad, "unit", "", "words", "words", "chars"); v != "words" || !ok {
		t.Errorf("absent: %q %v, want the default words", v, ok)
	}
	if v, ok := scorers.Choice(&bad, "unit", "chars", "words", "words", "chars"); v != "chars" || !ok {
		t.Errorf("chars: %q %v, want chars kept", v, ok)
	}
	if len(bad) != 0 {
		t.Fatalf("problems %v for valid choices", bad)
	}
	if _, ok := scorers.Choice(&bad, "metric", "", "", "fuzzy", "bleu"); ok {
		t.Error("a required choice left out: ok")
	}
	if v, ok := scorers.Choice(&bad, "mode", "fast", "a", "a", "b"); ok || v != "fast" {
		t.Errorf("unknown: %q %v, want fast, not ok", v, ok)
	}
	if len(bad) != 2 || bad[0].Key != "metric" || bad[1].Key != "mode" {
		t.Fatalf("problems %v, want metric missing and mode unknown", bad)
	}
	for _, p := range bad {
		if !strings.Contains(p.Error(), "(one of ") {
			t.Errorf("%v does not list the valid choices", p)
		}
	}
}
