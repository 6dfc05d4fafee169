// Package codeexec implements the code_exec scorer kind: the code in a
// completion is run against the row's tests in the sandbox (package
// sandbox), and scores the fraction of tests it passes, or 1 only when it
// passes all.
//
// # Code
//
// The program is the completion's last fenced code block (```python, ```py,
// ```python3 or a bare ```); a block the generation cut off before its
// closing fence counts from its opening fence to the end. Without any fence
// the whole completion is the program. With PrefixField set, that row field
// is put before it (HumanEval's prompt, when completions continue it).
//
// # Tests
//
// test_style io: the row field TestsField (default "tests") holds the cases:
// a list of {stdin, stdout} objects ("input"/"output" also read), an object
// {"inputs": [...], "outputs": [...]} as APPS stores them, or a string
// holding either as JSON. The program runs once per case with the case's
// stdin; its stdout matches when, after trailing whitespace is removed from
// every line and trailing empty lines are dropped, the lines are equal and
// as many. The expected outputs are compared here, in Go: they never enter
// the sandbox, so a program cannot read them.
//
// test_style assert (HumanEval): TestsField (default "test") holds test code
// that defines check(candidate), and EntryPointField (default "entry_point")
// the name of the function to pass it. One test: pass or fail. A program
// that exits before the asserts ran, returns an object that is not plain
// built-in data (an __eq__ that is always true), or passes only because it
// patched builtins or the modules the tests use, fails.
//
// # Outcomes
//
// A program that fails a test, times out, runs out of memory, prints too
// much or crashes scores lower, OK, with the reason recorded. A row without
// tests is NotApplicable. A sandbox that could not run the program (it is
// unavailable on this machine, failed twice, the request ended) or tests
// that are themselves broken give Error, never a silent 0.
package codeexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// Runner runs one submission. *sandbox.Pool is the Runner rewardd serves
// with.
type Runner interface {
	Run(ctx context.Context, job sandbox.Job) (sandbox.Result, error)
}

// Sandbox gives a scorer its Runner, or the reason there is none (the
// sandbox could not start on this machine). It is called once per compiled
// function.
type Sandbox func() (Runner, error)

// Params configures a code_exec function.
type Params struct {
	// Language of the programs: python (the only one so far).
	Language string `yaml:"language,omitempty"`
	// TestStyle is io or assert. Required.
	TestStyle string `yaml:"test_style,omitempty"`
	// TestsField is the row field with the tests; default "tests" for io,
	// "test" for assert.
	TestsField string `yaml:"tests_field,omitempty"`
	// EntryPointField is the row field naming the function that assert
	// tests check; default "entry_point".
	EntryPointField string `yaml:"entry_point_field,omitempty"`
	// PrefixField, when set, is a row field put before the program.
	PrefixField string `yaml:"prefix_field,omitempty"`
	// Scoring is fraction (default: passed/total) or all (1 only when all
	// pass).
	Scoring string `yaml:"scoring,omitempty"`
	// Limits bound each submission (all of its tests together); a zero
	// field takes its default from sandbox.DefaultLimits: 2 CPU seconds, 6
	// wall seconds, 512 MB, 1024 KB of output, 16 processes.
	Limits sandbox.Limits `yaml:"limits,omitempty"`
}

// Scorer is a compiled code_exec function.
type Scorer struct {
	p      Params
	runner Runner
	// unavailable is why there is no runner.
	unavailable error
}

// Kind is the code_exec factory for a scorers.Registry: functions get their
// runner from sb.
func Kind(sb Sandbox) scorers.Factory {
	return scorers.Kind(func(p Params) (*Scorer, error) { return New(p, sb) })
}

// New checks p, fills in its defaults, and asks sb for the runner. A sandbox
// that is unavailable is not a configuration error: the function compiles
// and every rollout it scores is an Error that says why (fail closed).
func New(p Params, sb Sandbox) (*Scorer, error) {
	if err := p.fill(); err != nil {
		return nil, err
	}
	s := &Scorer{p: p}
	if sb == nil {
		s.unavailable = errors.New("this process has no code execution sandbox")
	} else {
		s.runner, s.unavailable = sb()
	}
	return s, nil
}

func (p *Params) fill() error {
	switch p.Language {
	case "", "python":
		p.Language = "python"
	default:
		return &scorers.ParamError{Key: "language", Err: fmt.Errorf("%q is not supported; the languages are: python", p.Language)}
	}
	switch p.TestStyle {
	case string(sandbox.IO):
		if p.TestsField == "" {
			p.TestsField = "tests"
		}
	case string(sandbox.Assert):
		if p.TestsField == "" {
			p.TestsField = "test"
		}
		if p.EntryPointField == "" {
			p.EntryPointField = "entry_point"
		}
	case "":
		return &scorers.ParamError{Key: "test_style", Err: errors.New("required: io or assert")}
	default:
		return &scorers.ParamError{Key: "test_style", Err: fmt.Errorf("%q, want io or assert", p.TestStyle)}
	}
	switch p.Scoring {
	case "":
		p.Scoring = "fraction"
	case "fraction", "all":
	default:
		return &scorers.ParamError{Key: "scoring", Err: fmt.Errorf("%q, want fraction or all", p.Scoring)}
	}
	d := sandbox.DefaultLimits()
	l := &p.Limits
	if l.CPUSeconds == 0 {
		l.CPUSeconds = d.CPUSeconds
	}
	if l.WallSeconds == 0 {
		l.WallSeconds = d.WallSeconds
	}
	if l.MemoryMB == 0 {
		l.MemoryMB = d.MemoryMB
	}
	if l.OutputKB == 0 {
		l.OutputKB = d.OutputKB
	}
	if l.Processes == 0 {
		l.Processes = d.Processes
	}
	if err := l.Validate(); err != nil {
		return &scorers.ParamError{Key: "limits", Err: err}
	}
	return nil
}

// LimitsWithin reports a limit of the function above the same limit in max
// (a request's inline function may only lower the server's limits).
func (s *Scorer) LimitsWithin(max sandbox.Limits) error {
	l := s.p.Limits
	for _, c := range []struct {
		key      string
		got, max float64
	}{
		{"cpu_seconds", l.CPUSeconds, max.CPUSeconds}, {"wall_seconds", l.WallSeconds, max.WallSeconds},
		{"memory_mb", float64(l.MemoryMB), float64(max.MemoryMB)}, {"output_kb", float64(l.OutputKB), float64(max.OutputKB)},
		{"processes", float64(l.Processes), float64(max.Processes)},
	} {
		if c.got > c.max {
			return fmt.Errorf("limits.%s %g is above this server's %g", c.key, c.got, c.max)
		}
	}
	return nil
}

// CanonicalParams returns the parameters with their defaults filled in (for
// the config fingerprint).
func (s *Scorer) CanonicalParams() any { return s.p }

// Score runs the rollout's program against its row's tests.
func (s *Scorer) Score(ctx context.Context, r *scorers.Rollout) scorers.Result {
	job := sandbox.Job{Style: sandbox.Style(s.p.TestStyle), Limits: s.p.Limits}
	var expected []string
	switch job.Style {
	case sandbox.IO:
		cases, found, err := ioCases(r, s.p.TestsField)
		if err != nil {
			return scorers.Errorf("%v", err)
		}
		if !found {
			return scorers.Skip(fmt.Sprintf("row has no %q tests", s.p.TestsField))
		}
		for _, c := range cases {
			job.Inputs = append(job.Inputs, c.stdin)
			expected = append(expected, c.stdout)
		}
		job.Check = func(k int, out []byte) bool { return sameOutput(out, expected[k]) }
	case sandbox.Assert:
		test, found, err := scorers.String(r, s.p.TestsField)
		if err != nil {
			return scorers.Errorf("%v", err)
		}
		if !found || strings.TrimSpace(test) == "" {
			return scorers.Skip(fmt.Sprintf("row has no %q test code", s.p.TestsField))
		}
		entry, found, err := scorers.String(r, s.p.EntryPointField)
		if err != nil {
			return scorers.Errorf("%v", err)
		}
		if !found || entry == "" {
			return scorers.Errorf("row has tests but no %q", s.p.EntryPointField)
		}
		job.Test, job.EntryPoint = test, entry
	}
	if s.unavailable != nil {
		return scorers.Errorf("code execution unavailable: %v", s.unavailable)
	}
	job.Code = Program(r.Completion)
	if s.p.PrefixField != "" {
		prefix, _, err := scorers.String(r, s.p.PrefixField)
		if err != nil {
			return scorers.Errorf("%v", err)
		}
		job.Code = prefix + job.Code
	}
	res, err := s.runner.Run(ctx, job)
	if err != nil {
		if ctx.Err() != nil {
			return scorers.Errorf("cancelled: %v", ctx.Err())
		}
		return scorers.Errorf("%v", err)
	}
	return s.verdict(res)
}

func (s *Scorer) verdict(res sandbox.Result) scorers.Result {
	n, passed := len(res.Tests), res.Passed()
	why := ""
	for k, t := range res.Tests {
		if t.Status != sandbox.Passed {
			why = fmt.Sprintf("test %d: %s", k+1, t.Status)
			if t.Detail != "" {
				why += ": " + t.Detail
			}
			break
		}
	}
	if passed == n {
		return scorers.ScoreWhy(1, fmt.Sprintf("%d/%d tests passed", passed, n))
	}
	reason := fmt.Sprintf("%d/%d tests passed; %s", passed, n, why)
	if s.p.Scoring == "all" {
		return scorers.ScoreWhy(0, reason)
	}
	return scorers.ScoreWhy(float64(passed)/float64(n), reason)
}

// Program returns the code in a completion: its last fenced block, or the
// whole completion when it has none.
func Program(completion string) string {
	var last string
	found := false
	inPython, inOther := false, false
	start := 0
	for pos := 0; pos < len(completion); {
		line, next := completion[pos:], len(completion)
		if end := strings.IndexByte(line, '\n'); end >= 0 {
			line, next = line[:end], pos+end+1
		}
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			lang := strings.TrimSpace(fence)
			switch {
			case inPython && lang == "":
				last, found, inPython = completion[start:pos], true, false
			case inOther && lang == "":
				inOther = false
			case !inPython && !inOther:
				if lang == "" || lang == "python" || lang == "py" || lang == "python3" {
					inPython, start = true, next
				} else {
					inOther = true
				}
			}
		}
		pos = next
	}
	switch {
	case inPython: // cut off before its closing fence
		return completion[start:]
	case found:
		return last
	}
	return completion
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

// sameOutput compares a program's output with the expected one line by line,
// ignoring trailing whitespace on each line and trailing empty lines; the
// number of lines must match.
func sameOutput(got []byte, want string) bool {
	g, w := lines(got), lines([]byte(want))
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if !bytes.Equal(g[i], w[i]) {
			return false
		}
	}
	return true
}

func lines(b []byte) [][]byte {
	ls := bytes.Split(b, []byte("\n"))
	for i, l := range ls {
		ls[i] = bytes.TrimRight(l, " \t\r\f\v")
	}
	for len(ls) > 0 && len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	return ls
}
