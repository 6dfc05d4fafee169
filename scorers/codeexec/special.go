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
// on files written fresh for it. Two conventions:
//
//   - kattis: checker input answer feedback_dir < output; exit 42 accepted,
//     43 wrong answer.
//   - testlib: checker input output answer; exit 0 accepted, 1 wrong answer,
//     2 presentation error (wrong).
//
// Any other end (another exit status, a crash, a limit) is the checker's
// failure: the rollout is an Error, never a wrong answer.
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

// compiledChecker returns the row's special checker, compiled.
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
		return nil, fmt.Errorf("the row's checker does not compile: %s (%s): %s", b.Status, b.Detail, firstLines(b.Output, 3))
	}
	return b, nil
}

// judgeSpecial runs the special checker on the tests that ran (outputs[k]
// non-nil), and returns for each of them whether it passed and the
// checker's message. An error means the checker itself failed.
func (s *Scorer) judgeSpecial(ctx context.Context, cs *checkerSource, inputs, answers []string, outputs [][]byte) (map[int]specialVerdict, error) {
	b, err := s.compiledChecker(ctx, cs)
	if err != nil {
		return nil, err
	}
	job := sandbox.Job{Language: "cpp", Build: b, Style: sandbox.IO, Judge: true, KeepOutput: true, Limits: checkerRunLimits}
	var which []int
	for k, out := range outputs {
		if out == nil {
			continue
		}
		which = append(which, k)
		files := map[string][]byte{"input": []byte(inputs[k]), "answer": []byte(answers[k])}
		switch s.p.CheckerProtocol {
		case kattis:
			files["feedback/.keep"] = nil
			job.Inputs = append(job.Inputs, string(out))
			job.Args = append(job.Args, []string{"input", "answer", "feedback/"})
		case testlib:
			files["output"] = out
			job.Inputs = append(job.Inputs, "")
			job.Args = append(job.Args, []string{"input", "output", "answer"})
		}
		job.TestFiles = append(job.TestFiles, files)
	}
	verdicts := map[int]specialVerdict{}
	if len(which) == 0 {
		return verdicts, nil
	}
	res, err := s.runner.Run(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("run the row's checker: %w", err)
	}
	for i, t := range res.Tests {
		k := which[i]
		msg := firstLines(strings.TrimSpace(string(t.Stdout)+" "+string(t.Stderr)), 2)
		if msg == "" {
			msg = "wrong answer"
		}
		accepted, wrong := 42, 43
		if s.p.CheckerProtocol == testlib {
			accepted, wrong = 0, 1
		}
		switch {
		case t.Status != sandbox.Ran && t.Status != sandbox.RuntimeError:
			return nil, fmt.Errorf("the row's checker failed on test %d: %s (%s)", k+1, t.Status, t.Detail)
		case t.ExitCode == accepted:
			verdicts[k] = specialVerdict{ok: true}
		case t.ExitCode == wrong || s.p.CheckerProtocol == testlib && t.ExitCode == 2:
			verdicts[k] = specialVerdict{message: msg}
		default:
			return nil, fmt.Errorf("the row's checker failed on test %d: exit status %d: %s", k+1, t.ExitCode, msg)
		}
	}
	return verdicts, nil
}

// specialVerdict is a special checker's verdict on one test.
type specialVerdict struct {
	ok      bool
	message string
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
