package jsonschema

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	js "github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// suiteLoader serves the suite's remotes (http://localhost:1234/…) from
// testdata, as the suite's runners must.
type suiteLoader struct{}

func (suiteLoader) Load(url string) (any, error) {
	const base = "http://localhost:1234/"
	if !strings.HasPrefix(url, base) {
		return nil, os.ErrNotExist
	}
	f, err := os.Open(filepath.Join("testdata/suite/remotes", filepath.FromSlash(strings.TrimPrefix(url, base))))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return js.UnmarshalJSON(f)
}

type suiteGroup struct {
	Description string
	Schema      any
	Tests       []struct {
		Description string
		Data        any
		Valid       bool
	}
}

// TestSuite runs every required case of the JSON-Schema-Test-Suite for
// drafts 7 and 2020-12 (testdata/suite, see testdata/README.md): each
// schema is compiled as json_schema compiles one (with the suite's
// remotes served for the groups that $ref them), and each test's data is
// scored as a completion; the score must be 1 exactly for the valid ones.
// Groups whose schema needs no remote also go through Scorer.Score with
// the schema in a row field, as a trainer sends it.
func TestSuite(t *testing.T) {
	for _, d := range []struct {
		dir   string
		name  string
		draft *js.Draft
	}{{"draft7", "7", js.Draft7}, {"draft2020-12", "2020-12", js.Draft2020}} {
		files, err := filepath.Glob(filepath.Join("testdata/suite/tests", d.dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no test files (%v)", d.dir, err)
		}
		s, err := New(Params{SchemaField: "schema", Draft: d.name})
		if err != nil {
			t.Fatal(err)
		}
		cases, viaRow := 0, 0
		for _, file := range files {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(f)
			dec.UseNumber()
			var groups []suiteGroup
			err = dec.Decode(&groups)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, g := range groups {
				sch, err := compileWith(g.Schema, d.draft, suiteLoader{})
				if err != nil {
					t.Errorf("%s: %s: compile: %v", file, g.Description, err)
					continue
				}
				_, remote := compile(g.Schema, d.draft)
				for _, tc := range g.Tests {
					cases++
					text, err := json.Marshal(tc.Data)
					if err != nil {
						t.Fatal(err)
					}
					doc, ok := Extract(string(text))
					if !ok {
						t.Errorf("%s: %s: %s: the data %s does not read back", file, g.Description, tc.Description, text)
						continue
					}
					if got := s.validate(sch, doc); (got.Value == 1) != tc.Valid || got.Outcome != scorers.OK {
						t.Errorf("%s: %s: %s: got %v %v (%s), valid %v", file, g.Description, tc.Description, got.Outcome, got.Value, got.Reason, tc.Valid)
					}
					if remote != nil {
						continue
					}
					viaRow++
					schemaText, _ := json.Marshal(g.Schema)
					r := &scorers.Rollout{Completion: string(text), Fields: map[string]*structpb.Value{"schema": structpb.NewStringValue(string(schemaText))}}
					if got := s.Score(context.Background(), r); (got.Value == 1) != tc.Valid || got.Outcome != scorers.OK {
						t.Errorf("%s: %s: %s: through Score: got %v %v (%s), valid %v", file, g.Description, tc.Description, got.Outcome, got.Value, got.Reason, tc.Valid)
					}
				}
			}
		}
		t.Logf("%s: %d cases, %d of them also through Score with the schema in the row", d.dir, cases, viaRow)
	}
}
