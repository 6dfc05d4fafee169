package instructions_test

import (
	"bufio"
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

// TestIFBenchReferenceTests replays the checks of IFBench's own test file
// (instructions_test.py), recorded with the reference's verdict by
// testdata/ifbench_tests.py: every check rewardd makes gives the
// reference's verdict; every id rewardd refuses answers ERROR naming why.
// A blank response follows nothing in rewardd (as in the reference's
// evaluation, which never calls the checker on one), whatever the
// checker alone says of it.
func TestIFBenchReferenceTests(t *testing.T) {
	s := scorertest.MustNew(t, instructions.New, instructions.Params{})
	agree, refused, n := 0, 0, 0
	for _, c := range ifbenchTests(t) {
		n++
		row, err := structpb.NewStruct(map[string]any{"instruction_id_list": []any{c.ID}, "kwargs": []any{c.Kwargs}})
		if err != nil {
			t.Fatal(err)
		}
		got := s.Score(context.Background(), &scorers.Rollout{Completion: c.Completion, Fields: row.GetFields()})
		if got.Outcome == scorers.Error && strings.Contains(got.Reason, "not supported") {
			refused++
			continue
		}
		want := c.Reference && strings.TrimSpace(c.Completion) != ""
		if got.Outcome != scorers.OK || (got.Value == 1) != want {
			t.Errorf("%s %v on %.100q: got %v %v (%s), reference %v", c.ID, c.Kwargs, c.Completion, got.Outcome, got.Value, got.Reason, want)
			continue
		}
		agree++
	}
	if n < 160 {
		t.Fatalf("read %d checks, want the 166 of testdata", n)
	}
	t.Logf("%d of %d reference checks agree; %d refused by id", agree, n, refused)
}

// ifbenchTest is one check of IFBench's instructions_test.py: the id, the
// checker's arguments, the response and the reference's verdict.
type ifbenchTest struct {
	ID         string         `json:"id"`
	Kwargs     map[string]any `json:"kwargs"`
	Completion string         `json:"completion"`
	Reference  bool           `json:"reference"`
}

func ifbenchTests(t *testing.T) []ifbenchTest {
	t.Helper()
	data, err := os.ReadFile("testdata/ifbench_tests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []ifbenchTest
	for line := range strings.Lines(string(data)) {
		var c ifbenchTest
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestIFBenchAgreement scores the 290 model responses IFBench publishes
// with each of their instructions, strictly and loosely, and compares
// every verdict with the reference's (testdata/ifbench_reference.py, run
// with IFBench's own checkers). Instructions the reference could not run
// here (null) and ids rewardd refuses are counted apart.
func TestIFBenchAgreement(t *testing.T) {
	f, err := os.Open("testdata/ifbench_reference_290.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	factory := instructions.Kind()
	strict := scorertest.MustCompile(t, factory, `{}`)
	loose := scorertest.MustCompile(t, factory, `{"loose": true}`)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var agree, differ, refused, unrun, rows int
	for sc.Scan() {
		var r struct {
			Key               string           `json:"key"`
			InstructionIDList []string         `json:"instruction_id_list"`
			Kwargs            []map[string]any `json:"kwargs"`
			Response          string           `json:"response"`
			Strict, Loose     []*bool
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows++
		for i, id := range r.InstructionIDList {
			row, err := structpb.NewStruct(map[string]any{"instruction_id_list": []any{id}, "kwargs": []any{r.Kwargs[i]}})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []struct {
				name string
				s    scorers.Scorer
				want *bool
			}{{"strict", strict, r.Strict[i]}, {"loose", loose, r.Loose[i]}} {
				got := m.s.Score(context.Background(), &scorers.Rollout{Completion: r.Response, Fields: row.GetFields()})
				switch {
				case got.Outcome == scorers.Error && strings.Contains(got.Reason, "not supported"):
					refused++
				case m.want == nil:
					unrun++
				case got.Outcome != scorers.OK:
					t.Errorf("key %s %s %s: %v (%s)", r.Key, id, m.name, got.Outcome, got.Reason)
					differ++
				case (got.Value == 1) != *m.want:
					t.Errorf("key %s %s %s %v: got %v, reference %v", r.Key, id, m.name, r.Kwargs[i], got.Value, *m.want)
					differ++
				default:
					agree++
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 290 {
		t.Fatalf("read %d rows, want 290", rows)
	}
	t.Logf("%d rows: %d verdicts (strict and loose) agree with the reference, %d differ; %d refused by id; %d the reference could not give here", rows, agree, differ, refused, unrun)
}
