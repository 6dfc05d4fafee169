package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteText writes the human report of an overload run: a column per phase.
func (r *OverloadResult) WriteText(w io.Writer) error {
	r.writeHeader(w)
	if err := r.writePhases(w); err != nil {
		return err
	}
	r.writeAttacker(w)
	if err := r.writeMetrics(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nverdict")
	for _, c := range r.Verdict {
		mark := "PASS"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s\n", mark, c.What)
	}
	return nil
}

// writeHeader writes what attacked what, and the valid load beside it.
func (r *OverloadResult) writeHeader(w io.Writer) {
	fmt.Fprintf(w, "overload: %s against %s (%s)\n", r.Attack, r.Target, r.Machine.Time.Format("2006-01-02 15:04 UTC"))
	if len(r.Phases) > 1 && r.Phases[1].Attacker != nil {
		fmt.Fprintf(w, "attack:   %s\n", r.Phases[1].Attacker.What)
	}
	s := r.Settings
	valid := fmt.Sprintf("%d gRPC client(s) × %d-rollout requests", s.Clients, s.BatchSize)
	if s.HTTPClients > 0 {
		valid += fmt.Sprintf("; %d HTTP client(s) × %d rollouts; a new gRPC and a new HTTP connection per probe request", s.HTTPClients, s.HTTPBatchSize)
	}
	fmt.Fprintf(w, "valid:    %s, each sending again when answered\n", valid)
	if s.AttackerProcess {
		fmt.Fprintln(w, "          (the attacker in a process of its own, at a lower priority)")
	}
	fmt.Fprintln(w)
}

// phaseTable writes rows of a table with a column per phase.
type phaseTable struct {
	tw     *tabwriter.Writer
	phases []*Phase
}

func (r *OverloadResult) newPhaseTable(w io.Writer) *phaseTable {
	return &phaseTable{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), phases: r.Phases}
}

// row writes a row called name whose cells cell computes from each phase.
func (t *phaseTable) row(name string, cell func(p *Phase) string) {
	cells := []string{name}
	for _, p := range t.phases {
		cells = append(cells, cell(p))
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t")+"\t")
}

// writePhases writes the table of the load, the probes and the server's
// resources in each phase.
func (r *OverloadResult) writePhases(w io.Writer) error {
	t := r.newPhaseTable(w)
	t.row("", func(p *Phase) string { return fmt.Sprintf("%s, %.1f s", p.Name, p.Seconds) })
	t.row("load average before", func(p *Phase) string { return loads(p.LoadBefore) })
	capacity := r.Phases[0]
	t.clients(capacity, "valid gRPC", func(p *Phase) *ClientLoad { return p.Valid })
	t.clients(capacity, "valid HTTP", func(p *Phase) *ClientLoad { return p.HTTP })
	for _, kind := range []string{"grpc", "http"} {
		if _, ok := capacity.Probes[kind]; ok {
			t.row("new "+kind+" connections", func(p *Phase) string {
				pr := p.Probes[kind]
				return fmt.Sprintf("%d of %d OK%s", pr.OK, pr.Sent, errorList(pr.Errors))
			})
		}
	}
	t.row("server CPU", func(p *Phase) string { return fmt.Sprintf("%.2f s", p.Server.CPUSeconds) })
	t.row("server peak RSS (VmHWM)", func(p *Phase) string {
		since := ""
		if p.Server.PeakRSSSinceStart {
			since = " (since start)"
		}
		return bytesOf(float64(p.Server.PeakRSSBytes)) + since
	})
	t.row("server most open files", func(p *Phase) string { return num(float64(p.Server.MaxOpenFiles)) })
	t.row("load generator CPU", func(p *Phase) string { return fmt.Sprintf("%.2f s", p.ClientCPUSeconds) })
	if capacity.Steal != nil {
		t.row("steal: server's, load generator's CPUs", func(p *Phase) string {
			if p.Steal == nil {
				return "-"
			}
			return fmt.Sprintf("%.1f%%, %.1f%%", 100*p.Steal.Server, 100*p.Steal.LoadGenerator)
		})
	}
	return t.tw.Flush()
}

// clients writes the rows of one kind of valid client, which get picks from
// a phase; none when the capacity phase had no such clients. Throughput is
// also shown as a share of the capacity phase's.
func (t *phaseTable) clients(capacity *Phase, name string, get func(p *Phase) *ClientLoad) {
	if get(capacity) == nil {
		return
	}
	t.row(name+" rollouts/s", func(p *Phase) string {
		c := get(p)
		if p == capacity {
			return num(c.RolloutsPerSecond)
		}
		return fmt.Sprintf("%s (%.0f%%)", num(c.RolloutsPerSecond), 100*ratio(c.RolloutsPerSecond, get(capacity).RolloutsPerSecond))
	})
	t.row("  requests", func(p *Phase) string {
		c := get(p)
		return fmt.Sprintf("%d = %d OK%s", c.Requests.Sent, c.Requests.OK, errorList(c.Requests.Errors))
	})
	t.row("  latency p50 / p99 / max", func(p *Phase) string {
		l := get(p).Latency
		return fmt.Sprintf("%s / %s / %s", dur(l.P50), dur(l.P99), dur(l.Max))
	})
}

// writeAttacker writes what the attacker of the attack phase sent and what
// became of it.
func (r *OverloadResult) writeAttacker(w io.Writer) {
	if len(r.Phases) < 2 || r.Phases[1].Attacker == nil {
		return
	}
	a := r.Phases[1].Attacker
	fmt.Fprintf(w, "\nattacker: %d sent, after a ramp of %.1f s:%s\n", a.Sent, r.Phases[1].RampSeconds, errorList(a.Outcomes))
	if l := a.Latency; l != nil {
		fmt.Fprintf(w, "  time to the outcome: p50 %s  p90 %s  p99 %s  max %s\n", dur(l.P50), dur(l.P90), dur(l.P99), dur(l.Max))
	}
	for _, n := range a.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// writeMetrics writes the table of the server's metrics that moved, and
// the phases whose scrapes failed.
func (r *OverloadResult) writeMetrics(w io.Writer) error {
	fmt.Fprintln(w, "\nserver metrics (counters: increase in the phase; gauges: start → end, highest sample)")
	t := r.newPhaseTable(w)
	for _, series := range r.changedSeries() {
		t.row(series, func(p *Phase) string {
			m, ok := p.Server.metric(series)
			switch {
			case !ok:
				return "-"
			case m.Counter:
				return "+" + metricValue(series, m.Increase)
			}
			return fmt.Sprintf("%s → %s, max %s", metricValue(series, m.Before), metricValue(series, m.After), metricValue(series, m.Max))
		})
	}
	if err := t.tw.Flush(); err != nil {
		return err
	}
	for _, p := range r.Phases {
		if p.Server.ScrapeErrors > 0 {
			fmt.Fprintf(w, "(%s: %d samples of /metrics failed)\n", p.Name, p.Server.ScrapeErrors)
		}
	}
	return nil
}

// changedSeries lists the watched series that moved in some phase.
func (r *OverloadResult) changedSeries() []string {
	set := map[string]bool{}
	for _, p := range r.Phases {
		for _, m := range p.Server.Metrics {
			if m.Increase != 0 || m.Max != 0 || m.Before != 0 || m.After != 0 {
				set[m.Series] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// metricValue formats a series' value: bytes as sizes, seconds as times.
func metricValue(series string, v float64) string {
	name, _, _ := strings.Cut(series, "{")
	switch {
	case strings.HasSuffix(name, "_bytes"):
		return bytesOf(v)
	case strings.HasSuffix(name, "_seconds_sum"):
		return fmt.Sprintf("%.3g s", v)
	}
	return num(v)
}
