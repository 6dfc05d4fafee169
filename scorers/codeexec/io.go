package codeexec

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// ioTask is what an io rollout asks: its program against its row's tests,
// under its checker and time limit, scored by the function's policy.
type ioTask struct {
	code    string
	cases   []ioCase
	checker checker
	special *checkerSource // for a special checker
	// timeLimit is each test's CPU time limit in seconds, 0 for none.
	timeLimit float64
	// order is the tests to run, by index, in the order to run them.
	order    []int
	subtasks []subtask // ioi
}

// scoreIO runs an io rollout: its row is read here (an Error names the
// field at fault), the run is shared with every rollout of the request
// that has the same program and tests (scorers.Memo).
func (s *Scorer) scoreIO(ctx context.Context, r *scorers.Rollout) scorers.Result {
	cases, found, err := ioCases(r, s.p.TestsField)
	if err != nil {
		return scorers.Errorf("%v", err)
	}
	if !found {
		return scorers.Skip(fmt.Sprintf("row has no %q tests", s.p.TestsField))
	}
	task := ioTask{cases: cases}
	if task.checker, task.special, err = s.rowChecker(r); err != nil {
		return scorers.Errorf("%v", err)
	}
	if task.timeLimit, err = s.rowTimeLimit(r); err != nil {
		return scorers.Errorf("%v", err)
	}
	if task.order, task.subtasks, err = s.testOrder(r, cases); err != nil {
		return scorers.Errorf("%v", err)
	}
	if s.unavailable != nil {
		return scorers.Errorf("code execution unavailable: %v", s.unavailable)
	}
	if task.code, err = s.program(r); err != nil {
		return scorers.Errorf("%v", err)
	}
	res, err := scorers.Memo(ctx, s.taskKey(&task), func() (scorers.Result, error) { return s.runIO(ctx, &task) })
	if err != nil {
		return runError(ctx, err)
	}
	return res
}

// taskKey identifies what an io task computes, for the request's memo: the
// scorer (its parameters) and everything the task holds.
func (s *Scorer) taskKey(t *ioTask) string {
	h := sha256.New()
	add := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:", len(p))
			h.Write([]byte(p))
		}
	}
	add(t.code, t.checker.spec, fmt.Sprint(t.timeLimit, t.order, t.subtasks))
	if t.special != nil {
		add(t.special.key)
	}
	for _, c := range t.cases {
		add(c.stdin, c.stdout)
	}
	return fmt.Sprintf("codeexec/%p/%s", s, hex.EncodeToString(h.Sum(nil)))
}

// rowChecker is the checker of the row: its CheckerField, or Checker.
func (s *Scorer) rowChecker(r *scorers.Rollout) (checker, *checkerSource, error) {
	c := s.checker
	if s.p.CheckerField != "" {
		spec, found, err := scorers.String(r, s.p.CheckerField)
		if err != nil {
			return c, nil, err
		}
		if found {
			if c, err = parseChecker(spec); err != nil {
				return c, nil, fmt.Errorf("field %q: %w", s.p.CheckerField, err)
			}
		}
	}
	if c.kind != special {
		return c, nil, nil
	}
	cs, err := readCheckerSource(r, s.p.CheckerFilesField)
	return c, cs, err
}

// rowTimeLimit is each test's CPU time limit for the row, in seconds, its
// factor applied.
func (s *Scorer) rowTimeLimit(r *scorers.Rollout) (float64, error) {
	tl, err := s.askedTimeLimit(r)
	return tl * s.timeLimitFactor(), err
}

// askedTimeLimit is the row's time limit per test, or the function's.
func (s *Scorer) askedTimeLimit(r *scorers.Rollout) (float64, error) {
	tl := s.p.TimeLimitSeconds
	if s.p.TimeLimitField == "" {
		return tl, nil
	}
	v, ok := r.Field(s.p.TimeLimitField)
	if !ok {
		return tl, nil
	}
	n, isNumber := v.GetKind().(*structpb.Value_NumberValue)
	if !isNumber {
		return 0, fmt.Errorf("field %q: want a number of seconds", s.p.TimeLimitField)
	}
	switch row := n.NumberValue; {
	case !(row > 0) || math.IsInf(row, 0):
		return 0, fmt.Errorf("field %q: %v seconds, want more than 0", s.p.TimeLimitField, row)
	case row > *s.p.MaxTimeLimitSeconds:
		return 0, fmt.Errorf("field %q asks for %g s per test, over this function's max_time_limit_seconds %g s",
			s.p.TimeLimitField, row, *s.p.MaxTimeLimitSeconds)
	default:
		return row, nil
	}
}

// testOrder is the tests the policy runs, in the order it runs them:
// every test in the row's order; the first FirstN (first_n); cheapest
// first, the shortest stdin (all, first_n), which is where a wrong program
// most often fails soonest.
func (s *Scorer) testOrder(r *scorers.Rollout, cases []ioCase) ([]int, []subtask, error) {
	order := make([]int, len(cases))
	for k := range order {
		order[k] = k
	}
	switch s.p.Scoring {
	case "first_n":
		order = order[:min(len(order), *s.p.FirstN)]
		fallthrough
	case "all":
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(cases[a].stdin), len(cases[b].stdin)) })
	case "ioi":
		subs, err := readSubtasks(r, s.p.SubtasksField, len(cases))
		return order, subs, err
	}
	return order, nil, nil
}

// stopsEarly says whether the policy stops at the first failure: its score
// is then 0 whatever the rest does.
func (s *Scorer) stopsEarly() bool { return s.p.Scoring == "all" || s.p.Scoring == "first_n" }

// runIO compiles (once per request) and runs the task's program, judges
// each test and scores the whole. An error means the sandbox could not.
func (s *Scorer) runIO(ctx context.Context, t *ioTask) (scorers.Result, error) {
	job := sandbox.Job{
		Language: s.lang.Name, Style: sandbox.IO, Limits: s.p.Limits, TestCPUSeconds: t.timeLimit,
		StopOnFailure: s.stopsEarly(),
	}
	if s.lang.Compiled() {
		b, err := s.build(ctx, t.code)
		if err != nil {
			return scorers.Result{}, err
		}
		if !b.OK() {
			return s.compileError(b, len(t.cases)), nil
		}
		job.Build = b
	} else {
		job.Code = t.code
	}
	out := outcome{total: len(t.cases), considered: len(t.order), subtasks: t.subtasks}
	// The submission's wall time is spent only in the sandbox, in slot
	// time (outcome.slot): waiting for a slot, or for the machine, takes
	// none of it.
	wall := time.Duration(s.p.Limits.WallSeconds * float64(time.Second))
	// Rounds of 1, 2, 4, … tests when the policy stops at the first
	// failure, wrong answers included (judged here, after each round);
	// one round otherwise.
	round := len(t.order)
	if s.stopsEarly() {
		round = 1
	}
	for next := 0; next < len(t.order); round *= 2 {
		which := t.order[next:min(len(t.order), next+round)]
		which = which[:withinInput(t, which, len(t.code))]
		next += len(which)
		left := (wall - out.slot).Seconds()
		if left < 0.05 {
			for _, k := range which {
				out.tests = append(out.tests, testOutcome{index: k, verdict: scorers.TimeLimitExceeded,
					detail: fmt.Sprintf("the submission's wall time (%g s) ran out", s.p.Limits.WallSeconds)})
			}
			continue
		}
		job.Limits.WallSeconds = left
		job.OutputBefore = out.output
		tests, err := s.runRound(ctx, t, job, which, &out)
		var broken *checkerError
		if errors.As(err, &broken) {
			// The row's checker, not the sandbox: the same for every
			// rollout of the row, so the request's memo keeps it.
			return scorers.Errorf("%v", err), nil
		}
		if err != nil {
			return scorers.Result{}, err
		}
		out.tests = append(out.tests, tests...)
		if out.overOutput || s.stopsEarly() && out.failed() {
			break
		}
	}
	return s.summarize(out), nil
}

// withinInput is how many of the tests which (at least one) fit in one
// sandbox job with a program of code bytes: their stdin together within
// sandbox.MaxInputMB. The rest go in the next round.
func withinInput(t *ioTask, which []int, code int) int {
	total := code
	for i, k := range which {
		total += len(t.cases[k].stdin)
		if total > sandbox.MaxInputMB<<20 && i > 0 {
			return i
		}
	}
	return len(which)
}

// runRound runs the tests which of t and judges them; it adds what they
// printed to out's count.
func (s *Scorer) runRound(ctx context.Context, t *ioTask, job sandbox.Job, which []int, out *outcome) ([]testOutcome, error) {
	job.Inputs = make([]string, len(which))
	for i, k := range which {
		job.Inputs[i] = t.cases[k].stdin
	}
	if t.checker.kind != special {
		job.Check = func(i int, out []byte) bool { return t.checker.same(out, t.cases[which[i]].stdout) }
	}
	res, err := s.runner.Run(ctx, job)
	if err != nil {
		return nil, err
	}
	out.output += res.Output
	out.overOutput = out.overOutput || res.OverOutput
	out.slot += res.SlotTime
	tests := make([]testOutcome, 0, len(which))
	for i, tr := range res.Tests {
		if tr.Status == sandbox.Skipped {
			continue
		}
		tests = append(tests, fromSandbox(which[i], tr))
	}
	if t.checker.kind != special {
		return tests, nil
	}
	// The special checker judges the tests that ran to their end.
	var outs []judged
	var judging []int // outs[j] is tests[judging[j]]'s output
	for i, to := range tests {
		tr := res.Tests[slices.Index(which, to.index)]
		if tr.Status == sandbox.Ran {
			outs = append(outs, judged{test: to.index, output: tr.Stdout})
			judging = append(judging, i)
		}
	}
	verdicts, err := s.judgeSpecial(ctx, t.special, t.cases, outs)
	if err != nil {
		return nil, err
	}
	for j, v := range verdicts {
		i := judging[j]
		if v.ok {
			tests[i].verdict, tests[i].detail = scorers.Accepted, ""
		} else {
			tests[i].verdict, tests[i].detail = scorers.WrongAnswer, v.detail
		}
	}
	return tests, nil
}

// checkerError is a special checker that is at fault (it fails on the
// jury's own data, or does not compile): the rollout is an Error, and the
// same for every rollout of the row.
type checkerError struct{ err error }

func (e *checkerError) Error() string { return e.err.Error() }

// build compiles code once per request (scorers.Memo), however many
// rollouts repeat it, and, when the runner can say what a compile makes
// (buildKeyer), once while the program stays among the builds the Kind's
// functions share across requests: the rollouts of a GRPO group that
// repeat a program in another request, or in a later step, reuse its
// build. Only the compile is kept; every test still runs.
func (s *Scorer) build(ctx context.Context, code string) (*sandbox.Build, error) {
	job := sandbox.CompileJob{Language: s.lang.Name, Source: code, Limits: s.p.CompileLimits}
	sum := sha256.Sum256([]byte(code))
	key := fmt.Sprintf("codeexec/build/%s/%v/%x", s.lang.Name, s.p.CompileLimits, sum)
	return scorers.Memo(ctx, key, func() (*sandbox.Build, error) {
		k, ok := s.runner.(buildKeyer)
		if !ok {
			return s.runner.Compile(ctx, job)
		}
		bk, err := k.BuildKey(ctx, job)
		if err != nil {
			return nil, err
		}
		return s.builds.compile(ctx, bk, func() (*sandbox.Build, error) { return s.runner.Compile(ctx, job) })
	})
}

// compileError is the Result of a program that did not compile.
func (s *Scorer) compileError(b *sandbox.Build, total int) scorers.Result {
	why := firstLines(b.Output, 5)
	switch b.Status {
	case sandbox.Timeout:
		why = fmt.Sprintf("the compile ran out of time (%g s CPU)", s.p.CompileLimits.CPUSeconds)
	case sandbox.Memory:
		why = fmt.Sprintf("the compile ran out of memory (%d MB)", s.p.CompileLimits.MemoryMB)
	case sandbox.Output:
		why = "the compile wrote too much"
	case sandbox.Crashed:
		why = "the compiler crashed: " + b.Detail
	}
	return scorers.Result{
		Value: 0, Outcome: scorers.OK,
		Reason: fmt.Sprintf("0/%d tests passed; CE: %s", total, why),
		Execution: &scorers.Execution{
			Language: s.lang.Name, Verdict: scorers.CompilationError, Total: total,
			CompilerOutput: firstLines(b.Output, 20),
		},
	}
}

type ioCase struct{ stdin, stdout string }

// ioCases reads the io tests of a row (see the package documentation).
func ioCases(r *scorers.Rollout, field string) ([]ioCase, bool, error) {
	v, ok := r.Field(field)
	if !ok {
		return nil, false, nil
	}
	if s, isString := v.Kind.(*structpb.Value_StringValue); isString {
		var decoded any
		if err := json.Unmarshal([]byte(s.StringValue), &decoded); err != nil {
			return nil, true, fmt.Errorf("field %q: not JSON tests: %v", field, err)
		}
		nv, err := structpb.NewValue(decoded)
		if err != nil {
			return nil, true, fmt.Errorf("field %q: %v", field, err)
		}
		v = nv
	}
	var cases []ioCase
	switch k := v.Kind.(type) {
	case *structpb.Value_ListValue:
		for i, item := range k.ListValue.GetValues() {
			obj := item.GetStructValue()
			if obj == nil {
				return nil, true, fmt.Errorf("field %q item %d: want an object with stdin and stdout", field, i)
			}
			in, errIn := text(obj, "stdin", "input")
			out, errOut := text(obj, "stdout", "output")
			if err := errors.Join(errIn, errOut); err != nil {
				return nil, true, fmt.Errorf("field %q item %d: %w", field, i, err)
			}
			cases = append(cases, ioCase{in, out})
		}
	case *structpb.Value_StructValue:
		ins := k.StructValue.GetFields()["inputs"].GetListValue().GetValues()
		outs := k.StructValue.GetFields()["outputs"].GetListValue().GetValues()
		if len(ins) != len(outs) {
			return nil, true, fmt.Errorf("field %q: %d inputs but %d outputs", field, len(ins), len(outs))
		}
		for i := range ins {
			in, okIn := ins[i].Kind.(*structpb.Value_StringValue)
			out, okOut := outs[i].Kind.(*structpb.Value_StringValue)
			if !okIn || !okOut {
				return nil, true, fmt.Errorf("field %q case %d: inputs and outputs must be strings", field, i)
			}
			cases = append(cases, ioCase{in.StringValue, out.StringValue})
		}
	default:
		return nil, true, fmt.Errorf("field %q: want a list of {stdin, stdout}", field)
	}
	if len(cases) == 0 {
		return nil, false, nil
	}
	if len(cases) > 256 {
		return nil, true, fmt.Errorf("field %q: %d tests, at most 256", field, len(cases))
	}
	return cases, true, nil
}

func text(obj *structpb.Struct, names ...string) (string, error) {
	for _, name := range names {
		if v, ok := obj.GetFields()[name]; ok {
			s, isString := v.Kind.(*structpb.Value_StringValue)
			if !isString {
				return "", fmt.Errorf("%s is not a string", name)
			}
			return s.StringValue, nil
		}
	}
	return "", fmt.Errorf("no %s", names[0])
}
