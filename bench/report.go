package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes v (a *Result or a *SweepResult) as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteText writes the human report of a run.
func (r *Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format+"\n", args...) }
	r.writeLoad(p)
	r.writeProcess(p)
	r.writeScores(p)
	r.writeCode(p)
	r.writeBaseline(p)
	r.writeRatios(p)
	for _, n := range r.Notes {
		p("note\t%s", n)
	}
	return tw.Flush()
}

// printer writes one line of a report's table.
type printer func(format string, args ...any)

// writeLoad writes what was run, on what, and the load's requests, throughput
// and latency.
func (r *Result) writeLoad(p printer) {
	target := "in-process server (" + fmt.Sprint(r.Settings.Workers) + " workers) over loopback gRPC"
	if r.Target != "in-process" {
		target = "server at " + r.Target
	}
	p("scenario\t%s on %s: %d function(s) (%s)", r.Scenario, target, len(r.Functions), strings.Join(r.Functions, ", "))
	run := fmt.Sprintf("%.1f s", r.Settings.DurationSeconds)
	if r.Settings.Requests > 0 {
		run = fmt.Sprintf("%d requests", r.Settings.Requests)
	}
	p("load\tbatch %d rollouts in groups of %d, %d client(s), %s; completions %.0f B on average (%d–%d), %.0f%% wrong",
		r.Settings.BatchSize, r.Settings.GroupSize, r.Settings.Clients, run,
		r.CompletionBytes.Mean, r.CompletionBytes.Min, r.CompletionBytes.Max, 100*r.Settings.Wrong)
	engine := "regex engine " + r.Machine.RegexEngine
	if r.Machine.RegexEngine == "" {
		engine = "the remote server's regex engine: its rewardd_build_info"
	}
	p("machine\t%d CPUs, GOMAXPROCS %d, load average %s before, %s after; %s", r.Machine.CPUs, r.Machine.GOMAXPROCS,
		loads(r.Machine.LoadBefore), loads(r.Machine.LoadAfter), engine)
	p("requests\t%d sent = %d OK + %d failed%s (in %.2f s; warm-up: %d sent, %d OK)", r.Requests.Sent, r.Requests.OK,
		r.Requests.Failed(), errorList(r.Requests.Errors), r.ElapsedSeconds, r.WarmupRequests.Sent, r.WarmupRequests.OK)
	p("throughput\t%s rollouts/s, %s evaluations/s", num(r.RolloutsPerSecond), num(r.EvaluationsPerSecond))
	p("latency\tp50 %s  p90 %s  p99 %s  max %s", dur(r.Latency.P50), dur(r.Latency.P90), dur(r.Latency.P99), dur(r.Latency.Max))
	if l := r.ServerLatency; l != nil {
		p("\tserver side (rewardd_request_duration_seconds, interpolated in 2.5×-wide buckets): p50 %s  p90 %s  p99 %s", dur(l.P50), dur(l.P90), dur(l.P99))
	}
	if l := r.RefusedLatency; l != nil {
		p("refused\tRESOURCE_EXHAUSTED after p50 %s  p90 %s  p99 %s  max %s", dur(l.P50), dur(l.P90), dur(l.P99), dur(l.Max))
	}
}

// writeProcess writes this process's CPU and memory, when it served.
func (r *Result) writeProcess(p printer) {
	if pr := r.Process; pr != nil {
		since := ""
		if pr.PeakRSSSinceStart {
			since = " (since start)"
		}
		p("process\tCPU %.2f s (%.2f cores), %.2f µs CPU/rollout; peak RSS %s%s; %.1f allocs and %s allocated/rollout, %d GCs",
			pr.CPUSeconds, pr.Cores, pr.CPUMicrosPerRollout, bytesOf(float64(pr.PeakRSSBytes)), since,
			pr.AllocsPerRollout, bytesOf(pr.AllocBytesPerRollout), pr.GCs)
		p("\t(server and load generator together; the load generator sends pre-encoded requests and decodes the answers)")
		if pr.MachineCPUSeconds > 0 && r.Code == nil {
			p("\tthe machine's busy CPU %.2f s of %.2f s available, of which %.2f s (%.2f cores) not this process's",
				pr.MachineCPUSeconds, float64(r.Machine.CPUs)*r.ElapsedSeconds, pr.OtherCPUSeconds, ratio(pr.OtherCPUSeconds, r.ElapsedSeconds))
		}
		if pr.GOMAXPROCSeconds > 0 {
			p("\tGo's scheduler: of %.2f P-seconds, %.2f s idle (no goroutine ready to run), %.2f s in the collector",
				pr.GOMAXPROCSeconds, pr.IdlePSeconds, pr.GCCPUSeconds)
		}
		if r.Code != nil {
			p("\t(not the sandboxes' Python processes, which are others: see the machine CPU below)")
		}
	}
}

// writeScores writes each function's mean OK score and its other outcomes.
func (r *Result) writeScores(p printer) {
	var outs []string
	for _, o := range r.Outcomes {
		s := fmt.Sprintf("%s mean %.3f", o.Function, o.MeanOK)
		if o.NotApplicable > 0 || o.Error > 0 {
			s += fmt.Sprintf(" (%d n/a, %d error)", o.NotApplicable, o.Error)
		}
		outs = append(outs, s)
	}
	p("scores\t%s", strings.Join(outs, "; "))
}

// writeCode writes the code scenarios' submissions and their CPU.
func (r *Result) writeCode(p printer) {
	if c := r.Code; c != nil {
		p("")
		p("code\t%s submissions/s, %s tests/s (%g tests per submission)", num1(c.SubmissionsPerSecond), num1(c.TestsPerSecond), c.TestsPerSubmission)
		if c.Latency != nil {
			p("\tper submission, timed in the server's scorer (call to verdict): p50 %s  p90 %s  p99 %s  max %s  (%d submissions)",
				dur(c.Latency.P50), dur(c.Latency.P90), dur(c.Latency.P99), dur(c.Latency.Max), c.Timed)
		}
		if c.CPUSeconds > 0 {
			p("\tCPU of rewardd and its sandboxes: %.2f s (%.2f cores), %.1f ms per submission; the machine's busy CPU %.2f s, of which %.2f s not ours",
				c.CPUSeconds, ratio(c.CPUSeconds, r.ElapsedSeconds), c.CPUMsPerSubmission, c.MachineCPUSeconds, c.OtherCPUSeconds)
		}
		if b := c.Breakdown; b != nil {
			p("\tCPU per submission by process (%s and its children, from /proc: utime, stime, minflt; programs: the zygotes' reaped children):", b.Root)
			for _, part := range b.Parts {
				n := ""
				if part.Processes > 0 {
					n = fmt.Sprintf(" ×%d", part.Processes)
				}
				if part.ShortLived {
					p("\t  %-34s user+sys %.3f ms (each lives under a tick: the kernel's split means nothing)  minor faults %.0f",
						part.Name+n, part.UserMs+part.SysMs, part.MinorFaults)
					continue
				}
				p("\t  %-34s user %.3f ms  sys %.3f ms  minor faults %.0f", part.Name+n, part.UserMs, part.SysMs, part.MinorFaults)
			}
			p("\t  %-34s %.3f ms", "total", b.Total())
			if b.Exited > 0 {
				p("\t  (%d sandbox servers exited during the run: their CPU is not in these parts)", b.Exited)
			}
		}
		if c.Errors > 0 {
			p("\t%d rollouts scored ERROR (the sandbox could not run them), e.g.:", c.Errors)
			for _, e := range c.ErrorExamples {
				p("\t  %s", e)
			}
		}
	}
}

// writeBaseline writes the Python baseline's figures and agreement.
func (r *Result) writeBaseline(p printer) {
	if b := r.Baseline; b != nil && b.Runner != "" {
		p("")
		p("baseline\tPython %s, %s, %d threads", b.Python, b.Runner, b.Workers)
		p("\t%s submissions/s, %s tests/s; per submission p50 %s  p90 %s  p99 %s  max %s; %d batches, per batch p50 %s; %d timeouts",
			num1(b.RolloutsPerSecond), num1(b.TestsPerSecond), dur(b.SubmissionLatency.P50), dur(b.SubmissionLatency.P90), dur(b.SubmissionLatency.P99),
			dur(b.SubmissionLatency.Max), b.Batches, dur(b.Latency.P50), b.Timeouts)
		p("\tCPU of Python and its subprocesses: %.2f s (%.2f cores), %.1f ms per submission; the machine's busy CPU %.2f s, of which %.2f s not ours",
			b.CPUSeconds, ratio(b.CPUSeconds, b.WallSeconds), b.CPUSeconds*1e3/float64(max(b.Rollouts, 1)), b.MachineCPUSeconds, b.OtherCPUSeconds)
		if a := b.Agreement; a != nil {
			p("agreement\t%d of %d rollouts with the same score on both sides (%.2f%%)", a.Agree, a.Compared, 100*ratio(float64(a.Agree), float64(a.Compared)))
			if c := a.Passes; c != nil {
				p("\tall tests passed: rewardd %d, naive %d; of the %d canonical solutions rewardd %d, naive %d; of the %d broken ones, rewardd %d, naive %d",
					c.RewarddPassed, c.PythonPassed, c.Canonical, c.RewarddCanonicalPassed, c.PythonCanonicalPassed,
					a.Compared-c.Canonical, c.RewarddPassed-c.RewarddCanonicalPassed, c.PythonPassed-c.PythonCanonicalPassed)
			}
			for _, d := range a.Examples {
				p("\t  DISAGREE %s %s: rewardd %s, naive %s: %s", d.Function, d.Row, optional(d.Rewardd), optional(d.Python), d.Detail)
			}
		}
	} else if b != nil {
		p("")
		p("baseline\tPython %s, TRL-style functions in process (bench/baseline/trl_rewards.py), one batch at a time", b.Python)
		p("\t%s rollouts/s, %s evaluations/s, per batch p50 %s p99 %s; CPU %.2f s; peak RSS %s",
			num(b.RolloutsPerSecond), num(b.EvaluationsPerSecond), dur(b.Latency.P50), dur(b.Latency.P99),
			b.CPUSeconds, bytesOf(float64(b.PeakRSSBytes)))
		if a := b.Agreement; a != nil {
			p("agreement\t%d of %d rollout-function scores of the first batch equal (%.2f%%)", a.Agree, a.Compared, 100*ratio(float64(a.Agree), float64(a.Compared)))
			for _, d := range a.Examples {
				p("\t  %s %s: rewardd %s, python %s", d.Function, d.Row, optional(d.Rewardd), optional(d.Python))
			}
		}
		if e := b.E2E; e != nil {
			p("end to end\t%d-rollout batch: Python gRPC client %s, Python in process %s (medians of %d; the client got the same scores: %d of %d)",
				e.Rows, dur(e.ClientMs), dur(e.InProcessMs), e.Repeats, e.Agree, e.Compared)
			p("\tclient time: building the request %s, the call %s, the result lists %s",
				dur(e.ClientParts["build"]), dur(e.ClientParts["call"]), dur(e.ClientParts["unpack"]))
		}
	}
}

// writeRatios writes the per-function costs and the ratios to Python.
func (r *Result) writeRatios(p printer) {
	if len(r.PerFunction) > 0 {
		p("")
		p("per function\tone core, no transport: rewardd / Python per rollout")
		for _, f := range r.PerFunction {
			p("\t  %s\t%s\t%s\t%s", f.Function, nsDur(f.RewarddNsPerRollout), nsDur(f.PythonNsPerRollout), speed(f.Speedup))
		}
	}
	if q := r.Ratios; q != nil {
		p("")
		p("ratios\trewardd / Python (above 1: rewardd better)")
		if r.Code != nil {
			p("\t  throughput\t%.2f×\t(submissions/s, rewardd vs the naive runner, each on the whole machine)", q.Throughput)
		} else {
			p("\t  throughput\t%.2f×\t(rollouts/s, whole machine vs one Python process)", q.Throughput)
		}
		if q.PerCPUSecond > 0 && q.PerCPUBasis != "" {
			p("\t  per CPU second\t%.2f×\t(submissions per CPU second of each side's processes: rewardd and its sandboxes, Python and its subprocesses)", q.PerCPUSecond)
		} else if q.PerCPUSecond > 0 {
			p("\t  per CPU second\t%.2f×\t(rollouts per CPU second, server + load generator vs Python)", q.PerCPUSecond)
		}
		if q.E2E > 0 {
			p("\t  end to end\t%.2f×\t(in-process Python time ÷ Python client time: above 1, the client is faster)", q.E2E)
		}
	}
}

func loads(l []float64) string {
	if len(l) < 3 {
		return "?"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2])
}

func errorList(errs map[string]int) string {
	if len(errs) == 0 {
		return ""
	}
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(errs)) {
		parts = append(parts, fmt.Sprintf("%s %d", code, errs[code]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// num1 formats n with one decimal when it is small.
func num1(n float64) string {
	if n < 1000 {
		return fmt.Sprintf("%.1f", n)
	}
	return num(n)
}

func optional(v *float64) string {
	if v == nil {
		return "None"
	}
	return fmt.Sprint(*v)
}

func speed(x float64) string {
	switch {
	case x == 0:
		return ""
	case x >= 1:
		return fmt.Sprintf("rewardd %.1f× faster", x)
	default:
		return fmt.Sprintf("Python %.1f× faster", 1/x)
	}
}

// num formats n with thousands separators.
func num(n float64) string {
	s := fmt.Sprintf("%.0f", n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// dur formats milliseconds.
func dur(msec float64) string {
	switch {
	case msec >= 1000:
		return fmt.Sprintf("%.2fs", msec/1000)
	case msec >= 10:
		return fmt.Sprintf("%.0fms", msec)
	case msec >= 1:
		return fmt.Sprintf("%.2fms", msec)
	default:
		return fmt.Sprintf("%.0fµs", msec*1000)
	}
}

func nsDur(ns float64) string {
	switch {
	case ns == 0:
		return "-"
	case ns >= 1e6:
		return fmt.Sprintf("%.2fms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2fµs", ns/1e3)
	default:
		return fmt.Sprintf("%.0fns", ns)
	}
}

func bytesOf(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}
