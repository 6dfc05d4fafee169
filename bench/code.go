package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc/codes"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server/config"
)

// CodeResult is what a code execution scenario measures beyond the load.
type CodeResult struct {
	// SubmissionsPerSecond is programs run per second: evaluations/s of
	// the code functions asked for. Each runs TestsPerSubmission tests
	// (HumanEval: 1, its asserts; stdio: StdioTests runs of the program).
	SubmissionsPerSecond float64 `json:"submissions_per_second"`
	TestsPerSubmission   float64 `json:"tests_per_submission"`
	TestsPerSecond       float64 `json:"tests_per_second"`
	// Tests is how many tests the OK requests' programs ran (for cp, where
	// the rows' problems have 2 to 30).
	Tests int64 `json:"tests"`
	// Timed is how many submissions the in-process server's code_exec
	// scorers ran in the measured phase, and Latency their time each, from
	// the scorer's call to its verdict: the sandbox round trip, plus the
	// wait for a free slot when there are fewer slots than workers. Nil for
	// a remote server.
	Timed      int        `json:"timed_submissions,omitempty"`
	Latency    *Latency   `json:"submission_latency_ms,omitempty"`
	LatencyCDF []Quantile `json:"submission_latency_cdf,omitempty"`
	// CPUSeconds is the CPU time of this process and its child processes
	// (the sandboxes' fork servers and the programs they forked, from
	// /proc) during the measured phase: the server, the load generator
	// and the sandboxes. The process CPU of the report misses the
	// sandboxes, which are other processes.
	CPUSeconds         float64 `json:"cpu_seconds"`
	CPUMsPerSubmission float64 `json:"cpu_ms_per_submission"`
	CPUMsPerTest       float64 `json:"cpu_ms_per_test"`
	// MachineCPUSeconds is the busy CPU time of the whole machine in the
	// same time (/proc/stat), and OtherCPUSeconds the part of it that was
	// not ours: other processes (and the kernel's work not charged to
	// any). A large share means the machine was not quiet and the
	// figures are not clean.
	MachineCPUSeconds float64 `json:"machine_cpu_seconds,omitempty"`
	OtherCPUSeconds   float64 `json:"other_cpu_seconds,omitempty"`
	// Breakdown is CPUSeconds process by process, per submission (nil
	// for a remote server whose process id is not known).
	Breakdown *CPUBreakdown `json:"cpu_breakdown,omitempty"`
	// Errors counts rollouts a code function scored ERROR in the measured
	// phase (the sandbox could not run them); ErrorExamples are the first
	// few messages.
	Errors        int64    `json:"errors"`
	ErrorExamples []string `json:"error_examples,omitempty"`
}

// PassCounts are pass/fail counts over the rollouts compared by the
// agreement check of a code scenario.
type PassCounts struct {
	// Canonical is how many of the compared rollouts hold the canonical
	// solution (which should pass); the rest hold a broken one. Passed
	// counts rollouts that scored 1 (all tests passed).
	Canonical              int `json:"canonical"`
	RewarddPassed          int `json:"rewardd_passed"`
	PythonPassed           int `json:"python_passed"`
	RewarddCanonicalPassed int `json:"rewardd_canonical_passed"`
	PythonCanonicalPassed  int `json:"python_canonical_passed"`
}

// submissionTimer wraps the code_exec scorers of the in-process server: it
// records how long each Score call took, and why a rollout did not pass,
// while it is on.
type submissionTimer struct {
	on      atomic.Bool
	mu      sync.Mutex
	took    []time.Duration
	reasons map[string]string // rollout id → reason, for rollouts that did not score 1
}

// maxReasons bounds the reasons kept per phase.
const maxReasons = 100_000

func (t *submissionTimer) start() {
	t.mu.Lock()
	t.took, t.reasons = t.took[:0], map[string]string{}
	t.mu.Unlock()
	t.on.Store(true)
}

// stop turns recording off and returns what was recorded.
func (t *submissionTimer) stop() ([]time.Duration, map[string]string) {
	t.on.Store(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.took), t.reasons
}

type timedScorer struct {
	scorers.Scorer
	t *submissionTimer
}

func (s timedScorer) Score(ctx context.Context, r *scorers.Rollout) scorers.Result {
	if !s.t.on.Load() {
		return s.Scorer.Score(ctx, r)
	}
	start := time.Now()
	res := s.Scorer.Score(ctx, r)
	took := time.Since(start)
	s.t.mu.Lock()
	s.t.took = append(s.t.took, took)
	if (res.Outcome != scorers.OK || res.Value != 1) && len(s.t.reasons) < maxReasons {
		s.t.reasons[r.ID] = res.Reason
	}
	s.t.mu.Unlock()
	return res
}

// timeCodeFunctions returns cfg with its code_exec functions wrapped in a
// timer, and the timer; cfg itself and nil when it has none. Other functions
// are left alone: timing a scorer of a microsecond would change what is
// measured.
func timeCodeFunctions(cfg *config.Config) (*config.Config, *submissionTimer) {
	var t *submissionTimer
	fns := make([]*scorers.Function, len(cfg.Functions))
	for i, fn := range cfg.Functions {
		fns[i] = fn
		if _, group := fn.Scorer.(scorers.GroupScorer); fn.Kind != "code_exec" || group {
			continue
		}
		if t == nil {
			t = &submissionTimer{}
		}
		c := *fn
		c.Scorer = timedScorer{Scorer: fn.Scorer, t: t}
		fns[i] = &c
	}
	if t == nil {
		return cfg, nil
	}
	c := *cfg
	c.Functions = fns
	return &c, t
}

// childrenCPU returns the CPU time so far of this process's live child
// processes and of the children they reaped (utime, stime, cutime and
// cstime in /proc/PID/stat): the sandboxes' fork servers and the programs
// they forked and waited for.
func childrenCPU() time.Duration {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var ticks int64
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid … : fields after the comm, which may hold
		// spaces, start at state.
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 15 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid != self {
			continue
		}
		for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
			n, _ := strconv.ParseInt(f[k], 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}

// machineCPU returns the busy CPU time of the whole machine so far (user,
// nice, system, irq, softirq and steal in /proc/stat), or 0.
func machineCPU() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, k := range []int{1, 2, 3, 6, 7, 8} { // user nice system [idle iowait] irq softirq steal
		n, _ := strconv.ParseInt(f[k], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}

// checkCodeFunctions checks, before anything is measured, that the functions
// asked for are what the naive runner implements (code_exec with the
// scenario's test style: assert tests in the row fields test and
// entry_point, or io tests in tests; nothing put before the program), and
// that the server can run programs at all: one canonical rollout must not
// score ERROR. A run whose every rollout is an ERROR would measure nothing.
func (s *session) checkCodeFunctions(ctx context.Context, infos []*rewardv1.FunctionInfo) error {
	if s.py != nil {
		for _, info := range infos {
			if info.GetName() != s.functions[0] {
				continue
			}
			var p struct {
				TestStyle       string `yaml:"test_style"`
				TestsField      string `yaml:"tests_field"`
				EntryPointField string `yaml:"entry_point_field"`
				PrefixField     string `yaml:"prefix_field"`
			}
			err := yaml.Unmarshal([]byte(info.GetParamsYaml()), &p)
			style, tests, what := "assert", "test", "runs the row's test and check(entry_point) after the completion's program"
			if s.sc.name == Stdio {
				style, tests, what = "io", "tests", "runs the completion's program on each stdin of the row's tests, the fraction of outputs that match"
			}
			if err != nil || info.GetKind() != "code_exec" || p.TestStyle != style || p.TestsField != "" && p.TestsField != tests ||
				style == "assert" && p.EntryPointField != "" && p.EntryPointField != "entry_point" || p.PrefixField != "" {
				return &OptionError{fmt.Errorf("the naive runner baseline %s; "+
					"function %q (kind %s, %s) is not that code_exec function: give a config with one (or run without the baseline)",
					what, info.GetName(), info.GetKind(), strings.ReplaceAll(strings.TrimSpace(info.GetParamsYaml()), "\n", "; "))}
			}
		}
	}
	return s.checkRunsPrograms(ctx)
}

// checkRunsPrograms checks that the server can run programs at all: one
// canonical rollout of the scenario must not score ERROR.
func (s *session) checkRunsPrograms(ctx context.Context) error {
	row := s.sc.row(0)
	for i := 1; i < 1000 && row.Wrong; i++ { // a canonical one, if --wrong leaves any
		row = s.sc.row(i)
	}
	conn, err := s.target.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := rewardv1.NewRewardServiceClient(conn).Score(ctx, &rewardv1.ScoreRequest{
		Functions: s.functions, Rollouts: []*rewardv1.Rollout{rollout(row)},
	})
	if err != nil {
		return fmt.Errorf("score one canonical %s rollout before the run: %w", s.sc.name, err)
	}
	for _, fs := range resp.GetFunctions() {
		if len(fs.GetStatus()) == 1 && fs.GetStatus()[0] == rewardv1.ScoreStatus_SCORE_STATUS_ERROR {
			return fmt.Errorf("function %s cannot run programs: it scored a canonical %s rollout ERROR: %s (the code_exec sandbox needs root; see the log)",
				fs.GetName(), s.sc.name, fs.GetErrors()[0])
		}
	}
	return nil
}

// treeRoot is the process whose tree runs the server and its sandboxes:
// this one for the in-process server, opts.ServerPID for one at Addr, 0
// when it is not known.
func (s *session) treeRoot(opts Options) int {
	if s.target.inProc {
		return os.Getpid()
	}
	return opts.ServerPID
}

// codeOutcome fills r.Code from the load, the timer, and the CPU of the
// server's process tree (this process's, for an in-process server) and of
// the machine.
func (s *session) codeOutcome(r *Result, m *measurement, opts Options) {
	lr, took, machine := m.lr, m.took, m.cpu
	own := m.after.cpu - m.before.cpu + m.children
	c := &CodeResult{SubmissionsPerSecond: r.EvaluationsPerSecond, MachineCPUSeconds: machine.Seconds()}
	for _, call := range lr.calls {
		if call.code == codes.OK.String() {
			c.Tests += int64(call.tests)
		}
	}
	c.TestsPerSecond = ratio(float64(c.Tests), r.ElapsedSeconds)
	c.TestsPerSubmission = ratio(float64(c.Tests), float64(r.Evaluations))
	if s.target.timer != nil {
		c.Timed = len(took)
		l := latencyOf(took)
		c.Latency, c.LatencyCDF = &l, cdf(took, 100)
	}
	if root := s.treeRoot(opts); root != 0 {
		what := "this process (the server and the load generator)"
		if !s.target.inProc {
			what = fmt.Sprintf("server PID %d", root)
		}
		c.Breakdown = breakdown(m.tree0, m.tree1, r.Evaluations, what)
		if !s.target.inProc && c.Breakdown != nil {
			own = time.Duration(c.Breakdown.Total() * float64(r.Evaluations) * float64(time.Millisecond))
		}
	}
	if s.target.inProc || c.Breakdown != nil {
		c.CPUSeconds = own.Seconds()
		c.OtherCPUSeconds = max(0, machine.Seconds()-c.CPUSeconds)
		if r.Evaluations > 0 {
			c.CPUMsPerSubmission = c.CPUSeconds * 1e3 / float64(r.Evaluations)
			c.CPUMsPerTest = c.CPUSeconds * 1e3 / float64(c.Tests)
		}
	}
	for _, o := range r.Outcomes {
		c.Errors += o.Error
	}
	c.ErrorExamples = lr.errorExamples
	r.Code = c
}

// naiveOut is naive_runner.py's output.
type naiveOut struct {
	Python      string    `json:"python"`
	Workers     int       `json:"workers"`
	Batches     int       `json:"batches"`
	Rollouts    int64     `json:"rollouts"`
	Tests       int64     `json:"tests"`
	WallSeconds float64   `json:"wall_seconds"`
	CPUSeconds  float64   `json:"cpu_seconds"`
	MachineCPU  float64   `json:"machine_cpu_seconds"`
	Latencies   []float64 `json:"latencies_seconds"`
	Submission  []float64 `json:"submission_seconds"`
	Timeouts    int       `json:"timeouts"`
	PeakRSS     int64     `json:"peak_rss_bytes"`
	// Verdicts holds the first verdict on every row id: the score (1 or
	// 0 for assert, the fraction of tests passed for io), and why not 1.
	Verdicts map[string]struct {
		Score float64 `json:"score"`
		Why   string  `json:"why"`
	} `json:"verdicts"`
}

// codeBaseline runs the naive subprocess runner on the same rows, one batch
// at a time, for as many batches as the load sent (or as long, and at least
// once over every distinct batch), and compares its pass/fail with rewardd's
// on every rollout of the distinct batches that rewardd answered.
func (s *session) codeBaseline(ctx context.Context, opts Options, batches []batch, kept []*rewardv1.ScoreResponse, reasons map[string]string, r *Result) error {
	style := map[string]string{HumanEval: "assert", Stdio: "io", CP: "cp"}[s.sc.name]
	n, err := s.runNaive(ctx, opts, style, batches)
	if err != nil {
		return err
	}
	b := naiveBaseline(n, style)
	r.Baseline = b
	r.Ratios = &Ratios{Throughput: ratio(r.EvaluationsPerSecond, b.RolloutsPerSecond)}
	if c := r.Code; c != nil {
		r.Ratios.TestsPerSecond = ratio(c.TestsPerSecond, b.TestsPerSecond)
		if c.CPUSeconds > 0 && n.CPUSeconds > 0 {
			r.Ratios.PerCPUSecond = ratio(float64(r.Evaluations)/c.CPUSeconds, float64(n.Rollouts)/n.CPUSeconds)
			r.Ratios.PerCPUBasis = "process tree"
			r.Ratios.CPUPerTest = ratio(b.CPUMsPerTest, c.CPUMsPerTest)
		}
	}
	if c := r.Code; c != nil && c.OtherCPUSeconds > 0.1*c.MachineCPUSeconds+1 {
		r.Notes = append(r.Notes, fmt.Sprintf("the machine was not quiet: other processes used %.1f s of CPU during the rewardd phase (%.0f%% of the machine's busy time); its figures are not clean",
			c.OtherCPUSeconds, 100*ratio(c.OtherCPUSeconds, c.MachineCPUSeconds)))
	}
	if b.OtherCPUSeconds > 0.1*n.MachineCPU+1 {
		r.Notes = append(r.Notes, fmt.Sprintf("the machine was not quiet: other processes used %.1f s of CPU during the naive runner's phase (%.0f%% of the machine's busy time); its figures are not clean",
			b.OtherCPUSeconds, 100*ratio(b.OtherCPUSeconds, n.MachineCPU)))
	}
	b.Agreement = codeAgreement(batches, kept, reasons, n)
	return nil
}

// runNaive runs naive_runner.py in the given style (assert, io or cp) on
// the rows of batches.
func (s *session) runNaive(ctx context.Context, opts Options, style string, batches []batch) (*naiveOut, error) {
	timeout := sandbox.DefaultLimits().WallSeconds
	args := []string{"--style", style, "--batch-size", strconv.Itoa(opts.BatchSize),
		"--workers", "2", "--timeout", strconv.FormatFloat(timeout, 'f', -1, 64)}
	if style == "cp" {
		args = append(args, "--time-limit", strconv.FormatFloat(s.cp.TimeLimitSeconds, 'f', -1, 64),
			"--time-limit-factor", strconv.FormatFloat(s.cp.TimeLimitFactor, 'f', -1, 64))
	}
	args = append(args, runLength(opts)...)
	s.say("python baseline: naive subprocess.run runner, 2 threads, batch %d …", opts.BatchSize)
	n := new(naiveOut)
	if err := s.runOnRows(ctx, batches, n, "naive_runner.py", args...); err != nil {
		return nil, err
	}
	return n, nil
}

// naiveBaseline is the baseline's figures from the naive runner's output.
func naiveBaseline(n *naiveOut, style string) *Baseline {
	b := &Baseline{
		Python: n.Python, Batches: n.Batches, Rollouts: n.Rollouts, WallSeconds: n.WallSeconds, CPUSeconds: n.CPUSeconds,
		PeakRSSBytes: n.PeakRSS, Runner: "naive_runner.py: subprocess.run([sys.executable, \"-c\", program + test + check(entry_point)]) per submission",
		Workers: n.Workers, Timeouts: n.Timeouts, MachineCPUSeconds: n.MachineCPU,
	}
	switch style {
	case "io":
		b.Runner = "naive_runner.py: subprocess.run([sys.executable, \"-c\", program], input=stdin) per test case"
	case "cp":
		b.Runner = "naive_runner.py: subprocess.run([\"g++\", \"-std=gnu++17\", \"-O2\", …]) once per submission (C++), subprocess.run(program, input=stdin) per test case, the row's checker"
	}
	b.RolloutsPerSecond = ratio(float64(n.Rollouts), n.WallSeconds)
	b.EvaluationsPerSecond = b.RolloutsPerSecond
	b.Tests = n.Tests
	b.TestsPerSecond = ratio(float64(n.Tests), n.WallSeconds)
	b.CPUMsPerTest = ratio(n.CPUSeconds*1e3, float64(n.Tests))
	b.Latency = latencyOf(seconds(n.Latencies))
	sl := latencyOf(seconds(n.Submission))
	b.SubmissionLatency, b.SubmissionCDF = &sl, cdf(seconds(n.Submission), 100)
	b.OtherCPUSeconds = max(0, n.MachineCPU-n.CPUSeconds)
	return b
}

// codeAgreement compares rewardd's pass/fail with the naive runner's on
// every rollout of every distinct batch rewardd answered (kept[j] answers
// batches[j]; nil where it did not).
func codeAgreement(batches []batch, kept []*rewardv1.ScoreResponse, reasons map[string]string, n *naiveOut) *Agreement {
	a := &Agreement{Passes: &PassCounts{}}
	for j, resp := range kept {
		if resp == nil {
			continue
		}
		fs := resp.GetFunctions()[0]
		for i, row := range batches[j].rows {
			v, ok := n.Verdicts[row.ID]
			if !ok {
				continue // the runner did not get to it
			}
			var mine *float64
			if fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_OK {
				x := fs.GetValues()[i]
				mine = &x
			}
			a.Compared++
			a.Passes.count(row.Wrong, mine != nil && *mine == 1, v.Score == 1)
			theirs := v.Score
			if mine != nil && math.Abs(*mine-theirs) < 1e-9 {
				a.Agree++
				continue
			}
			if len(a.Examples) < 10 {
				d := Disagreement{Function: fs.GetName(), Row: row.ID, Rewardd: mine, Python: &theirs}
				why := reasons[row.ID]
				if e, ok := fs.GetErrors()[int32(i)]; ok {
					why = e
				}
				d.Detail = fmt.Sprintf("problem %s (%s); rewardd: %s; python: %s", row.Task, map[bool]string{true: "broken", false: "canonical"}[row.Wrong],
					orNone(why), orNone(v.Why))
				a.Examples = append(a.Examples, d)
			}
		}
	}
	return a
}

// count counts one rollout: whether it is a broken one (not canonical), and
// whether rewardd and the Python runner passed it.
func (p *PassCounts) count(wrong, rewarddPassed, pythonPassed bool) {
	if !wrong {
		p.Canonical++
	}
	if rewarddPassed {
		p.RewarddPassed++
		if !wrong {
			p.RewarddCanonicalPassed++
		}
	}
	if pythonPassed {
		p.PythonPassed++
		if !wrong {
			p.PythonCanonicalPassed++
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func seconds(sec []float64) []time.Duration {
	out := make([]time.Duration, len(sec))
	for i, v := range sec {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}
