package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/check"
	"github.com/rewardd/rewardd/server/config"
	"github.com/rewardd/rewardd/server/jsonl"
)

// newService compiles configYAML with reg and returns a one-worker service
// over it, as `rewardd check` builds one.
func newService(t *testing.T, configYAML string, reg scorers.Registry) *server.Service {
	t.Helper()
	cfg, err := config.Load("test.yml", []byte(configYAML), reg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Kinds: reg, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return srv.Service()
}

// readRows parses JSONL sample text.
func readRows(t *testing.T, text string) ([]*jsonl.Row, []*jsonl.LineError) {
	t.Helper()
	rows, bad, err := check.ReadSamples(strings.NewReader(text), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return rows, bad
}

// mustRun runs the check, which must not fail to run.
func mustRun(t *testing.T, in check.Input) *check.Report {
	t.Helper()
	r, err := check.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// finding is the structural identity of a finding: what and where, not the
// message.
type finding struct {
	sev      check.Severity
	code     check.Code
	function string
}

func findings(r *check.Report) []finding {
	var out []finding
	for _, f := range r.Findings {
		out = append(out, finding{f.Severity, f.Code, f.Function})
	}
	return out
}

func assertFindings(t *testing.T, r *check.Report, want ...finding) {
	t.Helper()
	got := findings(r)
	key := func(f finding) string { return string(f.sev) + "/" + string(f.code) + "/" + f.function }
	gotKeys, wantKeys := make([]string, len(got)), make([]string, len(want))
	for i, f := range got {
		gotKeys[i] = key(f)
	}
	for i, f := range want {
		wantKeys[i] = key(f)
	}
	slices.Sort(gotKeys)
	slices.Sort(wantKeys)
	if !slices.Equal(gotKeys, wantKeys) {
		t.Errorf("findings %v, want %v; report:\n%s", gotKeys, wantKeys, table(r))
	}
	failures, warnings := 0, 0
	for _, f := range got {
		if f.sev == check.Failure {
			failures++
		} else {
			warnings++
		}
	}
	if r.Failures != failures || r.Warnings != warnings {
		t.Errorf("counts: %d failures, %d warnings; findings have %d and %d", r.Failures, r.Warnings, failures, warnings)
	}
}

func table(r *check.Report) string {
	var b bytes.Buffer
	r.WriteTable(&b)
	return b.String()
}

func statsOf(t *testing.T, r *check.Report, name string) check.FunctionStats {
	t.Helper()
	for _, st := range r.Samples.Functions {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no statistics for %q", name)
	return check.FunctionStats{}
}

const statsConfig = `
functions:
  - name: accuracy
    kind: exact_match
    reference_field: answer
    extract: [answer_tag]
  - name: tagged
    kind: format
    mode: partial
`

// Four groups: g1 varies, g2 has no reference, p3 (grouped by its prompt)
// is right twice, g4 has a reference of the wrong type (ERROR).
const statsSamples = `{"group": "g1", "prompt": "p1", "completion": "<answer>4</answer>", "answer": "4"}
{"group": "g1", "prompt": "p1", "completion": "<answer>5</answer>", "answer": "4"}
{"group": "g1", "prompt": "p1", "completion": "<answer>4</answer>", "answer": "4"}
{"group": "g1", "prompt": "p1", "completion": "no tags", "answer": "4"}
{"group": "g2", "prompt": "p2", "completion": "<answer>1</answer>"}
{"group": "g2", "prompt": "p2", "completion": "<answer>1</answer>"}
{"prompt": "p3", "completion": "<answer>7</answer>", "answer": "7"}
{"prompt": "p3", "completion": "<answer>7</answer>", "answer": 7}
{"group": "g4", "prompt": "p4", "completion": "<answer>3</answer>", "answer": {"x": 1}}
`

func TestSampleStatistics(t *testing.T) {
	rows, _ := readRows(t, statsSamples)
	r := mustRun(t, check.Input{
		ConfigName: "test.yml", Service: newService(t, statsConfig, builtin.Registry()),
		SamplesName: "samples.jsonl", Rows: rows, BatchSize: 4,
	})
	t.Logf("report:\n%s", table(r))
	if r.Samples.Rows != 9 || r.Samples.Groups != 4 || r.Samples.BatchSize != 4 {
		t.Errorf("samples: %d rows in %d groups, batch %d; want 9 rows in 4 groups, batch 4", r.Samples.Rows, r.Samples.Groups, r.Samples.BatchSize)
	}

	acc := statsOf(t, r, "accuracy")
	if acc.Rows != 9 || acc.OK != 6 || acc.NotApplicable != 2 || acc.Error != 1 {
		t.Errorf("accuracy: %d rows, %d OK, %d N/A, %d ERROR; want 9, 6, 2, 1", acc.Rows, acc.OK, acc.NotApplicable, acc.Error)
	}
	if *acc.Mean != 4.0/6 || *acc.Min != 0 || *acc.Max != 1 {
		t.Errorf("accuracy mean %v min %v max %v; want 4/6, 0, 1", *acc.Mean, *acc.Min, *acc.Max)
	}
	if acc.ErrorShare != 1.0/9 || acc.NotApplicableShare != 2.0/9 || acc.OKShare != 6.0/9 {
		t.Errorf("accuracy shares %v %v %v", acc.OKShare, acc.NotApplicableShare, acc.ErrorShare)
	}
	// g1 varies, p3 does not; g2 (no OK score) and g4 (one) do not count.
	if acc.Groups != 2 || acc.ZeroVarianceGroups != 1 || *acc.ZeroVarianceShare != 0.5 {
		t.Errorf("accuracy: %d of %d groups zero-variance; want 1 of 2", acc.ZeroVarianceGroups, acc.Groups)
	}
	if !acc.Deterministic || acc.NondeterministicRows != 0 {
		t.Errorf("accuracy deterministic=%v (%d rows)", acc.Deterministic, acc.NondeterministicRows)
	}
	if acc.P50Seconds <= 0 || acc.P99Seconds < acc.P50Seconds {
		t.Errorf("accuracy times p50 %v p99 %v", acc.P50Seconds, acc.P99Seconds)
	}

	// <answer> alone is half the partial credit; "no tags" none.
	tagged := statsOf(t, r, "tagged")
	if tagged.OK != 9 || *tagged.Mean != 4.0/9 || *tagged.Min != 0 || *tagged.Max != 0.5 {
		t.Errorf("tagged: %d OK, mean %v, min %v, max %v; want 9, 4/9, 0, 0.5", tagged.OK, *tagged.Mean, *tagged.Min, *tagged.Max)
	}
	if tagged.Groups != 3 || tagged.ZeroVarianceGroups != 2 {
		t.Errorf("tagged: %d of %d groups zero-variance; want 2 of 3", tagged.ZeroVarianceGroups, tagged.Groups)
	}

	assertFindings(t, r,
		finding{check.Failure, check.CodeErrors, "accuracy"},
		finding{check.Warning, check.CodeZeroVariance, "tagged"},
	)
	if !r.Failed(false) {
		t.Error("a function with ERROR rows does not fail the check")
	}
}

// flaky is a scorer that breaks the determinism contract: every call gives a
// new value.
type flaky struct{ calls atomic.Int64 }

func (f *flaky) Score(context.Context, *scorers.Rollout) scorers.Result {
	return scorers.Score(float64(f.calls.Add(1)))
}

func (f *flaky) Params() struct{} { return struct{}{} }

func TestNondeterminismFails(t *testing.T) {
	reg := builtin.Registry()
	reg["flaky"] = scorers.Kind(func(struct{}) (*flaky, error) { return &flaky{}, nil })
	svc := newService(t, "functions:\n  - {name: dice, kind: flaky}\n  - {name: tagged, kind: format, mode: partial}\n", reg)
	rows, _ := readRows(t, statsSamples)
	r := mustRun(t, check.Input{ConfigName: "test.yml", Service: svc, SamplesName: "samples.jsonl", Rows: rows})
	dice := statsOf(t, r, "dice")
	if dice.Deterministic || dice.NondeterministicRows != len(rows) {
		t.Errorf("dice: deterministic=%v, %d rows differ; want every one of %d", dice.Deterministic, dice.NondeterministicRows, len(rows))
	}
	if !statsOf(t, r, "tagged").Deterministic {
		t.Error("tagged is deterministic")
	}
	assertFindings(t, r,
		finding{check.Failure, check.CodeDeterminism, "dice"},
		finding{check.Warning, check.CodeZeroVariance, "tagged"},
	)
}

// Each function trips one warning (the missing field also makes every row
// NOT_APPLICABLE); warnings alone fail only a strict check.
func TestWarnings(t *testing.T) {
	const cfg = `
functions:
  - name: solution
    kind: exact_match
    reference_field: solution
  - name: accuracy
    kind: exact_match
    reference_field: answer
    extract: [answer_tag]
  - name: cites
    kind: regex
    pattern: '\[\d+\]'
  - name: polite
    kind: regex
    pattern: '^Please'
`
	const samples = `{"group": "a", "completion": "Please: <answer>4</answer>", "answer": "4"}
{"group": "a", "completion": "Please, <answer>5</answer>"}
{"group": "a", "completion": "Please <answer>4</answer>", "answer": null}
{"group": "b", "completion": "<answer>6</answer>", "answer": "5"}
{"group": "b", "completion": "Sure. <answer>5</answer>"}
{"group": "b", "completion": "<answer>5</answer>"}
`
	rows, _ := readRows(t, samples)
	r := mustRun(t, check.Input{
		ConfigName: "test.yml", Service: newService(t, cfg, builtin.Registry()), SamplesName: "samples.jsonl", Rows: rows,
	})
	t.Logf("report:\n%s", table(r))
	assertFindings(t, r,
		finding{check.Warning, check.CodeMissingField, "solution"},
		finding{check.Warning, check.CodeNotApplicable, "solution"},
		finding{check.Warning, check.CodeNotApplicable, "accuracy"},
		finding{check.Warning, check.CodeConstant, "cites"},
		finding{check.Warning, check.CodeZeroVariance, "polite"},
	)
	if r.Failed(false) || !r.Failed(true) {
		t.Errorf("warnings only: Failed(false)=%v Failed(true)=%v; want false, true", r.Failed(false), r.Failed(true))
	}
}

func TestMalformedAndEmptySamples(t *testing.T) {
	svc := newService(t, statsConfig, builtin.Registry())
	rows, bad := readRows(t, "{\"group\": \"g\", \"completion\": \"x\", \"answer\": \"x\"}\nnot json\n{\"prompt\": \"no completion\"}\n")
	if len(rows) != 1 || len(bad) != 2 {
		t.Fatalf("%d rows, %d malformed; want 1, 2", len(rows), len(bad))
	}
	r := mustRun(t, check.Input{ConfigName: "test.yml", Service: svc, SamplesName: "s.jsonl", Rows: rows, Malformed: bad})
	if r.Samples.Malformed != 2 || r.Samples.Rows != 1 {
		t.Errorf("samples: %d rows, %d malformed", r.Samples.Rows, r.Samples.Malformed)
	}
	assertFindings(t, r, finding{check.Failure, check.CodeSamples, ""}, finding{check.Failure, check.CodeSamples, ""})

	r = mustRun(t, check.Input{ConfigName: "test.yml", Service: svc, SamplesName: "empty.jsonl"})
	assertFindings(t, r, finding{check.Failure, check.CodeSamples, ""})
}

// TestKindCheckHook: a kind's own check runs on that kind's functions only,
// with the first pass's scores, and its findings are attributed to the
// function. (code_exec will register one; the builtin kinds have none.)
func TestKindCheckHook(t *testing.T) {
	rows, _ := readRows(t, statsSamples)
	var called []string
	hook := func(fn *scorers.Function, got []*jsonl.Row, scores *rewardv1.FunctionScores) []check.Finding {
		called = append(called, fn.Name)
		if len(got) != len(rows) || len(scores.GetValues()) != len(rows) {
			t.Errorf("hook got %d rows and %d scores for %d rows", len(got), len(scores.GetValues()), len(rows))
		}
		return []check.Finding{{Severity: check.Warning, Code: "reference_fails", Message: "x"}}
	}
	r := mustRun(t, check.Input{
		ConfigName: "test.yml", Service: newService(t, statsConfig, builtin.Registry()),
		SamplesName: "samples.jsonl", Rows: rows, KindChecks: map[string]check.KindCheck{"format": hook},
	})
	if !slices.Equal(called, []string{"tagged"}) {
		t.Errorf("hook called for %v, want [tagged]", called)
	}
	assertFindings(t, r,
		finding{check.Failure, check.CodeErrors, "accuracy"},
		finding{check.Warning, check.CodeZeroVariance, "tagged"},
		finding{check.Warning, "reference_fails", "tagged"},
	)
}

func TestConfigFailed(t *testing.T) {
	_, err := config.Load("bad.yml", []byte("functions:\n  - name: a\n    kind: regex\n    pattern: '('\n  - name: b\n    kind: nope\n"), builtin.Registry())
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("err = %v, want config.Errors", err)
	}
	r := check.ConfigFailed("bad.yml", errs)
	if len(r.ConfigErrors) != 2 || r.ConfigErrors[0].Function != "a" || r.ConfigErrors[0].Key != "pattern" ||
		r.ConfigErrors[1].Function != "b" || r.ConfigErrors[1].Key != "kind" {
		t.Errorf("config errors %+v", r.ConfigErrors)
	}
	assertFindings(t, r, finding{check.Failure, check.CodeConfig, ""})
}

// TestJSONRoundTrip: the JSON report carries what the table shows, with
// null for statistics that do not exist (no OK row, no group).
func TestJSONRoundTrip(t *testing.T) {
	rows, _ := readRows(t, `{"completion": "x"}`+"\n")
	r := mustRun(t, check.Input{
		ConfigName: "test.yml", Service: newService(t, statsConfig, builtin.Registry()), SamplesName: "s.jsonl", Rows: rows,
	})
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back check.Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	acc := statsOf(t, &back, "accuracy")
	if acc.Mean != nil || acc.Min != nil || acc.ZeroVarianceShare != nil || acc.NotApplicable != 1 {
		t.Errorf("accuracy with no OK row and no group: %+v", acc)
	}
	if back.Fingerprint != r.Fingerprint || len(back.Functions) != 2 || back.Warnings != r.Warnings {
		t.Errorf("round trip lost something:\n%s", buf.Bytes())
	}
	for _, want := range []string{`"mean": null`, `"p99_seconds_per_rollout"`, `"code": "mostly_not_applicable"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JSON has no %s:\n%s", want, buf.Bytes())
		}
	}
}
