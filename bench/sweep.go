package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Sweeps: what varies from point to point.
const (
	SweepBatch   = "batch"   // rollouts per request, 64 → 16,384
	SweepLength  = "length"  // completion bytes, 256 B → 128 KiB
	SweepClients = "clients" // concurrent clients, 1 → 16
)

// SweepValues returns the points of a sweep.
func SweepValues(kind string) ([]int, error) {
	switch kind {
	case SweepBatch:
		return []int{64, 256, 1024, 4096, 16384}, nil
	case SweepLength:
		return []int{256, 1 << 10, 4 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10}, nil
	case SweepClients:
		return []int{1, 2, 4, 8, 16}, nil
	}
	return nil, fmt.Errorf("unknown sweep %q (one of %s, %s, %s)", kind, SweepBatch, SweepLength, SweepClients)
}

// SweepResult is the report of a sweep.
type SweepResult struct {
	Kind string `json:"kind"`
	// Unit is the unit of work that CostPerUnit is per.
	Unit   string       `json:"unit"`
	Points []SweepPoint `json:"points"`
	// Growth says whether the cost grows linearly with the work.
	Growth Growth `json:"growth"`
	// Baseline is the Python baseline of a clients sweep (one process
	// whatever the clients, so it is measured once).
	Baseline *Baseline `json:"baseline,omitempty"`
}

// SweepPoint is one point of a sweep.
type SweepPoint struct {
	X int `json:"x"`
	// CPUMicrosPerRollout is process CPU per rollout (in-process only);
	// WallMicrosPerRollout is 1 / throughput.
	CPUMicrosPerRollout  float64 `json:"cpu_us_per_rollout,omitempty"`
	WallMicrosPerRollout float64 `json:"wall_us_per_rollout"`
	// PythonMicrosPerRollout is the Python baseline's time per rollout
	// (one process: its wall time is its CPU time).
	PythonMicrosPerRollout float64 `json:"python_us_per_rollout,omitempty"`
	// CostPerUnit is CPU (or, for --addr, wall) µs per unit of work.
	CostPerUnit float64 `json:"cost_us_per_unit"`
	Result      *Result `json:"result"`
}

// Growth is the verdict on how cost grows with work.
type Growth struct {
	// Ratio is the cost per unit at the last point ÷ the least cost per
	// unit over the points: about 1 or less when cost grows linearly (or
	// less) with work.
	Ratio float64 `json:"last_over_min_cost_per_unit"`
	// Exponent is the slope of log(cost per request) against log(work per
	// request) between the last two points: 1 is linear.
	Exponent float64 `json:"exponent_last_two_points,omitempty"`
	// OverRef is, for a length sweep, the cost per KiB at the last point ÷
	// that at 4 KiB (RefX): the growth past the lengths where a fixed cost
	// per rollout still shows.
	OverRef float64 `json:"last_over_4kib_cost_per_unit,omitempty"`
	RefX    int     `json:"ref_x,omitempty"`
	Linear  bool    `json:"linear"`
	Verdict string  `json:"verdict"`
}

// linearSlack is how much the cost per unit at the largest point may exceed
// the least one before growth is called worse than linear: noise on a
// shared machine is about 10–20%.
const linearSlack = 1.25

// Sweep runs kind's points with opts, varying one setting.
func Sweep(ctx context.Context, opts Options, kind string) (*SweepResult, error) {
	if opts.Scenario == CP {
		return nil, &OptionError{errors.New("the cp scenario has no sweep: it measures every solution per language")}
	}
	xs, err := SweepValues(kind)
	if err != nil {
		return nil, err
	}
	probe := opts
	switch kind {
	case SweepBatch:
		probe.BatchSize = xs[len(xs)-1]
	case SweepLength:
		probe.CompletionLength = xs[len(xs)-1]
	case SweepClients:
		probe.Clients = xs[len(xs)-1]
	}
	if err := probe.fill(); err != nil { // the largest point must fit the limits
		return nil, err
	}
	s, err := openFilled(ctx, &opts)
	if err != nil {
		return nil, err
	}
	defer s.close()

	res := &SweepResult{Kind: kind, Unit: "rollout"}
	if kind == SweepLength {
		res.Unit = "KiB of completion"
	}
	for i, x := range xs {
		po := opts
		what := pointSweep
		switch kind {
		case SweepBatch:
			po.BatchSize = x
		case SweepLength:
			po.CompletionLength = x
		case SweepClients:
			po.Clients = x
			if i > 0 {
				what = pointLoadOnly
			}
		}
		s.say("sweep %s: point %d of %d (%d)", kind, i+1, len(xs), x)
		r, err := s.point(ctx, po, what)
		if err != nil {
			return nil, fmt.Errorf("sweep %s = %d: %w", kind, x, err)
		}
		if kind == SweepClients && i == 0 {
			res.Baseline = r.Baseline
		}
		p := SweepPoint{X: x, Result: r, WallMicrosPerRollout: ratio(1e6, r.RolloutsPerSecond)}
		cost := p.WallMicrosPerRollout
		if r.Process != nil {
			p.CPUMicrosPerRollout = r.Process.CPUMicrosPerRollout
			cost = p.CPUMicrosPerRollout
		}
		if b := r.Baseline; b != nil {
			p.PythonMicrosPerRollout = ratio(1e6, b.RolloutsPerSecond)
		}
		p.CostPerUnit = cost
		if kind == SweepLength {
			p.CostPerUnit = cost / (r.CompletionBytes.Mean / 1024)
		}
		res.Points = append(res.Points, p)
	}
	res.Growth = growth(res)
	return res, nil
}

func growth(res *SweepResult) Growth {
	pts := res.Points
	if len(pts) < 2 {
		return Growth{Verdict: "too few points"}
	}
	least := math.Inf(1)
	for _, p := range pts {
		least = min(least, p.CostPerUnit)
	}
	last := pts[len(pts)-1]
	g := Growth{Ratio: ratio(last.CostPerUnit, least)}
	if res.Kind != SweepClients {
		// Work per request: the batch, or the batch's bytes.
		a, b := pts[len(pts)-2], last
		wa, wb := work(res.Kind, a), work(res.Kind, b)
		ca, cb := a.CostPerUnit*wa, b.CostPerUnit*wb
		if wa > 0 && wb > 0 && ca > 0 && cb > 0 {
			g.Exponent = math.Log(cb/ca) / math.Log(wb/wa)
		}
	}
	if res.Kind == SweepLength {
		for _, p := range pts {
			if p.X == 4<<10 {
				g.OverRef, g.RefX = ratio(last.CostPerUnit, p.CostPerUnit), p.X
			}
		}
	}
	g.Linear = g.Ratio <= linearSlack
	switch {
	case g.Linear && res.Kind == SweepClients:
		g.Verdict = fmt.Sprintf("cost per rollout stays flat as clients grow (last point %.2f× the least)", g.Ratio)
	case g.Linear:
		g.Verdict = fmt.Sprintf("cost grows linearly (or less) with work: cost per %s at the largest point is %.2f× the least", res.Unit, g.Ratio)
	default:
		g.Verdict = fmt.Sprintf("cost grows faster than the work: cost per %s at the largest point is %.2f× the least (profile that point)", res.Unit, g.Ratio)
	}
	return g
}

// work is the work of one request at p, in the sweep's unit.
func work(kind string, p SweepPoint) float64 {
	r := p.Result
	if kind == SweepLength {
		return float64(r.Settings.BatchSize) * r.CompletionBytes.Mean / 1024
	}
	return float64(r.Settings.BatchSize)
}

// WriteText writes the sweep's table and verdict.
func (s *SweepResult) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\trollouts/s\tevals/s\tp50\tp99\tCPU µs/rollout\twall µs/rollout\tcost µs/%s\tPython µs/rollout\trewardd/Python\terrors\t\n", s.Kind, s.Unit)
	for _, p := range s.Points {
		r := p.Result
		py, q := "-", "-"
		if p.PythonMicrosPerRollout > 0 {
			py = fmt.Sprintf("%.2f", p.PythonMicrosPerRollout)
			q = fmt.Sprintf("%.2f×", ratio(p.PythonMicrosPerRollout, p.WallMicrosPerRollout))
		} else if s.Baseline != nil && s.Baseline.RolloutsPerSecond > 0 {
			pym := 1e6 / s.Baseline.RolloutsPerSecond
			py = fmt.Sprintf("%.2f", pym)
			q = fmt.Sprintf("%.2f×", ratio(pym, p.WallMicrosPerRollout))
		}
		cpu := "-"
		if p.CPUMicrosPerRollout > 0 {
			cpu = fmt.Sprintf("%.2f", p.CPUMicrosPerRollout)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.3f\t%s\t%s\t%d\t\n", p.X, num(r.RolloutsPerSecond), num(r.EvaluationsPerSecond),
			dur(r.Latency.P50), dur(r.Latency.P99), cpu, p.WallMicrosPerRollout, p.CostPerUnit, py, q, r.Requests.Failed())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Points) > 0 && len(s.Points[0].Result.PerFunction) > 0 {
		fmt.Fprintf(w, "\nper function, one core, no transport: rewardd ns/rollout (with the baseline: Python ÷ rewardd time) at each %s\n", s.Kind)
		fmt.Fprintf(tw, "function\t")
		for _, p := range s.Points {
			fmt.Fprintf(tw, "%d\t", p.X)
		}
		fmt.Fprintln(tw)
		for k, f := range s.Points[0].Result.PerFunction {
			fmt.Fprintf(tw, "%s\t", f.Function)
			for _, p := range s.Points {
				if k < len(p.Result.PerFunction) {
					c := p.Result.PerFunction[k]
					if c.Speedup > 0 {
						fmt.Fprintf(tw, "%.0f (%.1f×)\t", c.RewarddNsPerRollout, c.Speedup)
					} else {
						fmt.Fprintf(tw, "%.0f\t", c.RewarddNsPerRollout)
					}
				}
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "growth: %s", s.Growth.Verdict)
	if s.Growth.Exponent != 0 {
		fmt.Fprintf(w, "; exponent of cost per request against work per request over the last two points: %.2f", s.Growth.Exponent)
	}
	if s.Growth.RefX > 0 {
		fmt.Fprintf(w, "; cost per %s at %d ÷ at %d: %.2f×", s.Unit, s.Points[len(s.Points)-1].X, s.Growth.RefX, s.Growth.OverRef)
	}
	fmt.Fprintln(w)
	return err
}
