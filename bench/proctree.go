package bench

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// CPUBreakdown is where the CPU of a code scenario's measured phase went,
// process by process, per submission: read from /proc (utime, stime,
// minflt of each process; the zygotes' cutime, cstime and cminflt for the
// programs they forked and reaped) before and after the phase, not
// estimated. Time is counted by the kernel's tick (10 ms), so a part needs
// a few hundred submissions to be read to a tenth of a millisecond.
type CPUBreakdown struct {
	// Root says whose process tree this is: "this process" (the
	// in-process server and the load generator) or "server PID N".
	Root  string    `json:"root"`
	Parts []CPUPart `json:"parts"`
	// Exited counts the sandbox servers that exited during the phase
	// (a slot restarted): their CPU is missing from the parts.
	Exited int `json:"exited,omitempty"`
}

// CPUPart is one kind of process of a CPUBreakdown, its figures per
// submission.
type CPUPart struct {
	Name string `json:"name"`
	// Processes is how many processes of the kind were counted (the
	// programs: how many the zygotes reaped is not in /proc, so 0).
	Processes   int     `json:"processes,omitempty"`
	UserMs      float64 `json:"user_ms"`
	SysMs       float64 `json:"sys_ms"`
	MinorFaults float64 `json:"minor_faults"`
	// ShortLived says the part's processes each live less than the
	// kernel's tick: the kernel splits a process's time between user and
	// system by the ticks that found it in each, and gives all of it to
	// user when none did, so only UserMs+SysMs means anything (perf
	// splits it; bench/README.md).
	ShortLived bool `json:"short_lived,omitempty"`
}

// The parts of a CPUBreakdown, in the order they are printed.
const (
	partGo       = "rewardd (Go)"
	partRunner   = "runners (test code)"
	partZygote   = "zygotes (fork, reap, clean)"
	partPrograms = "programs (the zygotes' children)"
	partExecutor = "executors (other languages)"
	partOther    = "other children"
)

// procCounters are one process's counters from /proc/PID/stat, in ticks
// and faults.
type procCounters struct {
	utime, stime, cutime, cstime int64
	minflt, cminflt              int64
}

func (c procCounters) minus(o procCounters) procCounters {
	return procCounters{c.utime - o.utime, c.stime - o.stime, c.cutime - o.cutime, c.cstime - o.cstime,
		c.minflt - o.minflt, c.cminflt - o.cminflt}
}

// treeSnapshot is the counters of a process and of its direct children
// (the sandbox servers: runner, zygote, executor), with each child's role.
type treeSnapshot struct {
	root     procCounters
	children map[int]roleCounters
}

type roleCounters struct {
	role string
	c    procCounters
}

// snapshotTree reads the counters of process root and its direct children.
func snapshotTree(root int) treeSnapshot {
	t := treeSnapshot{children: map[int]roleCounters{}}
	t.root, _, _ = readProcStat(root)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return t
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		c, ppid, ok := readProcStat(pid)
		if !ok || ppid != root {
			continue
		}
		t.children[pid] = roleCounters{role: processRole(pid), c: c}
	}
	return t
}

// readProcStat reads /proc/PID/stat: the counters and the parent's pid.
func readProcStat(pid int) (procCounters, int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procCounters{}, 0, false
	}
	// pid (comm) state ppid …: the fields after the comm, which may hold
	// spaces, start at state (field 3 of proc(5)).
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procCounters{}, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 15 {
		return procCounters{}, 0, false
	}
	n := func(k int) int64 { v, _ := strconv.ParseInt(f[k], 10, 64); return v }
	ppid, _ := strconv.Atoi(f[1])
	// proc(5) fields 10 minflt, 11 cminflt, 14 utime, 15 stime, 16
	// cutime, 17 cstime; f[0] is field 3.
	return procCounters{utime: n(11), stime: n(12), cutime: n(13), cstime: n(14), minflt: n(7), cminflt: n(8)}, ppid, true
}

// processRole is a sandbox server's role from its command line (the
// harness's last argument, the helper's role argument), or "".
func processRole(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	for _, arg := range bytes.Split(data, []byte{0}) {
		switch string(arg) {
		case "runner", "zygote", "executor":
			return string(arg)
		}
	}
	return ""
}

// breakdown is the CPU between two snapshots, per submission.
func breakdown(before, after treeSnapshot, submissions int64, root string) *CPUBreakdown {
	if submissions <= 0 {
		return nil
	}
	b := &CPUBreakdown{Root: root}
	sums := map[string]*procCounters{}
	counts := map[string]int{}
	add := func(part string, c procCounters) {
		if sums[part] == nil {
			sums[part] = &procCounters{}
		}
		s := sums[part]
		s.utime += c.utime
		s.stime += c.stime
		s.minflt += c.minflt
	}
	add(partGo, after.root.minus(before.root))
	counts[partGo] = 1
	for pid, a := range after.children {
		d := a.c
		if p, ok := before.children[pid]; ok {
			d = a.c.minus(p.c)
		}
		part := map[string]string{"runner": partRunner, "zygote": partZygote, "executor": partExecutor}[a.role]
		if part == "" {
			part = partOther
		}
		add(part, d)
		counts[part]++
		// What a server reaped: a zygote's children are the programs;
		// an executor's, the programs it ran.
		reaped := procCounters{utime: d.cutime, stime: d.cstime, minflt: d.cminflt}
		switch a.role {
		case "zygote":
			add(partPrograms, reaped)
		case "executor":
			add(partExecutor, reaped)
		}
	}
	for pid := range before.children {
		if _, ok := after.children[pid]; !ok {
			b.Exited++
		}
	}
	per := float64(submissions)
	for _, name := range []string{partGo, partRunner, partZygote, partPrograms, partExecutor, partOther} {
		s := sums[name]
		if s == nil {
			continue
		}
		b.Parts = append(b.Parts, CPUPart{
			Name: name, Processes: counts[name],
			UserMs: float64(s.utime) * 10 / per, SysMs: float64(s.stime) * 10 / per, // USER_HZ: 100
			MinorFaults: float64(s.minflt) / per, ShortLived: name == partPrograms,
		})
	}
	return b
}

// Total is the CPU of every part, per submission, in milliseconds.
func (b *CPUBreakdown) Total() float64 {
	var t float64
	for _, p := range b.Parts {
		t += p.UserMs + p.SysMs
	}
	return t
}
