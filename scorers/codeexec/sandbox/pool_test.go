package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/sys/unix"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestCancel: a Run whose context ends while the program runs returns at
// once with the context's error, leaves no process behind, and the slot
// works for the next Run (its fork server is restarted).
func TestCancel(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 1})
	lim := sandbox.Limits{CPUSeconds: 20, WallSeconds: 30, MemoryMB: 128, OutputKB: 64, Processes: 8}
	for _, c := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			servers, runnersBefore := forkServers(), runners()
			ctx, cancel := c.ctx()
			defer cancel()
			// A busy loop, with a child of its own busy too.
			code := "import os\nos.fork()\nwhile True:\n    pass\n"
			start := time.Now()
			_, err := p.Run(ctx, sandbox.Job{Style: sandbox.IO, Code: code, Inputs: []string{""}, Limits: lim, Check: func(int, []byte) bool { return true }})
			d := time.Since(start)
			if !errors.Is(err, c.want) {
				t.Errorf("Run = %v, want %v", err, c.want)
			}
			if d >= time.Duration(lim.CPUSeconds)*time.Second {
				t.Errorf("Run returned %v after it started: the program ran to its own limits, the context did not stop it", d)
			}
			assertNoSlotProcs(t)
			assertServes(t, p)
			if now := forkServers(); len(now) != 1 || slices.Equal(now, servers) {
				t.Errorf("fork servers %v before, %v after: want the killed one replaced", servers, now)
			}
			if now := runners(); len(now) != 1 || slices.Equal(now, runnersBefore) {
				t.Errorf("runners %v before, %v after: want the killed one replaced", runnersBefore, now)
			}
		})
	}

	// A Run still waiting for a slot gives up when its context ends.
	t.Run("waiting for a slot", func(t *testing.T) {
		busy := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			close(busy)
			p.Run(context.Background(), sandbox.Job{Style: sandbox.IO, Code: "import time\ntime.sleep(1)\n", Inputs: []string{""},
				Limits: sandbox.Limits{CPUSeconds: 1, WallSeconds: 1.5, MemoryMB: 128, OutputKB: 64, Processes: 8}, Check: func(int, []byte) bool { return true }})
		}()
		<-busy
		awaitProgram(t) // the sleeper has the slot
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		// It would have run once the sleeper gave the slot back.
		if _, err := p.Run(ctx, goodIO()); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run waiting for the only slot: %v, want DeadlineExceeded", err)
		}
		wg.Wait()
		assertServes(t, p)
	})
}

// TestForkServerKilled: a fork server or runner killed from outside is
// replaced, and the Run that finds it dead is retried once on the new one
// and succeeds, whether it was dead before the Run or died in the middle of
// it.
func TestForkServerKilled(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := &killedSlot{p: startPool(t, sandbox.Config{Slots: 1, Metrics: sandbox.NewMetrics(reg)}), reg: reg}
	lim := sandbox.Limits{CPUSeconds: 2, WallSeconds: 3, MemoryMB: 128, OutputKB: 64, Processes: 8}

	t.Run("between runs", func(t *testing.T) { s.killBetweenRuns(t, "fork server", forkServers, 1) })
	t.Run("during a run", func(t *testing.T) {
		s.killDuringRun(t, "fork server", forkServers, sandbox.Job{
			Style: sandbox.IO, Code: "import time\ntime.sleep(0.6)\nprint('done')\n", Inputs: []string{""}, Limits: lim,
			Check: func(_ int, out []byte) bool { return string(out) == "done\n" },
		}, 2)
	})
	// The runner, which runs the assert-style tests, is the slot's other
	// half: killed, the slot restarts whole and the Run is retried.
	t.Run("runner between runs", func(t *testing.T) { s.killBetweenRuns(t, "runner", runners, 3) })
	t.Run("runner during an assert run", func(t *testing.T) {
		s.killDuringRun(t, "runner", runners, sandbox.Job{
			Style: sandbox.Assert, Code: "def f(x):\n    return x\n", EntryPoint: "f", Limits: lim,
			Test: "import time\n\ndef check(c):\n    time.sleep(0.6)\n    assert c(1) == 1\n",
		}, 4)
	})
}

// killedSlot is a one-slot pool whose fork server and runner the test
// kills, and the registry of its metrics.
type killedSlot struct {
	p   *sandbox.Pool
	reg *prometheus.Registry
}

// restarts is the pool's count of replaced fork servers.
func (s *killedSlot) restarts(t *testing.T) float64 {
	t.Helper()
	mfs, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "rewardd_sandbox_restarts_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no rewardd_sandbox_restarts_total")
	return 0
}

// killBetweenRuns kills the one process find lists (a fork server or the
// runner) and waits until it is dead: the next Run must find it dead, be
// retried on the slot's new processes and pass.
func (s *killedSlot) killBetweenRuns(t *testing.T, what string, find func() []int, wantRestarts float64) {
	t.Helper()
	ps := find()
	if len(ps) != 1 {
		t.Fatalf("%ss of this process: %v, want 1", what, ps)
	}
	killAndWait(t, ps[0])
	assertServes(t, s.p)
	if now := find(); len(now) != 1 || now[0] == ps[0] {
		t.Errorf("%ss now %v, killed %d: want one new one", what, now, ps[0])
	}
	if got := s.restarts(t); got != wantRestarts {
		t.Errorf("restarts = %v, want %v", got, wantRestarts)
	}
}

// killDuringRun runs job and, 300 ms into it, kills the one process find
// lists (a fork server or the runner): the Run must be retried on the
// slot's new processes and pass.
func (s *killedSlot) killDuringRun(t *testing.T, what string, find func() []int, job sandbox.Job, wantRestarts float64) {
	t.Helper()
	killed := make(chan int, 1)
	timer := time.AfterFunc(300*time.Millisecond, func() {
		// Not t.Fatal: that belongs to the test's goroutine.
		ps := find()
		if len(ps) != 1 || syscall.Kill(ps[0], syscall.SIGKILL) != nil {
			killed <- -1
			return
		}
		killed <- ps[0]
	})
	defer timer.Stop()
	start := time.Now()
	res := run(t, s.p, job)
	if tr := res.Tests[0]; tr.Status != sandbox.Passed {
		t.Errorf("the retried run: %s (%s)", tr.Status, tr.Detail)
	}
	if d := time.Since(start); d < 800*time.Millisecond {
		t.Errorf("took %v: it cannot have run twice", d)
	}
	k := <-killed
	if k < 0 {
		t.Fatalf("could not find and kill the one %s", what)
	}
	if now := find(); len(now) != 1 || now[0] == k {
		t.Errorf("%ss now %v, killed %d: want one new one", what, now, k)
	}
	if got := s.restarts(t); got != wantRestarts {
		t.Errorf("restarts = %v, want %v", got, wantRestarts)
	}
	assertNoSlotProcs(t)
	assertServes(t, s.p)
}

// killAndWait sends SIGKILL to pid and waits, at most 10 s, until it has
// exited: its pidfd turns readable, the kernel's event for a process's
// exit.
func killAndWait(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, max(int(time.Until(deadline).Milliseconds()), 0))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			t.Fatalf("poll the pidfd of %d: %v", pid, err)
		case n == 0:
			t.Fatalf("%d still alive 10 s after SIGKILL", pid)
		}
		return
	}
}

// mixedBatch is ~20 submissions that pass, fail, time out on the wall
// clock and on the CPU limit, run out of memory, print too much.
func mixedBatch() []sandbox.Job {
	lim := sandbox.Limits{CPUSeconds: 1, WallSeconds: 8, MemoryMB: 128, OutputKB: 16, Processes: 8}
	ioJob := func(code string, inputs []string, want []string) sandbox.Job {
		return sandbox.Job{Style: sandbox.IO, Code: code, Inputs: inputs, Limits: lim,
			Check: func(k int, out []byte) bool { return strings.TrimSpace(string(out)) == want[k] }}
	}
	asJob := func(code string) sandbox.Job {
		return sandbox.Job{Style: sandbox.Assert, Code: code, EntryPoint: "f", Limits: lim,
			Test: "def check(candidate):\n    assert candidate(3) == 6\n    assert candidate(0) == 0\n"}
	}
	sleeper := ioJob("import time\ntime.sleep(30)\n", []string{""}, []string{""})
	sleeper.Limits.WallSeconds = 0.5
	var jobs []sandbox.Job
	for i := range 3 {
		jobs = append(jobs,
			ioJob("print(sum(map(int, input().split())))\n", []string{"1 2\n", "5 5\n", "0 0\n"}, []string{"3", "10", "0"}),
			ioJob("print(sum(map(int, input().split())) + 1)\n", []string{"1 2\n", "5 5\n"}, []string{"3", "10"}),
			ioJob("a, b = map(int, input().split())\nprint(a // b)\n", []string{"4 2\n", "1 0\n", "9 3\n"}, []string{"2", "", "3"}),
			asJob("def f(x):\n    return 2 * x\n"),
			asJob("def f(x):\n    return x + 3\n"),
		)
		if i < 2 {
			jobs = append(jobs,
				ioJob("while True:\n    pass\n", []string{""}, []string{""}), // CPU limit
				sleeper, // wall limit
			)
		}
	}
	jobs = append(jobs,
		ioJob("x = bytearray(1 << 30)\n", []string{""}, []string{""}),
		ioJob("while True:\n    print('spam' * 100)\n", []string{""}, []string{""}),
	)
	return jobs
}

func runBatch(t *testing.T, p *sandbox.Pool, jobs []sandbox.Job) [][]sandbox.Status {
	t.Helper()
	got := make([][]sandbox.Status, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := p.Run(ctx, job)
			if err != nil {
				t.Errorf("job %d: %v", i, err)
				return
			}
			for _, tr := range res.Tests {
				got[i] = append(got[i], tr.Status)
			}
		})
	}
	wg.Wait()
	return got
}

// TestSameResultsUnderLoad: the same batch gives the same verdicts on an
// idle machine and on one whose both cores are saturated: limits are on
// the program's own CPU time, or generous enough on the wall clock.
func TestSameResultsUnderLoad(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 2})
	jobs := mixedBatch()
	start := time.Now()
	idle := runBatch(t, p, jobs)
	t.Logf("idle: %d submissions in %v", len(jobs), time.Since(start))
	want := [][]sandbox.Status{}
	for i := range 3 {
		want = append(want,
			[]sandbox.Status{sandbox.Passed, sandbox.Passed, sandbox.Passed},
			[]sandbox.Status{sandbox.Failed, sandbox.Failed},
			[]sandbox.Status{sandbox.Passed, sandbox.RuntimeError, sandbox.Passed},
			[]sandbox.Status{sandbox.Passed},
			[]sandbox.Status{sandbox.Failed},
		)
		if i < 2 {
			want = append(want, []sandbox.Status{sandbox.Timeout}, []sandbox.Status{sandbox.Timeout})
		}
	}
	want = append(want, []sandbox.Status{sandbox.Memory}, []sandbox.Status{sandbox.Output})
	for i := range want {
		if !slices.Equal(idle[i], want[i]) {
			t.Errorf("idle, job %d: %v, want %v", i, idle[i], want[i])
		}
	}

	// Two processes that burn both cores, for at most 30 s whatever
	// happens to this test.
	var burners []*exec.Cmd
	for range 2 {
		cmd := exec.Command("/usr/bin/python3", "-I", "-S", "-c", "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end:\n    pass\n")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		burners = append(burners, cmd)
	}
	defer func() {
		for _, cmd := range burners {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	burnt := func() (ticks []int) {
		for _, cmd := range burners {
			ticks = append(ticks, cpuTicks(t, cmd.Process.Pid))
		}
		return ticks
	}
	// The burners are up: each has had CPU time, polled for at most 10 s.
	for deadline := time.Now().Add(10 * time.Second); slices.Contains(burnt(), 0); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the burners used no CPU in 10 s: %v ticks", burnt())
		}
	}
	busy0, total0 := cpuTime(t)
	start = time.Now()
	loaded := runBatch(t, p, jobs)
	elapsed := time.Since(start)
	busy1, total1 := cpuTime(t)
	t.Logf("under load: %d submissions in %v", len(jobs), elapsed)
	// The load was real: the machine's CPUs were busy through the batch
	// (with the burners, whatever else this machine runs).
	if busy := float64(busy1-busy0) / float64(total1-total0); busy < 0.8 {
		t.Errorf("the machine's CPUs were busy %.0f%% of the batch's time: not loaded", 100*busy)
	}
	for i := range idle {
		if !slices.Equal(idle[i], loaded[i]) {
			t.Errorf("job %d: %v idle, %v under load", i, idle[i], loaded[i])
		}
	}
}

// TestMetrics: executions are counted by result (the worst test of each
// submission), durations observed, slots and restarts reported, and the
// metrics pass promlint.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := startPool(t, sandbox.Config{Slots: 1, Metrics: sandbox.NewMetrics(reg)})
	lim := sandbox.Limits{CPUSeconds: 1, WallSeconds: 0.5, MemoryMB: 128, OutputKB: 16, Processes: 8}
	io := func(code string, inputs ...string) sandbox.Job {
		return sandbox.Job{Style: sandbox.IO, Code: code, Inputs: inputs, Limits: lim,
			Check: func(_ int, out []byte) bool { return string(out) == "ok\n" }}
	}
	jobs := []sandbox.Job{
		goodIO(), goodAssert(), // passed
		badAssert(), // failed
		io("print('ok' if input() == 'a' else 'no')", "a", "b"), // failed (partly)
		io("while True:\n    print('x' * 100)\n", ""),           // output: counted as failed
		io("import time\nprint('ok')\ntime.sleep(5)\n", ""),     // timeout
		io("x = bytearray(1 << 30)\n", "", ""),                  // memory
		io("import os\nos.abort()\n", ""),                       // crashed
	}
	for _, j := range jobs {
		run(t, p, j)
	}
	// Broken test code: the row's fault, not the sandbox's (issue 19, item
	// 3: it was counted as sandbox_error, which should stay 0).
	broken := goodAssert()
	broken.Test = "def check(candidate)\n"
	if _, err := p.Run(context.Background(), broken); err == nil {
		t.Fatal("broken test code: no error")
	}
	// A run its caller gives up on is canceled, not the sandbox's error:
	// counted as sandbox_error, /run_code's clients that time out looked
	// like sandbox failures.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	sleeper := io("import time\ntime.sleep(5)\n", "")
	sleeper.Limits.WallSeconds = 10
	if _, err := p.Run(ctx, sleeper); err == nil {
		t.Fatal("a run whose context ended: no error")
	}
	// An invalid job never reaches a slot and is not counted.
	if _, err := p.Run(context.Background(), sandbox.Job{Style: "nope"}); err == nil {
		t.Fatal("invalid job: no error")
	}

	const want = `
# HELP rewardd_sandbox_executions_total Submissions run by code_exec, by result: passed (every test), failed, timeout, memory, crashed (the worst of its tests), test_error (the row's own tests are broken: the dataset's fault), canceled (the caller gave up before the verdict) or sandbox_error (the sandbox could not run it).
# TYPE rewardd_sandbox_executions_total counter
rewardd_sandbox_executions_total{result="canceled"} 1
rewardd_sandbox_executions_total{result="crashed"} 1
rewardd_sandbox_executions_total{result="failed"} 3
rewardd_sandbox_executions_total{result="memory"} 1
rewardd_sandbox_executions_total{result="passed"} 2
rewardd_sandbox_executions_total{result="sandbox_error"} 0
rewardd_sandbox_executions_total{result="test_error"} 1
rewardd_sandbox_executions_total{result="timeout"} 1
# HELP rewardd_sandbox_restarts_total Fork servers replaced after they died or stopped answering.
# TYPE rewardd_sandbox_restarts_total counter
rewardd_sandbox_restarts_total 0
# HELP rewardd_sandbox_slots Sandbox slots (fork servers) in the pool.
# TYPE rewardd_sandbox_slots gauge
rewardd_sandbox_slots 1
# HELP rewardd_sandbox_slots_busy Sandbox slots running a submission now.
# TYPE rewardd_sandbox_slots_busy gauge
rewardd_sandbox_slots_busy 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "rewardd_sandbox_executions_total",
		"rewardd_sandbox_restarts_total", "rewardd_sandbox_slots", "rewardd_sandbox_slots_busy"); err != nil {
		t.Error(err)
	}
	checkRegistered(t, reg, 10)
}

// checkRegistered: reg has every sandbox metric, passing promlint, and the
// duration histogram holds the given number of samples, their sum at least
// the half-second timeout of TestMetrics.
func checkRegistered(t *testing.T, reg *prometheus.Registry, samples uint64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		seen[mf.GetName()] = true
		if mf.GetName() == "rewardd_sandbox_execution_duration_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != samples {
				t.Errorf("duration samples = %d, want %d", h.GetSampleCount(), samples)
			}
			if s := h.GetSampleSum(); s < 0.5 || s > 30 {
				t.Errorf("duration sum = %v s: the timeout alone took 0.5 s", s)
			}
		}
	}
	for _, name := range []string{"rewardd_sandbox_executions_total", "rewardd_sandbox_execution_duration_seconds",
		"rewardd_sandbox_slots", "rewardd_sandbox_slots_busy", "rewardd_sandbox_restarts_total"} {
		if !seen[name] {
			t.Errorf("metric %s not registered", name)
		}
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range problems {
		t.Errorf("promlint: %s: %s", pr.Metric, pr.Text)
	}
}

// TestStartFailsClosed: a pool that cannot start its sandbox says why and
// leaves nothing running.
func TestStartFailsClosed(t *testing.T) {
	// A real Python where the sandbox may not execute anything.
	outside := hostPath(t, "/var/tmp", "python3")
	py, err := os.ReadFile("/usr/bin/python3")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, py, 0o755); err != nil {
		t.Fatal(err)
	}
	before := children()
	for _, c := range []struct {
		name string
		cfg  sandbox.Config
		want string // in the error
	}{
		{"no such python", sandbox.Config{Slots: 2, Python: "/nonexistent/python"}, "/nonexistent/python"},
		{"not python", sandbox.Config{Slots: 1, Python: "/bin/true"}, "fork server"},
		{"python outside what the sandbox may run", sandbox.Config{Slots: 1, Python: outside}, outside},
		{"no such helper", sandbox.Config{Slots: 1, Helper: []string{"/nonexistent/helper"}}, "/nonexistent/helper"},
		{"a helper that is not one", sandbox.Config{Slots: 1, Helper: []string{"/bin/sleep", "0.1"}}, "fork server"},
		{"too many slots", sandbox.Config{Slots: 101}, "slots"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			p, err := sandbox.Start(ctx, c.cfg)
			if err == nil {
				p.Close()
				t.Fatalf("Start succeeded")
			}
			t.Logf("Start: %v", err)
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Start: %v; want the error to name %q", err, c.want)
			}
			if now := children(); len(now) > len(before) {
				t.Errorf("child processes left: %v (before: %v)", now, before)
			}
			assertNoSlotProcs(t)
		})
	}
}

// TestClose: Close stops every fork server; Run after Close fails at once.
func TestClose(t *testing.T) {
	p, err := sandbox.Start(context.Background(), sandbox.Config{Slots: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if n, r := len(forkServers()), len(runners()); n != 2 || r != 2 {
		t.Errorf("%d fork servers and %d runners for 2 slots", n, r)
	}
	if p.Slots() != 2 || p.Unsafe() {
		t.Errorf("Slots() = %d, Unsafe() = %v", p.Slots(), p.Unsafe())
	}
	assertServes(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n := append(forkServers(), runners()...); len(n) != 0 {
		t.Errorf("fork servers or runners left after Close: %v", n)
	}
	assertNoSlotProcs(t)
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// Waiting for a slot, it would end with the context's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err = p.Run(ctx, goodIO()); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run after Close: %v, want an error at once", err)
	}
}

// TestConcurrentRuns: many goroutines share a two-slot pool; every
// submission gets its own verdicts.
func TestConcurrentRuns(t *testing.T) {
	p := startPool(t, sandbox.Config{Slots: 2})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			want := fmt.Sprint(i * i)
			res, err := p.Run(context.Background(), sandbox.Job{
				Style: sandbox.IO, Code: "n = int(input())\nprint(n * n)\n", Inputs: []string{fmt.Sprint(i), fmt.Sprint(i)},
				Limits: sandbox.DefaultLimits(),
				Check:  func(_ int, out []byte) bool { return strings.TrimSpace(string(out)) == want },
			})
			if err != nil {
				t.Errorf("run %d: %v", i, err)
				return
			}
			if res.Passed() != 2 {
				t.Errorf("run %d: %+v", i, res.Tests)
			}
		})
	}
	wg.Wait()
}

// awaitProgram waits, polling for at most 10 s, until a program of a pool
// of this process runs: a process of one of the pools' uids.
func awaitProgram(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(slotProcs()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no program of the pool ran within 10 s")
		}
	}
}

// cpuTicks is the user+system CPU time of pid, in clock ticks (1/100 s).
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: state is
	// the 1st, utime the 12th, stime the 13th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// cpuTime is the machine's CPU time so far, in clock ticks (/proc/stat's
// cpu line): busy, and in all (busy, idle and waiting for I/O).
func cpuTime(t *testing.T) (busy, total int64) {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		t.Fatalf("/proc/stat begins %q", line)
	}
	// user nice system idle iowait irq softirq steal (guest time is in
	// user's already).
	for i, s := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("/proc/stat: %q: %v", line, err)
		}
		total += n
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return busy, total
}
