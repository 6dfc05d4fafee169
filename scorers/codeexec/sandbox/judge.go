package sandbox

import (
	"fmt"
	"slices"
	"syscall"
)

// The judge: what the sandbox's servers saw of a test (a fact) becomes
// the test's verdict here, for every language, for compiles and for
// /run_code alike, by one table of rules applied in order (as isolate's
// and testlib's are):
//
//  1. The sandbox's and the dataset's own failures: a test the sandbox
//     could not set up is an error of Run, broken test code a
//     HarnessError, files that do not fit a FilesError; a test not run is
//     Skipped.
//  2. Output: past the job's total (the test that crossed it), or a
//     stream filled to the output limit (however the program then ended:
//     killed by SIGXFSZ, an EFBIG error, a loop on failed writes ended by
//     a time limit).
//  3. Time: the test's or the job's slot time ran out; CPU time over the
//     limit, SIGXCPU, SIGPROF (python's per-test CPU timer), SIGKILL once
//     the CPU hard limit was reached, or a compiler that failed saying its
//     compiler was killed at the CPU limit; but a program the slot's
//     cgroup killed for memory before its CPU hard limit is Memory.
//  4. Memory: the slot's cgroup killed a process for memory while the
//     program died of a signal; the program does not fit (exec ENOMEM,
//     E2BIG); Python's MemoryError; a runtime's out-of-memory message on
//     stderr of a run that failed; a peak resident set over the limit for
//     a language bounded by it.
//  5. The program's own end: exit 0 (or a python program that ran to its
//     end) is Ran, or the job's Check says Passed or Failed; a non-zero
//     exit or an exception RuntimeError (Failed for assert tests, whose
//     only verdicts are the tests'); a signal Crashed.
//
// Details name limits, never measurements, so that a verdict's reason is
// the same at any load; the measurements are in the result's fields.

// testLimit is what judge needs to know of the limits a test ran under.
type testLimit struct {
	style       Style
	cpu, wall   float64 // the test's CPU time limit and slot time
	output      int64   // bytes per stream
	totalKB     int
	submission  Limits // the job's, for the details
	perTestCPU  bool   // the test has a CPU limit of its own (for the detail)
	residentKB  int64  // a peak resident set over it is the memory limit (0: none)
	memoryMarks []string
	timeMarks   []string
	program     string // what was started (for "could not start")
	// runner: the program is a test runner, which reports a process of
	// its that died (go test's test binary) as a failed test.
	runner bool
}

// judge turns fact f of one test into its result; over says the test went
// past the job's total output. cgOOM says the kernel killed a process of
// the slot for memory during the job. An error is the sandbox's failure,
// a HarnessError or a FilesError.
func judge(f fact, tl testLimit, cgOOM bool) (r TestResult, over bool, err error) {
	r = TestResult{Detail: f.Detail, CPU: seconds(f.CPU), Wall: seconds(f.Wall), MemoryKB: f.RSS, ExitCode: -1}
	ws := syscall.WaitStatus(f.Status)
	switch {
	case f.End == endExit || f.End == endDied || f.End == endLost || f.End == endGone && !f.Alive:
		if ws.Exited() {
			r.ExitCode = ws.ExitStatus()
		} else if ws.Signaled() {
			r.Signal = int(ws.Signal())
		}
	case f.End == endSysExit:
		r.ExitCode = 0
		if f.Code != nil {
			r.ExitCode = *f.Code
		}
	case f.End == endReturn:
		r.ExitCode = 0
	}
	signaled := r.Signal != 0
	set := func(s Status, detail string) (TestResult, bool, error) {
		r.Status, r.Detail = s, detail
		return r, false, nil
	}

	// 1. Not the program's doing.
	switch f.End {
	case endSetup:
		return r, false, fmt.Errorf("sandbox: %s", f.Detail)
	case endFiles:
		return r, false, &FilesError{Detail: f.Detail}
	case endHarness:
		return r, false, &HarnessError{Detail: f.Detail}
	case endSkipped:
		return set(Skipped, "")
	}

	// 2. Output.
	if f.End == endTotal {
		r.Status, r.Detail = Output, fmt.Sprintf("the tests together printed more than the total output limit (%d KB)", tl.totalKB)
		return r, true, nil
	}
	if tl.output > 0 && (f.Out >= tl.output || f.Err >= tl.output) || r.Signal == int(syscall.SIGXFSZ) ||
		f.End == endRaise && f.Errno == int(syscall.EFBIG) {
		return set(Output, "output limit reached")
	}

	// 3. Time, but for a program the slot's cgroup killed for memory
	// before the CPU hard limit could: what ended it was the memory (the
	// reclaim before an OOM kill costs CPU time of its own).
	cpuHard := float64(max(1, int(tl.cpu+0.999)))
	if cgOOM && r.Signal == int(syscall.SIGKILL) && f.CPU < cpuHard-0.05 {
		return set(Memory, "memory limit reached (the slot's cgroup)")
	}
	timedOut := f.End == endWall || f.End == endDeadline ||
		f.CPU > tl.cpu && tl.cpu > 0 && tl.style != Assert ||
		r.Signal == int(syscall.SIGXCPU) || r.Signal == int(syscall.SIGPROF) ||
		r.Signal == int(syscall.SIGKILL) && f.CPU >= cpuHard-0.05 ||
		f.End == endExit && r.ExitCode != 0 && marked(f, tl.timeMarks)
	if timedOut {
		if tl.style == IO && tl.perTestCPU {
			return set(Timeout, fmt.Sprintf("time limit reached (%.2f s CPU per test)", tl.cpu))
		}
		return set(Timeout, fmt.Sprintf("time limit reached (%g CPU seconds, %g wall seconds)", tl.submission.CPUSeconds, tl.submission.WallSeconds))
	}

	// 4. Memory.
	died := signaled || f.End == endLost || f.End == endDied
	switch {
	case cgOOM && died:
		return set(Memory, "memory limit reached (the slot's cgroup)")
	case cgOOM && tl.runner && f.End == endExit && f.Status != 0:
		return set(Memory, "memory limit reached (the slot's cgroup killed a process of the runner's)")
	case f.End == endNoExec && (f.Errno == int(syscall.ENOMEM) || f.Errno == int(syscall.E2BIG)):
		return set(Memory, "the program does not fit in the memory limit (exec: "+syscall.Errno(f.Errno).Error()+")")
	case f.End == endRaise && f.Exc == "MemoryError":
		return set(Memory, "MemoryError (memory limit reached)")
	case (f.End == endExit && f.Status != 0 || f.End == endLost) && marked(f, tl.memoryMarks):
		return set(Memory, "out of memory ("+describeStatus(ws)+")")
	case tl.residentKB > 0 && f.RSS > tl.residentKB:
		return set(Memory, fmt.Sprintf("memory limit reached (%d MB resident)", tl.residentKB>>10))
	}

	// 5. The program's own end.
	assert := tl.style == Assert
	switch f.End {
	case endExit, endReturn:
		if ws.Exited() && ws.ExitStatus() == 0 || f.End == endReturn {
			return set(Ran, "")
		}
		if !signaled {
			return set(RuntimeError, describeStatus(ws))
		}
	case endSysExit:
		if r.ExitCode == 0 {
			return set(Ran, "")
		}
		return set(RuntimeError, fmt.Sprintf("exit status %d", r.ExitCode))
	case endRaise:
		s := RuntimeError
		if assert {
			s = Failed
		}
		if f.Exc == "" {
			return set(s, f.Detail)
		}
		if f.Detail == "" {
			return set(s, f.Exc)
		}
		return set(s, f.Exc+": "+f.Detail)
	case endPassed:
		if tl.style == IO {
			// Only Check passes an io test: the program wrote this.
			return set(Failed, "the program wrote a verdict of its own")
		}
		return set(Passed, "")
	case endRefused:
		return set(Failed, "refused: "+f.Detail)
	case endExited:
		return set(Failed, "the program called exit during the tests")
	case endProgram:
		return set(Failed, f.Detail)
	case endGone:
		switch {
		case f.Alive:
			return set(Failed, "the program closed its connection to the tests "+f.Detail)
		case !signaled:
			return set(Failed, "the program exited "+f.Detail)
		}
		return set(Crashed, "the program exited before its tests finished: the program was "+describeStatus(ws)+" "+f.Detail)
	case endNoExec:
		if f.Errno == int(syscall.EAGAIN) {
			return set(Crashed, "could not start: the process limit was reached")
		}
		return set(Crashed, fmt.Sprintf("could not start %s: %v", tl.program, syscall.Errno(f.Errno)))
	case endLost:
		return set(Crashed, "the program's launcher was killed ("+describeStatus(ws)+")")
	case endDied:
		if !signaled {
			return set(Crashed, fmt.Sprintf("process exited with status %d before the test finished", r.ExitCode))
		}
	default:
		return r, false, fmt.Errorf("sandbox: a test ended %q", f.End)
	}
	detail := describeStatus(ws)
	if assert {
		detail = "the program exited before its tests finished: " + detail
	}
	return set(Crashed, detail)
}

// marked says whether f's stderr had one of markers.
func marked(f fact, markers []string) bool {
	for _, m := range f.Marked {
		if slices.Contains(markers, m) {
			return true
		}
	}
	return false
}

// describeStatus says how a process ended, from its wait status.
func describeStatus(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		name := fmt.Sprint(int(ws.Signal()))
		if sig := signalNames[ws.Signal()]; sig != "" {
			name = sig
		}
		return "killed by signal " + name
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

// signalNames are the names of the signals a program is most often killed
// by, as the C library spells them.
var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGKILL: "SIGKILL", syscall.SIGFPE: "SIGFPE",
	syscall.SIGILL: "SIGILL", syscall.SIGBUS: "SIGBUS", syscall.SIGSYS: "SIGSYS", syscall.SIGTERM: "SIGTERM",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGUSR2: "SIGUSR2", syscall.SIGALRM: "SIGALRM", syscall.SIGPROF: "SIGPROF",
}

// FilesError is a job whose files do not fit in the sandbox's work dir
// (WorkDirMB): the caller's data, not the sandbox's failure.
type FilesError struct{ Detail string }

func (e *FilesError) Error() string { return "the job's files do not fit in the sandbox: " + e.Detail }
