package codeexec

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sourcegraph/conc/panics"

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
// requests).
//
// A run is the Executor's, not its caller's: calls that ask for the same
// run at once (the same language, program, stdin, files and limits) share
// it, and a run outlives the calls that stopped waiting for it by
// RunGrace. A caller whose own deadline passed (POST /run_code
// answers before its client gives up) and whose client sends the same
// request again within that grace waits for the same run, where it stood
// in the sandbox's queue, rather than queueing at the back. A run no call
// has waited for in RunGrace is cancelled, queued or running. A
// finished run is shared no more once a call has taken its result: the
// same call made later runs the program again. So the runs an Executor
// holds are those calls wait for and those left less than the grace ago.
//
// Its methods are safe for concurrent use. Close cancels the runs and
// waits for them.
type Executor struct {
	sb     Sandbox
	once   sync.Once
	runner Runner
	// unavailable is why there is no runner.
	unavailable error
	builds      *buildCache

	// grace is how long a run outlives its last waiter: RunGrace.
	grace time.Duration
	// ctx is the runs'; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	runs   sync.WaitGroup

	mu     sync.Mutex
	shared map[string]*sharedRun // by runKey
	closed bool
}

// sharedRun is a run of an Executor and the calls waiting for it.
type sharedRun struct {
	key    string
	cancel context.CancelFunc
	// done is closed when res, err and panicked are set.
	done     chan struct{}
	res      ExecResult
	err      error
	panicked *panics.Recovered

	// Guarded by Executor.mu: the calls waiting, and the generation of
	// the grace timer started when the last of them left (a timer of an
	// older generation does nothing).
	waiters int
	idle    *time.Timer
	gen     int
}

// The bounds of an Executor's kept builds.
const (
	executorBuilds     = 1024
	executorBuildBytes = 64 << 20
)

// RunGrace is how long an Executor's run outlives the last call that
// waited for it: longer than the delays of SandboxFusion's clients between
// a 504 and their next attempt (verl: 1 s, then 2 s; SandboxFusion's SDK:
// 1, 2, then 4 s, each with up to 1 s of jitter).
const RunGrace = 10 * time.Second

// errExecutorClosed is what calls get once Close has been called.
var errExecutorClosed = errors.New("code execution stopped: the server is shutting down")

// NewExecutor returns an Executor that asks sb for its runner the first
// time it needs one (sb nil: there is none). Whoever makes it calls Close.
func NewExecutor(sb Sandbox) *Executor {
	ctx, cancel := context.WithCancel(context.Background())
	return &Executor{sb: sb, builds: newBuildCache(executorBuilds, executorBuildBytes),
		grace: RunGrace, ctx: ctx, cancel: cancel, shared: map[string]*sharedRun{}}
}

// Close cancels the runs in progress, waits for them to end, and makes
// later calls fail. The calls waiting get errExecutorClosed.
func (e *Executor) Close() {
	e.mu.Lock()
	e.closed = true
	for _, s := range e.shared {
		if s.idle != nil {
			s.idle.Stop()
		}
	}
	e.mu.Unlock()
	e.cancel()
	e.runs.Wait()
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
	// FetchFiles are files read back from the work dir after the run,
	// however it ended (sandbox.Job.FetchFiles); none when the program
	// did not compile.
	FetchFiles []string
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
	// Files are the job's FetchFiles the run left, FilesLeftOut why each
	// other one it left is not among them (sandbox.Result.Files).
	Files        map[string][]byte
	FilesLeftOut map[string]string
}

// Exec compiles (once, see Executor) and runs job's program, or waits for
// the same run another call started (see Executor), as long as ctx allows.
// A program that does not compile, fails, runs out of a limit or crashes
// gives an ExecResult; an error means the sandbox could not run it, or ctx
// ended (ctx's error: the run goes on for RunGrace, for the same
// call made again).
func (e *Executor) Exec(ctx context.Context, job ExecJob) (ExecResult, error) {
	r, err := e.Runner()
	if err != nil {
		return ExecResult{}, fmt.Errorf("code execution unavailable: %w", err)
	}
	lang, err := sandbox.LookupLanguage(job.Language)
	if err != nil {
		return ExecResult{}, err
	}
	s, err := e.join(runKey(lang, job), func(ctx context.Context) (ExecResult, error) { return e.exec(ctx, r, lang, job) })
	if err != nil {
		return ExecResult{}, err
	}
	select {
	case <-s.done:
		e.leave(s, true)
		if s.panicked != nil {
			panic(s.panicked)
		}
		return s.res, s.err
	case <-ctx.Done():
		e.leave(s, false)
		return ExecResult{}, ctx.Err()
	}
}

// join returns the run of key, starting it with run when there is none,
// and counts the caller among its waiters.
func (e *Executor) join(key string, run func(ctx context.Context) (ExecResult, error)) (*sharedRun, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errExecutorClosed
	}
	s := e.shared[key]
	if s == nil {
		ctx, cancel := context.WithCancel(e.ctx)
		s = &sharedRun{key: key, cancel: cancel, done: make(chan struct{})}
		e.shared[key] = s
		e.runs.Go(func() {
			defer cancel()
			s.panicked = panics.Try(func() { s.res, s.err = run(ctx) })
			if s.err != nil && e.ctx.Err() != nil {
				s.err = errExecutorClosed
			}
			close(s.done)
		})
	}
	s.waiters++
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	return s, nil
}

// leave counts a caller of s out, which took its result (got) or stopped
// waiting. A run whose result was taken is no longer shared: the same call
// made later runs again. A run its last waiter left is dropped, and
// cancelled, RunGrace later unless a call joined it meanwhile.
func (e *Executor) leave(s *sharedRun, got bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s.waiters--
	switch {
	case got:
		e.drop(s)
	case s.waiters == 0 && !e.closed:
		s.gen++
		gen := s.gen
		s.idle = time.AfterFunc(e.grace, func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if s.gen == gen && s.waiters == 0 {
				s.cancel()
				e.drop(s)
			}
		})
	}
}

// drop removes s from the shared runs, if it is still there. e.mu is held.
func (e *Executor) drop(s *sharedRun) {
	if e.shared[s.key] == s {
		delete(e.shared, s.key)
	}
}

// exec compiles (once) and runs job's program in r.
func (e *Executor) exec(ctx context.Context, r Runner, lang *sandbox.Language, job ExecJob) (ExecResult, error) {
	var res ExecResult
	run := sandbox.Job{
		Language: lang.Name, Style: sandbox.IO, Inputs: []string{job.Stdin}, Files: job.Files,
		Limits: job.Limits, TestCPUSeconds: job.Limits.CPUSeconds, TestWallSeconds: job.RunWallSeconds, KeepOutput: true,
		FetchFiles: job.FetchFiles,
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
	res.Files, res.FilesLeftOut = out.Files, out.FilesLeftOut
	return res, nil
}

// build compiles job's program, or waits for the compile another call
// started. A compile that ended with that other call's cancellation is
// started again for this one.
func (e *Executor) build(ctx context.Context, r Runner, lang *sandbox.Language, job ExecJob, limits sandbox.Limits) (*sandbox.Build, error) {
	cj := sandbox.CompileJob{Language: lang.Name, Source: job.Source, Files: job.Files, Limits: limits}
	key := buildKey(lang, job, limits)
	if k, ok := r.(buildKeyer); ok {
		var err error
		if key, err = k.BuildKey(ctx, cj); err != nil {
			return nil, err
		}
	}
	return e.builds.compile(ctx, key, func() (*sandbox.Build, error) { return r.Compile(ctx, cj) })
}

// runKey identifies what a run does: its program (its buildKey, with the
// job's own compile limits), its limits, its stdin and the files it
// fetches.
func runKey(lang *sandbox.Language, job ExecJob) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%v\x00%d\x00%s", buildKey(lang, job, job.CompileLimits), job.Limits, len(job.Stdin), job.Stdin)
	for _, name := range job.FetchFiles {
		fmt.Fprintf(h, "\x00%d\x00%s", len(name), name)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
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
