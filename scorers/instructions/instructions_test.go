package instructions_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/instructions"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// TestCases runs testdata/cases.json: for each case, the function's params,
// the completion, the row's instruction ids and kwargs (absent: no field;
// fields replaces both), and the wanted score or outcome, with text the
// reason must hold.
func TestCases(t *testing.T) {
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name         string
		Params       json.RawMessage
		Completion   string
		Instructions any
		Kwargs       any
		Fields       map[string]any
		Want         any
		Reason       string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	factory := instructions.Kind()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			params := string(c.Params)
			if params == "" {
				params = "{}"
			}
			s := scorertest.MustCompile(t, factory, params)
			fields := c.Fields
			if fields == nil {
				fields = map[string]any{}
				if c.Instructions != nil {
					fields["instruction_id_list"] = c.Instructions
				}
				if c.Kwargs != nil {
					fields["kwargs"] = c.Kwargs
				}
			}
			pb, err := structpb.NewStruct(fields)
			if err != nil {
				t.Fatal(err)
			}
			got := s.Score(context.Background(), &scorers.Rollout{Completion: c.Completion, Fields: pb.GetFields()})
			switch want := c.Want.(type) {
			case float64:
				if got.Outcome != scorers.OK || got.Value != want {
					t.Errorf("got %v %v (%s), want ok %v", got.Outcome, got.Value, got.Reason, want)
				}
			case string:
				if got.Outcome.String() != want {
					t.Errorf("got %v %v (%s), want %s", got.Outcome, got.Value, got.Reason, want)
				}
			}
			if !strings.Contains(got.Reason, c.Reason) {
				t.Errorf("reason %q, want it to contain %q", got.Reason, c.Reason)
			}
		})
	}
}

// TestEveryIDHasACase checks that the table, with the checks of IFBench's
// own tests (TestIFBenchReferenceTests), tests every instruction id the
// kind checks, each followed and not followed.
func TestEveryIDHasACase(t *testing.T) {
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Instructions []string
		Want         any
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	seen := map[string][2]bool{}
	for _, c := range cases {
		if len(c.Instructions) != 1 {
			continue
		}
		s := seen[c.Instructions[0]]
		switch c.Want {
		case 1.0:
			s[1] = true
		case 0.0:
			s[0] = true
		}
		seen[c.Instructions[0]] = s
	}
	for _, c := range ifbenchTests(t) {
		s := seen[c.ID]
		if strings.TrimSpace(c.Completion) != "" {
			s[b2i(c.Reference)] = true
		}
		seen[c.ID] = s
	}
	ids := instructions.IDs()
	if len(ids) < 25+29+54 {
		t.Errorf("%d ids", len(ids))
	}
	for _, id := range ids {
		if s := seen[id]; !s[0] || !s[1] {
			t.Errorf("%s: followed case %v, not-followed case %v", id, s[1], s[0])
		}
	}
}

// TestConformance runs the shared suite on IFEval's rows.
func TestConformance(t *testing.T) {
	rows, _ := palm2Rows(t)
	var rollouts []*scorers.Rollout
	for _, row := range rows[:40] {
		rollouts = append(rollouts, row.rollout(t, row.InstructionIDList, row.Kwargs))
	}
	for _, p := range []instructions.Params{{}, {Loose: new(true), Scoring: instructions.Fraction}} {
		s := scorertest.MustNew(t, instructions.New, p)
		scorertest.Run(t, s, scorertest.Unit, rollouts, "instruction_id_list", "kwargs")
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
