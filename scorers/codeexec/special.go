package codeexec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// A special checker is the row's own program (the jury's output validator)
// that judges each test: compiled in the sandbox, run there under the
// slot's judge uid after every process of the program it judges is gone,
// on files written fresh for it. Two conventions, each a table of exit
// statuses:
//
//   - kattis (Kattis' output validators, DOMjudge's compare programs):
//     checker input answer feedback_dir < output; exit 42 accepted, 43
//     wrong answer.
//   - testlib (Codeforces' checkers, testlib.h's exit codes): checker
//     input output answer; exit 0 (_ok) accepted; 1 (_wa) wrong answer;
//     2 (_pe, which testlib also gives for extra output and, by default, an
//     unexpected end of the output), 4 (DIRT_EXIT_CODE, extra output) and
//     8 (_unexpected_eof, built with ENABLE_UNEXPECTED_EOF) are wrong
//     answers too; 3 (_fail) is the checker's own verdict that the jury's
//     data is at fault (a contestant's answer better than the jury's, say),
//     and 7 (_points) a score, which code_exec does not take: both make the
//     rollout an Error.
//
// A checker that reads the jury's answer first and checks every read of
// the contestant's output, as testlib's do, ends in its table on any
// output. One that does not may crash, loop or exit oddly on an output
// such as "abc", nothing at all or a 30-digit number. Any end outside the
// table (another exit status, a signal, a limit) is therefore put to the
// checker itself: it runs once more on the test, the jury's answer given
// as the contestant's output. If it accepts that, the failure was the
// output's, a wrong answer whose reason says how the checker ended; if
// not, the checker fails on the jury's own data, and the rollout is an
// Error naming the test. That second run happens only after an odd end,
// for every test of the row at once, once per request for a checker and a
// row's tests (scorers.Memo). Kattis and DOMjudge call every odd end a
// judge error, for a human to look at; here no human does, and an output
// that breaks a checker which accepts the jury's answer is not a right
// one.
const (
	kattis  = "kattis"
	testlib = "testlib"
)

// checkerSource is a special checker as the row gives it (the field
// checker_files_field): {"main": file name, "std": "c++17", "files":
// {name: source}}.
type checkerSource struct {
	main  string
	std   string
	files map[string][]byte
	key   string // a hash of all of it: the compiled checker's cache key
}

// readCheckerSource reads the row's checker sources.
func readCheckerSource(r *scorers.Rollout, field string) (*checkerSource, error) {
	v, ok := r.Field(field)
	if !ok {
		return nil, fmt.Errorf("the checker is special but the row has no %q", field)
	}
	obj := v.GetStructValue()
	if obj == nil {
		return nil, fmt.Errorf("field %q: want an object {main, std, files}", field)
	}
	f := obj.GetFields()
	cs := &checkerSource{main: f["main"].GetStringValue(), std: f["std"].GetStringValue(), files: map[string][]byte{}}
	files := f["files"].GetStructValue()
	if files == nil {
		return nil, fmt.Errorf("field %q: files: want an object {name: source}", field)
	}
	for name, src := range files.GetFields() {
		s, isString := src.GetKind().(*structpb.Value_StringValue)
		if !isString {
			return nil, fmt.Errorf("field %q: files.%s: want a string", field, name)
		}
		cs.files[name] = []byte(s.StringValue)
	}
	if _, ok := cs.files[cs.main]; !ok {
		return nil, fmt.Errorf("field %q: main %q is not one of its files", field, cs.main)
	}
	switch cs.std {
	case "", "c++11", "c++14", "c++17", "c++20", "gnu++11", "gnu++14", "gnu++17", "gnu++20":
	default:
		return nil, fmt.Errorf("field %q: std %q: want c++11, c++14, c++17 or c++20", field, cs.std)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", cs.main, cs.std)
	for _, name := range slices.Sorted(maps.Keys(cs.files)) {
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(cs.files[name]))
		h.Write(cs.files[name])
	}
	cs.key = hex.EncodeToString(h.Sum(nil))
	return cs, nil
}

// checkerCompileLimits and checkerRunLimits bound a special checker's
// compile (testlib.h alone takes seconds) and each of its runs. The
// checker is the row's, not the model's: the limits are there to stop a
// broken one, not to judge it.
var (
	checkerCompileLimits = sandbox.Limits{CPUSeconds: 30, WallSeconds: 60, MemoryMB: 2048, OutputKB: 65536, Processes: 16}
	checkerRunLimits     = sandbox.Limits{CPUSeconds: 10, WallSeconds: 60, MemoryMB: 1024, OutputKB: 1024, Processes: 4}
)

// compiledChecker returns the row's special checker, compiled. An error
// is a *checkerError when the checker does not compile.
func (s *Scorer) compiledChecker(ctx context.Context, cs *checkerSource) (*sandbox.Build, error) {
	b, err := s.checkers.get(ctx, cs.key, func() (*sandbox.Build, error) {
		files := maps.Clone(cs.files)
		src := string(files[cs.main])
		delete(files, cs.main)
		std := cs.std
		if std == "c++17" {
			// gnu++17 is C++17 with GNU extensions, and what the
			// precompiled bits/stdc++.h was built with.
			std = ""
		}
		return s.runner.Compile(ctx, sandbox.CompileJob{Language: "cpp", Source: src, Files: files, Std: std, Judge: true, Limits: checkerCompileLimits})
	})
	if err != nil {
		return nil, err
	}
	if !b.OK() {
		return nil, &checkerError{fmt.Errorf("the row's checker does not compile: %s (%s): %s", b.Status, b.Detail, firstLines(b.Output, 3))}
	}
	return b, nil
}

// judged is an output for the special checker to judge.
type judged struct {
	test   int // the test's index in the row's tests
	output []byte
}

// specialVerdict is a special checker's verdict on one output.
type specialVerdict struct {
	ok     bool
	detail string // why it is wrong
}

// judgeSpecial runs the row's special checker on each output against the
// row's test cases, and returns whether each passed and why not. An error
// is a *checkerError when the checker is at fault (it does not compile,
// fails on the jury's own data, or says the jury is wrong), another error
// when the sandbox could not run it.
func (s *Scorer) judgeSpecial(ctx context.Context, cs *checkerSource, cases []ioCase, outs []judged) ([]specialVerdict, error) {
	if len(outs) == 0 {
		return nil, nil
	}
	b, err := s.compiledChecker(ctx, cs)
	if err != nil {
		return nil, err
	}
	runs, err := s.runChecker(ctx, b, cases, outs)
	if err != nil {
		return nil, err
	}
	verdicts := make([]specialVerdict, len(outs))
	var jury []checkerRun // the checker on the jury's answers, after an odd end
	for i, run := range runs {
		k := outs[i].test
		switch run.end {
		case endAccepted:
			verdicts[i].ok = true
		case endWrong:
			verdicts[i].detail = "the checker says: " + run.how
		case endBroken:
			return nil, &checkerError{fmt.Errorf("the row's checker failed on test %d: %s", k+1, run.how)}
		case endOdd:
			if jury == nil {
				if jury, err = s.juryRuns(ctx, cs, b, cases); err != nil {
					return nil, err
				}
			}
			switch j := jury[k]; j.end {
			case endAccepted:
				verdicts[i].detail = fmt.Sprintf("the checker failed on the output (%s), and accepts the jury's answer", run.how)
			case endWrong:
				return nil, &checkerError{fmt.Errorf("the row's checker failed on test %d: %s; it rejects the jury's answer as an output: %s", k+1, run.how, j.how)}
			default:
				return nil, &checkerError{fmt.Errorf("the row's checker failed on test %d: %s; on the jury's answer as the output too: %s", k+1, run.how, j.how)}
			}
		}
	}
	return verdicts, nil
}

// juryRuns is the checker's run on every test of the row with the jury's
// answer as the contestant's output: what decides who is at fault when an
// output ends the checker oddly. It runs once per request for a checker
// and a row's tests (scorers.Memo).
func (s *Scorer) juryRuns(ctx context.Context, cs *checkerSource, b *sandbox.Build, cases []ioCase) ([]checkerRun, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", s.p.CheckerProtocol, cs.key)
	for _, c := range cases {
		fmt.Fprintf(h, "%d:%s%d:%s", len(c.stdin), c.stdin, len(c.stdout), c.stdout)
	}
	key := "codeexec/special/jury/" + hex.EncodeToString(h.Sum(nil))
	return scorers.Memo(ctx, key, func() ([]checkerRun, error) {
		outs := make([]judged, len(cases))
		for k, c := range cases {
			outs[k] = judged{test: k, output: []byte(c.stdout)}
		}
		return s.runChecker(ctx, b, cases, outs)
	})
}

// runChecker runs the compiled checker b on each output, in one job, and
// reads each run by the protocol's table. An error means the sandbox
// could not run it.
func (s *Scorer) runChecker(ctx context.Context, b *sandbox.Build, cases []ioCase, outs []judged) ([]checkerRun, error) {
	job := sandbox.Job{Language: "cpp", Build: b, Style: sandbox.IO, Judge: true, KeepOutput: true, Limits: checkerRunLimits}
	for _, o := range outs {
		c := cases[o.test]
		files := map[string][]byte{"input": []byte(c.stdin), "answer": []byte(c.stdout)}
		switch s.p.CheckerProtocol {
		case kattis:
			files["feedback/.keep"] = nil
			job.Inputs = append(job.Inputs, string(o.output))
			job.Args = append(job.Args, []string{"input", "answer", "feedback/"})
		case testlib:
			files["output"] = o.output
			job.Inputs = append(job.Inputs, "")
			job.Args = append(job.Args, []string{"input", "output", "answer"})
		}
		job.TestFiles = append(job.TestFiles, files)
	}
	res, err := s.runner.Run(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("run the row's checker: %w", err)
	}
	if len(res.Tests) != len(outs) {
		return nil, fmt.Errorf("run the row's checker: %d results for %d tests", len(res.Tests), len(outs))
	}
	runs := make([]checkerRun, len(outs))
	for i, t := range res.Tests {
		runs[i] = readRun(s.p.CheckerProtocol, t)
	}
	return runs, nil
}

// checkerEnd is what one run of a special checker says of an output.
type checkerEnd int

const (
	endAccepted checkerEnd = iota
	endWrong
	// endBroken: the checker says the jury's data is at fault (testlib's
	// _fail), answers as code_exec cannot take (_points), or was not run.
	endBroken
	// endOdd: an end outside the protocol's table: another exit status, a
	// signal, a limit.
	endOdd
)

// checkerRun is how one run of a special checker ended.
type checkerRun struct {
	end checkerEnd
	// how says it for humans: the checker's message for endWrong; how it
	// ended, and its message, otherwise.
	how string
}

// readRun reads a checker's run on one test by the protocol's table (see
// the top of this file).
func readRun(protocol string, t sandbox.TestResult) checkerRun {
	msg := firstLines(strings.TrimSpace(string(t.Stdout)+" "+string(t.Stderr)), 2)
	exited := (t.Status == sandbox.Ran || t.Status == sandbox.RuntimeError) && t.ExitCode >= 0
	how := string(t.Status)
	switch {
	case exited:
		how = fmt.Sprintf("exit status %d", t.ExitCode)
	case t.Detail != "":
		how += ": " + t.Detail
	}
	if msg != "" {
		how += ": " + msg
	} else {
		msg = "wrong answer"
	}
	switch {
	case t.Status == sandbox.Skipped:
		// The job's total output ran out on the tests before.
		return checkerRun{endBroken, "not run: the checker printed too much on the tests before it"}
	case !exited:
		return checkerRun{endOdd, how}
	}
	switch protocol {
	case kattis:
		switch t.ExitCode {
		case 42:
			return checkerRun{end: endAccepted}
		case 43:
			return checkerRun{endWrong, msg}
		}
	case testlib:
		switch t.ExitCode {
		case 0:
			return checkerRun{end: endAccepted}
		case 1, 2, 4, 8:
			return checkerRun{endWrong, msg}
		case 3:
			return checkerRun{endBroken, "it says the jury is wrong (testlib's _fail, " + how + ")"}
		case 7:
			return checkerRun{endBroken, "it gives points (testlib's _points, " + how + "), which code_exec does not score"}
		}
	}
	return checkerRun{endOdd, how}
}

// firstLines returns the first n lines of s, at most 400 bytes.
func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	if len(ls) > n {
		ls = ls[:n]
	}
	out := strings.Join(ls, "\n")
	if len(out) > 400 {
		out = out[:400] + "…"
	}
	return out
}
