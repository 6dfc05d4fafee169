package scorers

import "time"

// Verdict is what a judge says of a program, or of one test of it. The
// numbering matches reward.v1.Verdict.
type Verdict uint8

const (
	// Accepted: the test's output is right (every test's, for a program).
	Accepted Verdict = 1
	// WrongAnswer: the program ran to its end and its output is wrong.
	WrongAnswer Verdict = 2
	// TimeLimitExceeded: the CPU or wall time limit ran out.
	TimeLimitExceeded Verdict = 3
	// MemoryLimitExceeded: the memory limit was reached.
	MemoryLimitExceeded Verdict = 4
	// RuntimeError: the program raised, exited with a status other than
	// 0, or was killed by a signal.
	RuntimeError Verdict = 5
	// OutputLimitExceeded: the program printed more than the output limit.
	OutputLimitExceeded Verdict = 6
	// CompilationError: the program did not compile, or its compile ran
	// out of its limits.
	CompilationError Verdict = 7
)

// String returns the verdict's usual short name: AC, WA, TLE, MLE, RE,
// OLE, CE.
func (v Verdict) String() string {
	switch v {
	case Accepted:
		return "AC"
	case WrongAnswer:
		return "WA"
	case TimeLimitExceeded:
		return "TLE"
	case MemoryLimitExceeded:
		return "MLE"
	case RuntimeError:
		return "RE"
	case OutputLimitExceeded:
		return "OLE"
	case CompilationError:
		return "CE"
	default:
		return "?"
	}
}

// Execution is what running a rollout's program found, for a scorer that
// runs one (code_exec): the program's verdict and each test's. Its
// measurements (time, memory) vary from run to run; the Result's value,
// outcome and reason do not depend on them.
type Execution struct {
	// Language is the program's language (python, cpp, …).
	Language string
	// Verdict is Accepted when every test that ran passed, else the
	// verdict of the first test that did not (CompilationError when the
	// program did not compile).
	Verdict Verdict
	// Passed counts the tests that passed, Total the tests the row has
	// (some may not have run: scoring all stops at the first failure).
	Passed, Total int
	// Tests are the tests that ran, in the order they ran.
	Tests []TestExecution
	// CompilerOutput is the first lines of what the compiler wrote, when
	// the program did not compile.
	CompilerOutput string
}

// TestExecution is one test of an Execution.
type TestExecution struct {
	// Index is the test's index in the row's tests, from 0.
	Index   int
	Verdict Verdict
	// CPU and Wall are the test's CPU and wall time.
	CPU, Wall time.Duration
	// MemoryKB is the peak resident memory of the test's process in KiB,
	// 0 when unknown.
	MemoryKB int64
	// ExitCode is the program's exit status, -1 when it did not exit (a
	// signal, a limit).
	ExitCode int
	// Detail says why the test did not pass, for humans.
	Detail string
}
