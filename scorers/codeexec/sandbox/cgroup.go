package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroups bounds each slot as a whole where the machine has cgroup v1
// memory and pids controllers writable by this process: the rlimits bound
// each process, but not the sum over a program's processes, nor what it
// keeps in pipes, memfds and the slot's tmpfs. Without them the pool runs
// with rlimits only (Pool.Cgroups says why).
type cgroups struct {
	memory, pids string // this pool's directories in each hierarchy
}

// slotCgroup is one slot's pair of cgroups. Its memory cgroup has a child,
// "run", that holds the exec'd programs (the launcher joins it through
// runProcs before it forks the program) under a limit of their own below
// the slot's: the kernel's OOM killer then chooses among the programs
// only, never the slot's servers, however small each of the program's
// processes is. The slot's limit stays the bound of everything in it
// (the Python programs, forked from the zygote, are in the slot itself,
// each bounded by its address space).
type slotCgroup struct {
	memory, pids string
	// runMemory is the run child's directory, runProcs its cgroup.procs
	// opened for writing.
	runMemory string
	runProcs  *os.File
	// limits last written, to write only when a job's differ.
	memLimit, runLimit, pidsMax int64
}

// newCgroups makes this pool's cgroup directories under the process's own
// cgroups.
func newCgroups() (*cgroups, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	memRel, okMem := own["memory"]
	pidsRel, okPids := own["pids"]
	if !okMem || !okPids {
		return nil, errors.New("no cgroup v1 memory and pids controllers")
	}
	// A name of its own per pool: one process may run several.
	mem, err := os.MkdirTemp(filepath.Join("/sys/fs/cgroup/memory", memRel), fmt.Sprintf("rewardd-sandbox-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("make a memory cgroup: %w", err)
	}
	c := &cgroups{memory: mem}
	pids := filepath.Join("/sys/fs/cgroup/pids", pidsRel, filepath.Base(mem))
	if err := os.Mkdir(pids, 0o700); err != nil {
		c.remove()
		return nil, fmt.Errorf("make %s: %w", pids, err)
	}
	c.pids = pids
	return c, nil
}

// ownCgroups reads /proc/self/cgroup: controller → path, for v1
// hierarchies, and "" → path for the v2 one.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	own := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			own[""] = parts[2] // the cgroup v2 hierarchy
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			own[ctrl] = parts[2]
		}
	}
	return own, sc.Err()
}

// slot makes slot i's cgroups.
func (c *cgroups) slot(i int) (*slotCgroup, error) {
	s := &slotCgroup{memory: filepath.Join(c.memory, strconv.Itoa(i)), pids: filepath.Join(c.pids, strconv.Itoa(i))}
	s.runMemory = filepath.Join(s.memory, "run")
	for _, dir := range []string{s.memory, s.pids, s.runMemory} {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			s.remove()
			return nil, err
		}
	}
	var err error
	if s.runProcs, err = os.OpenFile(filepath.Join(s.runMemory, "cgroup.procs"), os.O_WRONLY, 0); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// runFile is the run child's cgroup.procs, which every launcher joins
// (launcher.c); /dev/null without cgroups (s nil), which the caller
// closes once the executor has it.
func (s *slotCgroup) runFile() (*os.File, error) {
	if s != nil {
		return s.runProcs, nil
	}
	return os.OpenFile(os.DevNull, os.O_RDWR, 0)
}

// add moves process pid (the runner, or the zygote before it forks) into
// the slot.
func (s *slotCgroup) add(pid int) error {
	for _, dir := range []string{s.memory, s.pids} {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return err
		}
	}
	return nil
}

// limit sets the slot's bounds for a job. The slot's memory limit is the
// job's memory limit plus room for the servers and the tmpfs; its run
// child's is the job's memory limit plus the tmpfs's and one server's, so
// that the programs run out of memory there first, and the OOM killer
// chooses among them, while a runtime keeps room for what it holds beyond
// its heap flag (the JVM's classes and code, V8's young generation): the
// two servers' room left, 128 MiB, is more than the three servers hold
// (about 71 MB). The slot's processes are the job's plus the servers' tasks
// (the executor's are the Go runtime's threads) and the launcher.
//
// tight bounds the run child by l.MemoryMB itself instead, above what run
// holds now and cannot give back (its processes' memory and shared
// memory, the kernel's): for a language whose memory limit is the
// cgroup's (Resident).
func (s *slotCgroup) limit(l Limits, tight bool) error {
	mem := int64(l.MemoryMB+tmpfsMB+3*serverMB) << 20
	if mem != s.memLimit {
		if err := os.WriteFile(filepath.Join(s.memory, "memory.limit_in_bytes"), []byte(strconv.FormatInt(mem, 10)), 0); err != nil {
			return fmt.Errorf("memory limit: %w", err)
		}
		s.memLimit = mem
	}
	run := int64(l.MemoryMB+tmpfsMB+serverMB) << 20
	if tight {
		if held, ok := held(s.runMemory); ok {
			run = min(run, held+int64(l.MemoryMB)<<20)
		}
	}
	if run != s.runLimit {
		err := os.WriteFile(filepath.Join(s.runMemory, "memory.limit_in_bytes"), []byte(strconv.FormatInt(run, 10)), 0)
		if err != nil && tight && errors.Is(err, syscall.EBUSY) {
			// run holds more than it can give back for the tight
			// limit: the generous one, and the program's peak resident
			// set is judged.
			return s.limit(l, false)
		}
		if err != nil {
			return fmt.Errorf("memory limit of the programs: %w", err)
		}
		s.runLimit = run
	}
	pids := int64(l.Processes + serverTasks)
	if pids != s.pidsMax {
		if err := os.WriteFile(filepath.Join(s.pids, "pids.max"), []byte(strconv.FormatInt(pids, 10)), 0); err != nil {
			return fmt.Errorf("pids limit: %w", err)
		}
		s.pidsMax = pids
	}
	return nil
}

// held is the memory the memory cgroup dir is charged for that it cannot
// reclaim: its usage less its page cache (shared memory, its tmpfs and
// memfds, stays in).
func held(dir string) (int64, bool) {
	usage, err := readInt(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return 0, false
	}
	data, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return 0, false
	}
	stat := map[string]int64{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, " ")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			stat[k] = n
		}
	}
	cache := stat["total_cache"] - stat["total_shmem"]
	return usage - max(0, cache), true
}

func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

// ooms is how many times the kernel killed a process of the slot for
// memory, or -1 when unknown: the oom_kill of memory.oom_control of the
// slot's memory cgroup and of its run child, which cgroup v1 does not add
// to its parent's.
func (s *slotCgroup) ooms() int64 {
	slot, run := oomKills(s.memory), oomKills(s.runMemory)
	if slot < 0 || run < 0 {
		return -1
	}
	return slot + run
}

// oomKills is the oom_kill of the memory cgroup dir, or -1 when unknown.
func oomKills(dir string) int64 {
	data, err := os.ReadFile(filepath.Join(dir, "memory.oom_control"))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// remove deletes the slot's cgroups, once the processes of its last fork
// server are gone.
func (s *slotCgroup) remove() {
	if s.runProcs != nil {
		s.runProcs.Close()
	}
	rmdir(s.runMemory)
	rmdir(s.memory)
	rmdir(s.pids)
}

// remove deletes the pool's cgroup directories (after every slot's).
func (c *cgroups) remove() {
	for _, dir := range []string{c.memory, c.pids} {
		if dir != "" {
			rmdir(dir)
		}
	}
}

// rmdir removes a cgroup directory. The kernel refuses while the cgroup
// still has tasks; those of a killed fork server's namespace leave it a
// moment after the fork server itself is reaped, so it tries again for up
// to two seconds.
func rmdir(dir string) {
	for range 100 {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || !errors.Is(err, syscall.EBUSY) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serverMB is the room a slot's memory cgroup leaves for each of its
// three servers (runner, zygote, executor).
const serverMB = 64

// serverTasks is the room a slot's pids cgroup leaves for the servers'
// tasks and a test's launcher: the Python servers' one thread each, the
// executor's runtime threads (GOMAXPROCS 1).
const serverTasks = 16
