package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestHostile runs every hostile program RELIABILITY.md lists ("Code
// execution") in a one-slot pool.
// Each must end as a legitimate failure of the program (never an error from
// Run, never Passed), leave the host as it was, and leave the slot scoring
// known-good and known-bad submissions right. After the whole suite no
// process of the pool's uids is left and neither the fork server nor the
// runner was replaced: nothing a program did reached them.
func TestHostile(t *testing.T) {
	h := newHostileSlot(t, startPool(t, sandbox.Config{Slots: 1}))
	first := h.servers
	runHostile(t, h, []hostileFamily[*hostileSlot]{
		{"fork bomb", hostileForkBomb},
		{"thread bomb", hostileThreadBomb},
		{"busy loop hits the CPU limit", hostileBusyLoop},
		{"long sleep hits the wall limit", hostileLongSleep},
		{"huge allocation", hostileHugeAllocation},
		{"slow memory creep", hostileMemoryCreep},
		{"endless output", hostileEndlessOutput},
		{"output into every descriptor", hostileOutputEveryFD},
		{"sockets", hostileSockets},
		{"writes outside the work dir", hostileWrites},
		{"reads of host files and proc", hostileReads},
		{"killing the parent", hostileKillParent},
		{"killing everything", hostileKillEverything},
		{"ptrace", hostilePtrace},
		{"unshare", hostileUnshare},
		{"raising rlimits", hostileRlimits},
		{"double-forked daemon", hostileDaemon},
		{"setuid", hostileSetuid},
		{"early exit in assert style", hostileEarlyExit},
		{"closing stdout", hostileCloseStdout},
		{"closing every descriptor then sleeping", hostileCloseAllThenSleep},
		{"invalid UTF-8 output", hostileInvalidUTF8},
		{"reward hacks", rewardHacks},
	})

	// The hostile suite is over: nothing of it is left, and the fork server
	// is the one the pool started with (nothing killed or replaced it).
	assertNoSlotProcs(t)
	if now := slotServers(); !slices.Equal(now, first) {
		t.Errorf("CONTAINMENT: fork server and runner were %v, now %v: a program reached them", first, now)
	}
	assertServes(t, h.p)
}

// hostileFamily is a family of hostile programs, run against h.
type hostileFamily[H any] struct {
	name string
	run  func(t *testing.T, h H)
}

// runHostile runs each family in a subtest of its name that ends with
// h.after.
func runHostile[H interface{ after(*testing.T) }](t *testing.T, h H, families []hostileFamily[H]) {
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			f.run(t, h)
			h.after(t)
		})
	}
}

// hostileSlot is a one-slot pool that runs hostile programs, with the
// slot's fork server (zygote) and runner as the last program left them:
// nothing a program does may reach either.
type hostileSlot struct {
	p       *sandbox.Pool
	servers []int
}

func newHostileSlot(t *testing.T, p *sandbox.Pool) *hostileSlot {
	t.Helper()
	h := &hostileSlot{p: p, servers: slotServers()}
	if len(forkServers()) != 1 || len(runners()) != 1 || len(executors()) > 1 {
		t.Fatalf("servers of this process: %v, want a fork server, a runner and at most one executor", h.servers)
	}
	return h
}

// slotServers lists this test process's fork servers, runners and
// executors.
func slotServers() []int { return append(append(forkServers(), runners()...), executors()...) }

// after is what every hostile program ends with: nothing of the program
// left, the fork server and runner the ones from before (nothing killed or
// crashed them), the slot scoring right.
func (h *hostileSlot) after(t *testing.T) {
	t.Helper()
	assertNoSlotProcs(t)
	if now := slotServers(); !slices.Equal(now, h.servers) {
		t.Errorf("CONTAINMENT: the slot's servers were %v, now %v: the program reached them", h.servers, now)
		h.servers = now
	}
	assertServes(t, h.p)
}

// hostileForkBomb: a Python fork bomb: it times out, never past the slot's
// process limit.
func hostileForkBomb(t *testing.T, h *hostileSlot) {
	// Once, with other race-detector test binaries saturating both
	// cores, the watcher saw no fork at all (peak 1 task; cause not
	// found, perhaps the program never reached its loop within its
	// 2 s). Such a run proves nothing either way, so it is tried
	// again, at most three times; the containment checks hold on
	// every run.
	for attempt := 1; ; attempt++ {
		stop := watchSlot(t, uidBase)
		res := run(t, h.p, probeJob("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", hostile))
		tr := res.Tests[0]
		peak, _ := stop()
		oneOfStatus(t, tr, sandbox.Timeout)
		if peak > hostile.Processes {
			t.Errorf("CONTAINMENT: %d tasks of the slot's uid at once, limit %d", peak, hostile.Processes)
		}
		// Its processes compete for the slot's CPU with one another: its
		// slot time stretches only until the slot used its CPU limit.
		if res.SlotTime > time.Duration(hostile.WallSeconds+hostile.CPUSeconds+1)*time.Second {
			t.Errorf("took %v of slot time with a wall limit of %gs", res.SlotTime, hostile.WallSeconds)
		}
		if peak >= 2 {
			return // what it left is checked by TestHostile, with h.after
		}
		h.after(t)
		if attempt == 3 {
			t.Fatalf("the fork bomb never forked in %d runs (peak %d tasks): the test does not test anything", attempt, peak)
		}
		t.Logf("run %d: the fork bomb never forked (peak %d tasks, %s); again", attempt, peak, tr.Status)
	}
}

// hostileThreadBomb: threads without end: never past the slot's process
// limit.
func hostileThreadBomb(t *testing.T, h *hostileSlot) {
	stop := watchSlot(t, uidBase)
	tr, _ := probe(t, h.p, `import threading, time
def sleeper():
    time.sleep(100)
while True:
    try:
        threading.Thread(target=sleeper, daemon=True).start()
    except Exception:
        pass
`, hostile)
	peak, _ := stop()
	oneOfStatus(t, tr, sandbox.Timeout, sandbox.Memory)
	if peak > hostile.Processes {
		t.Errorf("CONTAINMENT: %d tasks of the slot's uid at once, limit %d", peak, hostile.Processes)
	}
	if peak < 2 {
		t.Errorf("the thread bomb never started a thread (peak %d tasks)", peak)
	}
}

// hostileBusyLoop: a busy loop is stopped by its CPU limit, long before its
// wall limit: once it has used its second of CPU time (the program's own,
// however long the machine's load stretched it), and within 10 s of slot
// time.
func hostileBusyLoop(t *testing.T, h *hostileSlot) {
	res := timesOut(t, h, "while True:\n    pass\n", 20, 10*time.Second, "the 1 s CPU limit, not the 20 s wall limit")
	if cpu := res.Tests[0].CPU; cpu < 900*time.Millisecond {
		t.Errorf("stopped after %v of CPU time: the 1 s CPU limit should stop it", cpu)
	}
}

// hostileLongSleep: a program that sleeps is stopped by its wall limit,
// after 0.9 s of slot time at least (slot time is wall time less the
// slot's waits for a CPU: a sleeping program's is its wall time).
func hostileLongSleep(t *testing.T, h *hostileSlot) {
	res := timesOut(t, h, "import time\ntime.sleep(100)\n", 1, 5*time.Second, "the 1 s wall limit")
	if d := res.SlotTime; d < 900*time.Millisecond {
		t.Errorf("took %v of slot time: the 1 s wall limit should stop it", d)
	}
}

// timesOut runs code under the hostile limits with wallSeconds of wall
// time, and checks that it times out no later than most, in slot time: the
// measure of its wall limits, the same at any load. (Slot time is no
// measure of a busy program's CPU time: it is wall time less the time any
// process of the slot's cgroup waited for a CPU.)
func timesOut(t *testing.T, h *hostileSlot, code string, wallSeconds float64, most time.Duration, limit string) sandbox.Result {
	t.Helper()
	lim := hostile
	lim.WallSeconds = wallSeconds
	res := run(t, h.p, probeJob(code, lim))
	oneOfStatus(t, res.Tests[0], sandbox.Timeout)
	if d := res.SlotTime; d > most {
		t.Errorf("took %v of slot time: %s should stop it", d, limit)
	}
	return res
}

// hostileHugeAllocation: one allocation far over the memory limit, in io and
// assert style.
func hostileHugeAllocation(t *testing.T, h *hostileSlot) {
	tr, _ := probe(t, h.p, "x = bytearray(8 << 30)\nprint(len(x))\n", hostile)
	oneOfStatus(t, tr, sandbox.Memory)
	res := run(t, h.p, sandbox.Job{
		Style: sandbox.Assert, EntryPoint: "f", Limits: hostile,
		Code: "x = ' ' * (1 << 36)\ndef f():\n    return 1\n",
		Test: "def check(candidate):\n    assert candidate() == 1\n",
	})
	if tr := res.Tests[0]; tr.Status != sandbox.Memory && !(tr.Status == sandbox.Failed && strings.Contains(tr.Detail, "MemoryError")) {
		t.Errorf("assert style: %s (%s), want memory or failed with MemoryError", tr.Status, tr.Detail)
	}
}

// hostileMemoryCreep: memory that grows a MiB at a time is stopped at the
// limit, never resident past it. It grows over 0.64 s of sleeps at least:
// long enough for a watcher that sweeps /proc on a loaded machine to see
// it several times.
func hostileMemoryCreep(t *testing.T, h *hostileSlot) {
	lim := hostile
	lim.MemoryMB = 64
	stop := watchSlot(t, uidBase)
	tr, _ := probe(t, h.p, `import time
chunks = []
while True:
    chunks.append(bytearray(1 << 20))  # touched: resident, not only reserved
    time.sleep(0.01)
`, lim)
	_, rss := stop()
	oneOfStatus(t, tr, sandbox.Memory)
	if rss > lim.MemoryMB<<10 {
		t.Errorf("CONTAINMENT: a process of the slot's uid was %d KB resident, limit %d MB", rss, lim.MemoryMB)
	}
	if rss < 16<<10 {
		t.Errorf("peak resident set %d KB: the creep was never seen growing", rss)
	}
}

// hostileEndlessOutput: output without end, through print, raw writes and
// stderr, in io and assert style, is cut at the output limit.
func hostileEndlessOutput(t *testing.T, h *hostileSlot) {
	var got int
	res := run(t, h.p, sandbox.Job{
		Style: sandbox.IO, Code: "while True:\n    print('y' * 1000)\n", Inputs: []string{""}, Limits: hostile,
		Check: func(_ int, out []byte) bool { got = len(out); return true },
	})
	oneOfStatus(t, res.Tests[0], sandbox.Output)
	if got > hostile.OutputKB<<10 {
		t.Errorf("CONTAINMENT: Check got %d bytes, output limit %d", got, hostile.OutputKB<<10)
	}
	// Raw writes to the descriptor, and to stderr, are bounded too.
	res = run(t, h.p, sandbox.Job{
		Style: sandbox.IO, Code: "import os\nwhile True:\n    os.write(1, b'z' * 4096)\n", Inputs: []string{""}, Limits: hostile,
		Check: func(_ int, out []byte) bool { got = len(out); return true },
	})
	oneOfStatus(t, res.Tests[0], sandbox.Output)
	if got > hostile.OutputKB<<10 {
		t.Errorf("CONTAINMENT: Check got %d bytes, output limit %d", got, hostile.OutputKB<<10)
	}
	tr, _ := probe(t, h.p, "import sys\nwhile True:\n    sys.stderr.write('e' * 1000)\n", hostile)
	oneOfStatus(t, tr, sandbox.Output, sandbox.Failed)
	res = run(t, h.p, sandbox.Job{
		Style: sandbox.Assert, EntryPoint: "f", Limits: hostile,
		Code: "def f():\n    while True:\n        print('y' * 1000)\n",
		Test: "def check(candidate):\n    candidate()\n",
	})
	oneOfStatus(t, res.Tests[0], sandbox.Output, sandbox.Failed)
}

// hostileOutputEveryFD: 1 MiB into every descriptor the program holds.
func hostileOutputEveryFD(t *testing.T, h *hostileSlot) {
	// 1 MiB into every descriptor it holds, in its first test of 128:
	// the memfds of every test's stdin (sealed), stdout and stderr.
	// Unbounded, they outgrew the slot's cgroup (memory_mb + 192 MiB)
	// and took the fork server with them: an error, where the program
	// must score 0.
	inputs := make([]string, 128)
	for k := range inputs {
		inputs[k] = strconv.Itoa(k)
	}
	lim := sandbox.Limits{CPUSeconds: 2, WallSeconds: 3, MemoryMB: 128, OutputKB: 1024, Processes: 8}
	res := run(t, h.p, sandbox.Job{
		Style: sandbox.IO, Inputs: inputs, Limits: lim, Check: func(int, []byte) bool { return false },
		Code: `import os
block = b"x" * (1 << 20)
for fd in range(1024):
    try:
        os.write(fd, block)
    except OSError:
        pass
`,
	})
	if !res.OverOutput {
		t.Errorf("%d bytes in every memfd, not past the total output (%d bytes counted)", 1<<20, res.Output)
	}
	for k, tr := range res.Tests {
		if tr.Status == sandbox.Passed {
			t.Errorf("test %d passed: %s", k, tr.Detail)
		}
	}
}

// hostileKillParent: signals to pid 1, the parent and their process groups
// never arrive.
func hostileKillParent(t *testing.T, h *hostileSlot) {
	out := probeRanToEnd(t, h.p, `import os, signal
def attempt(name, f):
    try:
        f()
        print("SENT", name, flush=True)
    except Exception as e:
        print("blocked", name, type(e).__name__, flush=True)
attempt("kill(1)", lambda: os.kill(1, signal.SIGKILL))
attempt("kill(ppid)", lambda: os.kill(os.getppid(), signal.SIGKILL))
attempt("kill(1, SIGTERM)", lambda: os.kill(1, signal.SIGTERM))
attempt("kill(-ppid)", lambda: os.kill(-os.getppid(), signal.SIGKILL))
attempt("kill(-1 as pgid 1)", lambda: os.killpg(1, signal.SIGKILL))
attempt("pidfd_send_signal(1)", lambda: signal.pidfd_send_signal(os.pidfd_open(1), signal.SIGKILL))
`, hostile)
	if sent := lines(out, "SENT"); len(sent) > 0 {
		t.Errorf("CONTAINMENT: signals delivered: %v", sent)
	}
	if n := len(lines(out, "blocked")); n != 6 {
		t.Errorf("%d attempts reported, want 6:\n%s", n, out)
	}
	// The program's process group is the fork server's: signalling
	// it may take the program down, never the server or the host.
	for _, code := range []string{
		"import os\nos.killpg(0, 9)\nprint('alive')\n",
		"import os\nos.killpg(os.getpgid(1), 9)\nprint('alive')\n",
		"import os\nos.killpg(os.getpgid(0), 15)\nprint('alive')\n",
	} {
		tr, _ := probe(t, h.p, code, hostile)
		oneOfStatus(t, tr, sandbox.Failed, sandbox.Crashed, sandbox.Timeout)
	}
}

// hostileKillEverything: kill(-1) may take the program's own processes,
// never the fork server or the host.
func hostileKillEverything(t *testing.T, h *hostileSlot) {
	// kill(-1) from the program itself, and from a grandchild in a
	// session of its own: both may take the program's own processes
	// with them, never the fork server or anything on the host.
	for _, code := range []string{
		"import os\nos.kill(-1, 9)\nprint('alive')\n",
		"import os, time\nif os.fork() == 0:\n    os.setsid()\n    os.kill(-1, 9)\n    os._exit(0)\ntime.sleep(0.2)\nos.kill(-1, 9)\nprint('alive')\n",
		"import os, signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL):\n    try:\n        os.kill(-1, s)\n    except OSError:\n        pass\nprint('alive')\n",
	} {
		tr, _ := probe(t, h.p, code, hostile)
		oneOfStatus(t, tr, sandbox.Failed, sandbox.RuntimeError, sandbox.Crashed, sandbox.Timeout)
	}
}

// hostilePtrace: ptrace and process_vm_readv of pid 1 and of the program's
// own child are refused.
func hostilePtrace(t *testing.T, h *hostileSlot) {
	out := probeRanToEnd(t, h.p, `import ctypes, os, time
libc = ctypes.CDLL("libc.so.6", use_errno=True)
PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE = 0, 16, 0x4206
def attempt(name, rc):
    print("ok" if rc != -1 else "blocked", name, rc, os.strerror(ctypes.get_errno()), flush=True)
child = os.fork()
if child == 0:
    time.sleep(5)
    os._exit(0)
attempt("attach(1)", libc.ptrace(PTRACE_ATTACH, 1, 0, 0))
attempt("seize(1)", libc.ptrace(PTRACE_SEIZE, 1, 0, 0))
attempt("attach(own child)", libc.ptrace(PTRACE_ATTACH, child, 0, 0))
attempt("traceme", libc.ptrace(PTRACE_TRACEME, 0, 0, 0))
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(64)
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
remote = iovec(ctypes.addressof(buf), 64)  # mapped in the forked child too
attempt("process_vm_readv(1)", libc.process_vm_readv(1, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
attempt("process_vm_readv(child)", libc.process_vm_readv(child, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
os.kill(child, 9)
os.waitpid(child, 0)
`, hostile)
	if got := lines(out, "ok"); len(got) > 0 {
		t.Errorf("CONTAINMENT: %v", got)
	}
	if n := len(lines(out, "blocked")); n != 6 {
		t.Errorf("%d attempts reported, want 6:\n%s", n, out)
	}
}

// hostileUnshare: new namespaces (unshare, clone, clone3, setns, the unshare
// binary), mount and chroot are refused.
func hostileUnshare(t *testing.T, h *hostileSlot) {
	out := probeRanToEnd(t, h.p, `import ctypes, os, subprocess
libc = ctypes.CDLL("libc.so.6", use_errno=True)
flags = {"user": 0x10000000, "mount": 0x00020000, "net": 0x40000000, "pid": 0x20000000,
         "ipc": 0x08000000, "uts": 0x04000000, "cgroup": 0x02000000, "time": 0x00000080}
def attempt(name, rc):
    print("ok" if rc != -1 else "blocked", name, rc, os.strerror(ctypes.get_errno()), flush=True)
for name, flag in flags.items():
    attempt("unshare(%s)" % name, libc.unshare(flag))
SIGCHLD = 17
for name in ("user", "net", "mount"):
    rc = libc.syscall(56, flags[name] | SIGCHLD, 0, 0, 0, 0)   # raw clone
    if rc == 0:
        os._exit(0)
    if rc > 0:
        os.waitpid(rc, 0)
    attempt("clone(%s)" % name, rc)
args = (ctypes.c_uint64 * 11)(flags["user"], 0, 0, 0, SIGCHLD, 0, 0, 0, 0, 0, 0)
rc = libc.syscall(435, ctypes.byref(args), 88)   # clone3
if rc == 0:
    os._exit(0)
attempt("clone3(user)", rc)
fd = os.open("/dev/null", os.O_RDONLY)
attempt("setns", libc.setns(fd, 0))
attempt("mount", libc.mount(b"none", b"/tmp/work", b"tmpfs", 0, None))
attempt("chroot", libc.chroot(b"/tmp/work"))
r = subprocess.run(["/usr/bin/unshare", "-U", "-r", "/usr/bin/id", "-u"], capture_output=True, timeout=1)
print("ok" if r.returncode == 0 else "blocked", "unshare(1)", r.returncode, r.stdout, r.stderr[:80], flush=True)
`, hostile)
	if got := lines(out, "ok"); len(got) > 0 {
		t.Errorf("CONTAINMENT: %v", got)
	}
	if n := len(lines(out, "blocked")); n != 16 {
		t.Errorf("%d attempts reported, want 16:\n%s", n, out)
	}
}

// hostileRlimits: the program cannot raise its resource limits or pid 1's,
// and runs under the job's.
func hostileRlimits(t *testing.T, h *hostileSlot) {
	out := probeRanToEnd(t, h.p, `import resource
names = ["RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE"]
for name in names:
    r = getattr(resource, name)
    soft, hard = resource.getrlimit(r)
    print("limit", name, soft, hard, flush=True)
    for new in ((hard, hard + 1), (resource.RLIM_INFINITY, resource.RLIM_INFINITY)):
        try:
            resource.setrlimit(r, new)
            print("RAISED", name, new, flush=True)
        except (ValueError, OSError) as e:
            print("blocked", name, type(e).__name__, flush=True)
    try:
        resource.prlimit(1, r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print("RAISED pid1", name, flush=True)
    except (ValueError, OSError) as e:
        print("blocked pid1", name, type(e).__name__, flush=True)
`, hostile)
	if got := lines(out, "RAISED"); len(got) > 0 {
		t.Errorf("CONTAINMENT: %v", got)
	}
	if n := len(lines(out, "blocked")); n != 18 {
		t.Errorf("%d attempts reported, want 18:\n%s", n, out)
	}
	// The limits the program runs under are the job's (the CPU rlimit a
	// backstop a second above the 1 s the zygote ends it at, by its
	// process's clock).
	for name, want := range map[string]string{
		"RLIMIT_CPU":   fmt.Sprintf("%d %d", 2, 3),
		"RLIMIT_AS":    fmt.Sprintf("%d %d", hostile.MemoryMB<<20, hostile.MemoryMB<<20),
		"RLIMIT_NPROC": fmt.Sprintf("%d %d", hostile.Processes, hostile.Processes),
		"RLIMIT_FSIZE": fmt.Sprintf("%d %d", hostile.OutputKB<<10, hostile.OutputKB<<10),
		"RLIMIT_CORE":  "0 0",
	} {
		if !strings.Contains(out, "limit "+name+" "+want+"\n") {
			t.Errorf("CONTAINMENT: %s is not %q:\n%s", name, want, out)
		}
	}
}

// hostileDaemon: a daemon in a session of its own does not outlive the
// submission.
func hostileDaemon(t *testing.T, h *hostileSlot) {
	markers := []string{
		hostPath(t, "/var/tmp", "daemon"), hostPath(t, "/dev/shm", "daemon"),
		hostPath(t, "/tmp", "daemon"), hostPath(t, t.TempDir(), "daemon"),
	}
	code := sub(`import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in range(3, 1024):
            try:
                os.close(fd)
            except OSError:
                pass
        time.sleep(0.3)   # the submission is over by now
        for p in {{MARKERS}}:
            try:
                with open(p, "w") as f:
                    f.write("daemon was here")
            except OSError:
                pass
        while True:
            time.sleep(0.05)
    os._exit(0)
os.wait()
print("parent done", flush=True)
`, "{{MARKERS}}", pyList(markers))
	tr, out := probe(t, h.p, code, hostile)
	oneOfStatus(t, tr, sandbox.Failed)
	if !strings.Contains(out, "parent done") {
		t.Errorf("the program did not run to its end: %s", out)
	}
	// The daemon must be gone when Run returns, not merely later.
	if left := slotProcs(); len(left) > 0 {
		t.Errorf("CONTAINMENT: processes of the slot's uid outlive the submission: %v", left)
	}
	// Only a process of the slot's uid could write the markers (no program
	// can change its uid): once none is left, their absence is final. None
	// is left already, unless the check above failed; a daemon that lives
	// on writes them 0.3 s into its life, within this wait.
	waitNoSlotProcs(2 * time.Second)
	assertAbsent(t, markers...)
}

// hostileSetuid: the program cannot become root, by system calls or setuid
// binaries.
func hostileSetuid(t *testing.T, h *hostileSlot) {
	out := probeRanToEnd(t, h.p, `import ctypes, os, subprocess
libc = ctypes.CDLL("libc.so.6", use_errno=True)
def attempt(name, f):
    try:
        f()
        print("ROOT", name, flush=True)
    except OSError as e:
        print("blocked", name, type(e).__name__, flush=True)
attempt("setuid(0)", lambda: os.setuid(0))
attempt("seteuid(0)", lambda: os.seteuid(0))
attempt("setresuid(0)", lambda: os.setresuid(0, 0, 0))
attempt("setgid(0)", lambda: os.setgid(0))
attempt("setgroups([0])", lambda: os.setgroups([0]))
print("no_new_privs", libc.prctl(39, 0, 0, 0, 0), flush=True)
for argv in (["/usr/bin/su", "-c", "id -u", "root"], ["/usr/bin/passwd", "-S", "root"],
             ["/usr/bin/newgrp", "root"], ["/usr/bin/mount", "-t", "tmpfs", "x", "/tmp/work"]):
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=1)
        print("ran", argv[0], r.returncode, flush=True)
    except Exception as e:
        print("ran", argv[0], type(e).__name__, flush=True)
print("ids", os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups(), flush=True)
`, hostile)
	if got := lines(out, "ROOT"); len(got) > 0 {
		t.Errorf("CONTAINMENT: %v", got)
	}
	if n := len(lines(out, "blocked")); n != 5 {
		t.Errorf("%d attempts reported, want 5:\n%s", n, out)
	}
	// no_new_privs: the kernel ignores setuid bits on exec.
	if !strings.Contains(out, "no_new_privs 1\n") {
		t.Errorf("CONTAINMENT: no_new_privs is not set:\n%s", out)
	}
	if n := len(lines(out, "ran ")); n != 4 {
		t.Errorf("%d setuid binaries tried, want 4:\n%s", n, out)
	}
	want := fmt.Sprintf("ids %d %d %d %d []", uidBase, uidBase, uidBase, uidBase)
	if !strings.Contains(out, want+"\n") {
		t.Errorf("CONTAINMENT: ids after running setuid binaries are not %q:\n%s", want, out)
	}
}

// hostileEarlyExit: an assert-style program that exits before or during its
// tests fails them.
func hostileEarlyExit(t *testing.T, h *hostileSlot) {
	test := "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 3\n"
	for _, c := range []struct {
		name, code string
		want       []sandbox.Status
	}{
		{"sys.exit(0)", "import sys\nsys.exit(0)\ndef f(x):\n    return x\n", []sandbox.Status{sandbox.Failed}},
		{"os._exit(0)", "import os\nos._exit(0)\ndef f(x):\n    return x\n", []sandbox.Status{sandbox.Crashed, sandbox.Failed}},
		{"raise SystemExit", "def f(x):\n    raise SystemExit(0)\n", []sandbox.Status{sandbox.Failed}},
		{"os._exit in candidate", "import os\ndef f(x):\n    os._exit(0)\n", []sandbox.Status{sandbox.Crashed, sandbox.Failed}},
		{"os._exit in a thread", "import os, threading, time\nthreading.Thread(target=lambda: os._exit(0)).start()\ntime.sleep(0.5)\ndef f(x):\n    return x\n", []sandbox.Status{sandbox.Crashed, sandbox.Failed}},
		{"kill self", "import os\ndef f(x):\n    os.kill(os.getpid(), 15)\n", []sandbox.Status{sandbox.Crashed, sandbox.Failed}},
		{"atexit", "import atexit, os\natexit.register(lambda: os._exit(0))\ndef f(x):\n    return x\n", []sandbox.Status{sandbox.Failed}},
		{"KeyboardInterrupt", "def f(x):\n    raise KeyboardInterrupt\n", []sandbox.Status{sandbox.Failed}},
	} {
		res := run(t, h.p, sandbox.Job{Style: sandbox.Assert, Code: c.code, Test: test, EntryPoint: "f", Limits: hostile})
		if tr := res.Tests[0]; !slices.Contains(c.want, tr.Status) {
			t.Errorf("%s: %s (%s), want one of %v", c.name, tr.Status, tr.Detail, c.want)
		}
	}
}

// hostileCloseStdout: a test that closes its stdout leaves the next test of
// the run its own.
func hostileCloseStdout(t *testing.T, h *hostileSlot) {
	for _, code := range []string{
		"import os\nos.close(1)\nprint(2)\n",
		"import sys\nsys.stdout.close()\nprint(2)\n",
		"import os, sys\nprint(2, flush=True)\nsys.stdout.close()\nos.close(0)\nos.close(1)\nos.close(2)\n",
		"import os\nos.closerange(0, 1024)\n",
	} {
		// Test 0 closes stdout; test 1, in the same run, must still
		// have its own.
		full := "import sys\nif sys.stdin.read().strip() == 'close':\n" + indent(code) + "else:\n    print(2)\n"
		res := run(t, h.p, sandbox.Job{
			Style: sandbox.IO, Code: full, Inputs: []string{"close", "keep"}, Limits: hostile,
			Check: func(_ int, out []byte) bool { return string(out) == "2\n" },
		})
		if s := res.Tests[1].Status; s != sandbox.Passed {
			t.Errorf("%q: the test after the one that closed stdout: %s (%s)", code, s, res.Tests[1].Detail)
		}
		if s := res.Tests[0].Status; s == sandbox.Passed && !strings.Contains(code, "flush=True") {
			t.Errorf("%q: passed without printing", code)
		}
	}
}

// hostileCloseAllThenSleep: a program that closes the harness's pipes and
// sleeps does not hold the slot past its wall limit.
func hostileCloseAllThenSleep(t *testing.T, h *hostileSlot) {
	// The harness's pipes close with the rest; the program lives on.
	// It must not hold the slot past the wall limit.
	lim := hostile
	lim.WallSeconds = 1
	for _, style := range []sandbox.Style{sandbox.IO, sandbox.Assert} {
		job := sandbox.Job{
			Style: style, Limits: lim, Code: "import os, time\nos.closerange(0, 1 << 16)\ntime.sleep(100)\ndef f():\n    return 1\n",
			Inputs: []string{""}, Check: func(int, []byte) bool { return true },
			Test: "def check(candidate):\n    assert candidate() == 1\n", EntryPoint: "f",
		}
		if style == sandbox.Assert {
			job.Inputs, job.Check = nil, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := h.p.Run(ctx, job)
		cancel()
		if err != nil {
			t.Errorf("%s: Run: %v (a program's failure must be a Result)", style, err)
			continue
		}
		if style == sandbox.IO {
			oneOfStatus(t, res.Tests[0], sandbox.Timeout)
		} else {
			// The tests run in the server and talk to the program over
			// a pipe it just closed: failed at once, no need to wait.
			oneOfStatus(t, res.Tests[0], sandbox.Failed)
		}
		if d := res.SlotTime; d > 5*time.Second {
			t.Errorf("%s: took %v of slot time with a 1 s wall limit", style, d)
		}
	}
}

// hostileInvalidUTF8: output that is not UTF-8 reaches Check as the raw
// bytes, and is no sandbox error on stderr either.
func hostileInvalidUTF8(t *testing.T, h *hostileSlot) {
	want := []byte("\xff\xfe\x80 not utf-8 \xc3\x28\n\xed\xa0\x80\n")
	var got []byte
	res := run(t, h.p, sandbox.Job{
		Style: sandbox.IO, Inputs: []string{""}, Limits: hostile,
		Code:  "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\x80 not utf-8 \\xc3\\x28\\n')\nsys.stdout.flush()\nprint('\\udced\\udca0\\udc80')\n",
		Check: func(_ int, out []byte) bool { got = append([]byte(nil), out...); return bytes.Equal(out, want) },
	})
	if tr := res.Tests[0]; tr.Status != sandbox.Passed {
		t.Errorf("%s (%s): Check got %q, want the raw bytes %q", tr.Status, tr.Detail, got, want)
	}
	// Invalid UTF-8 in an exception message and on stderr is no
	// sandbox error either.
	tr, _ := probe(t, h.p, "import sys\nsys.stderr.buffer.write(b'\\xff\\xfe')\nraise ValueError('\\udcff')\n", hostile)
	oneOfStatus(t, tr, sandbox.RuntimeError)
}

// hostileSockets: the program reaches no listener of the host, over TCP
// (v4 and v6), UDP, or unix sockets on disk and abstract, and may open no
// vsock, netlink, packet or raw socket.
func hostileSockets(t *testing.T, h *hostileSlot) {
	l := listenOnHost(t)
	out := probeRanToEnd(t, h.p, l.program(), hostile)
	if got := lines(out, "ESCAPED"); len(got) > 0 {
		t.Errorf("CONTAINMENT: %v", got)
	}
	if n := len(lines(out, "blocked")); n != 13 {
		t.Errorf("%d attempts reported, want 13:\n%s", n, out)
	}
	// The program has ended, so a connection it made would be waiting in
	// the backlog already.
	l.assertNothingArrived(t)
}

// hostListeners are the host's listeners a program must not reach, open
// until the test ends.
type hostListeners struct {
	tcp4      net.Listener
	tcp6      net.Listener // nil where there is no IPv6 loopback
	port6     int          // 0 where there is no IPv6 loopback: a closed port
	udp       net.PacketConn
	unixPaths []string
	unix      []*net.UnixListener
	abstract  string // the abstract unix socket's name, without the @
	abstractL *net.UnixListener
}

// listenOnHost opens TCP listeners on 127.0.0.1 and ::1, a UDP one on
// 127.0.0.1, and the unix sockets of listenUnix.
func listenOnHost(t *testing.T) *hostListeners {
	l := &hostListeners{}
	var err error
	if l.tcp4, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.tcp4.Close() })
	if l6, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		l.tcp6, l.port6 = l6, l6.Addr().(*net.TCPAddr).Port
		t.Cleanup(func() { l6.Close() })
	} else {
		t.Logf("no IPv6 loopback here (%v): the ::1 attempts target a closed port", err)
	}
	if l.udp, err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.udp.Close() })
	l.listenUnix(t)
	return l
}

// listenUnix opens unix sockets anyone may connect to: one in t.TempDir()
// (under the host's /tmp) and one in /var/tmp (a directory the sandbox can
// see), and an abstract one.
func (l *hostListeners) listenUnix(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	l.unixPaths = []string{filepath.Join(dir, "s.sock"), hostPath(t, "/var/tmp", "sock")}
	for _, path := range l.unixPaths {
		ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ul.Close() })
		if err := os.Chmod(path, 0o777); err != nil {
			t.Fatal(err)
		}
		l.unix = append(l.unix, ul)
	}
	l.abstract = fmt.Sprintf("rewardd-sandbox-test-%d", os.Getpid())
	al, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + l.abstract, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	l.abstractL = al
}

// program is a probe that tries to reach each listener, and to open the
// sockets no program may have, printing ESCAPED or blocked for each
// attempt (13 of them).
func (l *hostListeners) program() string {
	return sub(`import socket, os
def attempt(name, f):
    try:
        f()
        print("ESCAPED", name, flush=True)
    except Exception as e:
        print("blocked", name, type(e).__name__, flush=True)
def tcp(family, host, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(0.5)
    s.connect((host, port))
    s.sendall(b"escaped")
def udp(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"escaped", (host, port))
def unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.5)
    s.connect(path)
    s.sendall(b"escaped")
attempt("tcp4", lambda: tcp(socket.AF_INET, "127.0.0.1", {{TCP4}}))
attempt("tcp6", lambda: tcp(socket.AF_INET6, "::1", {{TCP6}}))
attempt("udp4", lambda: udp("127.0.0.1", {{UDP4}}))
attempt("udp-bind", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).bind(("127.0.0.1", 0)))
attempt("create_connection", lambda: socket.create_connection(("127.0.0.1", {{TCP4}}), timeout=0.5))
for path in {{UNIX}}:
    attempt("unix " + path, lambda: unix(path))
attempt("unix-abstract", lambda: unix("\0" + {{ABSTRACT}}))
attempt("unix-dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", {{UNIX}}[1]))
attempt("vsock", lambda: socket.socket(40, socket.SOCK_STREAM))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("packet", lambda: socket.socket(17, socket.SOCK_RAW, 0))
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
`, "{{TCP4}}", strconv.Itoa(l.tcp4.Addr().(*net.TCPAddr).Port), "{{TCP6}}", strconv.Itoa(l.port6),
		"{{UDP4}}", strconv.Itoa(l.udp.LocalAddr().(*net.UDPAddr).Port), "{{UNIX}}", pyList(l.unixPaths),
		"{{ABSTRACT}}", strconv.Quote(l.abstract))
}

// assertNothingArrived fails the test for any connection or datagram that
// reached a listener.
func (l *hostListeners) assertNothingArrived(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(100 * time.Millisecond)
	accept := func(name string, l interface {
		Accept() (net.Conn, error)
		SetDeadline(time.Time) error
	}) {
		l.SetDeadline(deadline)
		if c, err := l.Accept(); err == nil {
			t.Errorf("CONTAINMENT: %s listener got a connection from %v", name, c.RemoteAddr())
			c.Close()
		}
	}
	accept("tcp 127.0.0.1", l.tcp4.(*net.TCPListener))
	if l.tcp6 != nil {
		accept("tcp ::1", l.tcp6.(*net.TCPListener))
	}
	for i, ul := range l.unix {
		accept("unix "+l.unixPaths[i], ul)
	}
	accept("unix abstract", l.abstractL)
	l.udp.SetReadDeadline(deadline)
	buf := make([]byte, 64)
	if n, from, err := l.udp.ReadFrom(buf); err == nil {
		t.Errorf("CONTAINMENT: udp listener got %q from %v", buf[:n], from)
	}
}

// hostileWrites: the program writes nothing outside its work dir and its
// private /tmp, directly or through links, and leaves nothing there for
// the next submission.
func hostileWrites(t *testing.T, h *hostileSlot) {
	p := h.p
	targets := []string{
		hostPath(t, "/tmp", "write"), hostPath(t, "/dev/shm", "write"), hostPath(t, "/var/tmp", "write"),
		hostPath(t, t.TempDir(), "write"),
	}
	viaLink := hostPath(t, "/var/tmp", "link")
	dirTarget := hostPath(t, "/var/tmp", "mkdir")
	shmDir := hostPath(t, "/dev/shm", "mkdir")
	// A world-writable host directory: only Landlock stands between the
	// program and it.
	open := hostPath(t, "/var/tmp", "open-dir")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	inOpen := filepath.Join(open, "x")
	code := sub(`import os
def attempt(name, f):
    try:
        f()
        print("wrote", name, flush=True)
    except Exception as e:
        print("denied", name, type(e).__name__, flush=True)
def write(path):
    with open(path, "w") as f:
        f.write("escaped")
for path in {{TARGETS}} + [{{IN_OPEN}}]:
    attempt(path, lambda: write(path))
attempt("mkdir /var/tmp", lambda: os.mkdir({{DIR}}))
attempt("mkdir /dev/shm", lambda: os.mkdir({{SHMDIR}}))
attempt("work file", lambda: write("/tmp/work/ok"))
os.symlink(os.path.dirname({{VIA_LINK}}), "/tmp/work/link")
attempt("via symlink", lambda: write(os.path.join("/tmp/work/link", os.path.basename({{VIA_LINK}}))))
attempt("rename out", lambda: os.rename("/tmp/work/ok", {{VIA_LINK}}))
attempt("hard link out", lambda: os.link("/tmp/work/ok", {{VIA_LINK}}))
attempt("os.open O_CREAT", lambda: os.close(os.open({{VIA_LINK}}, os.O_CREAT | os.O_WRONLY, 0o666)))
`, "{{TARGETS}}", pyList(targets), "{{IN_OPEN}}", strconv.Quote(inOpen), "{{VIA_LINK}}", strconv.Quote(viaLink),
		"{{SHMDIR}}", strconv.Quote(shmDir), "{{DIR}}", strconv.Quote(dirTarget))
	out := probeRanToEnd(t, p, code, hostile)
	assertAbsent(t, append(targets, inOpen, viaLink, dirTarget, shmDir)...)
	// Only the program's own work dir, and the private /tmp around it, take
	// writes; Landlock refuses the rest before any permission check.
	for _, l := range lines(out, "wrote") {
		if l != "wrote work file" && l != "wrote "+targets[0] && l != "wrote "+targets[3] {
			t.Errorf("CONTAINMENT: %s", l)
		}
	}
	if !strings.Contains(out, "wrote work file\n") {
		t.Errorf("the program could not write its own work dir:\n%s", out)
	}
	if n := len(lines(out, "denied")) + len(lines(out, "wrote")); n != 12 {
		t.Errorf("%d attempts reported, want 12:\n%s", n, out)
	}

	hostileLeftovers(t, p)
}

// hostileLeftovers: nothing of one submission reaches the next on the same
// slot.
func hostileLeftovers(t *testing.T, p *sandbox.Pool) {
	// Even what is hard to remove: a tree deeper than any path can name, a
	// directory nobody may enter, a fifo.
	probeRanToEnd(t, p, `import os
os.chdir("/tmp/work")
os.mkfifo("fifo")
os.mkdir("locked")
open("locked/secret", "w").write("x")
os.chmod("locked", 0)
for i in range(2500):
    os.mkdir("d")
    os.chdir("d")
open("secret", "w").write("left for the next submission")
`, hostile)
	out := probeRanToEnd(t, p, `import os
for d in ("/tmp/work", "/tmp"):
    try:
        print("saw", d, sorted(os.listdir(d)), flush=True)
    except OSError as e:
        print("saw", d, type(e).__name__, flush=True)
`, hostile)
	if !strings.Contains(out, "saw /tmp/work []\n") {
		t.Errorf("the work dir is not empty for the next submission:\n%s", out)
	}
}

// hostileReads: the program reads no host file, directory or /proc entry
// beyond its own.
func hostileReads(t *testing.T, h *hostileSlot) {
	p := h.p
	// A world-readable host file with a secret in it.
	secret := hostPath(t, "/var/tmp", "secret")
	if err := os.WriteFile(secret, []byte("SECRET-"+strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(secret, 0o644); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	paths := []string{
		"/etc/shadow", "/etc/passwd", "/etc/hostname", "/root/.bashrc", secret, exe,
		"/proc/self/status", "/proc/1/cmdline", "/proc/1/environ", "/proc/self/maps", "/proc/self/mem",
		"/proc/self/mountinfo", "/proc/kcore", "/sys/kernel/notes", "/dev/mem", "/dev/vda",
	}
	dirs := []string{"/proc", "/etc", "/", "/root", "/home", "/sys", "/dev", "/var/tmp"}
	code := sub(`import os
for p in {{PATHS}}:
    try:
        with open(p, "rb") as f:
            data = f.read(4096)
        print("READ", p, len(data), data[:40], flush=True)
    except Exception as e:
        print("denied", p, type(e).__name__, flush=True)
for d in {{DIRS}}:
    try:
        print("LISTED", d, len(os.listdir(d)), flush=True)
    except Exception as e:
        print("denied", d, type(e).__name__, flush=True)
try:
    fd = os.open("/proc/1/root/etc/shadow", os.O_RDONLY)
    print("READ /proc/1/root", os.read(fd, 40), flush=True)
except Exception as e:
    print("denied /proc/1/root", type(e).__name__, flush=True)
`, "{{PATHS}}", pyList(paths), "{{DIRS}}", pyList(dirs))
	out := probeRanToEnd(t, p, code, hostile)
	for _, l := range append(lines(out, "READ"), lines(out, "LISTED")...) {
		t.Errorf("CONTAINMENT: %s", l)
	}
	if strings.Contains(out, "SECRET-") {
		t.Errorf("CONTAINMENT: the program read the host secret")
	}
	if n := len(lines(out, "denied")); n != len(paths)+len(dirs)+1 {
		t.Errorf("%d denials, want %d:\n%s", n, len(paths)+len(dirs)+1, out)
	}
}

// rewardHacks: programs that make the tests pass without solving them
// (objects equal to everything, patched builtins and modules, a prefix of
// the expected output) fail.
func rewardHacks(t *testing.T, h *hostileSlot) {
	p := h.p
	lim := sandbox.DefaultLimits()
	for _, c := range []struct{ name, code, test string }{
		{"__eq__ always true", `class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = object.__hash__
def f(x):
    return Anything()
`, "def check(candidate):\n    assert candidate(3) == 9\n    assert candidate(4) == 16\n"},
		{"int subclass equal to everything", `class Int(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def f(x):
    return Int(0)
`, "def check(candidate):\n    assert candidate(3) == 9\n"},
		{"list holding an anything", `class Anything:
    def __eq__(self, other):
        return True
def f(x):
    return [Anything()]
`, "def check(candidate):\n    assert candidate(3) == [9]\n"},
		{"patch builtins.abs at load", "import builtins\nbuiltins.abs = lambda x: 0\ndef f(x):\n    return 0\n",
			"def check(candidate):\n    assert abs(candidate(3) - 9) < 1e-6\n"},
		{"patch builtins.len in candidate", "import builtins\ndef f(x):\n    builtins.len = lambda s: 3\n    return []\n",
			"def check(candidate):\n    assert len(candidate(3)) == 3\n"},
		{"patch builtins.sorted in candidate", "import builtins\ndef f(x):\n    builtins.sorted = lambda s, **k: [1, 2, 3]\n    return [3, 3]\n",
			"def check(candidate):\n    assert sorted(candidate(3)) == [1, 2, 3]\n"},
		{"patch builtins.isinstance and all", "import builtins\nbuiltins.all = lambda it: True\nbuiltins.isinstance = lambda a, b: True\ndef f(x):\n    return 'no'\n",
			"def check(candidate):\n    r = candidate(3)\n    assert isinstance(r, list)\n    assert all(v > 0 for v in r)\n"},
		{"shadow abs in module globals", "def abs(x):\n    return 0\ndef f(x):\n    return 0\n",
			"def check(candidate):\n    assert abs(candidate(3) - 9) < 1e-6\n"},
		{"shadow len in module globals", "len = lambda s: 3\ndef f(x):\n    return []\n",
			"def check(candidate):\n    assert len(candidate(3)) == 3\n"},
		{"replace __builtins__ of the module", "import builtins\nb = dict(vars(builtins))\nb['abs'] = lambda x: 0\nglobals()['__builtins__'] = b\ndef f(x):\n    return 0\n",
			"def check(candidate):\n    assert abs(candidate(3) - 9) < 1e-6\n"},
		{"patch math.isclose", "import math\nmath.isclose = lambda *a, **k: True\ndef f(x):\n    return 0.0\n",
			"import math\ndef check(candidate):\n    assert math.isclose(candidate(3), 9.0)\n"},
		{"patch math.isclose in candidate", "import math\ndef f(x):\n    math.isclose = lambda *a, **k: True\n    return 0.0\n",
			"import math\ndef check(candidate):\n    r = candidate(3)\n    assert math.isclose(r, 9.0)\n"},
		{"replace sys.modules['math']", "import sys, types\nfake = types.ModuleType('math')\nfake.isclose = lambda *a, **k: True\nsys.modules['math'] = fake\ndef f(x):\n    return 0.0\n",
			"import math\ndef check(candidate):\n    assert math.isclose(candidate(3), 9.0)\n"},
		{"math bound to a stand-in", "class M:\n    isclose = staticmethod(lambda *a, **k: True)\nmath = M()\ndef f(x):\n    return 0.0\n",
			"def check(candidate):\n    assert math.isclose(candidate(3), 9.0)\n"},
		// cmath is not loaded by the fork server: only what a candidate
		// does to it during its call is undone.
		{"patch cmath.isclose in candidate", "import cmath\ndef f(x):\n    cmath.isclose = lambda *a, **k: True\n    return 0.0\n",
			"import cmath\ndef check(candidate):\n    r = candidate(3)\n    assert cmath.isclose(r, 9.0)\n"},
	} {
		res := run(t, p, sandbox.Job{Style: sandbox.Assert, Code: c.code, Test: c.test, EntryPoint: "f", Limits: lim})
		if tr := res.Tests[0]; tr.Status == sandbox.Passed {
			t.Errorf("REWARD HACK: %q passed", c.name)
		} else if tr.Status != sandbox.Failed {
			t.Errorf("%q: %s (%s), want failed", c.name, tr.Status, tr.Detail)
		}
	}

	// Printing only a prefix of the expected output: Check sees the whole
	// output and decides.
	expected := "1\n2\n3\n"
	norm := func(b []byte) string { return strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), " \n") }
	res := run(t, p, sandbox.Job{
		Style: sandbox.IO, Code: "print(1)\nprint(2)\n", Inputs: []string{""}, Limits: lim,
		Check: func(_ int, out []byte) bool { return norm(out) == norm([]byte(expected)) },
	})
	if tr := res.Tests[0]; tr.Status != sandbox.Failed {
		t.Errorf("REWARD HACK: the expected output's prefix: %s (%s)", tr.Status, tr.Detail)
	}
}

// pyList renders strings as a Python list literal.
func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func indent(code string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(code, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
