package sandbox

import (
	"cmp"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Style is how a submission is tested.
type Style string

const (
	// IO runs the program once per test with the test's stdin and compares
	// what it prints (in Go, with Job.Check).
	IO Style = "io"
	// Assert runs the program, then the test code in the same globals, then
	// check(<entry point>), as HumanEval does. One test per submission.
	Assert Style = "assert"
)

// Limits bound one submission. Wall time is for the whole suite; so is CPU
// time for python, whose tests run in one process (and its children), while
// the tests of any other language run in a process each, and CPU time
// bounds each of them. Memory, output and processes bound each process;
// TotalOutputKB bounds what all the tests print together.
type Limits struct {
	CPUSeconds  float64 `yaml:"cpu_seconds"`
	WallSeconds float64 `yaml:"wall_seconds"`
	MemoryMB    int     `yaml:"memory_mb"`
	OutputKB    int     `yaml:"output_kb"`
	Processes   int     `yaml:"processes"`
	// TotalOutputKB bounds the bytes all the tests of a submission write
	// to stdout together (and to stderr, when the job keeps it): past it
	// the test that crossed it is Output, the rest are not run, and the
	// Result is OverOutput. 0 means DefaultTotalOutputKB(OutputKB).
	TotalOutputKB int `yaml:"total_output_kb"`
}

// Bounds of Limits.TotalOutputKB: what one submission's output may cost
// rewardd is about twice it (the reply from the sandbox and the outputs
// decoded from it), per slot.
const (
	totalOutputTests = 16
	maxTotalOutputKB = 64 << 10
)

// DefaultTotalOutputKB is the total output of a submission whose limits
// set none: 16 tests' worth of outputKB, at most 64 MiB.
func DefaultTotalOutputKB(outputKB int) int {
	return min(totalOutputTests*outputKB, maxTotalOutputKB)
}

// totalOutput is l's total output in bytes, its default when unset.
func (l Limits) totalOutput() int64 {
	if l.TotalOutputKB == 0 {
		return int64(DefaultTotalOutputKB(l.OutputKB)) << 10
	}
	return int64(l.TotalOutputKB) << 10
}

// DefaultLimits are the limits of a code_exec function that sets none:
// enough for competitive-programming style tests and HumanEval, small enough
// that a hostile program costs little.
func DefaultLimits() Limits {
	return Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 512, OutputKB: 1024, Processes: defaultProcesses}
}

// defaultProcesses is the process limit of every language by default. The
// kernel counts threads as processes: accepted solutions start threads (a
// JVM starts a dozen of its own), and judges let them have 64 and more. A
// fork bomb stops at it (the slot's pids cgroup, the uid's RLIMIT_NPROC).
const defaultProcesses = 128

// WithDefaults returns l with its zero fields taken from defaults, and
// TotalOutputKB, when neither sets it, DefaultTotalOutputKB(OutputKB).
func (l Limits) WithDefaults(defaults Limits) Limits {
	l.CPUSeconds = cmp.Or(l.CPUSeconds, defaults.CPUSeconds)
	l.WallSeconds = cmp.Or(l.WallSeconds, defaults.WallSeconds)
	l.MemoryMB = cmp.Or(l.MemoryMB, defaults.MemoryMB)
	l.OutputKB = cmp.Or(l.OutputKB, defaults.OutputKB)
	l.Processes = cmp.Or(l.Processes, defaults.Processes)
	l.TotalOutputKB = cmp.Or(l.TotalOutputKB, defaults.TotalOutputKB, DefaultTotalOutputKB(l.OutputKB))
	return l
}

// Validate reports a limit that is out of range.
func (l Limits) Validate() error {
	for _, r := range l.ranges() {
		if !r.ok() {
			return fmt.Errorf("%s must be in %s, got %g", r.key, r.interval, r.v)
		}
	}
	return nil
}

// limitRange is one limit's value and the interval it must lie in.
type limitRange struct {
	key, interval string
	v, lo, hi     float64
	openLo        bool // lo itself is out
}

func (r limitRange) ok() bool {
	return (r.v > r.lo || !r.openLo && r.v == r.lo) && r.v <= r.hi
}

// ranges lists l's limits with their intervals, by config key. A
// TotalOutputKB of 0 means its default.
func (l Limits) ranges() []limitRange {
	total := limitRange{key: "total_output_kb", interval: fmt.Sprintf("[1, %d]", maxTotalOutputKB), v: float64(l.TotalOutputKB), lo: 1, hi: maxTotalOutputKB}
	if l.TotalOutputKB == 0 {
		total.lo = 0
	}
	return []limitRange{
		{key: "cpu_seconds", interval: "(0, 60]", v: l.CPUSeconds, lo: 0, hi: 60, openLo: true},
		{key: "wall_seconds", interval: "(0, 120]", v: l.WallSeconds, lo: 0, hi: 120, openLo: true},
		{key: "memory_mb", interval: "[32, 16384]", v: float64(l.MemoryMB), lo: 32, hi: 16384},
		{key: "output_kb", interval: "[1, 65536]", v: float64(l.OutputKB), lo: 1, hi: 65536},
		{key: "processes", interval: "[1, 1024]", v: float64(l.Processes), lo: 1, hi: 1024},
		total,
	}
}

// UnmarshalYAML decodes limits as a config writes them. A limit left out is
// 0 here, and WithDefaults fills it in; a limit written as 0 is refused,
// naming its range, so that an explicit 0 is never taken for the default.
func (l *Limits) UnmarshalYAML(n *yaml.Node) error {
	type plain Limits
	if err := n.Decode((*plain)(l)); err != nil {
		return err
	}
	var zeros []string // as yaml's type errors, so that they name the key
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var f float64
		if v.Decode(&f) != nil || f != 0 {
			continue
		}
		for _, r := range l.ranges() {
			if r.key == k.Value {
				zeros = append(zeros, fmt.Sprintf("line %d: 0 is not in %s (leave %s out for its default)", v.Line, r.interval, r.key))
			}
		}
	}
	if len(zeros) > 0 {
		return &yaml.TypeError{Errors: zeros}
	}
	return nil
}

// MaxInputMB bounds what one job hands its programs, in MiB: the stdin of
// all its tests and its files together (a compiled program's included).
// The slot's servers hold all of it at once, within the room the slot's
// cgroup leaves them. A caller with more runs the tests in several jobs
// (OutputBefore carries their output from one to the next).
const MaxInputMB = 16

// Job is one submission to run: a program in one language against tests.
type Job struct {
	// Language names an entry of Languages, by name or alias; "" is
	// python.
	Language string
	// Code is the program's source. A compiled language's program is
	// Build instead.
	Code string
	// Build is the compiled program (from Pool.Compile), for a compiled
	// language.
	Build *Build
	// Files are written into the work dir before the program starts (by
	// name, a path relative to the work dir), readable and writable by it.
	Files map[string][]byte
	// Style says how it is tested. A language other than python runs io
	// tests only.
	Style Style
	// Inputs are the stdin of each IO test.
	Inputs []string
	// Args, when set, has one entry per IO test: arguments added to the
	// command that runs the program (not for python).
	Args [][]string
	// TestFiles, when set, has one entry per IO test: files written into
	// the work dir just before that test (not for python).
	TestFiles []map[string][]byte
	// FetchFiles are files read back from the work dir once the job's
	// last test has ended, however it ended (by name, as Files are named;
	// at most MaxFetchFiles): Result.Files.
	FetchFiles []string
	// Check says whether test k's output is right (IO only). It runs in Go:
	// expected outputs never enter the sandbox. Without a Check, a test
	// whose program ran to its end and exited 0 is Ran, and its output is
	// in its TestResult.
	Check func(k int, stdout []byte) bool
	// Test is the assert-style test code defining check(candidate), and
	// EntryPoint the name of the function it is given.
	Test, EntryPoint string
	// Prompt is trusted python code, the task's prompt (assert only). The
	// test code's names that it does not define itself are looked up in
	// what Prompt defines first: a name Prompt binds at its top level,
	// but EntryPoint, is never taken from the program, so that a program
	// cannot pass by redefining the helper the tests check it with. A
	// Prompt that does not compile defines nothing; one that raises
	// before it binds a name the tests then ask for is a HarnessError.
	// It runs in the runner, as the test code does, within the wall time.
	Prompt string
	// Helpers is python code, the task's prompt (assert only), whose
	// top-level functions and classes with a body (more than a docstring),
	// but EntryPoint, are defined again in the program's process once the
	// program's code has run, from the prompt's code and with the builtins
	// and the prompt's imported modules as they were before the program
	// ran: a program that redefines the helper the tests check it with
	// (HumanEval/38's encode_cyclic), or patches what the helper uses,
	// does not pass by that. Helpers that cannot be defined again fail the
	// test. Unlike Prompt it runs with the program, confined as it is.
	Helpers string
	// Limits bound the submission: its wall time and (for python, whose
	// tests share one process) its CPU time as a whole, and each process's
	// memory, output and processes.
	Limits Limits
	// TestCPUSeconds bounds each IO test's CPU time; 0 leaves each test
	// Limits.CPUSeconds. A test may take twice its CPU time plus a second
	// of wall time, and no more than what is left of Limits.WallSeconds.
	TestCPUSeconds float64
	// TestWallSeconds, when above 0, bounds each IO test's wall time
	// instead (what SandboxFusion's run_timeout means); 0 gives each test
	// twice its CPU time plus a second. Either way no more than what is
	// left of Limits.WallSeconds.
	TestWallSeconds float64
	// StopOnFailure skips the tests after one whose program did not run
	// to its end (a time, memory or output limit, a crash, an error).
	StopOnFailure bool
	// OutputBefore is what earlier jobs of the same submission printed
	// (Result.Output), in bytes, when a caller runs a submission's tests
	// in several jobs: it counts against Limits.TotalOutputKB.
	OutputBefore int64
	// KeepOutput keeps each test's stdout and stderr in its TestResult.
	KeepOutput bool
	// Judge runs the job under the slot's judge uid, which no submission
	// ever runs as: for checkers, which read the expected answers. They
	// run after every process of the program they judge is gone.
	Judge bool
}

// Status is what happened to one test.
type Status string

const (
	// Passed: the test ran and its output or asserts were right.
	Passed Status = "passed"
	// Failed: the test ran to the end and was wrong (wrong output, an
	// assertion or another exception in assert style, a refused return
	// value).
	Failed Status = "failed"
	// RuntimeError: the program raised an exception or exited with a
	// status other than 0 (io style).
	RuntimeError Status = "runtime_error"
	// Timeout: the CPU or wall time limit ran out.
	Timeout Status = "timeout"
	// Memory: the memory limit was reached.
	Memory Status = "memory"
	// Output: the program printed more than the output limit.
	Output Status = "output"
	// Crashed: the process died in the test (a signal, an exit without
	// finishing, an exit(0) before the asserts ran).
	Crashed Status = "crashed"
	// Ran: the program ran to its end and exited 0; the job had no Check
	// to judge its output, which is in the TestResult.
	Ran Status = "ran"
	// Skipped: not run, because an earlier test failed and the job asked
	// to stop (StopOnFailure).
	Skipped Status = "skipped"
)

// TestResult is the verdict on one test.
type TestResult struct {
	Status Status
	// Detail says why a test did not pass, for humans.
	Detail string
	// CPU is the CPU time the test's processes used, Wall the time it
	// took. For python, whose tests share one process, CPU is that
	// process's CPU from the test's start to its end.
	CPU, Wall time.Duration
	// MemoryKB is the peak resident set of the test's process, in KiB (its
	// ru_maxrss). For python it is the process's peak up to the test's end,
	// the interpreter included. 0 when unknown.
	MemoryKB int64
	// ExitCode is the program's exit status, or -1 when it did not exit
	// (a signal, a limit) or is not known.
	ExitCode int
	// Signal is the signal that ended the program (its wait status), 0
	// when it exited or is not known.
	Signal int
	// Stdout and Stderr are what the test's program wrote, up to the
	// output limit: Stdout when the job has no Check or keeps output,
	// Stderr when it keeps output.
	Stdout, Stderr []byte
}

// Result is what happened to one submission. A program that fails, times out
// or crashes still has a Result; only a sandbox that could not run it gives
// an error from Pool.Run.
type Result struct {
	Tests []TestResult
	// Elapsed is the time the submission took in the sandbox, SlotTime
	// that time less what its slot waited for a CPU (the time its wall
	// limits are measured in: see Pool.SlotTime).
	Elapsed, SlotTime time.Duration
	// Output is what the tests printed, in bytes, as counted against
	// Limits.TotalOutputKB.
	Output int64
	// OverOutput says the tests together printed more than
	// Limits.TotalOutputKB (with Job.OutputBefore): the test that crossed
	// it is Output, and the tests after it were not run (Skipped).
	OverOutput bool
	// Files are those of Job.FetchFiles that the job left in its work dir
	// as regular files (fetchFiles: read inside the work dir, within
	// MaxFetchFileBytes each and MaxFetchBytes together), by name. A name
	// that is not there is in neither Files nor FilesLeftOut;
	// FilesLeftOut says why each other one is not in Files.
	Files        map[string][]byte
	FilesLeftOut map[string]string
}

// Passed counts the tests that passed.
func (r Result) Passed() int {
	n := 0
	for _, t := range r.Tests {
		if t.Status == Passed {
			n++
		}
	}
	return n
}

// outcome is the metric label of a whole submission: the worst thing that
// happened to any of its tests.
func (r Result) outcome() string {
	worst := Passed
	rank := map[Status]int{Passed: 0, Ran: 0, Skipped: 0, Failed: 1, RuntimeError: 1, Output: 2, Crashed: 3, Memory: 4, Timeout: 5}
	for _, t := range r.Tests {
		if rank[t.Status] > rank[worst] {
			worst = t.Status
		}
	}
	if worst == Output || worst == RuntimeError {
		return string(Failed)
	}
	return string(worst)
}

// CompileJob is a program to compile.
type CompileJob struct {
	// Language names a compiled language of Languages.
	Language string
	// Source is the program; it is written to the language's Source file.
	Source string
	// Files are more sources written beside it (headers), by name.
	Files map[string][]byte
	// Std, when set, replaces the compiler's -std= flag (c++17, gnu++20).
	Std string
	// Limits bound the compiler and everything it starts; a zero field
	// takes the language's CompileLimits.
	Limits Limits
	// Judge compiles under the slot's judge uid (checkers).
	Judge bool
}

// Build is a compiled program, or why there is none.
type Build struct {
	// Language is the language's name.
	Language string
	// Status is Passed when the program compiled; otherwise what stopped
	// the compiler: Failed (it found errors), Timeout, Memory, Output or
	// Crashed (its limits).
	Status Status
	// Detail says why a compile failed, for humans ("exit status 1",
	// "time limit reached").
	Detail string
	// Output is what the compiler wrote (its messages), up to 64 KiB.
	Output string
	// ExitCode is the compiler's exit status, -1 when it did not exit (a
	// signal, a limit).
	ExitCode int
	// CPU and Wall are the compile's CPU and wall time.
	CPU, Wall time.Duration
	// source is the program's source as compiled (its name fills
	// {class}), files the compiled program: what the language's
	// Artefacts matched.
	source string
	files  []wireFile
	// loadBytes is what the compiled executable needs in memory before
	// it runs (its static data included).
	loadBytes int64
}

// OK says whether the program compiled.
func (b *Build) OK() bool { return b != nil && b.Status == Passed }

// Size is the size of the compiled program in bytes.
func (b *Build) Size() int {
	n := 0
	for _, f := range b.files {
		n += len(f.Data)
	}
	return n
}
