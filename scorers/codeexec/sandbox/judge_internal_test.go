package sandbox

import (
	"errors"
	"syscall"
	"testing"
)

// TestJudge: the judge's table, fact by fact, for every way a test ends:
// the verdict, and the reason a user reads.
func TestJudge(t *testing.T) {
	exited := func(code int) int { return code << 8 }
	killed := func(sig syscall.Signal) int { return int(sig) }
	io := testLimit{style: IO, cpu: 2, wall: 5, output: 1 << 20, totalKB: 16 << 10, submission: DefaultLimits(), program: "./main",
		memoryMarks: []string{"std::bad_alloc"}, timeMarks: []string{"CPU time limit exceeded"}}
	perTest := io
	perTest.perTestCPU, perTest.cpu = true, 1.5
	resident := io
	resident.residentKB = 256 << 10
	runner := io
	runner.runner = true
	assert := testLimit{style: Assert, cpu: 2, wall: 6, output: 1 << 20, submission: DefaultLimits()}
	for _, c := range []struct {
		name   string
		f      fact
		tl     testLimit
		cgOOM  bool
		want   Status
		detail string
		exit   int
		signal int
	}{
		// The program's own end.
		{"exit 0", fact{End: endExit, CPU: 0.1}, io, false, Ran, "", 0, 0},
		{"exit 3", fact{End: endExit, Status: exited(3)}, io, false, RuntimeError, "exit status 3", 3, 0},
		{"segfault", fact{End: endExit, Status: killed(syscall.SIGSEGV)}, io, false, Crashed, "killed by signal SIGSEGV", -1, 11},
		{"abort", fact{End: endExit, Status: killed(syscall.SIGABRT)}, io, false, Crashed, "killed by signal SIGABRT", -1, 6},
		{"python returned", fact{End: endReturn}, io, false, Ran, "", 0, 0},
		{"python sys.exit(0)", fact{End: endSysExit, Code: new(int)}, io, false, Ran, "", 0, 0},
		{"python sys.exit(2)", fact{End: endSysExit, Code: ptrTo(2)}, io, false, RuntimeError, "exit status 2", 2, 0},
		{"python raised", fact{End: endRaise, Exc: "ValueError", Detail: "no"}, io, false, RuntimeError, "ValueError: no", -1, 0},
		{"python died", fact{End: endDied, Status: exited(1)}, io, false, Crashed, "process exited with status 1 before the test finished", 1, 0},
		{"python killed itself", fact{End: endDied, Status: killed(syscall.SIGKILL), CPU: 0.1}, io, false, Crashed, "killed by signal SIGKILL", -1, 9},
		// Time: CPU over the limit, however it ended; the wall clock.
		{"CPU over the limit, exit 0", fact{End: endExit, CPU: 2.5}, io, false, Timeout, "time limit reached (2 CPU seconds, 6 wall seconds)", 0, 0},
		{"SIGXCPU", fact{End: endExit, Status: killed(syscall.SIGXCPU), CPU: 2}, io, false, Timeout, "time limit reached (2 CPU seconds, 6 wall seconds)", -1, 24},
		{"SIGKILL at the hard limit", fact{End: endExit, Status: killed(syscall.SIGKILL), CPU: 1.98}, io, false, Timeout, "time limit reached (2 CPU seconds, 6 wall seconds)", -1, 9},
		{"python's test timer", fact{End: endDied, Status: killed(syscall.SIGPROF), CPU: 1.5}, perTest, false, Timeout, "time limit reached (1.50 s CPU per test)", -1, 27},
		{"slot time ran out", fact{End: endWall, CPU: 0.01}, perTest, false, Timeout, "time limit reached (1.50 s CPU per test)", -1, 0},
		{"the submission's slot time ran out", fact{End: endDeadline}, io, false, Timeout, "time limit reached (2 CPU seconds, 6 wall seconds)", -1, 0},
		{"the compiler was killed at the CPU limit", fact{End: endExit, Status: exited(4), Marked: []string{"CPU time limit exceeded"}}, io, false, Timeout, "time limit reached (2 CPU seconds, 6 wall seconds)", 4, 0},
		// Memory.
		{"the cgroup killed it", fact{End: endExit, Status: killed(syscall.SIGKILL), CPU: 0.2}, io, true, Memory, "memory limit reached (the slot's cgroup)", -1, 9},
		{"an OOM kill past the CPU limit, before the hard limit", fact{End: endExit, Status: killed(syscall.SIGKILL), CPU: 1.7}, perTest, true, Memory, "memory limit reached (the slot's cgroup)", -1, 9},
		{"an OOM kill of a python test", fact{End: endDied, Status: killed(syscall.SIGKILL)}, io, true, Memory, "memory limit reached (the slot's cgroup)", -1, 9},
		{"a cgroup OOM does not turn an exit 0 into MLE", fact{End: endExit}, io, true, Ran, "", 0, 0},
		{"a runner reports its test binary killed by the cgroup", fact{End: endExit, Status: exited(1)}, runner, true, Memory, "memory limit reached (the slot's cgroup killed a process of the runner's)", 1, 0},
		{"a runner's failed test, no OOM", fact{End: endExit, Status: exited(1)}, runner, false, RuntimeError, "exit status 1", 1, 0},
		{"a program that is no runner exits 1 after an OOM kill", fact{End: endExit, Status: exited(1)}, io, true, RuntimeError, "exit status 1", 1, 0},
		{"exec ENOMEM", fact{End: endNoExec, Errno: int(syscall.ENOMEM)}, io, false, Memory, "the program does not fit in the memory limit (exec: cannot allocate memory)", -1, 0},
		{"MemoryError", fact{End: endRaise, Exc: "MemoryError"}, io, false, Memory, "MemoryError (memory limit reached)", -1, 0},
		{"bad_alloc on stderr", fact{End: endExit, Status: killed(syscall.SIGABRT), Marked: []string{"std::bad_alloc"}}, io, false, Memory, "out of memory (killed by signal SIGABRT)", -1, 6},
		{"a marker on an exit 0 is output, not memory", fact{End: endExit, Marked: []string{"std::bad_alloc"}}, io, false, Ran, "", 0, 0},
		{"peak resident set over the limit", fact{End: endExit, RSS: 300 << 10}, resident, false, Memory, "memory limit reached (256 MB resident)", 0, 0},
		{"peak resident set within it", fact{End: endExit, RSS: 200 << 10}, resident, false, Ran, "", 0, 0},
		// Output, before time and memory: however the flood ended.
		{"stdout full", fact{End: endExit, Out: 1 << 20}, io, false, Output, "output limit reached", 0, 0},
		{"stderr full, then killed at the wall", fact{End: endWall, Err: 1 << 20}, io, false, Output, "output limit reached", -1, 0},
		{"SIGXFSZ", fact{End: endExit, Status: killed(syscall.SIGXFSZ)}, io, false, Output, "output limit reached", -1, 25},
		{"python EFBIG", fact{End: endRaise, Exc: "OSError", Errno: int(syscall.EFBIG)}, io, false, Output, "output limit reached", -1, 0},
		{"past the total", fact{End: endTotal, Out: 10}, io, false, Output, "the tests together printed more than the total output limit (16384 KB)", -1, 0},
		// Starting.
		{"process limit at the start", fact{End: endNoExec, Errno: int(syscall.EAGAIN)}, io, false, Crashed, "could not start: the process limit was reached", -1, 0},
		{"no such program", fact{End: endNoExec, Errno: int(syscall.ENOENT)}, io, false, Crashed, "could not start ./main: no such file or directory", -1, 0},
		{"the launcher killed", fact{End: endLost, Status: killed(syscall.SIGKILL)}, io, false, Crashed, "the program's launcher was killed (killed by signal SIGKILL)", -1, 9},
		{"skipped", fact{End: endSkipped}, io, false, Skipped, "", -1, 0},
		// Forgery: only Check passes an io test.
		{"an io test that says it passed", fact{End: endPassed}, io, false, Failed, "the program wrote a verdict of its own", -1, 0},
		// Assert tests.
		{"assert passed", fact{End: endPassed}, assert, false, Passed, "", -1, 0},
		{"assert failed", fact{End: endRaise, Exc: "AssertionError"}, assert, false, Failed, "AssertionError", -1, 0},
		{"assert failed with a message", fact{End: endRaise, Exc: "AssertionError", Detail: "2 != 3"}, assert, false, Failed, "AssertionError: 2 != 3", -1, 0},
		{"assert: the program ran out of memory", fact{End: endRaise, Exc: "MemoryError"}, assert, false, Memory, "MemoryError (memory limit reached)", -1, 0},
		{"assert: a refused value", fact{End: endRefused, Detail: "a Cheat"}, assert, false, Failed, "refused: a Cheat", -1, 0},
		{"assert: exit during the tests", fact{End: endExited}, assert, false, Failed, "the program called exit during the tests", -1, 0},
		{"assert: the program did not start", fact{End: endProgram, Detail: "program does not compile: SyntaxError"}, assert, false, Failed, "program does not compile: SyntaxError", -1, 0},
		{"assert: the program exited", fact{End: endGone, Detail: "during the tests"}, assert, false, Failed, "the program exited during the tests", 0, 0},
		{"assert: the program closed its pipe", fact{End: endGone, Alive: true, Detail: "during the tests"}, assert, false, Failed, "the program closed its connection to the tests during the tests", -1, 0},
		{"assert: the program crashed", fact{End: endGone, Status: killed(syscall.SIGSEGV), Detail: "during the tests"}, assert, false, Crashed,
			"the program exited before its tests finished: the program was killed by signal SIGSEGV during the tests", -1, 11},
		{"assert: the program's CPU limit", fact{End: endGone, Status: killed(syscall.SIGXCPU), Detail: "during the tests"}, assert, false, Timeout, "time limit reached (2 CPU seconds, 6 wall seconds)", -1, 24},
		{"assert: slot time ran out", fact{End: endWall}, assert, false, Timeout, "time limit reached (2 CPU seconds, 6 wall seconds)", -1, 0},
		{"assert: a cgroup OOM kill", fact{End: endGone, Status: killed(syscall.SIGKILL)}, assert, true, Memory, "memory limit reached (the slot's cgroup)", -1, 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := judge(c.f, c.tl, c.cgOOM)
			if err != nil {
				t.Fatalf("judge: %v", err)
			}
			if r.Status != c.want || r.Detail != c.detail || r.ExitCode != c.exit || r.Signal != c.signal {
				t.Errorf("%s %q exit %d signal %d, want %s %q exit %d signal %d", r.Status, r.Detail, r.ExitCode, r.Signal, c.want, c.detail, c.exit, c.signal)
			}
		})
	}
}

// TestJudgeErrors: what is not the program's doing is an error of its
// own kind, never a verdict; the test past the total says so.
func TestJudgeErrors(t *testing.T) {
	tl := testLimit{style: IO, cpu: 1, wall: 3, output: 1 << 10}
	if _, _, err := judge(fact{End: endSetup, Detail: "the launcher failed at its uid step"}, tl, false); err == nil {
		t.Error("setup: no error")
	}
	var harness *HarnessError
	if _, _, err := judge(fact{End: endHarness, Detail: "test code defines no check"}, tl, false); !errors.As(err, &harness) {
		t.Errorf("harness: %v, want a HarnessError", err)
	}
	var files *FilesError
	if _, _, err := judge(fact{End: endFiles, Detail: "no space left on device"}, tl, false); !errors.As(err, &files) {
		t.Errorf("files: %v, want a FilesError", err)
	}
	if _, _, err := judge(fact{End: "teleported"}, tl, false); err == nil {
		t.Error("an unknown end: no error")
	}
	if _, over, err := judge(fact{End: endTotal}, tl, false); err != nil || !over {
		t.Errorf("total: over %v, err %v; want over", over, err)
	}
}

func ptrTo[T any](v T) *T { return &v }
