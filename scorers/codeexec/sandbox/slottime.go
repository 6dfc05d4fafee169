package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Slot time is what the sandbox's wall-time limits are measured in: the
// wall time during which a slot's processes ran or could have run, that is
// the wall time less the time they waited for a CPU the machine gave to
// someone else. Every process of a slot is pinned to one CPU, and each
// slot is a cgroup v2 of its own, whose cpu.pressure ("some" total) is
// that waiting time. A sleeping program's slot time is its wall time, so
// it runs out of it on an idle machine and on a loaded one alike; a
// program that computes gets as much slot time as it needs to use its CPU
// time, however busy the machine. Its CPU time is what its time limit is
// judged on, and an exec'd test (executor.go) ends once the slot, less
// the executor itself, has used the test's CPU limit (cpu.stat, charged by
// the nanosecond; a python test ends once its process's CPU-time clock
// has, zygote_io.py), which also keeps a program that only competes with
// itself (many processes busy on the slot's one CPU) from stretching its
// slot time without end. The kernel's per-process CPU
// limit is then only a backstop a second above: the kernel charges that
// one by the tick, and on a loaded machine a program with many threads
// (the JVM) reached a 1 s limit having used 0.90 s.
//
// Without a writable cgroup v2 hierarchy with pressure accounting the
// clock is the wall clock: the limits are then wall time, as they were.

// slotClocks are the cgroup v2 directories of a pool's slots.
type slotClocks struct {
	dir string // the pool's
}

// slotClock is one slot's cgroup v2: the processes of its servers (and so
// of its programs), and its pressure and CPU accounting. Its child "run"
// holds the exec'd programs (the launcher moves itself there before it
// forks the program): the pressure there is the programs' own waiting,
// without the executor's, which wakes while a program sleeps and, on a
// loaded machine, waits for a CPU each time.
type slotClock struct {
	dir           string
	pressure, cpu *os.File
	// runPressure is the run cgroup's cpu.pressure, runProcs its
	// cgroup.procs opened for writing.
	runPressure, runProcs *os.File
}

// newSlotClocks makes the pool's cgroup v2 directory under this process's
// own cgroup v2.
func newSlotClocks() (*slotClocks, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return nil, err
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	rel, ok := own[""]
	if !ok {
		return nil, errors.New("this process is in no cgroup v2")
	}
	dir, err := os.MkdirTemp(filepath.Join(mount, rel), fmt.Sprintf("rewardd-sandbox-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("make a cgroup v2: %w", err)
	}
	c := &slotClocks{dir: dir}
	if _, err := os.Stat(filepath.Join(dir, "cpu.pressure")); err != nil {
		c.remove()
		return nil, fmt.Errorf("cgroup v2 without pressure accounting: %w", err)
	}
	return c, nil
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mount-point options... - fstype source ...
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, fs := strings.Fields(pre), strings.Fields(post)
		if ok && len(fields) >= 5 && len(fs) > 0 && fs[0] == "cgroup2" && fields[3] == "/" {
			return fields[4], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}

// slot makes slot i's cgroup and opens its accounting.
func (c *slotClocks) slot(i int) (*slotClock, error) {
	s := &slotClock{dir: filepath.Join(c.dir, strconv.Itoa(i))}
	if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	var err error
	if s.pressure, err = os.Open(filepath.Join(s.dir, "cpu.pressure")); err != nil {
		return nil, err
	}
	if s.cpu, err = os.Open(filepath.Join(s.dir, "cpu.stat")); err != nil {
		s.pressure.Close()
		return nil, err
	}
	run := filepath.Join(s.dir, "run")
	if err := os.Mkdir(run, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		s.remove()
		return nil, err
	}
	if s.runPressure, err = os.Open(filepath.Join(run, "cpu.pressure")); err != nil {
		s.remove()
		return nil, err
	}
	if s.runProcs, err = os.OpenFile(filepath.Join(run, "cgroup.procs"), os.O_WRONLY, 0); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// add moves process pid into the slot's cgroup.
func (s *slotClock) add(pid int) error {
	return os.WriteFile(filepath.Join(s.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// remove closes the slot's files and deletes its cgroup, once the
// processes of its last servers are gone.
func (s *slotClock) remove() {
	for _, f := range []*os.File{s.pressure, s.cpu, s.runPressure, s.runProcs} {
		if f != nil {
			f.Close()
		}
	}
	rmdir(filepath.Join(s.dir, "run"))
	rmdir(s.dir)
}

func (c *slotClocks) remove() { rmdir(c.dir) }

// clockFiles are what a slot's servers read their slot time from, as the
// descriptors after their own: the slot's cpu.pressure and cpu.stat, or
// /dev/null twice without them (a clock that is the wall clock).
func (s *slotClock) clockFiles() ([]*os.File, error) {
	if s != nil {
		return []*os.File{s.pressure, s.cpu}, nil
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	return []*os.File{null, null}, nil
}

// runFiles are what the executor, after clockFiles, measures its tests
// by: the run cgroup's cpu.pressure, and its cgroup.procs, which the
// launcher joins; /dev/null twice without them (the executor then
// measures its tests by the slot's clock).
func (s *slotClock) runFiles() ([]*os.File, error) {
	if s != nil {
		return []*os.File{s.runPressure, s.runProcs}, nil
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return []*os.File{null, null}, nil
}

// accounting reads a slot's waiting time and CPU time from its files.
// inSlot says the process reading them is one of the slot's servers: its
// own CPU time is then not the program's, and used leaves it out.
type accounting struct {
	pressure, cpu *os.File
	inSlot        bool
}

// stalled is the time the slot's processes waited for a CPU, in total
// (cpu.pressure's "some" total); 0 when unknown.
func (a accounting) stalled() time.Duration {
	d, _ := readMicros(a.pressure, "total=")
	return d
}

// used is the CPU time the slot's processes used, in total (cpu.stat's
// usage_usec); 0 when unknown.
func (a accounting) used() time.Duration {
	d, _ := readMicros(a.cpu, "usage_usec ")
	return d
}

// exact says whether the slot's CPU time is known (used), so that a test
// can be ended at its CPU limit by it.
func (a accounting) exact() bool {
	_, ok := readMicros(a.cpu, "usage_usec ")
	return ok
}

// readMicros reads f from its start and returns the number of
// microseconds after the first occurrence of key; ok says there was one.
func readMicros(f *os.File, key string) (d time.Duration, ok bool) {
	if f == nil {
		return 0, false
	}
	var buf [512]byte
	n, _ := f.ReadAt(buf[:], 0)
	b := buf[:n]
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0, false
	}
	b = b[i+len(key):]
	end := bytes.IndexAny(b, " \n")
	if end >= 0 {
		b = b[:end]
	}
	us, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || us < 0 {
		return 0, false
	}
	return time.Duration(us) * time.Microsecond, true
}

// watch measures one stretch of slot time: the slot time since it began,
// and the CPU the slot used meanwhile.
type watch struct {
	a                  accounting
	start              time.Time
	stall0, cpu0, own0 time.Duration
}

func (a accounting) watch() watch {
	return watch{a: a, start: time.Now(), stall0: a.stalled(), cpu0: a.used(), own0: a.own()}
}

// own is this process's CPU time when it is one of the slot's servers, 0
// otherwise.
func (a accounting) own() time.Duration {
	if !a.inSlot {
		return 0
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// elapsed is the slot time since w began: the wall time less the time the
// slot waited for a CPU, and the wall time.
func (w watch) elapsed() (slot, wall time.Duration) {
	wall = time.Since(w.start)
	stalled := w.a.stalled() - w.stall0
	return max(0, wall-max(0, stalled)), wall
}

// used is the CPU time the slot used since w began, less this process's
// own when it is one of the slot's servers: what the slot's programs used
// (the other servers wait meanwhile). Under load the servers' own CPU time
// is not small: a server wakes more often for each second of CPU time its
// program gets.
func (w watch) used() time.Duration { return max(0, w.a.used()-w.cpu0-(w.a.own()-w.own0)) }

// expired says whether w has run out of limit of slot time or of cpu of
// the slot's CPU time; left is how much longer to wait before asking again
// when it has not. The slot's processes share one CPU: its CPU time grows
// no faster than the wall clock, so cpu less what was used is a time
// within which it cannot run out.
func (w watch) expired(limit, cpu time.Duration) (done bool, left time.Duration) {
	slot, _ := w.elapsed()
	used := w.used()
	if slot >= limit || used >= cpu {
		return true, 0
	}
	return false, max(min(limit-slot, cpu-used), 5*time.Millisecond)
}
