// Package bench is rewardd's load generator: it scores scenario rollouts on
// an in-process server (the same engine, service and gRPC server as `rewardd
// serve`, over loopback TCP) or on a remote one, measures throughput,
// latency, CPU and memory, and runs, in the same invocation, the Python that
// users write instead, so that the ratios between the two hold on a noisy
// machine.
//
// Run measures one configuration; Sweep measures how the cost grows with the
// batch size, the completion length or the number of clients. WriteSVG
// draws either.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/rematch"
	"github.com/rewardd/rewardd/server/config"
)

// Options configure a benchmark. A zero Scenario, Data, BatchSize,
// GroupSize, Clients, Workers, E2ERows, E2ERepeats or Functions takes its
// value from Defaults, and so does Duration when Requests is 0 too; the other
// fields mean what zero says (no warm-up, no wrong rollouts, …).
type Options struct {
	// Scenario is GSM8K, Mixed, Long, HumanEval, Stdio or CP (RunCP).
	Scenario string
	// Data is GSM8K's test.jsonl, or HumanEval's JSONL for HumanEval ("":
	// the scenario's default, Defaults().Data or HumanEvalData; Stdio
	// generates its programs and reads nothing).
	Data string
	// Wrong is the share of rollouts whose final answer is changed (for
	// HumanEval: whose function body is replaced by `return None`; for
	// Stdio: whose program is one that fails some cases).
	Wrong float64
	// BatchSize is rollouts per request (0: LongBatchSize for Long,
	// CPBatchSize for CP, else Defaults().BatchSize); GroupSize
	// completions per prompt (0: CPGroupSize for CP, else Defaults()'s).
	BatchSize, GroupSize int
	// Clients is the number of concurrent clients, each with its own
	// connection, each sending its next request when the last is answered.
	Clients int
	// Requests is the number of requests to send over all clients; when 0,
	// the clients send for Duration.
	Requests int
	Duration time.Duration
	// Warmup is requests per client sent before the clock starts.
	Warmup int
	// CompletionLength pads or trims every completion to this many bytes;
	// 0 keeps the scenario's lengths.
	CompletionLength int
	// Seed chooses the wrong rollouts and the mixed formats.
	Seed uint64
	// Functions are the served functions every request asks for; nil means
	// the scenario's: BaselineFunctions, the ones the Python baseline
	// implements too, HumanEvalFunctions or StdioFunctions.
	Functions []string

	// Config, Registry and Workers define the in-process server; Log is its
	// logger (nil: none). A nil Config is the scenario's ScenarioConfig,
	// compiled with Registry (which must then have a code_exec kind that
	// can run programs); the GSM8K scenarios have none and need a Config.
	Config   *config.Config
	Registry scorers.Registry
	Workers  int
	Log      *zap.Logger
	// Addr, when set, is a running rewardd to load instead, dialled with
	// DialOptions. AuthToken and TLSCAFile are for the Python client.
	Addr        string
	DialOptions []grpc.DialOption
	AuthToken   string
	TLSCAFile   string

	// Python is the interpreter of the baselines; "" runs none.
	Python string
	// E2ERows is the size of the batch the Python client sends end to end;
	// E2ERepeats how often it is timed.
	E2ERows, E2ERepeats int

	// Progress receives a progress bar and phase lines; nil for none.
	Progress io.Writer
	// CPUProfile receives a CPU profile of the measured load (Run only).
	CPUProfile io.Writer
	// MemProfile receives an allocation profile taken after the measured
	// load (Run only). It counts from the process's start, so the scenario's
	// setup and the warm-up are in it too; the load dominates any run of a
	// few seconds.
	MemProfile io.Writer
	// Trace receives a runtime execution trace of the measured load (Run
	// only): where a slow request waited, on what, and for how long.
	Trace io.Writer
	// ServerPID is the process id of the server at Addr when it runs on
	// this machine: a code scenario then reads its CPU and its sandboxes'
	// from /proc, as for the in-process server.
	ServerPID int
}

// BaselineFunctions are the functions of the embedded default config, all
// of which the Python baseline (bench/baseline/trl_rewards.py) implements:
// the string functions open-r1 users write.
var BaselineFunctions = []string{"accuracy", "format", "tag_count", "reasoning_steps", "repetition", "overlong"}

// LongBatchSize and LongE2ERows are the Long scenario's defaults: its
// rollouts are about 36 KiB on average, 120 times GSM8K's.
const (
	LongBatchSize = 256
	LongE2ERows   = 1024
)

// HumanEvalFunctions are the functions the humaneval scenario asks for by
// default: the one function of HumanEvalConfig.
var HumanEvalFunctions = []string{"tests"}

// HumanEvalData is the default data of the humaneval scenario, relative to
// the repository root with shared/ beside it.
const HumanEvalData = "../shared/data/humaneval.jsonl"

// HumanEvalConfig is the config of the in-process server for the humaneval
// scenario when none is given: one code_exec function that runs the row's
// HumanEval test code against the completion's program and scores 1 when
// check(entry_point) passes, 0 otherwise.
const HumanEvalConfig = `functions:
  - name: tests
    kind: code_exec
    test_style: assert
    scoring: all
`

// ScenarioConfig returns the name and YAML of the config a scenario's
// in-process server uses when none is given, or nil when the scenario uses
// the caller's (the GSM8K scenarios: rewardd's embedded default config).
func ScenarioConfig(scenario string) (name string, yaml []byte) {
	switch scenario {
	case HumanEval:
		return "humaneval (bench.HumanEvalConfig)", []byte(HumanEvalConfig)
	case Stdio:
		return "stdio (bench.StdioConfig)", []byte(StdioConfig)
	case CP:
		return "cp (bench.CPConfig)", []byte(CPConfig)
	}
	return "", nil
}

// Defaults are the options a zero Options field takes (Data and Functions
// are the GSM8K scenarios'; the code scenarios have their own).
func Defaults() Options {
	return Options{
		Scenario: GSM8K, Data: "../shared/data/gsm8k_test.jsonl", Wrong: 0.25,
		BatchSize: 1024, GroupSize: 8, Clients: 4, Duration: 10 * time.Second, Warmup: 1,
		Seed: 1, Workers: runtime.GOMAXPROCS(0), E2ERows: 5000, E2ERepeats: 5,
	}
}

// OptionError is a problem with the options (or the data they name): the
// caller's mistake, not a failure of the run.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

func (o *Options) fill() error {
	if err := o.check(); err != nil {
		return &OptionError{err}
	}
	if o.Log == nil {
		o.Log = quiet()
	}
	return nil
}

// check fills defaults, compiles the scenario's config and validates.
func (o *Options) check() error {
	o.fillDefaults()
	if err := o.compileScenarioConfig(); err != nil {
		return err
	}
	if err := o.checkFunctions(); err != nil {
		return err
	}
	return o.checkSizes()
}

// fillDefaults sets each option left at zero to its default, the scenario's
// where it has its own.
func (o *Options) fillDefaults() {
	d := Defaults()
	if o.Scenario == "" {
		o.Scenario = d.Scenario
	}
	if o.Data == "" {
		switch o.Scenario {
		case HumanEval:
			o.Data = HumanEvalData
		case Stdio:
			o.Data = "(generated)"
		case CP:
			o.Data = CPData
		default:
			o.Data = d.Data
		}
	}
	if o.Scenario == CP {
		o.Wrong = 0 // the jury's accepted solutions only
		if o.BatchSize == 0 {
			o.BatchSize = CPBatchSize
		}
		if o.GroupSize == 0 {
			o.GroupSize = CPGroupSize
		}
	}
	if o.Scenario == Long {
		if o.BatchSize == 0 {
			o.BatchSize = LongBatchSize
		}
		if o.E2ERows == 0 {
			o.E2ERows = LongE2ERows
		}
	}
	for _, p := range []struct{ v, def *int }{
		{&o.BatchSize, &d.BatchSize}, {&o.GroupSize, &d.GroupSize}, {&o.Clients, &d.Clients},
		{&o.Workers, &d.Workers}, {&o.E2ERows, &d.E2ERows}, {&o.E2ERepeats, &d.E2ERepeats},
	} {
		if *p.v == 0 {
			*p.v = *p.def
		}
	}
	if o.Requests == 0 && o.Duration == 0 && o.Scenario != CP { // cp: every solution once
		o.Duration = d.Duration
	}
	if len(o.Functions) == 0 {
		o.Functions = BaselineFunctions
		switch o.Scenario {
		case HumanEval:
			o.Functions = HumanEvalFunctions
		case Stdio:
			o.Functions = StdioFunctions
		case CP:
			o.Functions = []string{CPFunctions["cpp"], CPFunctions["python"]}
		}
	}
}

// compileScenarioConfig compiles the scenario's config for the in-process
// server when none is given.
func (o *Options) compileScenarioConfig() error {
	if o.Addr == "" && o.Config == nil {
		if name, data := ScenarioConfig(o.Scenario); data != nil {
			if o.Registry == nil {
				return fmt.Errorf("no scorer registry to compile the %s config with", o.Scenario)
			}
			cfg, err := config.Load(name, data, o.Registry)
			if err != nil {
				return err
			}
			o.Config = cfg
		}
	}
	return nil
}

// checkFunctions checks that the functions asked for suit the scenario and
// the baseline.
func (o *Options) checkFunctions() error {
	code := isCode(o.Scenario)
	switch {
	case code && o.CompletionLength > 0:
		return fmt.Errorf("the %s scenario sends programs as they are: no completion length", o.Scenario)
	case o.Scenario == CP && !slices.Equal(o.Functions, cpFunctions(o.Functions)):
		return fmt.Errorf("the cp scenario asks for %s, %s or both in that order, a function per language (got %s)",
			CPFunctions["cpp"], CPFunctions["python"], strings.Join(o.Functions, ", "))
	case code && o.Scenario != CP && o.Python != "" && len(o.Functions) != 1:
		return fmt.Errorf("the naive runner baseline scores one code_exec function; ask for one (got %s), or run without the baseline",
			strings.Join(o.Functions, ", "))
	}
	if o.Python != "" && !code {
		for _, fn := range o.Functions {
			if !slices.Contains(BaselineFunctions, fn) {
				return fmt.Errorf("the Python baseline implements %s, not %q: ask only for those, or run without the baseline",
					strings.Join(BaselineFunctions, ", "), fn)
			}
		}
	}
	return nil
}

// checkSizes checks the counts and sizes, and that they fit the in-process
// server's limits.
func (o *Options) checkSizes() error {
	switch {
	case o.BatchSize < 1 || o.GroupSize < 1 || o.Clients < 1 || o.Workers < 1:
		return errors.New("batch size, group size, clients and workers must be at least 1")
	case o.Requests < 0 || o.Duration < 0 || o.Warmup < 0 || o.CompletionLength < 0:
		return errors.New("requests, duration, warmup and completion length must not be negative")
	case o.Wrong < 0 || o.Wrong > 1:
		return fmt.Errorf("the share of wrong rollouts is %v, want it in [0, 1]", o.Wrong)
	case o.Addr == "" && o.Config == nil:
		return errors.New("no config for the in-process server")
	case o.Addr == "" && o.BatchSize > o.Config.Limits.MaxRollouts:
		return fmt.Errorf("batch size %d is over the server's limits.max_rollouts (%d)", o.BatchSize, o.Config.Limits.MaxRollouts)
	case o.Addr == "" && o.CompletionLength > o.Config.Limits.MaxCompletionBytes:
		return fmt.Errorf("completion length %d is over the server's limits.max_completion_bytes (%d)", o.CompletionLength, o.Config.Limits.MaxCompletionBytes)
	case o.Addr == "" && o.BatchSize*max(o.CompletionLength, 1024) > o.Config.Limits.MaxMessageBytes:
		return fmt.Errorf("batch size × completion length (%d × %d) is over the server's limits.max_message_bytes (%d)",
			o.BatchSize, o.CompletionLength, o.Config.Limits.MaxMessageBytes)
	}
	return nil
}

// Result is the report of one benchmark run. Times are in the unit their
// name says; latencies in milliseconds.
type Result struct {
	Scenario string `json:"scenario"`
	// Target is "in-process" or the address of the remote server.
	Target      string   `json:"target"`
	Machine     Machine  `json:"machine"`
	Settings    Settings `json:"settings"`
	Functions   []string `json:"functions"`
	Fingerprint string   `json:"config_fingerprint"`
	// CompletionBytes describes the completions of the batches sent.
	CompletionBytes Spread `json:"completion_bytes"`
	// Requests accounts for every request sent in the measured phase.
	Requests Requests `json:"requests"`
	// WarmupRequests accounts for the requests sent before the clock.
	WarmupRequests Requests `json:"warmup_requests"`
	// Rollouts and Evaluations (rollouts × functions) are of OK requests.
	Rollouts             int64   `json:"rollouts"`
	Evaluations          int64   `json:"evaluations"`
	ElapsedSeconds       float64 `json:"elapsed_seconds"`
	RolloutsPerSecond    float64 `json:"rollouts_per_second"`
	EvaluationsPerSecond float64 `json:"evaluations_per_second"`
	// Latency is of OK requests, from sending the encoded request to
	// having the decoded and checked answer.
	Latency Latency `json:"latency_ms"`
	// ServerLatency is the in-process server's own view of the OK and failed
	// Score requests of the measured phase: p50, p90 and p99 estimated from
	// its rewardd_request_duration_seconds histogram (buckets 2.5× wide),
	// as histogram_quantile would. Nil for --addr.
	ServerLatency *Latency `json:"server_latency_ms,omitempty"`
	// RefusedLatency is of requests refused with RESOURCE_EXHAUSTED, when
	// any were: how long a client waits to learn it should back off.
	RefusedLatency   *Latency   `json:"refused_latency_ms,omitempty"`
	LatencyHistogram []Bin      `json:"latency_histogram,omitempty"`
	LatencyCDF       []Quantile `json:"latency_cdf,omitempty"`
	Throughput       []Sample   `json:"throughput,omitempty"`
	// Process is the CPU and memory of this process during the measured
	// phase: the in-process server and the load generator. Nil for --addr.
	Process *Process `json:"process,omitempty"`
	// Outcomes counts every function's statuses over the OK answers.
	Outcomes []Outcome `json:"outcomes"`
	// PerFunction is each function alone on one core, without transport,
	// against its Python baseline (in-process server only).
	PerFunction []FunctionCost `json:"per_function,omitempty"`
	Baseline    *Baseline      `json:"baseline,omitempty"`
	Ratios      *Ratios        `json:"ratios,omitempty"`
	// Code is what a code execution scenario measures: submissions/s,
	// the time per submission, the machine's CPU.
	Code  *CodeResult `json:"code,omitempty"`
	Notes []string    `json:"notes,omitempty"`
}

// Machine describes where the benchmark ran.
type Machine struct {
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	// RegexEngine is what the in-process server matches patterns with
	// (rematch.Engine: "re2", "re2_wasm" or "regexp"); "" for a remote
	// server (--addr), whose rewardd_build_info metric says.
	RegexEngine string    `json:"regex_engine"`
	LoadBefore  []float64 `json:"load_average_before"`
	LoadAfter   []float64 `json:"load_average_after"`
	Time        time.Time `json:"time"`
}

// Settings echo the options of the run.
type Settings struct {
	BatchSize        int     `json:"batch_size"`
	GroupSize        int     `json:"group_size"`
	Clients          int     `json:"clients"`
	Requests         int     `json:"requests,omitempty"`
	DurationSeconds  float64 `json:"duration_seconds,omitempty"`
	Warmup           int     `json:"warmup_per_client"`
	CompletionLength int     `json:"completion_length,omitempty"`
	Workers          int     `json:"workers,omitempty"`
	Wrong            float64 `json:"wrong"`
	Data             string  `json:"data"`
	Seed             uint64  `json:"seed"`
	DistinctBatches  int     `json:"distinct_batches"`
}

// Requests accounts for requests: Sent = OK + the sum of Errors.
type Requests struct {
	Sent int `json:"sent"`
	OK   int `json:"ok"`
	// Errors counts failed requests by gRPC status code name, and
	// BAD_RESPONSE for an OK answer without a value and a status for every
	// rollout and function.
	Errors map[string]int `json:"errors"`
}

// Failed is the number of requests that did not succeed.
func (r Requests) Failed() int {
	n := 0
	for _, c := range r.Errors {
		n += c
	}
	return n
}

// Spread is the mean, least and most of a quantity.
type Spread struct {
	Mean float64 `json:"mean"`
	Min  int     `json:"min"`
	Max  int     `json:"max"`
}

// Latency holds percentiles (nearest rank), the maximum and the mean.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Bin is one bar of a latency histogram.
type Bin struct {
	LoMs  float64 `json:"lo_ms"`
	HiMs  float64 `json:"hi_ms"`
	Count int     `json:"count"`
}

// Quantile is one point of a latency distribution.
type Quantile struct {
	Q  float64 `json:"q"`
	Ms float64 `json:"ms"`
}

// Sample is the throughput in one interval of the run.
type Sample struct {
	Seconds           float64 `json:"t_seconds"`
	RolloutsPerSecond float64 `json:"rollouts_per_second"`
}

// Process is the resource use of this process during the measured phase.
type Process struct {
	CPUSeconds float64 `json:"cpu_seconds"`
	// Cores is CPU seconds per elapsed second.
	Cores               float64 `json:"cores"`
	CPUMicrosPerRollout float64 `json:"cpu_us_per_rollout"`
	PeakRSSBytes        int64   `json:"peak_rss_bytes"`
	// PeakRSSSinceStart is set when the peak could not be reset before the
	// run: it is then the peak since the process started.
	PeakRSSSinceStart    bool    `json:"peak_rss_since_start,omitempty"`
	AllocsPerRollout     float64 `json:"allocs_per_rollout"`
	AllocBytesPerRollout float64 `json:"alloc_bytes_per_rollout"`
	GCs                  uint32  `json:"gc_cycles"`
	// MachineCPUSeconds is the busy CPU time of the whole machine in the
	// measured phase (/proc/stat), and OtherCPUSeconds the part of it that
	// was neither this process's nor its children's: other work on a
	// shared machine, which the cores figure above does not get.
	MachineCPUSeconds float64 `json:"machine_cpu_seconds,omitempty"`
	OtherCPUSeconds   float64 `json:"other_cpu_seconds,omitempty"`
	// GOMAXPROCSeconds is GOMAXPROCS × the elapsed time: what the Go
	// scheduler could run. Of it, IdlePSeconds its Ps had no goroutine to
	// run (work missing, not cores), and GCCPUSeconds went to the
	// collector (runtime/metrics' /cpu/classes, the scheduler's own
	// accounting: a P whose thread the OS does not run counts as busy).
	GOMAXPROCSeconds float64 `json:"gomaxprocs_seconds,omitempty"`
	IdlePSeconds     float64 `json:"idle_p_seconds,omitempty"`
	GCCPUSeconds     float64 `json:"gc_cpu_seconds,omitempty"`
}

// Outcome is one function's statuses.
type Outcome struct {
	Function      string  `json:"function"`
	OK            int64   `json:"ok"`
	NotApplicable int64   `json:"not_applicable"`
	Error         int64   `json:"error"`
	MeanOK        float64 `json:"mean_ok"`
}

// FunctionCost is the time of one function on one rollout, on one core.
type FunctionCost struct {
	Function            string  `json:"function"`
	RewarddNsPerRollout float64 `json:"rewardd_ns_per_rollout"`
	PythonNsPerRollout  float64 `json:"python_ns_per_rollout,omitempty"`
	// Speedup is python ÷ rewardd: above 1, rewardd is faster.
	Speedup float64 `json:"speedup,omitempty"`
}

// Ratios compare rewardd with the Python baseline; above 1, rewardd is
// better.
type Ratios struct {
	// Throughput is rewardd's rollouts/s ÷ the Python baseline's.
	Throughput float64 `json:"throughput"`
	// PerCPUSecond compares rollouts per CPU second (in-process only):
	// what each side gets out of the same core time. The CPU is each
	// side's process (getrusage), or for a code scenario, whose programs
	// run in other processes, each side's process tree (PerCPUBasis
	// "process tree": the server and its sandboxes; Python and its
	// subprocesses).
	PerCPUSecond float64 `json:"per_cpu_second,omitempty"`
	PerCPUBasis  string  `json:"per_cpu_basis,omitempty"`
	// TestsPerSecond is a code scenario's tests/s ÷ the naive runner's,
	// and CPUPerTest the naive runner's CPU per test ÷ rewardd's (process
	// trees): for cp, whose submissions run from 2 to 30 tests.
	TestsPerSecond float64 `json:"tests_per_second,omitempty"`
	CPUPerTest     float64 `json:"cpu_per_test,omitempty"`
	// E2E is the in-process Python time of one E2ERows batch ÷ the Python
	// client's end-to-end time for it over gRPC: above 1, sending the batch
	// to rewardd is faster than scoring it in the trainer's process.
	E2E float64 `json:"e2e,omitempty"`
}

// Run benchmarks one configuration (the cp scenario: RunCP).
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Scenario == CP {
		return nil, &OptionError{errors.New("the cp scenario runs a point per language: bench.RunCP")}
	}
	s, err := openFilled(ctx, &opts)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.point(ctx, opts, pointFull)
}

// openFilled fills in opts' defaults, checks them, and opens the session.
func openFilled(ctx context.Context, opts *Options) (*session, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	return open(ctx, opts)
}

// session is what a run or a sweep sets up once: the scenario, the target,
// the Python environment.
type session struct {
	opts   *Options
	sc     *scenario
	target *target
	py     *python // nil without baselines
	// functions and fingerprint are what the target serves.
	functions   []string
	fingerprint string
	// cp is the cp function of the language being measured, as the naive
	// runner must do it.
	cp cpParams
}

func open(ctx context.Context, opts *Options) (*session, error) {
	sc, err := newScenario(opts)
	if err != nil {
		return nil, err
	}
	s := &session{opts: opts, sc: sc}
	if opts.Python != "" {
		if s.py, err = newPython(ctx, opts.Python, !isCode(sc.name)); err != nil {
			return nil, err
		}
	}
	if s.target, err = startTarget(opts); err != nil {
		s.close()
		return nil, err
	}
	conn, err := s.target.dial(ctx)
	if err != nil {
		s.close()
		return nil, err
	}
	defer conn.Close()
	lf, err := rewardv1.NewRewardServiceClient(conn).ListFunctions(ctx, &rewardv1.ListFunctionsRequest{})
	if err != nil {
		s.close()
		return nil, fmt.Errorf("ListFunctions: %w", err)
	}
	var served []string
	var infos []*rewardv1.FunctionInfo
	for _, fn := range lf.GetFunctions() {
		infos = append(infos, fn)
		served = append(served, fn.GetName())
	}
	for _, fn := range opts.Functions {
		if !slices.Contains(served, fn) {
			s.close()
			return nil, &OptionError{fmt.Errorf("function %q is not served (served: %s)", fn, strings.Join(served, ", "))}
		}
	}
	s.functions = opts.Functions
	s.fingerprint = lf.GetConfigFingerprint()
	if isCode(sc.name) && sc.name != CP { // cp: per language, RunCP
		if err := s.checkCodeFunctions(ctx, infos); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

func (s *session) close() {
	if s.target != nil {
		s.target.close()
	}
	if s.py != nil {
		s.py.close()
	}
}

func (s *session) say(format string, args ...any) {
	if s.opts.Progress != nil {
		fmt.Fprintf(s.opts.Progress, format+"\n", args...)
	}
}

// What a point measures beyond the load.
type pointKind int

const (
	// pointFull: the Python throughput baseline, the agreement check, the
	// per-function costs and the end-to-end Python client.
	pointFull pointKind = iota
	// pointSweep: the Python throughput baseline only.
	pointSweep
	// pointLoadOnly: the load alone.
	pointLoadOnly
)

// maxBatchBytes bounds the encoded size of the distinct batches a point
// prepares (about the completion, plus 600 bytes of prompt and reference, per
// rollout); at most maxBatches are prepared.
const (
	maxBatchBytes = 64 << 20
	maxBatches    = 8
)

// point measures one configuration (opts is the session's options with the
// point's batch size, completion length or clients).
func (s *session) point(ctx context.Context, opts Options, kind pointKind) (*Result, error) {
	sc := *s.sc
	sc.length = opts.CompletionLength
	batches, spread, err := s.batches(&sc, opts)
	if err != nil {
		return nil, err
	}
	conns, err := s.dialClients(ctx, opts.Clients)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	code := isCode(sc.name)
	if sc.name == CP {
		if err := s.compileCheckers(ctx, batches); err != nil {
			return nil, err
		}
	}
	l := &load{conns: conns, batches: batches, functions: s.functions, requests: opts.Requests, duration: opts.Duration}
	if code {
		l.kept = make([]atomic.Pointer[rewardv1.ScoreResponse], len(batches))
	}
	warm := l.warmup(ctx, opts.Warmup)
	machine := Machine{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Go: runtime.Version(), LoadBefore: loadAvg(), Time: time.Now().UTC().Truncate(time.Second),
	}
	if opts.Addr == "" {
		machine.RegexEngine = rematch.Engine()
	}
	what := fmt.Sprintf("rewardd %s batch %d × %d clients", opts.Scenario, opts.BatchSize, opts.Clients)
	l.progress = newProgress(opts.Progress, what, opts.Requests, opts.Duration)
	m, err := s.measure(ctx, opts, kind, l)
	if err != nil {
		return nil, err
	}

	r := summarize(m.lr, s.functions)
	r.Scenario, r.Target, r.Functions, r.Fingerprint = opts.Scenario, "in-process", s.functions, s.fingerprint
	r.Machine = machine
	r.Machine.LoadAfter = loadAvg()
	r.CompletionBytes = spread
	r.WarmupRequests = warm
	r.Settings = Settings{
		BatchSize: opts.BatchSize, GroupSize: opts.GroupSize, Clients: opts.Clients, Requests: opts.Requests,
		Warmup: opts.Warmup, CompletionLength: opts.CompletionLength, Wrong: opts.Wrong, Data: opts.Data,
		Seed: opts.Seed, DistinctBatches: len(batches),
	}
	if opts.Requests == 0 {
		r.Settings.DurationSeconds = opts.Duration.Seconds()
	}
	s.processFigures(r, m)
	if code {
		s.codeOutcome(r, m, opts)
	}
	if err := s.compare(ctx, opts, kind, l, m.reasons, r); err != nil {
		return nil, err
	}
	return r, nil
}

// batches makes the distinct batches of a point: as many as the requests
// use, up to maxBatches and maxBatchBytes (every solution for cp), encoded
// once; and the spread of their completions' lengths.
func (s *session) batches(sc *scenario, opts Options) ([]batch, Spread, error) {
	perBatch := opts.BatchSize * (sc.meanLength() + 600)
	n := max(1, min(maxBatches, maxBatchBytes/max(perBatch, 1)))
	if sc.name == CP {
		// Every solution: a few MB of tests.
		n = (len(sc.cp) + opts.BatchSize - 1) / opts.BatchSize
	}
	if opts.Requests > 0 {
		n = min(n, opts.Requests)
	}
	batches := make([]batch, n)
	spread := Spread{Min: -1}
	var total int64
	for j := range batches {
		rows := sc.rows(j*opts.BatchSize, opts.BatchSize)
		req := &rewardv1.ScoreRequest{BatchId: fmt.Sprint("b", j), Functions: s.functions, Rollouts: make([]*rewardv1.Rollout, len(rows))}
		for i, r := range rows {
			req.Rollouts[i] = rollout(r)
			l := len(r.Completion)
			total += int64(l)
			spread.Max = max(spread.Max, l)
			if spread.Min < 0 || l < spread.Min {
				spread.Min = l
			}
		}
		enc, err := encode(req)
		if err != nil {
			return nil, spread, fmt.Errorf("encode batch: %w", err)
		}
		batches[j] = batch{rows: rows, encoded: enc}
		for _, r := range rows {
			batches[j].tests += r.tests
		}
	}
	spread.Mean = float64(total) / float64(n*opts.BatchSize)
	return batches, spread, nil
}

// dialClients opens a connection per client; the caller closes those it
// returns, also with an error.
func (s *session) dialClients(ctx context.Context, clients int) ([]*grpc.ClientConn, error) {
	conns := make([]*grpc.ClientConn, 0, clients)
	for range clients {
		c, err := s.target.dial(ctx)
		if err != nil {
			return conns, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// measurement is what the measured load of a point found: the load's
// figures, this process's usage before and after, the machine's CPU and the
// children's (the sandbox's) in between, the server's request histogram
// before and after, and the code_exec functions' times.
type measurement struct {
	lr                   *loadResult
	before, after        usage
	cpu, children        time.Duration
	tree0, tree1         treeSnapshot
	reset                bool
	bounds               []float64
	requests0, requests1 []uint64
	took                 []time.Duration
	reasons              map[string]string
}

// measure runs the measured load of a point, with the profiles and the
// execution trace opts asks for on a full point.
func (s *session) measure(ctx context.Context, opts Options, kind pointKind, l *load) (*measurement, error) {
	m := &measurement{reset: s.target.inProc && resetPeakRSS()}
	m.bounds, m.requests0 = s.target.requestBuckets()
	m.before = readUsage()
	timer := s.target.timer
	if timer != nil {
		timer.start()
	}
	root := s.treeRoot(opts)
	if root != 0 {
		m.tree0 = snapshotTree(root)
	}
	cpu0, children0 := machineCPU(), childrenCPU()
	stop, err := startProfiles(opts, kind)
	if err != nil {
		return nil, err
	}
	m.lr = l.run(ctx, opts.Requests/opts.Clients+1)
	stop()
	m.after = readUsage()
	m.cpu, m.children = machineCPU()-cpu0, childrenCPU()-children0
	if root != 0 {
		m.tree1 = snapshotTree(root)
	}
	_, m.requests1 = s.target.requestBuckets()
	if opts.MemProfile != nil && kind == pointFull {
		// The profile counts what was allocated up to the last
		// collection; a large batch may have had one or none.
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(opts.MemProfile, 0); err != nil {
			return nil, fmt.Errorf("allocation profile: %w", err)
		}
	}
	if timer != nil {
		m.took, m.reasons = timer.stop()
	}
	l.progress.stop()
	return m, ctx.Err()
}

// startProfiles starts the CPU profile and the execution trace opts asks
// for on a full point; stop stops them.
func startProfiles(opts Options, kind pointKind) (stop func(), err error) {
	profile := opts.CPUProfile != nil && kind == pointFull
	if profile {
		if err := pprof.StartCPUProfile(opts.CPUProfile); err != nil {
			return nil, fmt.Errorf("CPU profile: %w", err)
		}
	}
	tracing := opts.Trace != nil && kind == pointFull
	if tracing {
		if err := trace.Start(opts.Trace); err != nil {
			if profile {
				pprof.StopCPUProfile()
			}
			return nil, fmt.Errorf("execution trace: %w", err)
		}
	}
	return func() {
		if tracing {
			trace.Stop()
		}
		if profile {
			pprof.StopCPUProfile()
		}
	}, nil
}

// processFigures fills in the server's CPU, memory and latency for an
// in-process server, or says why there are none.
func (s *session) processFigures(r *Result, m *measurement) {
	if !s.target.inProc {
		r.Target = s.target.addr
		r.Notes = append(r.Notes, "server CPU and peak RSS are not measured for a remote server (--addr): read them from its /metrics (process_cpu_seconds_total, process_resident_memory_bytes)")
		return
	}
	r.Settings.Workers = s.target.workers
	r.Process = processOf(m.before, m.after, r, m.reset)
	r.Process.MachineCPUSeconds = m.cpu.Seconds()
	r.Process.OtherCPUSeconds = max(0, m.cpu.Seconds()-r.Process.CPUSeconds-m.children.Seconds())
	r.ServerLatency = histogramLatency(m.bounds, m.requests0, m.requests1)
}

// compare runs what a point is compared with: the Python baselines, the
// naive runner of the code scenarios, or rewardd's per-function costs
// alone.
func (s *session) compare(ctx context.Context, opts Options, kind pointKind, l *load, reasons map[string]string, r *Result) error {
	code := isCode(s.sc.name)
	switch {
	case kind == pointLoadOnly:
	case s.py == nil && !code && s.target.inProc:
		// rewardd's side of the per-function costs alone.
		r.PerFunction = perFunction(ctx, s.servedFunctions(opts), l.batches[0].rows, throughputOut{})
	case s.py == nil:
	case code:
		kept := make([]*rewardv1.ScoreResponse, len(l.kept))
		for i := range l.kept {
			kept[i] = l.kept[i].Load()
		}
		return s.codeBaseline(ctx, opts, l.batches, kept, reasons, r)
	default:
		return s.baselines(ctx, opts, kind, l.batches, r)
	}
	return nil
}

// servedFunctions returns the in-process server's functions that the
// requests ask for, in config order.
func (s *session) servedFunctions(opts Options) []*scorers.Function {
	var fns []*scorers.Function
	for _, fn := range opts.Config.Functions {
		if slices.Contains(s.functions, fn.Name) {
			fns = append(fns, fn)
		}
	}
	return fns
}

func processOf(before, after usage, r *Result, reset bool) *Process {
	p := &Process{
		CPUSeconds:       (after.cpu - before.cpu).Seconds(),
		GCs:              after.gcs - before.gcs,
		IdlePSeconds:     after.idle - before.idle,
		GCCPUSeconds:     after.gc - before.gc,
		GOMAXPROCSeconds: float64(runtime.GOMAXPROCS(0)) * r.ElapsedSeconds,
	}
	p.Cores = ratio(p.CPUSeconds, r.ElapsedSeconds)
	if r.Rollouts > 0 {
		p.CPUMicrosPerRollout = p.CPUSeconds * 1e6 / float64(r.Rollouts)
		p.AllocsPerRollout = float64(after.mallocs-before.mallocs) / float64(r.Rollouts)
		p.AllocBytesPerRollout = float64(after.bytes-before.bytes) / float64(r.Rollouts)
	}
	if rss, err := peakRSS(); err == nil {
		p.PeakRSSBytes = rss
	}
	p.PeakRSSSinceStart = !reset
	return p
}
