package scorers_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

func TestLookupField(t *testing.T) {
	var row structpb.Struct
	if err := protojson.Unmarshal([]byte(`{
		"answer": "7",
		"a.b": "literal",
		"verification_info": {"answer": "42", "none": null, "nested": {"deep": [1, {"x": "y"}]}},
		"test_cases": [{"input": "1 2", "output": "3"}, {"input": "4 5"}],
		"n": 3
	}`), &row); err != nil {
		t.Fatal(err)
	}
	r := &scorers.Rollout{Fields: row.GetFields()}
	for _, c := range []struct{ name, want, missing string }{
		{"answer", "7", ""},
		{"a.b", "literal", ""},
		{"verification_info.answer", "42", ""},
		{"test_cases.0.input", "1 2", ""},
		{"test_cases.1.input", "4 5", ""},
		{"verification_info.nested.deep.1.x", "y", ""},
		{"missing", "", `no field "missing"`},
		{"missing.x", "", `no field "missing"`},
		{"verification_info.solution", "", `"verification_info" has no key "solution"`},
		{"verification_info.none", "", `"verification_info.none" is null`},
		{"test_cases.2.input", "", `"test_cases" has 2 item(s), no item 2`},
		{"test_cases.first.input", "", `"test_cases" is a list: "first" is not an item number`},
		{"test_cases.-1", "", `"test_cases" is a list: "-1" is not an item number`},
		{"test_cases.1.output", "", `"test_cases.1" has no key "output"`},
		{"n.x", "", `"n" is a number, not an object or a list: no "x" in it`},
		{"answer.0", "", `"answer" is a string, not an object or a list: no "0" in it`},
	} {
		v, ok := r.Field(c.name)
		got := ""
		if ok {
			got = v.GetStringValue()
		}
		if got != c.want || ok != (c.missing == "") || r.MissingField(c.name) != c.missing {
			t.Errorf("Field(%q) = %q %v, missing %q; want %q, missing %q", c.name, got, ok, r.MissingField(c.name), c.want, c.missing)
		}
	}
	if got := r.WhyMissing("no reference in field \"x.y\"", "x.y"); got != `no reference in field "x.y": no field "x"` {
		t.Errorf("WhyMissing = %q", got)
	}
	if got := r.WhyMissing("no reference in field \"x\"", "x"); got != `no reference in field "x"` {
		t.Errorf("WhyMissing of a plain name = %q", got)
	}
}
