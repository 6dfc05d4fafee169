package bench

import (
	"maps"
	"os"
	"slices"

	"github.com/prometheus/procfs"
)

// Steal is the share of a phase's CPU time that the hypervisor gave to
// other guests (steal in /proc/stat): on the CPUs the server may run on
// and on those of the load generator.
type Steal struct {
	ServerCPUs        []uint64 `json:"server_cpus"`
	Server            float64  `json:"server"`
	LoadGeneratorCPUs []uint64 `json:"load_generator_cpus"`
	LoadGenerator     float64  `json:"load_generator"`
}

// stealClock reads steal for a phase.
type stealClock struct {
	fs              *procfs.FS // nil: /proc cannot be read
	server, loadGen []uint64   // allowed CPUs; nil: every CPU
	start           map[int64]procfs.CPUStat
}

// newStealClock reads which CPUs the server (pid; 0: unknown, every CPU)
// and this process may run on.
func newStealClock(pid int) *stealClock {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return &stealClock{}
	}
	c := &stealClock{fs: &fs, loadGen: allowedCPUs(fs, os.Getpid())}
	if pid != 0 {
		c.server = allowedCPUs(fs, pid)
	}
	return c
}

func allowedCPUs(fs procfs.FS, pid int) []uint64 {
	p, err := fs.Proc(pid)
	if err != nil {
		return nil
	}
	st, err := p.NewStatus()
	if err != nil {
		return nil
	}
	return st.CpusAllowedList
}

// begin starts a phase's clock.
func (c *stealClock) begin() {
	c.start = nil
	if c.fs == nil {
		return
	}
	if st, err := c.fs.Stat(); err == nil {
		c.start = st.CPU
	}
}

// end returns the phase's steal; nil when /proc/stat could not be read at
// its start or end.
func (c *stealClock) end() *Steal {
	if c.start == nil {
		return nil
	}
	st, err := c.fs.Stat()
	if err != nil {
		return nil
	}
	share := func(cpus []uint64) ([]uint64, float64) {
		if cpus == nil {
			for _, id := range slices.Sorted(maps.Keys(st.CPU)) {
				cpus = append(cpus, uint64(id))
			}
		}
		var steal, total float64
		for _, id := range cpus {
			a, okA := c.start[int64(id)]
			b, okB := st.CPU[int64(id)]
			if !okA || !okB {
				continue
			}
			steal += b.Steal - a.Steal
			total += cpuTotal(b) - cpuTotal(a)
		}
		if total <= 0 {
			return cpus, 0
		}
		return cpus, steal / total
	}
	s := &Steal{}
	s.ServerCPUs, s.Server = share(c.server)
	s.LoadGeneratorCPUs, s.LoadGenerator = share(c.loadGen)
	return s
}

// cpuTotal is a CPU's time in every state (guest time is already counted
// in user and nice).
func cpuTotal(s procfs.CPUStat) float64 {
	return s.User + s.Nice + s.System + s.Idle + s.Iowait + s.IRQ + s.SoftIRQ + s.Steal
}
