package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The executor is the slot's server for every program that is exec'd: a
// compiler, a compiled program, a node or java program, a checker. It is
// the helper itself, confined as the Python servers are (PID 1 of its own
// namespaces, Landlock, seccomp) but not exec'ing anything: it reads exec
// requests from the pool, and per test starts the launcher
// (launcher/launcher.c), which sets the test's limits, drops to the job's
// uid and runs the command. It enforces the limits it must watch itself
// (the test's and the job's slot time, the job's total output), kills
// every process of a test before the next one starts, and sends back what
// happened to each test as a fact. It judges nothing: the pool does
// (judge.go).
//
// Its descriptors: 3 requests, 4 replies (each a frame: a 4-byte
// big-endian length and a JSON body), 5 and 6 the slot's cpu.pressure and
// cpu.stat, 7 and 8 the cpu.pressure and cgroup.procs of the slot's run
// cgroup, which every launcher joins (slottime.go), 9 the cgroup.procs of
// the run child of the slot's memory cgroup, which every launcher joins
// too (cgroup.go).

// fullEvery is how often a running test's streams are looked at: a stream
// filled to its limit ends the test (readRecord).
const fullEvery = 100 * time.Millisecond

// Launcher records (launcher.c's struct record), and their kinds.
const (
	recordSize   = 32
	recExited    = 1
	recExecFail  = 2
	recSetupFail = 3
)

// launcherSteps name the launcher's steps in a setup failure.
var launcherSteps = []string{1: "arguments", "rlimits", "groups", "gid", "uid", "fork", "signals", "cgroup"}

// executor is the state of a running executor.
type executor struct {
	in    *bufio.Reader
	out   *os.File
	clock accounting
	// run is the clock of a test: the slot's CPU time, and the waiting of
	// the run cgroup's processes only (the slot's without one).
	run      accounting
	runProcs *os.File
	// memProcs is the cgroup.procs of the memory cgroup the programs run
	// in (/dev/null without one).
	memProcs *os.File
	pid1     bool
	// exact: the slot's CPU time is known, and ends a test at its CPU
	// limit (readRecord); the launcher's rlimit is then a backstop.
	exact bool
}

// executorMain serves exec requests until the pool closes the request
// pipe; it returns the process's exit status.
func executorMain() int {
	for _, fd := range []int{3, 4, 5, 6, 7, 8, 9} {
		unix.CloseOnExec(fd)
	}
	e := &executor{
		in:       bufio.NewReaderSize(os.NewFile(3, "requests"), 64<<10),
		out:      os.NewFile(4, "replies"),
		clock:    accounting{pressure: os.NewFile(5, "cpu.pressure"), cpu: os.NewFile(6, "cpu.stat"), inSlot: true},
		runProcs: os.NewFile(8, "run/cgroup.procs"),
		memProcs: os.NewFile(9, "memory run/cgroup.procs"),
		pid1:     os.Getpid() == 1,
	}
	e.run = e.clock
	if runPressure := os.NewFile(7, "run/cpu.pressure"); runPressure != nil {
		if _, ok := readMicros(runPressure, "total="); ok {
			e.run.pressure = runPressure
		}
	}
	e.exact = e.clock.exact()
	if e.pid1 {
		if err := os.Chdir(workDir); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox executor: %v\n", err)
			return 1
		}
	}
	if err := e.send(map[string]any{"ready": true, "pid1": e.pid1, "uid": os.Getuid()}); err != nil {
		return 1
	}
	for {
		var req request
		if err := e.read(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "sandbox executor: %v\n", err)
			return 1
		}
		rep, err := e.handle(&req)
		if err != nil {
			// The work dir could not be emptied, or the processes of a
			// test could not be ended: this executor must not run the
			// next job. The pool starts a new one.
			fmt.Fprintf(os.Stderr, "sandbox executor: %v\n", err)
			return 1
		}
		if err := e.send(rep); err != nil {
			return 1
		}
	}
}

func (e *executor) read(v any) error {
	var head [4]byte
	if _, err := io.ReadFull(e.in, head[:]); err != nil {
		return err
	}
	body := make([]byte, binary.BigEndian.Uint32(head[:]))
	if _, err := io.ReadFull(e.in, body); err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

func (e *executor) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	_, err = e.out.Write(append(frame, body...))
	return err
}

// handle runs one exec job: the work dir emptied and given to the job's
// uid, the job's files written, then its tests in order, each test's
// files written just before it, until one that did not exit 0 when the
// job asks to stop there, the job's slot time runs out or its tests have
// printed more than the job's total. After the last test, when it exited
// 0, the files the job collects go back. An error means the executor
// cannot go on.
func (e *executor) handle(req *request) (*reply, error) {
	start := time.Now()
	job := e.clock.watch()
	if err := e.cleanWork(req.UID); err != nil {
		return nil, err
	}
	rep := &reply{ID: req.ID}
	err := errTooManyFiles
	if len(req.Files) <= maxFiles {
		err = putFiles(req.Files, req.UID)
	}
	if err != nil {
		// The pool checked the names; a write that fails is the work
		// dir's size, the job's fault.
		rep.Tests = make([]fact, len(req.Tests))
		for k := range rep.Tests {
			rep.Tests[k] = fact{End: endFiles, Detail: err.Error()}
		}
		return rep, nil
	}
	jobWall := seconds(req.Limits.Wall)
	var total int64
	stop := false
	for _, t := range req.Tests {
		if stop {
			rep.Tests = append(rep.Tests, fact{End: endSkipped})
			continue
		}
		slot, _ := job.elapsed()
		if slot >= jobWall {
			rep.Tests = append(rep.Tests, fact{End: endDeadline})
			stop = true
			continue
		}
		err := errTooManyFiles
		if len(t.Files) <= maxFiles {
			err = putFiles(t.Files, req.UID)
		}
		if err != nil {
			rep.Tests = append(rep.Tests, fact{End: endFiles, Detail: err.Error()})
			stop = true
			continue
		}
		f, err := e.runTest(req, &t, min(seconds(t.Wall), jobWall-slot), jobWall-slot < seconds(t.Wall))
		if err != nil {
			return nil, err
		}
		counted := f.Out
		if req.Keep || len(req.Collect) > 0 {
			counted += f.Err
		}
		total += counted
		if total > req.Limits.Total {
			f = fact{End: endTotal, Out: f.Out, Err: f.Err, CPU: f.CPU, Wall: f.Wall, RSS: f.RSS}
			stop = true
		}
		rep.Tests = append(rep.Tests, f)
		stop = stop || req.Stop && !f.exitedZero()
	}
	rep.Output = total
	if last := len(rep.Tests) - 1; len(req.Collect) > 0 && last >= 0 && rep.Tests[last].exitedZero() {
		files, err := collectFiles(req.Collect)
		if err != nil {
			return nil, err
		}
		rep.Files = files
	}
	slot, _ := job.elapsed()
	rep.Seconds, rep.Slot = time.Since(start).Seconds(), slot.Seconds()
	return rep, nil
}

// runTest runs one test: the launcher with the test's limits and argv,
// stdin, stdout and stderr memfds and the record pipe, until the launcher
// exits or the test's slot time (wall) runs out (atDeadline: wall is what
// was left of the job's); then every process of the test is killed. An
// error means the processes could not be ended.
func (e *executor) runTest(req *request, t *wireTest, wall time.Duration, atDeadline bool) (fact, error) {
	f := fact{}
	stdin, err := sealedMemfd("stdin", t.Stdin)
	if err != nil {
		return fact{End: endSetup, Detail: err.Error(), Step: -1}, nil
	}
	defer stdin.Close()
	stdout, err := memfd("stdout")
	if err != nil {
		return fact{End: endSetup, Detail: err.Error(), Step: -1}, nil
	}
	defer stdout.Close()
	stderr, err := memfd("stderr")
	if err != nil {
		return fact{End: endSetup, Detail: err.Error(), Step: -1}, nil
	}
	defer stderr.Close()
	recR, recW, err := os.Pipe()
	if err != nil {
		return fact{End: endSetup, Detail: err.Error(), Step: -1}, nil
	}
	defer recR.Close()

	// RLIMIT_CPU in whole seconds; a second more where the slot's CPU time
	// ends the test at its limit (slottime.go: the kernel charges the
	// rlimit by the tick).
	cpu := max(1, int64(t.CPU+0.999))
	if e.exact {
		cpu++
	}
	as := int64(-1)
	if t.Memory > 0 {
		as = t.Memory
	}
	fsize := t.Output
	if t.FileSize > 0 {
		fsize = t.FileSize
	}
	argv := append([]string{req.Launcher,
		strconv.FormatInt(cpu, 10), strconv.FormatInt(fsize, 10), "256", strconv.FormatInt(t.Stack, 10),
		strconv.Itoa(t.Procs), strconv.FormatInt(as, 10), strconv.Itoa(req.UID)}, t.Argv...)
	attr := &syscall.ProcAttr{
		Dir: workDir, Env: req.Env,
		Files: []uintptr{stdin.Fd(), stdout.Fd(), stderr.Fd(), recW.Fd(), e.runProcs.Fd(), e.memProcs.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: !e.pid1},
	}
	if !e.pid1 {
		attr.Dir = unsafeWork()
	}
	w := e.run.watch()
	pid, err := syscall.ForkExec(req.Launcher, argv, attr)
	recW.Close()
	if err != nil {
		return fact{End: endSetup, Detail: "start the launcher: " + err.Error(), Step: -1}, nil
	}
	// A stream filled to its limit is the test's end (judge: Output),
	// however the program goes on: the JVM ignores SIGXFSZ and loops on
	// failed writes until its CPU limit.
	full := func() bool { return t.Output > 0 && (size(stdout) >= t.Output || size(stderr) >= t.Output) }
	data, ended := readRecord(recR, w, wall, seconds(t.CPU), full)
	slot, _ := w.elapsed()
	f.Wall = slot.Seconds()
	var status syscall.WaitStatus
	if ended {
		// The launcher closed the pipe: it exited (or is about to).
		syscall.Wait4(pid, &status, 0, nil)
	}
	if err := e.killAll(pid); err != nil {
		return f, err
	}
	switch {
	case !ended:
		f.End, f.CPU = endWall, w.used().Seconds()
		if atDeadline {
			f.End = endDeadline
		}
	case len(data) < recordSize:
		f.End, f.Status = endLost, int(status)
	default:
		kind := int32(binary.LittleEndian.Uint32(data[0:]))
		value := int32(binary.LittleEndian.Uint32(data[4:]))
		f.CPU = float64(int64(binary.LittleEndian.Uint64(data[8:]))) / 1e6
		f.RSS = int64(binary.LittleEndian.Uint64(data[16:]))
		step := int64(binary.LittleEndian.Uint64(data[24:]))
		switch kind {
		case recExited:
			f.End, f.Status = endExit, int(value)
		case recExecFail:
			f.End, f.Errno = endNoExec, int(value)
		case recSetupFail:
			f.End, f.Errno, f.Step = endSetup, int(value), int(step)
			name := "?"
			if step > 0 && int(step) < len(launcherSteps) {
				name = launcherSteps[step]
			}
			f.Detail = fmt.Sprintf("the launcher failed at its %s step: %v", name, syscall.Errno(value))
		default:
			f.End, f.Status = endLost, int(status)
		}
	}
	f.Out, f.Err = size(stdout), size(stderr)
	keepErr := req.Keep || len(req.Collect) > 0
	if f.End == endExit || req.Keep {
		f.Stdout = readBack(stdout, min(f.Out, t.Output+1))
	}
	if keepErr {
		f.Stderr = readBack(stderr, min(f.Err, t.Output+1))
	}
	f.Marked = markersIn(stderr, f.Err, append(append([]string{}, req.Markers...), req.TimeMarkers...))
	return f, nil
}

// readRecord reads the launcher's record until the launcher exits (the
// pipe's end: nothing else holds it), the test's slot time runs out
// (limit of it), the slot has used the test's cpu of CPU time or full
// says so, asked every fullEvery at least; ended says it exited.
func readRecord(r *os.File, w watch, limit, cpu time.Duration, full func() bool) (data []byte, ended bool) {
	buf := make([]byte, 4*recordSize)
	for {
		done, left := w.expired(limit, cpu)
		if done || full() {
			return data, false
		}
		r.SetReadDeadline(time.Now().Add(min(left, fullEvery)))
		n, err := r.Read(buf)
		data = append(data, buf[:n]...)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue
		case err != nil: // io.EOF: the launcher is gone
			return data, true
		case len(data) > 4*recordSize:
			return data, true
		}
	}
}

// killAll kills every process of the sandbox but the executor (in unsafe
// mode, the test's process group) and reaps them; an error means some
// survive SIGKILL (in a container: no CAP_KILL), and the sandbox must not
// run the next test.
func (e *executor) killAll(pgid int) error {
	if e.pid1 {
		syscall.Kill(-1, syscall.SIGKILL)
	} else {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.ECHILD):
			return nil
		case errors.Is(err, syscall.EINTR) || pid > 0:
			continue
		case !e.pid1 && pid == 0:
			// Not PID 1: only the test's own group was ours to kill;
			// what the launcher left behind was reparented elsewhere.
			if syscall.Kill(-pgid, 0) != nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("processes of a program survive SIGKILL from the executor (in a container: is CAP_KILL missing?)")
		}
		time.Sleep(time.Millisecond)
	}
}

// cleanWork empties the work dir of what the last job left and hands it
// to uid (-1: keep the owner).
func (e *executor) cleanWork(uid int) error {
	dir := workDir
	if !e.pid1 {
		dir = unsafeWork()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	names, err := readDirNames(dir)
	if err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	for _, name := range names {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("work dir: %w", err)
		}
	}
	if uid >= 0 {
		if err := os.Chown(dir, uid, uid); err != nil {
			return err
		}
	}
	return os.Chmod(dir, 0o700)
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// unsafeWork is the work dir of an executor that is not confined: the
// pool passes it in the environment.
func unsafeWork() string { return os.Getenv("REWARDD_WORK") }

// maxFiles bounds the files a job (or a test) writes, and those it
// collects.
const maxFiles = 64

var errTooManyFiles = fmt.Errorf("more than %d files", maxFiles)

// putFiles writes files into the work dir, owned by uid; a name is a path
// below it (Pool checked it), its directories are made.
func putFiles(files []wireFile, uid int) error {
	root := workDir
	if os.Getpid() != 1 {
		root = unsafeWork()
	}
	for _, f := range files {
		if CheckFileName(f.Name) != nil {
			return fmt.Errorf("bad file name %q", f.Name)
		}
		p := root
		parts := strings.Split(f.Name, "/")
		for _, dir := range parts[:len(parts)-1] {
			p = filepath.Join(p, dir)
			if err := os.Mkdir(p, 0o700); err == nil {
				if uid >= 0 {
					os.Chown(p, uid, uid)
				}
			} else if !errors.Is(err, os.ErrExist) {
				return err
			}
		}
		p = filepath.Join(p, parts[len(parts)-1])
		mode := os.FileMode(f.Mode & 0o777)
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
		if err != nil {
			return err
		}
		file := os.NewFile(uintptr(fd), p)
		_, err = file.Write(f.Data)
		if err == nil && uid >= 0 {
			err = file.Chown(uid, uid)
		}
		if err == nil {
			err = file.Chmod(mode)
		}
		file.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// collectFiles reads the regular files at the top of the work dir that
// match patterns (path.Match), at most maxFiles of them.
func collectFiles(patterns []string) ([]wireFile, error) {
	root := workDir
	if os.Getpid() != 1 {
		root = unsafeWork()
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []wireFile
	for _, e := range entries {
		if !e.Type().IsRegular() || !matchAny(patterns, e.Name()) {
			continue
		}
		fd, err := unix.Open(filepath.Join(root, e.Name()), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		f := os.NewFile(uintptr(fd), e.Name())
		st, err := f.Stat()
		var data []byte
		if err == nil {
			data, err = io.ReadAll(io.LimitReader(f, tmpfsMB<<20))
		}
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, wireFile{Name: e.Name(), Data: data, Mode: int(st.Mode().Perm() & 0o700)})
		if len(out) >= maxFiles {
			break
		}
	}
	return out, nil
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// memfd is an empty memory file; sealedMemfd one holding data that no
// process can change (a program's stdin: memfds are memory the slot's
// cgroup counts).
func memfd(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

func sealedMemfd(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("stdin of %d bytes: %w", len(data), err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal stdin: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func size(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

// readBack is the first n bytes f holds.
func readBack(f *os.File, n int64) []byte {
	b := make([]byte, n)
	got, _ := f.ReadAt(b, 0)
	return b[:got]
}

// markersIn lists the markers that the last 64 KiB of f (of size bytes)
// contain.
func markersIn(f *os.File, size int64, markers []string) []string {
	if len(markers) == 0 || size == 0 {
		return nil
	}
	n := min(size, 64<<10)
	tail := make([]byte, n)
	got, _ := f.ReadAt(tail, size-n)
	tail = tail[:got]
	var found []string
	for _, m := range markers {
		if bytes.Contains(tail, []byte(m)) {
			found = append(found, m)
		}
	}
	return found
}
