// Package sandbox runs untrusted programs against tests, contained: Python
// in a fork server tuned for it, and every other language of Languages
// (C++, Java, JavaScript) compiled, when it is compiled, and exec'd under
// the same confinement; and judges what they did (judge.go).
//
// A Pool's slot has up to three servers: a Python fork server (the zygote)
// with the modules programs use loaded, a Python runner that talks to Go
// and runs assert-style tests, and, when a language other than Python is
// installed, an executor (executor.go), the helper itself, which runs
// every exec'd program. Each is PID 1 of its own mount, pid, net, ipc and
// uts namespaces, sees a private /proc and a private tmpfs on /tmp, and is
// confined by Landlock (read-only runtime, the private /tmp writable,
// nothing else) and seccomp (no sockets, no new namespaces, no ptrace,
// bpf, keyctl, mount, io_uring, …). Per Python submission the zygote forks
// a child that drops to the slot's own unprivileged uid under rlimits (CPU,
// address space, file size, processes), runs the program (for assert-style
// tests, answers the runner's calls into it over a pipe), and is then
// killed with everything it started. The runner never forks, so running
// tests costs it no copy-on-write faults, and the zygote, which does,
// writes little between forks. Per test of another language the executor
// starts a small launcher (launcher/launcher.c) that sets the test's
// limits, drops to the slot's uid, runs the program and reports its exit
// status, CPU time and peak memory. Expected outputs never enter the
// sandbox: Job.Check compares in Go.
//
// The servers report facts (how a test ended, what it used and printed);
// judge turns them into verdicts, one table of rules for every language,
// for compiles and for /run_code. Wall-time limits are measured in slot
// time (slottime.go), which a loaded machine does not use up.
//
// A compiled language's program is compiled by Pool.Compile (the compiler
// runs in the executor, confined like a program, under the language's
// compile limits; the compiled files come back to Go in a Build) and run by
// Pool.Run. The launcher and C++'s precompiled bits/stdc++.h and iostream
// are built once per machine, outside the sandbox, into Config.CacheDir,
// which the sandbox may read.
//
// The confinement is applied by a helper, the calling binary re-executed
// with HelperArg, so main (and TestMain of a package that starts pools) must
// call IsHelper/HelperMain first.
package sandbox

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/conc"
)

// Config configures a Pool.
type Config struct {
	// Slots is how many submissions run at once; 0 means one per CPU.
	Slots int
	// Python is the interpreter; "" means /usr/bin/python3.
	Python string
	// Helper is the command that runs HelperMain when given HelperArg;
	// nil means this executable.
	Helper []string
	// Unsafe runs programs with no isolation at all: no namespaces, no
	// Landlock, no seccomp, no uid change, as the user running rewardd.
	// For development on machines without the primitives; never the
	// default.
	Unsafe bool
	// Metrics, when set, receives executions, durations and busy slots.
	Metrics *Metrics
	// CacheDir holds what the pool builds once per machine (the launcher,
	// precompiled headers); "" means DefaultCacheDir(). Programs in the
	// sandbox may read it.
	CacheDir string
	// Languages are the languages the pool runs, by name: nil means every
	// language of the table whose toolchain is installed. Python always
	// runs. Python and the languages named here are probed before Start
	// returns; with nil, the others are probed after (Pool.Probing).
	Languages []string
	// Failures, when set, is told each failure of a slot's servers (they
	// died or stopped answering) once, with what they wrote on stderr: the
	// errors Run and Compile return say what failed, not that (it may be a
	// traceback), since they reach clients.
	Failures func(error)
	// Probed, when set, is told how each probe that Start left running
	// (Pool.Probing) ended: err is nil when the language runs, else why
	// it does not. It is not told of the probes Close cancels.
	Probed func(language string, err error)
	// ProbeOnDemand, with Languages nil, probes a language that Start
	// leaves pending only when a job (or Await) first asks for it, not
	// every one after Start: for a process that runs the languages of its
	// config and no others (rewardd check, score).
	ProbeOnDemand bool

	// gate, when set, runs before each probe that Start leaves running,
	// in its goroutine; an error fails the probe. Tests hold a probe
	// pending with it.
	gate func(ctx context.Context, language string) error
}

// Pool is a set of sandbox slots. Its methods are safe for concurrent use.
type Pool struct {
	cfg     Config
	free    *slotQueue
	slots   []*slot
	uidBase int
	cg      *cgroups
	cgErr   error // why there are no cgroups
	// clocks are the slots' cgroups v2, which measure slot time
	// (slottime.go); clockErr says why there are none.
	clocks   *slotClocks
	clockErr error

	// langMu guards langs, unsupported, pending and probeOrder, which the
	// probes Start leaves running change.
	langMu sync.Mutex
	// langs are the languages the pool runs, by name; unsupported says
	// why each other language of the table does not run; pending are
	// those whose probe has not ended yet (each then moves to langs or
	// unsupported), probeOrder the order in which the probers take them.
	langs       map[string]*poolLanguage
	unsupported map[string]error
	pending     map[string]*pendingLanguage
	probeOrder  []string
	// probers run the pending languages' probes, under probeCtx, which
	// stopProbes cancels.
	probers    conc.WaitGroup
	probeCtx   context.Context
	stopProbes context.CancelFunc
	// launcher is the path of the launcher of exec'd programs, "" when no
	// language needs it.
	launcher string
	// readOnly are the host paths, besides the system's, that the
	// sandbox lets programs read (readPaths).
	readOnly []string

	mu     sync.Mutex
	closed bool
	done   chan struct{} // closed by Close: Runs waiting for a slot give up
}

// poolLanguage is a language a pool runs.
type poolLanguage struct {
	*Language
	// pch is the directory of the precompiled headers, "" without them.
	pch string
	// archive is the compiler's class-data archive, "" without one.
	archive string
	// env is added to the environment of its programs (the build
	// cache's path).
	env []string
	// preload is the library preloaded into the language's compiles and
	// runs (mainstack.c, for MainStack), "" without one.
	preload string
}

// maxTests bounds the tests of one submission.
const maxTests = 256

// ErrClosed is returned by Run after Close.
var errClosed = errors.New("sandbox pool is closed")

// Start starts every slot and probes the sandbox: a program that tries the
// ways out (network, host files, /proc, uid 0) must find each closed. If a
// primitive is missing or a probe finds a way out, Start fails with the
// reason and nothing is left running: code execution fails closed.
//
// Start probes Python and the languages Config.Languages names before it
// returns. When Config.Languages is nil, every other language whose
// toolchain is installed is set up and probed after Start returns, by
// goroutines of the pool that Close cancels and waits for (with
// Config.ProbeOnDemand, when a job first asks for it): until its probe ends
// such a language is pending (Probing); Run and Compile wait for its probe,
// as long as their ctx allows, and then run it or say why the pool does not
// (a probe that finds a way out leaves its language out). A pool that must
// run a language from its first job waits with Await.
func Start(ctx context.Context, cfg Config) (*Pool, error) {
	if cfg.Slots <= 0 {
		cfg.Slots = runtime.NumCPU()
	}
	if cfg.Slots > 100 {
		return nil, fmt.Errorf("sandbox: %d slots, at most 100", cfg.Slots)
	}
	if cfg.Python == "" {
		cfg.Python = "/usr/bin/python3"
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = DefaultCacheDir()
	}
	if dir := filepath.Clean(cfg.CacheDir); !cfg.Unsafe && (dir == "/tmp" || strings.HasPrefix(dir, "/tmp/")) {
		return nil, fmt.Errorf("sandbox: cache directory %s: the sandbox mounts a /tmp of its own, where programs would not find it", cfg.CacheDir)
	}
	if cfg.Helper == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: find own executable for the helper: %w", err)
		}
		cfg.Helper = []string{exe}
	}
	if !cfg.Unsafe && os.Geteuid() != 0 {
		return nil, errors.New("sandbox: needs root (namespaces, mounts, an unprivileged uid per slot); not running as root")
	}
	// Each slot runs its programs under its own uid, distinct per process
	// too: RLIMIT_NPROC counts per uid across the whole machine.
	p := &Pool{cfg: cfg, free: newSlotQueue(), uidBase: 1_000_000 + (os.Getpid()%10_000)*100, done: make(chan struct{})}
	if !cfg.Unsafe {
		p.cg, p.cgErr = newCgroups()
		p.clocks, p.clockErr = newSlotClocks()
	}
	if err := p.setupLanguages(ctx); err != nil {
		if p.cg != nil {
			p.cg.remove()
		}
		if p.clocks != nil {
			p.clocks.remove()
		}
		return nil, err
	}
	for i := range cfg.Slots {
		s := &slot{id: i, uid: p.uidBase + i, judge: judgeUIDBase + (os.Getpid()%10_000)*100 + i}
		if cfg.Unsafe {
			s.uid, s.judge = -1, -1
		}
		if p.cg != nil {
			cg, err := p.cg.slot(i)
			if err != nil {
				p.Close()
				return nil, fmt.Errorf("sandbox: cgroup of slot %d: %w", i, err)
			}
			s.cg = cg
		}
		if p.clocks != nil {
			clock, err := p.clocks.slot(i)
			if err != nil {
				if s.cg != nil {
					s.cg.remove()
				}
				p.Close()
				return nil, fmt.Errorf("sandbox: cgroup v2 of slot %d: %w", i, err)
			}
			s.clock = clock
		}
		if err := p.start(ctx, s); err != nil {
			s.removeCgroups()
			p.Close()
			// For the operator: what the servers wrote says why.
			if msg := strings.TrimSpace(s.stderr.String()); msg != "" {
				err = fmt.Errorf("%w (%s)", err, msg)
			}
			return nil, err
		}
		p.slots = append(p.slots, s)
		p.free.add(s)
	}
	if !cfg.Unsafe {
		if err := p.probe(ctx); err != nil {
			p.Close()
			return nil, err
		}
		if err := p.probeLanguages(ctx); err != nil {
			p.Close()
			return nil, err
		}
	}
	// Only a pool that will run code counts its slots.
	if cfg.Metrics != nil {
		cfg.Metrics.slots.Set(float64(cfg.Slots))
	}
	p.startProbes(ctx)
	return p, nil
}

// Unsafe says whether the pool runs programs without isolation.
func (p *Pool) Unsafe() bool { return p.cfg.Unsafe }

// Slots is the number of submissions the pool runs at once.
func (p *Pool) Slots() int { return len(p.slots) }

// Close cancels the probes still running and waits for them, waits for the
// runs in progress to hand their slots back, then kills every fork server
// and waits for it. Run calls after Close fail at once, and so do those
// waiting for a probe; a language whose probe had not ended is left out.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	p.mu.Unlock()
	if p.stopProbes != nil {
		p.stopProbes()
	}
	p.probers.Wait()
	p.settleUnprobed()
	for _, s := range p.free.drain(len(p.slots)) {
		s.kill()
		s.removeCgroups()
		if p.cfg.Unsafe {
			// Without the sandbox's private tmpfs the work dir is on the
			// host's.
			os.RemoveAll(unsafeWorkDir(s))
			os.RemoveAll(unsafeWorkDir(s) + "-exec")
		}
	}
	if p.cg != nil {
		p.cg.remove()
	}
	if p.clocks != nil {
		p.clocks.remove()
	}
	if p.cfg.Metrics != nil {
		p.cfg.Metrics.slots.Set(0)
	}
	return nil
}

// removeCgroups removes the slot's cgroups, once its servers are gone.
func (s *slot) removeCgroups() {
	if s.cg != nil {
		s.cg.remove()
	}
	if s.clock != nil {
		s.clock.remove()
	}
}

// SlotTime says whether the pool measures its wall-time limits in slot
// time (slottime.go), and if not, why.
func (p *Pool) SlotTime() (bool, error) {
	if p.cfg.Unsafe {
		return false, errors.New("unsafe mode")
	}
	return p.clocks != nil, p.clockErr
}

// Cgroups says whether each slot is also bounded as a whole by cgroup v1
// memory and pids controllers, and if not, why.
func (p *Pool) Cgroups() (bool, error) {
	if p.cfg.Unsafe {
		return false, errors.New("unsafe mode")
	}
	return p.cg != nil, p.cgErr
}

// Run runs job in a free slot, waiting for one as long as ctx allows. A
// program that fails, times out, runs out of memory or crashes gives a
// Result; an error means the sandbox could not run it (the fork server died
// twice, the test code is broken, the job is invalid, ctx ended). When ctx
// ends while the program runs, the program and everything it started are
// killed at once.
func (p *Pool) Run(ctx context.Context, job Job) (Result, error) {
	lang, err := p.validate(ctx, &job)
	if err != nil {
		return Result{}, err
	}
	program := programKey(lang.Name, job.Code)
	if job.Build != nil {
		program = programKey(job.Build.Language, job.Build.source)
	}
	var res Result
	err = p.inSlot(ctx, program, func(s *slot) error {
		m := p.cfg.Metrics
		m.busy(1)
		defer m.busy(-1)
		start := time.Now()
		var err error
		res, err = p.runIn(ctx, s, lang, job)
		m.executed(ctx, res, err, time.Since(start))
		return err
	})
	return res, err
}

// Compile compiles job's program in a free slot, waiting for one as long as
// ctx allows. A program that does not compile, or whose compile runs out of
// its limits, gives a Build that says so; an error means the sandbox could
// not run the compiler (or the job is invalid, or ctx ended).
func (p *Pool) Compile(ctx context.Context, job CompileJob) (*Build, error) {
	lang, err := p.language(ctx, job.Language)
	if err != nil {
		return nil, err
	}
	if !lang.Compiled() {
		return nil, fmt.Errorf("sandbox: %s %w", lang.Name, errNotCompiled)
	}
	job.Limits = job.Limits.WithDefaults(lang.CompileLimits)
	if err := job.Limits.Validate(); err != nil {
		return nil, err
	}
	input := len(job.Source)
	for _, data := range job.Files {
		input += len(data)
	}
	if input > MaxInputMB<<20 {
		return nil, fmt.Errorf("the program and its files come to %d bytes, over the %d MiB one job may take (sandbox.MaxInputMB)", input, MaxInputMB)
	}
	var b *Build
	err = p.inSlot(ctx, programKey(lang.Name, job.Source), func(s *slot) error {
		var err error
		b, err = p.compileIn(ctx, s, lang, job)
		return err
	})
	return b, err
}

// inSlot takes a free slot for a job of program (programKey), waiting as
// long as ctx allows (slotQueue says in what order the jobs waiting get
// one), runs f in it and gives it back.
func (p *Pool) inSlot(ctx context.Context, program string, f func(s *slot) error) error {
	s, err := p.free.take(ctx, p.done, program)
	if err != nil {
		return err
	}
	start := time.Now()
	defer func() { p.free.put(s, program, time.Since(start)) }()
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return errClosed
	}
	return f(s)
}

// runIn runs a valid job in slot s.
func (p *Pool) runIn(ctx context.Context, s *slot, lang *poolLanguage, job Job) (Result, error) {
	if res, over := overMemory(lang, job); over {
		return res, nil
	}
	req, err := p.request(s, lang, job)
	if err != nil {
		return Result{}, err
	}
	rep, cgOOM, err := p.roundTrip(ctx, s, req, job.Limits, lang.Memory == Resident)
	if err != nil {
		return Result{}, err
	}
	res, err := job.result(rep, lang, cgOOM)
	if err != nil || len(job.FetchFiles) == 0 {
		return res, err
	}
	dir, err := p.workRoot(s, lang)
	if err == nil {
		res.Files, res.FilesLeftOut, err = fetchFiles(dir, job.FetchFiles)
	}
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: fetch files: %w", err)
	}
	return res, nil
}

// roundTrip sends req to slot s and returns its reply, trying once more on
// new servers if the slot's die; cgOOM says whether the kernel killed a
// process of the slot for memory (its cgroup's limit) meanwhile. The reply
// must come within the job's wall time and ten seconds more, in slot time.
func (p *Pool) roundTrip(ctx context.Context, s *slot, req *request, lim Limits, tight bool) (*reply, bool, error) {
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		if s.runner == nil {
			if err := p.start(ctx, s); err != nil {
				last = err
				p.failed(s, err)
				continue
			}
		}
		ooms := int64(-1)
		if s.cg != nil {
			if err := s.cg.limit(lim, tight); err != nil {
				return nil, false, fmt.Errorf("sandbox: %w", err)
			}
			ooms = s.cg.ooms()
		}
		s.seq++
		req.ID = s.seq
		rep, err := s.roundTrip(ctx, req, time.Duration(lim.WallSeconds*float64(time.Second))+10*time.Second)
		if cerr := ctx.Err(); cerr != nil {
			s.kill()
			return nil, false, cerr
		}
		if err != nil {
			last = err
			p.failed(s, err)
			p.cfg.Metrics.restarted()
			s.kill()
			continue
		}
		return rep, ooms >= 0 && s.cg.ooms() > ooms, nil
	}
	return nil, false, fmt.Errorf("sandbox failed twice: %w", last)
}

// failed tells Config.Failures that slot s's servers failed with err, and
// what they wrote on stderr.
func (p *Pool) failed(s *slot, err error) {
	if p.cfg.Failures == nil {
		return
	}
	if msg := strings.TrimSpace(s.stderr.String()); msg != "" {
		err = fmt.Errorf("%w; the servers wrote: %s", err, msg)
	}
	p.cfg.Failures(fmt.Errorf("sandbox slot %d: %w", s.id, err))
}

// probe runs a program that tries each way out of the sandbox; every line it
// prints must say "closed".
func (p *Pool) probe(ctx context.Context) error {
	var got string
	job := Job{
		Style: IO, Code: probeProgram, Inputs: []string{""}, Limits: DefaultLimits(),
		Check: func(_ int, out []byte) bool { got = string(out); return true },
	}
	python, err := p.language(ctx, "python")
	if err != nil {
		return err
	}
	for _, s := range p.slots {
		res, err := p.runIn(ctx, s, python, job)
		if err != nil {
			return fmt.Errorf("sandbox probe: %w", err)
		}
		if res.Tests[0].Status != Passed {
			return fmt.Errorf("sandbox probe did not run: %s %s", res.Tests[0].Status, res.Tests[0].Detail)
		}
		var open []string
		for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
			if name, state, _ := strings.Cut(line, " "); state != "closed" {
				open = append(open, name)
			}
		}
		if len(open) > 0 {
			return fmt.Errorf("sandbox probe: these ways out are open: %s", strings.Join(open, ", "))
		}
	}
	return nil
}

const probeProgram = `import os, socket
def t(name, f):
    try:
        f()
        print(name, "open")
    except Exception:
        print(name, "closed")
t("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("127.0.0.1", 1)))
t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
t("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
t("vsock", lambda: socket.socket(40, socket.SOCK_STREAM))
t("host_files", lambda: open("/etc/passwd").read())
t("proc", lambda: open("/proc/self/status").read())
t("write_outside_workdir", lambda: open("/var/tmp/rewardd-sandbox-probe", "w"))
def root():
    if os.getuid() == 0 or os.geteuid() == 0:
        return
    raise PermissionError("not root")
t("uid_0", root)
# A process left behind: the fork server must be able to kill it (it
# cannot without CAP_KILL in a container), or the probe fails.
if os.fork() == 0:
    import time
    time.sleep(60)
    os._exit(0)
`

// slot is one sandbox slot: a runner, which Go talks to and which runs the
// assert-style tests; a zygote, which forks the python programs; and, when
// the pool runs a language that is exec'd, an executor (executor.go),
// which runs those. Each is PID 1 of namespaces of its own; the runner and
// the zygote talk over a socket pair. Only the goroutine holding the slot
// (taken from Pool.free) touches it.
type slot struct {
	// uid runs the programs, judge the checkers.
	id, uid, judge int
	seq            int64
	runner, zygote *exec.Cmd
	executor       *exec.Cmd   // nil when the pool runs python only
	py, ex         *conn       // to the runner, to the executor
	stderr         *tail       // every server's
	cg             *slotCgroup // nil without cgroups
	clock          *slotClock  // nil without cgroup v2 pressure accounting
}

// conn is the pool's end of a server's request and reply pipes.
type conn struct {
	w, rf *os.File
	r     *bufio.Reader
}

func newConn(w, r *os.File) *conn { return &conn{w: w, rf: r, r: bufio.NewReaderSize(r, 64<<10)} }

func (c *conn) close() {
	if c != nil {
		c.w.Close()
		c.rf.Close()
	}
}

// acct is how the slot's slot time is read.
func (s *slot) acct() accounting {
	if s.clock == nil {
		return accounting{}
	}
	return accounting{pressure: s.clock.pressure, cpu: s.clock.cpu}
}

// command is the command that starts one of a slot's servers in role
// (runner, zygote or executor).
func (p *Pool) command(s *slot, role string) *exec.Cmd {
	var cmd *exec.Cmd
	switch {
	case p.cfg.Unsafe && role == "executor":
		args := append(append([]string{}, p.cfg.Helper[1:]...), HelperArg, "-", strconv.Itoa(s.id), unsafeExecutorRole)
		cmd = exec.Command(p.cfg.Helper[0], args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "GOMAXPROCS=1", "REWARDD_WORK=" + unsafeWorkDir(s) + "-exec"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	case p.cfg.Unsafe:
		cmd = exec.Command(p.cfg.Python, "-I", "-S", "-B", "-X", "utf8", "-c", harnessProgram(role), role)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "REWARDD_WORK=" + unsafeWorkDir(s), "REWARDD_SLOT=" + strconv.Itoa(s.id), "LD_BIND_NOW=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	default:
		args := append(append([]string{}, p.cfg.Helper[1:]...), HelperArg, p.cfg.Python, strconv.Itoa(s.id), role)
		args = append(args, p.readOnly...)
		cmd = exec.Command(p.cfg.Helper[0], args...)
		// The executor's runtime needs no more than one thread at a time
		// (the Python servers exec with an environment of their own).
		cmd.Env = []string{"GOMAXPROCS=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
				syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
			Pdeathsig: syscall.SIGKILL,
		}
	}
	cmd.Stderr = s.stderr
	return cmd
}

// start starts the slot's servers, puts them in the slot's cgroups before
// they fork anything (they fork only when a job comes: everything they
// start is counted there), and waits for their hellos.
func (p *Pool) start(ctx context.Context, s *slot) (err error) {
	s.stderr = &tail{max: 4096}
	defer func() {
		if err != nil {
			s.kill()
		}
	}()
	clock, err := s.clock.clockFiles()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	run, err := s.clock.runFiles()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if s.clock == nil {
		defer clock[0].Close()
		defer run[0].Close()
	}
	memRun, err := s.cg.runFile()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if s.cg == nil {
		defer memRun.Close()
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: socket pair: %w", err)
	}
	runnerEnd, zygoteEnd := os.NewFile(uintptr(fds[0]), "runner"), os.NewFile(uintptr(fds[1]), "zygote")
	defer runnerEnd.Close()
	defer zygoteEnd.Close()
	var theirs []*os.File // the servers' ends of the pipes, closed here once they have them
	defer func() {
		for _, f := range theirs {
			f.Close()
		}
	}()
	pipes := func() (*conn, *os.File, *os.File, error) {
		reqR, reqW, err := os.Pipe()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("sandbox: %w", err)
		}
		respR, respW, err := os.Pipe()
		if err != nil {
			reqR.Close()
			reqW.Close()
			return nil, nil, nil, fmt.Errorf("sandbox: %w", err)
		}
		theirs = append(theirs, reqR, respW)
		return newConn(reqW, respR), reqR, respW, nil
	}
	var servers []*exec.Cmd
	launch := func(c *exec.Cmd, files ...*os.File) error {
		c.ExtraFiles = append(files, clock...)
		if c == s.executor {
			c.ExtraFiles = append(c.ExtraFiles, append(run, memRun)...)
		}
		if err := c.Start(); err != nil {
			return fmt.Errorf("sandbox: start fork server: %w", err)
		}
		servers = append(servers, c)
		return nil
	}
	s.zygote = p.command(s, "zygote")
	if err := launch(s.zygote, zygoteEnd); err != nil {
		s.zygote = nil
		return err
	}
	py, reqR, respW, err := pipes()
	if err != nil {
		return err
	}
	s.py = py
	s.runner = p.command(s, "runner")
	if err := launch(s.runner, reqR, respW, runnerEnd); err != nil {
		s.runner = nil
		return err
	}
	if p.launcher != "" {
		ex, reqR, respW, err := pipes()
		if err != nil {
			return err
		}
		s.ex = ex
		s.executor = p.command(s, "executor")
		if err := launch(s.executor, reqR, respW); err != nil {
			s.executor = nil
			return err
		}
	}
	// The servers have their ends now: closing this process's copies
	// lets each see the other's exit as the end of its socket or pipe.
	for _, f := range append(theirs, runnerEnd, zygoteEnd) {
		f.Close()
	}
	theirs = nil
	for _, c := range servers {
		if s.cg != nil {
			if err := s.cg.add(c.Process.Pid); err != nil {
				return fmt.Errorf("sandbox: join slot cgroup: %w", err)
			}
		}
		if s.clock != nil {
			if err := s.clock.add(c.Process.Pid); err != nil {
				return fmt.Errorf("sandbox: join slot cgroup v2: %w", err)
			}
		}
	}
	for _, c := range []*conn{s.py, s.ex} {
		if c == nil {
			continue
		}
		var hello reply
		if err := s.read(ctx, c, &hello, accounting{}.watch(), 60*time.Second, 64<<10); err != nil {
			return fmt.Errorf("sandbox: fork server did not start: %w", err)
		}
		if !p.cfg.Unsafe && (!hello.Pid1 || hello.UID != 0) {
			return fmt.Errorf("sandbox: fork server is not PID 1 of its namespace (pid1=%v uid=%d)", hello.Pid1, hello.UID)
		}
	}
	return nil
}

// unsafeExecutorRole is the helper's role of an executor that is not
// confined (Config.Unsafe).
const unsafeExecutorRole = "executor-unsafe"

func unsafeWorkDir(s *slot) string {
	return fmt.Sprintf("%s/rewardd-unsafe-%d-%d", os.TempDir(), os.Getpid(), s.id)
}

// kill stops the slot's servers and everything in their namespaces, and
// waits for them.
func (s *slot) kill() {
	servers := []*exec.Cmd{s.zygote, s.runner, s.executor}
	for _, c := range servers {
		if c == nil || c.Process == nil {
			continue
		}
		if c.SysProcAttr.Setpgid {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
		c.Process.Kill()
	}
	s.py.close()
	s.ex.close()
	for _, c := range servers {
		if c != nil && c.Process != nil {
			c.Wait()
		}
	}
	s.runner, s.zygote, s.executor, s.py, s.ex = nil, nil, nil, nil, nil
}

// roundTrip sends req to the server of its style (exec: the executor;
// else the runner, which hands io jobs to the zygote) and reads its reply,
// which must come within timeout of slot time.
func (s *slot) roundTrip(ctx context.Context, req *request, timeout time.Duration) (*reply, error) {
	c := s.py
	if req.Style == "exec" {
		c = s.ex
	}
	if c == nil {
		return nil, errors.New("sandbox: this slot has no executor")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	// Cancellation kills the whole sandbox at once: each server is PID 1
	// of its namespace, so the kernel takes every process in it along.
	servers := []*os.Process{s.zygote.Process, s.runner.Process}
	if s.executor != nil {
		servers = append(servers, s.executor.Process)
	}
	stop := context.AfterFunc(ctx, func() {
		for _, p := range servers {
			p.Kill()
		}
	})
	defer stop()
	w := s.acct().watch()
	if _, err := c.w.Write(append(frame, body...)); err != nil {
		return nil, s.died(fmt.Errorf("send: %w", err))
	}
	var rep reply
	if err := s.read(ctx, c, &rep, w, timeout, req.maxReply()); err != nil {
		return nil, err
	}
	if rep.ID != req.ID {
		return nil, fmt.Errorf("reply %d to request %d", rep.ID, req.ID)
	}
	return &rep, nil
}

// read reads the next reply on c into v, refusing one over limit bytes;
// it gives up when w has run out of timeout of slot time.
func (s *slot) read(ctx context.Context, c *conn, v any, w watch, timeout time.Duration, limit int64) error {
	var head [4]byte
	if err := s.readFull(c, head[:], w, timeout); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(head[:])
	if int64(n) > limit {
		return fmt.Errorf("reply of %d bytes, over the %d its request allows", n, limit)
	}
	body := make([]byte, n)
	if err := s.readFull(c, body, w, timeout); err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// readFull fills b from c, waiting while w has slot time left of timeout
// (its CPU use does not end the wait: a server that computes that long is
// stopped by its own limits).
func (s *slot) readFull(c *conn, b []byte, w watch, timeout time.Duration) error {
	for got := 0; got < len(b); {
		done, left := w.expired(timeout, 1<<62)
		if done {
			return s.died(os.ErrDeadlineExceeded)
		}
		c.rf.SetReadDeadline(time.Now().Add(left))
		n, err := c.r.Read(b[got:])
		got += n
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			if got == len(b) {
				return nil
			}
			return s.died(err)
		}
	}
	return nil
}

// died describes why a server stopped answering; what the servers wrote
// on stderr is Pool.failed's, not the error's.
func (s *slot) died(err error) error {
	return fmt.Errorf("fork server: %w", err)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
