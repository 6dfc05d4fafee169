package codeexec

import (
	"fmt"
	"math"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// testOutcome is one test's verdict.
type testOutcome struct {
	index    int // in the row's tests
	verdict  scorers.Verdict
	detail   string
	cpu      time.Duration
	wall     time.Duration
	memoryKB int64
	exit     int
}

// fromSandbox is the verdict of test index from what the sandbox says. A
// test that ran with no Check (a special checker judges it next) is
// WrongAnswer until the checker says otherwise.
func fromSandbox(index int, tr sandbox.TestResult) testOutcome {
	to := testOutcome{index: index, detail: tr.Detail, cpu: tr.CPU, wall: tr.Wall, memoryKB: tr.MemoryKB, exit: tr.ExitCode}
	switch tr.Status {
	case sandbox.Passed:
		to.verdict = scorers.Accepted
	case sandbox.Failed, sandbox.Ran:
		to.verdict = scorers.WrongAnswer
	case sandbox.Timeout:
		to.verdict = scorers.TimeLimitExceeded
	case sandbox.Memory:
		to.verdict = scorers.MemoryLimitExceeded
	case sandbox.Output:
		to.verdict = scorers.OutputLimitExceeded
	default: // RuntimeError, Crashed
		to.verdict = scorers.RuntimeError
	}
	return to
}

// outcome is what running a program against a row's tests found.
type outcome struct {
	// tests ran, in the order they ran.
	tests []testOutcome
	// total is how many tests the row has, considered how many the policy
	// runs (0: all of them).
	total, considered int
	subtasks          []subtask
	// output is what the tests printed, in bytes (sandbox.Result.Output);
	// overOutput says it passed the function's limits.total_output_kb.
	output     int64
	overOutput bool
	// slot is the slot time its runs took (sandbox.Result.SlotTime),
	// against the submission's wall time.
	slot time.Duration
}

// failed says whether a test that ran did not pass.
func (o outcome) failed() bool {
	for _, t := range o.tests {
		if t.verdict != scorers.Accepted {
			return true
		}
	}
	return false
}

// summarize scores o by the function's policy, and says why in the
// reason (deterministic: limits, never measurements) and the Execution.
func (s *Scorer) summarize(o outcome) scorers.Result {
	considered := o.considered
	if considered == 0 {
		considered = o.total
	}
	passed := 0
	var first *testOutcome
	accepted := make(map[int]bool, len(o.tests))
	for i := range o.tests {
		t := &o.tests[i]
		if t.verdict == scorers.Accepted {
			passed++
			accepted[t.index] = true
		} else if first == nil {
			first = t
		}
	}
	exec := &scorers.Execution{Language: s.lang.Name, Verdict: scorers.Accepted, Passed: passed, Total: o.total}
	for _, t := range o.tests {
		exec.Tests = append(exec.Tests, scorers.TestExecution{
			Index: t.index, Verdict: t.verdict, CPU: t.cpu, Wall: t.wall, MemoryKB: t.memoryKB, ExitCode: t.exit, Detail: t.detail,
		})
	}
	reason := fmt.Sprintf("%d/%d tests passed", passed, considered)
	if first != nil {
		exec.Verdict = first.verdict
		reason += fmt.Sprintf("; test %d: %s", first.index+1, first.verdict)
		if first.detail != "" {
			reason += ": " + first.detail
		}
	}
	all := passed == considered
	var value float64
	switch s.p.Scoring {
	case "all", "first_n":
		value = b2f(all)
	case "weighted_sum":
		value = b2f(all) + 0.1*float64(passed)/float64(considered)
	case "ioi":
		var points float64
		value, points = ioiScore(o.subtasks, accepted)
		reason += fmt.Sprintf("; %g of %g points", math.Round(value*points*100)/100, points)
	default:
		value = float64(passed) / float64(considered)
	}
	if o.overOutput && len(o.tests) > 0 {
		// However many tests passed before it, a submission that prints
		// past the total scores 0: printing is no way out of a low score.
		// The test that crossed it is the last that ran.
		last := o.tests[len(o.tests)-1]
		value, exec.Verdict = 0, scorers.OutputLimitExceeded
		reason = fmt.Sprintf("%d/%d tests passed; test %d: %s: %s; scored 0", passed, considered, last.index+1, last.verdict, last.detail)
	}
	return scorers.Result{Value: value, Outcome: scorers.OK, Reason: reason, Execution: exec}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// subtask is an IOI subtask: its points, earned when all of its tests pass.
type subtask struct {
	points float64
	tests  []int
}

// ioiScore is open-r1's IOI rule: each subtask scores its points times the
// lowest score of its tests (1 or 0 each here); the score is their sum
// over the sum of points, which it returns too.
func ioiScore(subs []subtask, accepted map[int]bool) (score, points float64) {
	var earned float64
	for _, st := range subs {
		points += st.points
		low := 1.0
		for _, k := range st.tests {
			if !accepted[k] {
				low = 0
			}
		}
		earned += st.points * low
	}
	return earned / points, points
}

// readSubtasks reads the row's IOI subtasks: a list of {points (or score),
// tests: [indices from 0]} over n tests.
func readSubtasks(r *scorers.Rollout, field string, n int) ([]subtask, error) {
	v, ok := r.Field(field)
	if !ok {
		return nil, fmt.Errorf("scoring is ioi but the row has no %q", field)
	}
	items := v.GetListValue().GetValues()
	if len(items) == 0 {
		return nil, fmt.Errorf("field %q: want a list of {points, tests}", field)
	}
	var subs []subtask
	var total float64
	for i, it := range items {
		f := it.GetStructValue().GetFields()
		pts, ok := f["points"]
		if !ok {
			pts = f["score"]
		}
		p, isNumber := pts.GetKind().(*structpb.Value_NumberValue)
		if !isNumber || !(p.NumberValue >= 0) || math.IsInf(p.NumberValue, 0) {
			return nil, fmt.Errorf("field %q item %d: want points, a number >= 0", field, i)
		}
		st := subtask{points: p.NumberValue}
		tests := f["tests"].GetListValue().GetValues()
		if len(tests) == 0 {
			return nil, fmt.Errorf("field %q item %d: want tests, a list of test indices", field, i)
		}
		for _, t := range tests {
			k := t.GetNumberValue()
			if k != math.Trunc(k) || k < 0 || int(k) >= n {
				return nil, fmt.Errorf("field %q item %d: test %v is not an index of the row's %d tests", field, i, k, n)
			}
			st.tests = append(st.tests, int(k))
		}
		total += st.points
		subs = append(subs, st)
	}
	if total == 0 {
		return nil, fmt.Errorf("field %q: the subtasks are worth no points", field)
	}
	return subs, nil
}
