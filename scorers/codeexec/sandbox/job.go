package sandbox

import (
	"fmt"
	"time"
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

// Limits bound one submission: all of its tests run in one process (and its
// children), so CPU and wall time are for the whole suite.
type Limits struct {
	CPUSeconds  float64 `yaml:"cpu_seconds"`
	WallSeconds float64 `yaml:"wall_seconds"`
	MemoryMB    int     `yaml:"memory_mb"`
	OutputKB    int     `yaml:"output_kb"`
	Processes   int     `yaml:"processes"`
}

// DefaultLimits are the limits of a code_exec function that sets none:
// enough for competitive-programming style tests and HumanEval, small enough
// that a hostile program costs little.
func DefaultLimits() Limits {
	return Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 512, OutputKB: 1024, Processes: 16}
}

// Validate reports a limit that is out of range.
func (l Limits) Validate() error {
	switch {
	case l.CPUSeconds <= 0 || l.CPUSeconds > 60:
		return fmt.Errorf("cpu_seconds must be in (0, 60], got %g", l.CPUSeconds)
	case l.WallSeconds <= 0 || l.WallSeconds > 120:
		return fmt.Errorf("wall_seconds must be in (0, 120], got %g", l.WallSeconds)
	case l.MemoryMB < 32 || l.MemoryMB > 16384:
		return fmt.Errorf("memory_mb must be in [32, 16384], got %d", l.MemoryMB)
	case l.OutputKB < 1 || l.OutputKB > 65536:
		return fmt.Errorf("output_kb must be in [1, 65536], got %d", l.OutputKB)
	case l.Processes < 1 || l.Processes > 1024:
		return fmt.Errorf("processes must be in [1, 1024], got %d", l.Processes)
	}
	return nil
}

// Job is one submission to run.
type Job struct {
	// Code is the Python program.
	Code string
	// Style says how it is tested.
	Style Style
	// Inputs are the stdin of each IO test.
	Inputs []string
	// Check says whether test k's output is right (IO only). It runs in Go:
	// expected outputs never enter the sandbox.
	Check func(k int, stdout []byte) bool
	// Test is the assert-style test code defining check(candidate), and
	// EntryPoint the name of the function it is given.
	Test, EntryPoint string
	Limits           Limits
}

// Status is what happened to one test.
type Status string

const (
	// Passed: the test ran and its output or asserts were right.
	Passed Status = "passed"
	// Failed: the test ran to the end and was wrong (wrong output, an
	// assertion or another exception, a refused return value).
	Failed Status = "failed"
	// Timeout: the CPU or wall time limit ran out.
	Timeout Status = "timeout"
	// Memory: the memory limit was reached.
	Memory Status = "memory"
	// Output: the program printed more than the output limit.
	Output Status = "output"
	// Crashed: the process died in the test (a signal, an exit without
	// finishing, an exit(0) before the asserts ran).
	Crashed Status = "crashed"
)

// TestResult is the verdict on one test.
type TestResult struct {
	Status Status
	// Detail says why a test did not pass, for humans.
	Detail string
}

// Result is what happened to one submission. A program that fails, times out
// or crashes still has a Result; only a sandbox that could not run it gives
// an error from Pool.Run.
type Result struct {
	Tests []TestResult
	// Elapsed is the time the submission took in the sandbox.
	Elapsed time.Duration
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
	rank := map[Status]int{Passed: 0, Failed: 1, Output: 2, Crashed: 3, Memory: 4, Timeout: 5}
	for _, t := range r.Tests {
		if rank[t.Status] > rank[worst] {
			worst = t.Status
		}
	}
	if worst == Output {
		return string(Failed)
	}
	return string(worst)
}
