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

// slotCgroup is one slot's pair of cgroups.
type slotCgroup struct {
	memory, pids string
	// limits last written, to write only when a job's differ.
	memLimit, pidsMax int64
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
	for _, dir := range []string{s.memory, s.pids} {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	return s, nil
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

// limit sets the slot's bounds for a job: its memory limit plus room for
// the servers and the tmpfs, and its processes plus the servers' tasks
// (the executor's are the Go runtime's threads) and the launcher.
//
// tight bounds the job's programs by l.MemoryMB itself instead, above
// what the slot holds now and cannot give back (its processes' memory and
// shared memory, the kernel's): for a language whose memory limit is the
// cgroup's (Resident).
func (s *slotCgroup) limit(l Limits, tight bool) error {
	mem := int64(l.MemoryMB+tmpfsMB+3*serverMB) << 20
	if tight {
		if held, ok := s.held(); ok {
			mem = min(mem, held+int64(l.MemoryMB)<<20)
		}
	}
	if mem != s.memLimit {
		err := os.WriteFile(filepath.Join(s.memory, "memory.limit_in_bytes"), []byte(strconv.FormatInt(mem, 10)), 0)
		if err != nil && tight && errors.Is(err, syscall.EBUSY) {
			// The slot holds more than it can give back for the tight
			// limit: the generous one, and the program's peak resident
			// set is judged.
			return s.limit(l, false)
		}
		if err != nil {
			return fmt.Errorf("memory limit: %w", err)
		}
		s.memLimit = mem
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

// held is the memory the slot's cgroup is charged for that it cannot
// reclaim: its usage less its page cache (shared memory, its tmpfs and
// memfds, stays in).
func (s *slotCgroup) held() (int64, bool) {
	usage, err := readInt(filepath.Join(s.memory, "memory.usage_in_bytes"))
	if err != nil {
		return 0, false
	}
	data, err := os.ReadFile(filepath.Join(s.memory, "memory.stat"))
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
// memory (memory.oom_control's oom_kill), or -1 when unknown.
func (s *slotCgroup) ooms() int64 {
	data, err := os.ReadFile(filepath.Join(s.memory, "memory.oom_control"))
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
