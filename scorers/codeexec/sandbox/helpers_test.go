package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// uidBase is the first uid the pools of this test process run programs as
// (pool.go: 1_000_000 + (pid % 10_000) * 100 + slot).
var uidBase = 1_000_000 + (os.Getpid()%10_000)*100

// hostile are the limits most hostile programs run under: small, so that
// the ones that must hit a limit hit it fast.
var hostile = sandbox.Limits{CPUSeconds: 1, WallSeconds: 2, MemoryMB: 128, OutputKB: 64, Processes: 8}

// forkServerMarker is in the first line of harness.py, so in the command
// line of every fork server.
const forkServerMarker = "rewardd code_exec fork server"

// startPool starts a pool for the test; a config that names no languages
// gets python only (the other languages' probes, compiles among them, cost
// seconds that tests of python need not pay).
func startPool(t *testing.T, cfg sandbox.Config) *sandbox.Pool {
	t.Helper()
	if cfg.Languages == nil {
		cfg.Languages = []string{"python"}
	}
	// A bound on a hang, not a timing: a fresh cache directory means
	// precompiling C++ headers, minutes of CPU on a loaded 2-core machine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := sandbox.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("sandbox.Start: %v", err)
	}
	t.Cleanup(func() {
		p.Close()
		// Every program of the pool is gone once Close returns.
		if procs := waitNoSlotProcs(2 * time.Second); len(procs) > 0 {
			t.Errorf("processes of the pool's uids left after Close: %v", procs)
		}
	})
	return p
}

func run(t *testing.T, p *sandbox.Pool, job sandbox.Job) sandbox.Result {
	t.Helper()
	// A guard against a hang, not a limit: the sandbox bounds a job in
	// slot time, which on a loaded machine is many times the wall clock's
	// (under stress-ng --cpu 8 --vm 2, java_output's 10 s of CPU took more
	// than 60 s).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := p.Run(ctx, job)
	if err != nil {
		t.Fatalf("Run: %v (a program's failure must be a Result, not an error)", err)
	}
	want := 1
	if job.Style == sandbox.IO {
		want = len(job.Inputs)
	}
	if len(res.Tests) != want {
		t.Fatalf("Run gave %d test results, want %d", len(res.Tests), want)
	}
	return res
}

// probe runs code once in io style with empty stdin and returns the verdict
// and what it printed. Its Check never passes: a probe program reports what
// it could do, and the caller decides from that.
func probe(t *testing.T, p *sandbox.Pool, code string, lim sandbox.Limits) (sandbox.TestResult, string) {
	t.Helper()
	job := probeJob(code, lim)
	job.KeepOutput = true
	tr := run(t, p, job).Tests[0]
	return tr, string(tr.Stdout)
}

// probeJob is the job of probe: code once, on empty stdin, under lim, with
// a Check that never passes.
func probeJob(code string, lim sandbox.Limits) sandbox.Job {
	return sandbox.Job{
		Style: sandbox.IO, Code: code, Inputs: []string{""}, Limits: lim,
		Check: func(int, []byte) bool { return false },
	}
}

// probeRanToEnd runs a probe program that prints END last and fails the
// test unless the program ran to its end (so every attempt it makes was
// made and reported).
func probeRanToEnd(t *testing.T, p *sandbox.Pool, code string, lim sandbox.Limits) string {
	t.Helper()
	// A probe that must finish gets wall time to spare: on a loaded
	// machine a 2 s wall limit ended one before its first line.
	lim.WallSeconds = max(lim.WallSeconds, 10)
	tr, out := probe(t, p, code+"\nprint('END', flush=True)\n", lim)
	if tr.Status != sandbox.Failed || tr.Detail != "wrong output" || !strings.Contains(out, "\nEND\n") && !strings.HasPrefix(out, "END\n") {
		t.Fatalf("probe did not run to its end: %s (%s), output:\n%s", tr.Status, tr.Detail, out)
	}
	return out
}

// lines returns the lines of out that start with prefix.
func lines(out, prefix string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			got = append(got, l)
		}
	}
	return got
}

func sub(code string, kv ...string) string { return strings.NewReplacer(kv...).Replace(code) }

// goodIO and goodAssert are known-good submissions: a slot that scores them
// right still works.
func goodIO() sandbox.Job {
	want := []string{"42", "-8", "0"}
	return sandbox.Job{
		Style: sandbox.IO, Code: "n = int(input())\nprint(n * 2)\n", Inputs: []string{"21\n", "-4\n", "0\n"},
		Limits: sandbox.DefaultLimits(),
		Check:  func(k int, out []byte) bool { return strings.TrimSpace(string(out)) == want[k] },
	}
}

func goodAssert() sandbox.Job {
	return sandbox.Job{
		Style: sandbox.Assert, EntryPoint: "add", Limits: sandbox.DefaultLimits(),
		Code: "def add(a, b):\n    return a + b\n",
		Test: "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n",
	}
}

// badAssert is a known-wrong submission: a slot that passes it is broken.
func badAssert() sandbox.Job {
	j := goodAssert()
	j.Code = "def add(a, b):\n    return a - b\n"
	return j
}

// assertServes checks that p still scores known-good and known-bad
// submissions right.
func assertServes(t *testing.T, p *sandbox.Pool) {
	t.Helper()
	res := run(t, p, goodIO())
	for k, tr := range res.Tests {
		if tr.Status != sandbox.Passed {
			t.Errorf("known-good io submission, test %d: %s (%s)", k, tr.Status, tr.Detail)
		}
	}
	if tr := run(t, p, goodAssert()).Tests[0]; tr.Status != sandbox.Passed {
		t.Errorf("known-good assert submission: %s (%s)", tr.Status, tr.Detail)
	}
	if tr := run(t, p, badAssert()).Tests[0]; tr.Status != sandbox.Failed {
		t.Errorf("known-wrong assert submission: %s (%s), want failed", tr.Status, tr.Detail)
	}
}

// procInfo is one process seen in /proc.
type procInfo struct {
	pid, ppid, uid int
	name           string
	threads        int
	rssKB          int
	anonKB         int // the resident set's anonymous part: the process's own memory, not the libraries it maps
	cmdline        string
}

func (p procInfo) String() string {
	return fmt.Sprintf("pid %d (%s) uid %d ppid %d", p.pid, p.name, p.uid, p.ppid)
}

// processes lists the host's processes.
func processes() []procInfo {
	entries, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue // gone meanwhile
		}
		pi := procInfo{pid: pid, uid: -1}
		for _, l := range strings.Split(string(status), "\n") {
			k, v, _ := strings.Cut(l, ":")
			f := strings.Fields(v)
			switch k {
			case "Name":
				pi.name = strings.TrimSpace(v)
			case "PPid":
				pi.ppid, _ = strconv.Atoi(strings.TrimSpace(v))
			case "Threads":
				pi.threads, _ = strconv.Atoi(strings.TrimSpace(v))
			case "VmRSS":
				if len(f) > 0 {
					pi.rssKB, _ = strconv.Atoi(f[0])
				}
			case "RssAnon":
				if len(f) > 0 {
					pi.anonKB, _ = strconv.Atoi(f[0])
				}
			case "Uid":
				// real, effective, saved, fs: a process counts as the
				// pool's when any of them is one of the pool's uids.
				for _, s := range f {
					if u, err := strconv.Atoi(s); err == nil && u >= uidBase && u < uidBase+100 {
						pi.uid = u
					}
				}
				if pi.uid < 0 && len(f) > 0 {
					pi.uid, _ = strconv.Atoi(f[0])
				}
			}
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		pi.cmdline = string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		out = append(out, pi)
	}
	return out
}

// slotProcs lists the processes running as one of this test process's pool
// uids: programs, or whatever they started.
func slotProcs() []procInfo {
	var out []procInfo
	for _, p := range processes() {
		if p.uid >= uidBase && p.uid < uidBase+100 {
			out = append(out, p)
		}
	}
	return out
}

// waitNoSlotProcs waits up to d for slotProcs to be empty and returns what
// is left.
func waitNoSlotProcs(d time.Duration) []procInfo {
	deadline := time.Now().Add(d)
	for {
		left := slotProcs()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func assertNoSlotProcs(t *testing.T) {
	t.Helper()
	if left := waitNoSlotProcs(2 * time.Second); len(left) > 0 {
		t.Errorf("processes of the pool's uids still running: %v", left)
	}
}

// forkServers lists this test process's fork servers (the zygotes, which
// fork the programs): its children running harness.py as zygote.
func forkServers() []int { return servers("zygote") }

// runners lists this test process's runners: its children running
// harness.py as runner, which run the assert-style tests.
func runners() []int { return servers("runner") }

// executors lists this test process's executors: its children running
// as the sandbox helper in the executor role (executor.go).
func executors() []int {
	var out []int
	for _, p := range processes() {
		if p.ppid == os.Getpid() && strings.Contains(p.cmdline, sandbox.HelperArg) && slices.Contains(strings.Fields(p.cmdline), "executor") {
			out = append(out, p.pid)
		}
	}
	return out
}

// servers lists this test process's children running harness.py in role.
func servers(role string) []int {
	var out []int
	for _, p := range processes() {
		if p.ppid == os.Getpid() && strings.Contains(p.cmdline, forkServerMarker) && strings.HasSuffix(strings.TrimSpace(p.cmdline), " "+role) {
			out = append(out, p.pid)
		}
	}
	return out
}

// children lists this test process's child processes.
func children() []procInfo {
	var out []procInfo
	for _, p := range processes() {
		if p.ppid == os.Getpid() {
			out = append(out, p)
		}
	}
	return out
}

// watchSlot samples, until stop is called, the processes running as uid,
// and returns the most tasks (threads of all of them) seen at once and the
// largest anonymous resident set of one of them (its own memory: the
// shared libraries it maps are charged to whoever read them first). The test stops it at its end at the
// latest.
func watchSlot(t *testing.T, uid int) (stop func() (tasks, rssKB int)) {
	var peakTasks, peakRSS atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			n := 0
			for _, p := range processes() {
				if p.uid == uid {
					n += max(p.threads, 1)
					if int64(p.anonKB) > peakRSS.Load() {
						peakRSS.Store(int64(p.anonKB))
					}
				}
			}
			if int64(n) > peakTasks.Load() {
				peakTasks.Store(int64(n))
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	stop = func() (int, int) {
		once.Do(func() { close(done) })
		<-finished
		return int(peakTasks.Load()), int(peakRSS.Load())
	}
	t.Cleanup(func() { stop() })
	return stop
}

// hostPath is a unique host path a program must not be able to create.
func hostPath(t *testing.T, dir, what string) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("rewardd-sandbox-test-%d-%s-%d", os.Getpid(), what, time.Now().UnixNano()))
	t.Cleanup(func() { os.RemoveAll(p) })
	return p
}

func assertAbsent(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("CONTAINMENT: the program created %s on the host", p)
		} else if !os.IsNotExist(err) {
			t.Errorf("stat %s: %v", p, err)
		}
	}
}
