package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestIOPartialCredit: a program that passes some io tests and fails
// others gets exactly those verdicts, each test with its own stdin.
func TestIOPartialCredit(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	code := `import os, sys
n = int(input())
if n == 3:
    print(n * n + 1)           # wrong answer
elif n == 4:
    raise ValueError("boom")   # exception
elif n == 5:
    sys.exit(3)                # non-zero exit
elif n == 6:
    print(n * n)
    sys.exit(0)                # exit 0 after a right answer: counts by output
elif n == 7:
    os.kill(os.getpid(), 11)   # dies in the middle of the suite
else:
    print(n * n)
`
	inputs := []string{"1\n", "2\n", "3\n", "4\n", "5\n", "6\n", "7\n", "8\n"}
	want := []sandbox.Status{
		sandbox.Passed, sandbox.Passed, sandbox.Failed, sandbox.RuntimeError,
		sandbox.RuntimeError, sandbox.Passed, sandbox.Crashed, sandbox.Passed,
	}
	expect := []string{"1", "4", "9", "16", "25", "36", "49", "64"}
	var seen []int
	res := run(t, p, sandbox.Job{
		Style: sandbox.IO, Code: code, Inputs: inputs, Limits: sandbox.DefaultLimits(),
		Check: func(k int, out []byte) bool {
			seen = append(seen, k)
			return strings.TrimRight(string(out), "\n") == expect[k]
		},
	})
	for k, tr := range res.Tests {
		if tr.Status != want[k] {
			t.Errorf("test %d (stdin %q): %s (%s), want %s", k, inputs[k], tr.Status, tr.Detail, want[k])
		}
	}
	if got := res.Passed(); got != 4 {
		t.Errorf("Passed() = %d, want 4", got)
	}
	if !strings.Contains(res.Tests[3].Detail, "ValueError") || !strings.Contains(res.Tests[4].Detail, "3") {
		t.Errorf("details do not say why: %q, %q", res.Tests[3].Detail, res.Tests[4].Detail)
	}
	// Check is asked only about tests whose program ran to its end.
	for _, k := range seen {
		if k == 3 || k == 4 || k == 6 {
			t.Errorf("Check called for test %d, which did not run to its end", k)
		}
	}
	if res.Elapsed <= 0 {
		t.Errorf("Elapsed = %v", res.Elapsed)
	}
}

// TestIOStdinIsPerTest: every test sees only its own stdin, from the start,
// and a test that does not read it all does not leak it into the next one.
func TestIOStdinIsPerTest(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	inputs := []string{"a b c\nsecond line\n", "", "x\n"}
	res := run(t, p, sandbox.Job{
		Style: sandbox.IO, Code: "import sys\nprint(repr(sys.stdin.readline()))\n", Inputs: inputs, Limits: sandbox.DefaultLimits(),
		Check: func(k int, out []byte) bool {
			want := map[int]string{0: "'a b c\\n'", 1: "''", 2: "'x\\n'"}[k]
			return strings.TrimSpace(string(out)) == want
		},
	})
	for k, tr := range res.Tests {
		if tr.Status != sandbox.Passed {
			t.Errorf("test %d: %s (%s)", k, tr.Status, tr.Detail)
		}
	}
}

// TestAssertStyle: HumanEval-style verdicts, and broken test code as a
// HarnessError rather than a failed program. Names the test code does not
// define come from the trusted prompt first (Job.Prompt), then from the
// program; a name the prompt defines, but the entry point, never comes
// from the program.
func TestAssertStyle(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	test := "def check(candidate):\n    assert candidate([3, 1, 2]) == [1, 2, 3]\n    assert candidate([]) == []\n"
	// A helper the prompt defines and the tests use, a program that uses
	// it right, and one that redefines it so that its stub passes.
	const (
		helper   = "def double(x):\n    return 2 * x\n"
		stub     = "def half(x):\n    pass\n"
		uses     = "def check(candidate):\n    assert candidate(double(3)) == 3\n"
		right    = helper + "def half(x):\n    return x // 2\n"
		redefine = "def double(x):\n    return x\ndef half(x):\n    return x\n"
	)
	cases := []struct {
		name, code, test, entry, prompt string
		want                            sandbox.Status
		detail                          string // in Detail
		harness                         bool   // Run must fail with a *HarnessError
	}{
		{name: "pass", code: "def srt(xs):\n    return sorted(xs)\n", want: sandbox.Passed},
		{name: "assertion failure", code: "def srt(xs):\n    return xs\n", want: sandbox.Failed, detail: "AssertionError"},
		{name: "missing entry point", code: "def sort_list(xs):\n    return sorted(xs)\n", want: sandbox.Failed, detail: "srt"},
		{name: "entry point not callable", code: "srt = [1, 2, 3]\n", want: sandbox.Failed, detail: "srt"},
		{name: "syntax error in program", code: "def srt(xs)\n    return sorted(xs)\n", want: sandbox.Failed, detail: "SyntaxError"},
		{name: "exception in program", code: "raise RuntimeError('top level')\ndef srt(xs):\n    return sorted(xs)\n", want: sandbox.Failed, detail: "RuntimeError"},
		{name: "exception in candidate", code: "def srt(xs):\n    return 1 // 0\n", want: sandbox.Failed, detail: "ZeroDivisionError"},
		{name: "wrong type", code: "def srt(xs):\n    return tuple(sorted(xs))\n", want: sandbox.Failed, detail: "AssertionError"},
		{name: "broken test code", code: "def srt(xs):\n    return sorted(xs)\n", test: "def check(candidate)\n    assert True\n", harness: true},
		{name: "test code without check", code: "def srt(xs):\n    return sorted(xs)\n", test: "def verify(candidate):\n    assert True\n", harness: true},
		{name: "test code raising", code: "def srt(xs):\n    return sorted(xs)\n", test: "import no_such_module_here\ndef check(candidate):\n    assert True\n", harness: true},

		{name: "prompt's helper", prompt: helper + stub, code: right, test: uses, entry: "half", want: sandbox.Passed},
		{name: "helper redefined", prompt: helper + stub, code: redefine, test: uses, entry: "half", want: sandbox.Failed, detail: "AssertionError"},
		{name: "no prompt: the program's helper", code: redefine, test: uses, entry: "half", want: sandbox.Passed},
		{name: "prose prompt defines nothing", prompt: "Write half(x), the inverse of double.", code: right, test: uses, entry: "half", want: sandbox.Passed},
		{name: "entry point named in the tests is the program's", prompt: stub, code: right,
			test: "def check(candidate):\n    assert half(8) == 4\n", entry: "half", want: sandbox.Passed},
		{name: "a name the prompt lacks is the program's", prompt: "def other():\n    pass\n", code: right, test: uses, entry: "half", want: sandbox.Passed},
		{name: "prompt raising after the helper", prompt: helper + "undefined_name\n", code: redefine, test: uses, entry: "half", want: sandbox.Failed},
		{name: "prompt raising before the helper", prompt: "undefined_name\n" + helper, code: right, test: uses, entry: "half", detail: "'double'", harness: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := sandbox.Job{Style: sandbox.Assert, Code: c.code, Test: test, EntryPoint: "srt", Prompt: c.prompt, Limits: sandbox.DefaultLimits()}
			if c.test != "" {
				job.Test = c.test
			}
			if c.entry != "" {
				job.EntryPoint = c.entry
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := p.Run(ctx, job)
			if c.harness {
				var he *sandbox.HarnessError
				if !errors.As(err, &he) {
					t.Fatalf("Run = %+v, %v; want a *sandbox.HarnessError", res, err)
				}
				if he.Detail == "" || !strings.Contains(he.Detail, c.detail) {
					t.Errorf("HarnessError detail %q, want one with %q", he.Detail, c.detail)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(res.Tests) != 1 {
				t.Fatalf("%d results, want 1", len(res.Tests))
			}
			tr := res.Tests[0]
			if tr.Status != c.want || !strings.Contains(tr.Detail, c.detail) {
				t.Errorf("%s (%q), want %s with %q in the detail", tr.Status, tr.Detail, c.want, c.detail)
			}
		})
	}
	assertServes(t, p)
}

// TestTotalOutput: the tests of a submission print at most
// Limits.TotalOutputKB together (with what earlier jobs of it printed,
// Job.OutputBefore; stderr counts when it is kept): the test that crosses
// it is Output, the tests after it are Skipped, and the Result says so.
func TestTotalOutput(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	// 10,001 bytes on stdout and 5,000 on stderr per test, 4 tests.
	code := "import sys\nprint('x' * 10000)\nsys.stderr.write('e' * 5000)\n"
	for _, c := range []struct {
		name    string
		totalKB int
		before  int64
		keep    bool
		want    string // each test's status, in order
		over    bool
		output  int64
	}{
		{"within", 40, 0, false, "failed failed failed failed", false, 40004},
		{"third test crosses", 25, 0, false, "failed failed output skipped", true, 30003},
		{"earlier jobs count", 25, 10000, false, "failed output skipped skipped", true, 20002},
		{"kept stderr counts", 25, 0, true, "failed output skipped skipped", true, 30002},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, p, sandbox.Job{
				Style: sandbox.IO, Code: code, Inputs: []string{"", "", "", ""}, OutputBefore: c.before, KeepOutput: c.keep,
				Limits: sandbox.Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 256, OutputKB: 64, Processes: 8, TotalOutputKB: c.totalKB},
				Check:  func(int, []byte) bool { return false },
			})
			var got []string
			for _, tr := range res.Tests {
				got = append(got, string(tr.Status))
			}
			if strings.Join(got, " ") != c.want || res.OverOutput != c.over || res.Output != c.output {
				t.Errorf("tests %v, over %v, output %d; want %s, over %v, output %d", got, res.OverOutput, res.Output, c.want, c.over, c.output)
			}
		})
	}
	assertServes(t, p)
}

// TestJobValidation: a job that cannot be run is refused before it takes a
// slot.
func TestJobValidation(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	ok := func(int, []byte) bool { return true }
	bad := map[string]sandbox.Job{
		"no style":         {Code: "pass", Inputs: []string{""}, Check: ok, Limits: sandbox.DefaultLimits()},
		"io no inputs":     {Style: sandbox.IO, Code: "pass", Check: ok, Limits: sandbox.DefaultLimits()},
		"io args":          {Style: sandbox.IO, Code: "pass", Inputs: []string{""}, Args: [][]string{{"x"}}, Check: ok, Limits: sandbox.DefaultLimits()},
		"unknown language": {Language: "cobol", Style: sandbox.IO, Code: "pass", Inputs: []string{""}, Check: ok, Limits: sandbox.DefaultLimits()},
		"not in the pool":  {Language: "cpp", Style: sandbox.IO, Inputs: []string{""}, Check: ok, Limits: sandbox.DefaultLimits()},
		"io 257 tests":     {Style: sandbox.IO, Code: "pass", Inputs: make([]string, 257), Check: ok, Limits: sandbox.DefaultLimits()},
		"assert no test":   {Style: sandbox.Assert, Code: "pass", EntryPoint: "f", Limits: sandbox.DefaultLimits()},
		"assert no entry":  {Style: sandbox.Assert, Code: "pass", Test: "def check(c): pass", Limits: sandbox.DefaultLimits()},
		"io prompt":        {Style: sandbox.IO, Code: "pass", Inputs: []string{""}, Prompt: "def f(): pass", Check: ok, Limits: sandbox.DefaultLimits()},
		"zero limits":      {Style: sandbox.IO, Code: "pass", Inputs: []string{""}, Check: ok},
		"huge cpu":         {Style: sandbox.IO, Code: "pass", Inputs: []string{""}, Check: ok, Limits: sandbox.Limits{CPUSeconds: 61, WallSeconds: 6, MemoryMB: 512, OutputKB: 1, Processes: 1}},
		"io helpers":       {Style: sandbox.IO, Code: "pass", Inputs: []string{""}, Helpers: "def f(): pass", Check: ok, Limits: sandbox.DefaultLimits()},
		// More stdin than the servers hold for one job (the zygote died of
		// 200 MB): refused before it reaches them.
		"stdin over MaxInputMB": {Style: sandbox.IO, Code: "pass", Inputs: []string{strings.Repeat("x", sandbox.MaxInputMB<<19), strings.Repeat("y", sandbox.MaxInputMB<<19+1)}, Check: ok, Limits: sandbox.DefaultLimits()},
		"file name with a NUL":  {Style: sandbox.IO, Code: "pass", Inputs: []string{""}, Files: map[string][]byte{"a\x00b": nil}, Check: ok, Limits: sandbox.DefaultLimits()},
	}
	for name, job := range bad {
		if _, err := p.Run(context.Background(), job); err == nil {
			t.Errorf("%s: Run accepted an invalid job", name)
		}
	}
	assertServes(t, p)
}

// TestSelfKillIsACrash: a program that kills itself with SIGKILL crashed; it
// did not run out of CPU time (the CPU hard limit also sends SIGKILL, so
// the verdict looks at the CPU the program used).
func TestSelfKillIsACrash(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	kill := "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
	busy := "while True:\n    pass\n"
	for _, c := range []struct {
		code string
		want sandbox.Status
	}{{kill, sandbox.Crashed}, {busy, sandbox.Timeout}} {
		res := run(t, p, sandbox.Job{Style: sandbox.IO, Code: c.code, Inputs: []string{""},
			Check: func(int, []byte) bool { return true }, Limits: hostile})
		if got := res.Tests[0]; got.Status != c.want {
			t.Errorf("%q: %s (%s), want %s", c.code, got.Status, got.Detail, c.want)
		}
	}
}

// TestCgroupBoundsTheSlot: where the machine has cgroup v1 memory and pids
// controllers, a slot is bounded as a whole, not only per process: six
// processes each holding 100 MB under a 128 MB limit (each one alone is
// within its RLIMIT_AS) cannot all hold it at once.
func TestCgroupBoundsTheSlot(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	on, why := p.Cgroups()
	if !on {
		t.Skipf("no cgroups on this machine (%v): the slot is bounded by rlimits only", why)
	}
	// A child the kernel kills for memory may already have filled its
	// block, so counting blocks filled says nothing; each child that
	// lives to its exit prints when it held its block, and the test counts
	// the most blocks held at one moment by those.
	code := `import os, sys, time
kids = []
for i in range(6):
    pid = os.fork()
    if pid == 0:
        block = b"x" * (100 << 20)
        start = time.monotonic()
        time.sleep(3)
        os.write(1, b"held %f %f %d\n" % (start, time.monotonic(), len(block)))
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
`
	lim := hostile
	lim.WallSeconds, lim.CPUSeconds = 8, 4
	var out []byte
	res := run(t, p, sandbox.Job{Style: sandbox.IO, Code: code, Inputs: []string{""}, Limits: lim,
		Check: func(_ int, b []byte) bool { out = b; return true }})
	held, survivors := mostHeldAtOnce(t, string(out))
	// The slot's memory cgroup allows the program's 128 MB, 64 MB of
	// tmpfs and 64 MB for each of the three servers: 384 MB in all, room
	// for three blocks of 100 MB at most, never four.
	slotMB := lim.MemoryMB + 64 + 3*64
	if held > slotMB/100 {
		t.Errorf("%d processes held 100 MB at once in a slot limited to %d MB (%s %s)", held, slotMB, res.Tests[0].Status, res.Tests[0].Detail)
	}
	if survivors == 0 {
		t.Errorf("no child held its block to the end (%s %s): the test measured nothing", res.Tests[0].Status, res.Tests[0].Detail)
	}
	t.Logf("%d of 6 lived holding 100 MB, at most %d at once; verdict %s (%s)", survivors, held, res.Tests[0].Status, res.Tests[0].Detail)
	assertServes(t, p)

	// Close leaves no cgroup behind.
	p.Close()
	for _, pattern := range []string{"/sys/fs/cgroup/memory/*/*/rewardd-sandbox-%d-*", "/sys/fs/cgroup/memory/*/rewardd-sandbox-%d-*",
		"/sys/fs/cgroup/memory/rewardd-sandbox-%d-*", "/sys/fs/cgroup/pids/*/rewardd-sandbox-%d-*", "/sys/fs/cgroup/pids/rewardd-sandbox-%d-*"} {
		if left, _ := filepath.Glob(fmt.Sprintf(pattern, os.Getpid())); len(left) > 0 {
			t.Errorf("cgroups left after Close: %v", left)
		}
	}
}

// mostHeldAtOnce reads lines "held START END BYTES" and answers the most
// intervals that overlap at one moment, and how many lines there were.
func mostHeldAtOnce(t *testing.T, out string) (most, lines int) {
	t.Helper()
	type edge struct {
		at    float64
		delta int
	}
	var edges []edge
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var start, end float64
		var n int
		if _, err := fmt.Sscanf(line, "held %f %f %d", &start, &end, &n); err != nil {
			continue
		}
		lines++
		edges = append(edges, edge{start, 1}, edge{end, -1})
	}
	// Ends sort before starts at the same moment: touching is not holding.
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at != edges[j].at {
			return edges[i].at < edges[j].at
		}
		return edges[i].delta < edges[j].delta
	})
	now := 0
	for _, e := range edges {
		now += e.delta
		most = max(most, now)
	}
	return most, lines
}

// TestAssertProcessStartsClean: the zygote prepares part of each program's
// process before the fork (its stdout and stderr, its working directory,
// SIGALRM's action); what the program finds must be what confine would
// have made: the work dir, writable; stdout and stderr one memfd; no
// descriptor but 0-2 and the two pipes (none of the zygote's); SIGALRM's
// default action, not the zygote's handler; the slot's uid and limits.
// Twice, so that the second process is prepared after a first one ran.
func TestAssertProcessStartsClean(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	code := `import os, resource, signal, stat
def env():
    open("scratch", "w").write("x")
    fds = []
    for fd in range(1024):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            pass
    out, err = os.fstat(1), os.fstat(2)
    return {"cwd": os.getcwd(), "fds": fds, "memfd": stat.S_ISREG(out.st_mode) and out.st_ino == err.st_ino,
            "alarm": signal.getsignal(signal.SIGALRM) == signal.SIG_DFL, "uid": os.getuid(),
            "cpu": list(resource.getrlimit(resource.RLIMIT_CPU)), "as": list(resource.getrlimit(resource.RLIMIT_AS))}
`
	test := `def check(candidate):
    e = candidate()
    assert e["cwd"] == "/tmp/work", e["cwd"]
    assert e["fds"] == [0, 1, 2, 3, 4], e["fds"]
    assert e["memfd"], "stdout and stderr are not one memfd"
    assert e["alarm"], "SIGALRM has a handler"
    assert e["uid"] != 0, "uid 0"
    assert e["cpu"] == [2, 3], e["cpu"]
    assert e["as"] == [512 << 20, 512 << 20], e["as"]
`
	for range 2 {
		res := run(t, p, sandbox.Job{Style: sandbox.Assert, Code: code, Test: test, EntryPoint: "env", Limits: sandbox.DefaultLimits()})
		if tr := res.Tests[0]; tr.Status != sandbox.Passed {
			t.Fatalf("%s: %s", tr.Status, tr.Detail)
		}
	}
}

// TestDetailsFilled: every verdict comes with what the program used: its
// CPU time, wall time and peak memory, whatever ended it (a return, a
// wrong answer, a crash, the CPU limit, the wall limit), in io and assert
// style alike.
func TestDetailsFilled(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	lim := sandbox.Limits{CPUSeconds: 1, WallSeconds: 3, MemoryMB: 256, OutputKB: 64, Processes: 8}
	spin := "import time\nend = time.process_time() + 0.05\nwhile time.process_time() < end:\n    pass\n"
	for _, c := range []struct {
		name string
		job  sandbox.Job
		want sandbox.Status
	}{
		{"io ran", sandbox.Job{Style: sandbox.IO, Code: spin + "print(1)\n", Inputs: []string{""}}, sandbox.Passed},
		{"io crash", sandbox.Job{Style: sandbox.IO, Code: spin + "import os\nos.abort()\n", Inputs: []string{""}}, sandbox.Crashed},
		{"io cpu limit", sandbox.Job{Style: sandbox.IO, Code: "while True:\n    pass\n", Inputs: []string{""}}, sandbox.Timeout},
		{"io wall limit", sandbox.Job{Style: sandbox.IO, Code: spin + "import time\ntime.sleep(60)\n", Inputs: []string{""}, TestWallSeconds: 0.5}, sandbox.Timeout},
		{"assert passed", sandbox.Job{Style: sandbox.Assert, Code: spin + "def f(x):\n    return x\n", EntryPoint: "f", Test: "def check(c):\n    assert c(1) == 1\n"}, sandbox.Passed},
		{"assert failed", sandbox.Job{Style: sandbox.Assert, Code: spin + "def f(x):\n    return 0\n", EntryPoint: "f", Test: "def check(c):\n    assert c(1) == 1\n"}, sandbox.Failed},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.job.Limits = lim
			if c.job.Style == sandbox.IO {
				c.job.Check = func(_ int, out []byte) bool { return string(out) == "1\n" }
			}
			tr := run(t, p, c.job).Tests[0]
			if tr.Status != c.want {
				t.Errorf("%s (%s), want %s", tr.Status, tr.Detail, c.want)
			}
			if tr.CPU < 40*time.Millisecond || tr.Wall <= 0 || tr.MemoryKB <= 0 {
				t.Errorf("CPU %v, wall %v, memory %d KB: not measured (the program spun 50 ms)", tr.CPU, tr.Wall, tr.MemoryKB)
			}
		})
	}
}
