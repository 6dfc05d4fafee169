package codeexec

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// Executor runs one program once, on one stdin, and gives back what it
// did: its output, its exit status, its times. It is for a caller that
// judges the output itself (POST /run_code, SandboxFusion's API, which
// verl calls once per test), in the same sandbox and under the same kind
// of limits as the code_exec scorer.
//
// A compiled language's program is compiled once for every call that runs
// it, not once per call: the builds of the most recently compiled programs
// are kept (executorBuilds of them, at most executorBuildBytes of compiled
// files), and a program being compiled is compiled once however many calls
// ask for it meanwhile (verl sends a program's tests as concurrent
// requests). Its methods are safe for concurrent use.
type Executor struct {
	sb     Sandbox
	once   sync.Once
	runner Runner
	// unavailable is why there is no runner.
	unavailable error
	builds      *buildCache
}

// The bounds of an Executor's kept builds.
const (
	executorBuilds     = 1024
	executorBuildBytes = 64 << 20
)

// NewExecutor returns an Executor that asks sb for its runner the first
// time it needs one (sb nil: there is none).
func NewExecutor(sb Sandbox) *Executor {
	return &Executor{sb: sb, builds: newBuildCache(executorBuilds, executorBuildBytes)}
}

// Runner returns the sandbox's runner, or why there is none (the sandbox
// could not start on this machine).
func (e *Executor) Runner() (Runner, error) {
	e.once.Do(func() {
		if e.sb == nil {
			e.unavailable = errors.New("this process has no code execution sandbox")
			return
		}
		e.runner, e.unavailable = e.sb()
	})
	return e.runner, e.unavailable
}

// ExecJob is one program to run once.
type ExecJob struct {
	// Language is a language of sandbox.Languages, by name or alias.
	Language string
	Source   string
	Stdin    string
	// Files are written into the work dir, by name (a plain relative
	// path), before the program is compiled and before it runs.
	Files map[string][]byte
	// Limits bound the run: CPUSeconds its CPU time, and it may take
	// twice that plus a second of wall time, at most WallSeconds.
	Limits sandbox.Limits
	// RunWallSeconds, when above 0, is the run's wall time instead
	// (SandboxFusion's run_timeout), at most Limits.WallSeconds.
	RunWallSeconds float64
	// CompileLimits bound the compile of a compiled language's program;
	// zero fields take the language's.
	CompileLimits sandbox.Limits
}

// ExecResult is what happened to an ExecJob.
type ExecResult struct {
	// Build is the compile of a compiled language's program (the same
	// Build for every call that ran the same program while it was kept);
	// nil for a language that runs its source.
	Build *sandbox.Build
	// Run is the run, with what the program wrote in Stdout and Stderr;
	// nil when the program did not compile.
	Run *sandbox.TestResult
}

// Exec compiles (once, see Executor) and runs job's program. A program
// that does not compile, fails, runs out of a limit or crashes gives an
// ExecResult; an error means the sandbox could not run it, or ctx ended.
func (e *Executor) Exec(ctx context.Context, job ExecJob) (ExecResult, error) {
	var res ExecResult
	r, err := e.Runner()
	if err != nil {
		return res, fmt.Errorf("code execution unavailable: %w", err)
	}
	lang, err := sandbox.LookupLanguage(job.Language)
	if err != nil {
		return res, err
	}
	run := sandbox.Job{
		Language: lang.Name, Style: sandbox.IO, Inputs: []string{job.Stdin}, Files: job.Files,
		Limits: job.Limits, TestCPUSeconds: job.Limits.CPUSeconds, TestWallSeconds: job.RunWallSeconds, KeepOutput: true,
	}
	if lang.Compiled() {
		limits := job.CompileLimits.WithDefaults(lang.CompileLimits)
		b, err := e.build(ctx, r, lang, job, limits)
		if err != nil {
			return res, err
		}
		res.Build = b
		if !b.OK() {
			return res, nil
		}
		run.Build = b
	} else {
		run.Code = job.Source
	}
	out, err := r.Run(ctx, run)
	if err != nil {
		return res, err
	}
	if len(out.Tests) != 1 {
		return res, fmt.Errorf("sandbox: %d results for one run", len(out.Tests))
	}
	res.Run = &out.Tests[0]
	return res, nil
}

// build compiles job's program, or waits for the compile another call
// started. A compile that ended with that other call's cancellation is
// started again for this one.
func (e *Executor) build(ctx context.Context, r Runner, lang *sandbox.Language, job ExecJob, limits sandbox.Limits) (*sandbox.Build, error) {
	key := buildKey(lang, job, limits)
	for attempt := 1; ; attempt++ {
		b, err := e.builds.get(ctx, key, func() (*sandbox.Build, error) {
			return r.Compile(ctx, sandbox.CompileJob{Language: lang.Name, Source: job.Source, Files: job.Files, Limits: limits})
		})
		if attempt < 3 && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue // not ours: the cache has dropped it
		}
		return b, err
	}
}

// buildKey identifies what a compile makes: the language, its limits, the
// source and the files beside it.
func buildKey(lang *sandbox.Language, job ExecJob, limits sandbox.Limits) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%v\x00%d\x00%s", lang.Name, limits, len(job.Source), job.Source)
	for _, name := range slices.Sorted(maps.Keys(job.Files)) {
		fmt.Fprintf(h, "\x00%s\x00%d\x00", name, len(job.Files[name]))
		h.Write(job.Files[name])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
