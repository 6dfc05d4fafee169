package bench

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
)

// The Python baselines, written to a temporary directory at run time so that
// the binary needs nothing beside it.
//
//go:embed baseline/trl_rewards.py baseline/e2e_client.py baseline/naive_runner.py baseline/measure.py
var baselineFS embed.FS

// Baseline is what the Python that users write instead measured in the same
// invocation.
type Baseline struct {
	Python string `json:"python"`
	// The TRL-style functions in process, on the same batches, one batch
	// at a time (as a trainer calls them), for the same duration or number
	// of batches.
	Batches              int     `json:"batches"`
	Rollouts             int64   `json:"rollouts"`
	WallSeconds          float64 `json:"wall_seconds"`
	CPUSeconds           float64 `json:"cpu_seconds"`
	RolloutsPerSecond    float64 `json:"rollouts_per_second"`
	EvaluationsPerSecond float64 `json:"evaluations_per_second"`
	// Latency is per batch (all functions).
	Latency      Latency `json:"latency_ms"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	// Agreement compares the scores of the first batch, rollout by rollout.
	Agreement *Agreement `json:"agreement,omitempty"`
	// E2E is one big batch from a Python gRPC client against the same
	// batch in process.
	E2E *E2E `json:"e2e,omitempty"`

	// For a code scenario (its rollouts are submissions): the runner, its
	// threads, the time of each submission (one subprocess.run, or one
	// per test case), the submissions that timed out, and the busy CPU
	// time of the whole machine while it ran (/proc/stat), of which
	// OtherCPUSeconds was not the runner's (CPUSeconds: Python and its
	// subprocesses).
	Runner            string     `json:"runner,omitempty"`
	Workers           int        `json:"workers,omitempty"`
	SubmissionLatency *Latency   `json:"submission_latency_ms,omitempty"`
	SubmissionCDF     []Quantile `json:"submission_latency_cdf,omitempty"`
	TestsPerSecond    float64    `json:"tests_per_second,omitempty"`
	Tests             int64      `json:"tests,omitempty"`
	CPUMsPerTest      float64    `json:"cpu_ms_per_test,omitempty"`
	Timeouts          int        `json:"timeouts,omitempty"`
	MachineCPUSeconds float64    `json:"machine_cpu_seconds,omitempty"`
	OtherCPUSeconds   float64    `json:"other_cpu_seconds,omitempty"`
}

// Agreement counts the rollout-function pairs on which rewardd and the
// Python baseline give the same score (both None/not OK counts as equal).
type Agreement struct {
	Compared int `json:"compared"`
	Agree    int `json:"agree"`
	// Examples lists up to 10 disagreements.
	Examples []Disagreement `json:"examples,omitempty"`
	// Passes counts passes on each side, for a code scenario.
	Passes *PassCounts `json:"passes,omitempty"`
}

// Disagreement is one pair on which the two sides differ.
type Disagreement struct {
	Function string   `json:"function"`
	Row      string   `json:"row"`
	Rewardd  *float64 `json:"rewardd"`
	Python   *float64 `json:"python"`
	// Detail says why, when known (code scenarios).
	Detail string `json:"detail,omitempty"`
}

// E2E is the end-to-end comparison from Python.
type E2E struct {
	Rows        int     `json:"rows"`
	Repeats     int     `json:"repeats"`
	ClientMs    float64 `json:"client_ms_median"`
	InProcessMs float64 `json:"in_process_ms_median"`
	// ClientParts splits the client's median time: building the request
	// ("build"), the call ("call": encoding, transport, the server,
	// decoding the answer) and turning the answer into lists ("unpack").
	ClientParts map[string]float64 `json:"client_parts_ms_median"`
	ClientAll   []float64          `json:"client_ms"`
	InProcAll   []float64          `json:"in_process_ms"`
	// Agree and Compared check that the client got the in-process scores.
	Agree    int `json:"agree"`
	Compared int `json:"compared"`
}

// python is the interpreter with the baseline scripts and the reward.v1
// stubs in a temporary directory.
type python struct {
	interp  string
	dir     string
	version string
}

// newPython sets up the interpreter for the baselines; stubs says whether the
// reward.v1 gRPC stubs (the end-to-end client) are needed.
func newPython(ctx context.Context, interp string, stubs bool) (*python, error) {
	dir, err := os.MkdirTemp("", "rewardd-bench-")
	if err != nil {
		return nil, err
	}
	p := &python{interp: interp, dir: dir}
	if err := p.setup(ctx, stubs); err != nil {
		p.close()
		return nil, fmt.Errorf("python baseline (%s): %w", interp, err)
	}
	return p, nil
}

// setup writes the scripts and generates the stubs: grpc_tools's protoc reads
// the reward.v1 descriptor compiled into this binary (generated from
// proto/reward/v1/reward.proto) with --descriptor_set_in.
func (p *python) setup(ctx context.Context, withStubs bool) error {
	for _, name := range []string{"trl_rewards.py", "e2e_client.py", "naive_runner.py", "measure.py"} {
		data, err := baselineFS.ReadFile("baseline/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(p.dir, name), data, 0o644); err != nil {
			return err
		}
	}
	if !withStubs {
		out, err := p.run(ctx, "-c", "import sys; print(sys.version.split()[0])")
		if err != nil {
			return err
		}
		p.version = strings.TrimSpace(string(out))
		return nil
	}
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(structpb.File_google_protobuf_struct_proto),
		protodesc.ToFileDescriptorProto(rewardv1.File_reward_v1_reward_proto),
	}}
	data, err := proto.Marshal(set)
	if err != nil {
		return err
	}
	desc := filepath.Join(p.dir, "reward.desc")
	if err := os.WriteFile(desc, data, 0o644); err != nil {
		return err
	}
	stubs := filepath.Join(p.dir, "stubs")
	if err := os.Mkdir(stubs, 0o755); err != nil {
		return err
	}
	// grpc_tools.protoc.main, not `-m grpc_tools.protoc`, which adds an -I
	// that protoc refuses next to --descriptor_set_in.
	if _, err := p.run(ctx, "-c", "import sys; from grpc_tools import protoc; sys.exit(protoc.main(sys.argv))",
		"--descriptor_set_in="+desc, "--python_out="+stubs, "--grpc_python_out="+stubs,
		rewardv1.File_reward_v1_reward_proto.Path()); err != nil {
		return fmt.Errorf("generate stubs with grpc_tools.protoc: %w", err)
	}
	out, err := p.run(ctx, "-c", "import sys, grpc; print(sys.version.split()[0])")
	if err != nil {
		return err
	}
	p.version = strings.TrimSpace(string(out))
	return nil
}

func (p *python) close() { os.RemoveAll(p.dir) }

// run runs the interpreter with args and returns its stdout; a failure
// carries the end of its stderr.
func (p *python) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, p.interp, args...)
	cmd.Dir = p.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		return nil, fmt.Errorf("%s %s: %w: %s", p.interp, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// writeRows writes rows as JSONL to a file in the work directory.
func (p *python) writeRows(name string, batches ...[]Row) (string, error) {
	path := filepath.Join(p.dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, rows := range batches {
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				f.Close()
				return "", err
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// runOnRows writes the rows of batches to a file, runs the Python script on
// it (with --rows and args) and decodes its JSON output into out.
func (s *session) runOnRows(ctx context.Context, batches []batch, out any, script string, args ...string) error {
	rowSets := make([][]Row, len(batches))
	for i, b := range batches {
		rowSets[i] = b.rows
	}
	path, err := s.py.writeRows("rows.jsonl", rowSets...)
	if err != nil {
		return err
	}
	data, err := s.py.run(ctx, append([]string{script, "--rows", path}, args...)...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s output: %w", script, err)
	}
	return nil
}

// throughputOut is trl_rewards.py's output.
type throughputOut struct {
	Python           string                `json:"python"`
	Batches          int                   `json:"batches"`
	Rollouts         int64                 `json:"rollouts"`
	Functions        []string              `json:"functions"`
	WallSeconds      float64               `json:"wall_seconds"`
	CPUSeconds       float64               `json:"cpu_seconds"`
	Latencies        []float64             `json:"latencies_seconds"`
	PerFunction      map[string]float64    `json:"per_function_seconds"`
	PeakRSSBytes     int64                 `json:"peak_rss_bytes"`
	FirstBatchScores map[string][]*float64 `json:"first_batch_scores"`
}

// baselines runs the Python side of a point and fills r.Baseline, r.Ratios
// and, in process, r.PerFunction; for a full point also the agreement and
// the end-to-end client.
func (s *session) baselines(ctx context.Context, opts Options, kind pointKind, batches []batch, r *Result) error {
	s.say("python baseline: TRL-style functions in process, batch %d …", opts.BatchSize)
	var t throughputOut
	args := append([]string{"--batch-size", strconv.Itoa(opts.BatchSize), "--functions", strings.Join(s.functions, ",")}, runLength(opts)...)
	err := s.runOnRows(ctx, batches, &t, "trl_rewards.py", args...)
	if err != nil {
		return err
	}
	b := &Baseline{
		Python: t.Python, Batches: t.Batches, Rollouts: t.Rollouts, WallSeconds: t.WallSeconds, CPUSeconds: t.CPUSeconds,
		PeakRSSBytes: t.PeakRSSBytes,
	}
	b.RolloutsPerSecond = ratio(float64(t.Rollouts), t.WallSeconds)
	b.EvaluationsPerSecond = b.RolloutsPerSecond * float64(len(t.Functions))
	lat := make([]time.Duration, len(t.Latencies))
	for i, sec := range t.Latencies {
		lat[i] = time.Duration(sec * float64(time.Second))
	}
	b.Latency = latencyOf(lat)
	r.Baseline = b
	r.Ratios = &Ratios{Throughput: ratio(r.RolloutsPerSecond, b.RolloutsPerSecond)}
	if r.Process != nil && r.Process.CPUSeconds > 0 && t.CPUSeconds > 0 {
		r.Ratios.PerCPUSecond = ratio(float64(r.Rollouts)/r.Process.CPUSeconds, float64(t.Rollouts)/t.CPUSeconds)
	}
	if s.target.inProc {
		r.PerFunction = perFunction(ctx, s.servedFunctions(opts), batches[0].rows, t)
	}
	if kind != pointFull {
		return nil
	}

	if b.Agreement, err = s.agreement(ctx, batches[0].rows, t.FirstBatchScores); err != nil {
		return err
	}
	s.say("python baseline: a %d-rollout batch end to end from a Python gRPC client …", opts.E2ERows)
	if b.E2E, err = s.e2e(ctx, opts); err != nil {
		return err
	}
	r.Ratios.E2E = ratio(b.E2E.InProcessMs, b.E2E.ClientMs)
	return nil
}

// agreement scores rows once more (outside any timing) and compares with
// the Python scores.
func (s *session) agreement(ctx context.Context, rows []Row, py map[string][]*float64) (*Agreement, error) {
	conn, err := s.target.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	req := &rewardv1.ScoreRequest{Functions: s.functions, Rollouts: make([]*rewardv1.Rollout, len(rows))}
	for i, r := range rows {
		req.Rollouts[i] = rollout(r)
	}
	resp, err := rewardv1.NewRewardServiceClient(conn).Score(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("score the first batch for the agreement check: %w", err)
	}
	a := &Agreement{}
	for _, fs := range resp.GetFunctions() {
		theirs, ok := py[fs.GetName()]
		if !ok {
			continue // a function the baseline does not have
		}
		for i, v := range fs.GetValues() {
			var mine *float64
			if fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_OK {
				mine = &v
			}
			var other *float64
			if i < len(theirs) {
				other = theirs[i]
			}
			a.Compared++
			if mine == nil && other == nil || mine != nil && other != nil && math.Abs(*mine-*other) < 1e-9 {
				a.Agree++
			} else if len(a.Examples) < 10 {
				a.Examples = append(a.Examples, Disagreement{Function: fs.GetName(), Row: rows[i].ID, Rewardd: mine, Python: other})
			}
		}
	}
	return a, nil
}

// perFunction times each served function alone over rows on one goroutine
// (no transport, no pool), for about 200 ms each, next to the Python time
// of the same function.
func perFunction(ctx context.Context, fns []*scorers.Function, rows []Row, py throughputOut) []FunctionCost {
	rs := make([]scorers.Rollout, len(rows))
	for i, r := range rows {
		rs[i] = scorers.Rollout{ID: r.ID, Group: r.Group, Prompt: r.Prompt, Completion: r.Completion,
			Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(r.Answer)}}
	}
	var out []FunctionCost
	for _, fn := range fns {
		n := 0
		start := time.Now()
		for time.Since(start) < 200*time.Millisecond {
			for i := range rs {
				fn.Scorer.Score(ctx, &rs[i])
			}
			n += len(rs)
		}
		c := FunctionCost{Function: fn.Name, RewarddNsPerRollout: float64(time.Since(start).Nanoseconds()) / float64(n)}
		if sec, ok := py.PerFunction[fn.Name]; ok && py.Rollouts > 0 {
			c.PythonNsPerRollout = sec * 1e9 / float64(py.Rollouts)
			c.Speedup = ratio(c.PythonNsPerRollout, c.RewarddNsPerRollout)
		}
		out = append(out, c)
	}
	return out
}

// e2eOut is e2e_client.py's output.
type e2eOut struct {
	Rows      int                `json:"rows"`
	InProcess []float64          `json:"in_process_seconds"`
	Client    []float64          `json:"client_seconds"`
	InProcMed float64            `json:"in_process_median"`
	ClientMed float64            `json:"client_median"`
	Parts     map[string]float64 `json:"client_parts_median"`
	Agree     int                `json:"agree"`
	Compared  int                `json:"compared"`
}

func (s *session) e2e(ctx context.Context, opts Options) (*E2E, error) {
	sc := *s.sc
	sc.length = opts.CompletionLength
	path, err := s.py.writeRows("e2e.jsonl", sc.rows(0, opts.E2ERows))
	if err != nil {
		return nil, err
	}
	args := []string{"e2e_client.py", "--addr", s.target.addr, "--stubs", filepath.Join(s.py.dir, "stubs"),
		"--rows", path, "--repeats", strconv.Itoa(opts.E2ERepeats), "--functions", strings.Join(s.functions, ",")}
	if opts.AuthToken != "" {
		args = append(args, "--token", opts.AuthToken)
	}
	if opts.TLSCAFile != "" {
		args = append(args, "--ca-file", opts.TLSCAFile)
	}
	out, err := s.py.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	var e e2eOut
	if err := json.Unmarshal(out, &e); err != nil {
		return nil, fmt.Errorf("e2e_client.py output: %w", err)
	}
	toMs := func(sec []float64) []float64 {
		out := make([]float64, len(sec))
		for i, v := range sec {
			out[i] = v * 1e3
		}
		return out
	}
	parts := map[string]float64{}
	for k, v := range e.Parts {
		parts[k] = v * 1e3
	}
	return &E2E{
		ClientParts: parts,
		Rows:        e.Rows, Repeats: opts.E2ERepeats, ClientMs: e.ClientMed * 1e3, InProcessMs: e.InProcMed * 1e3,
		ClientAll: toMs(e.Client), InProcAll: toMs(e.InProcess), Agree: e.Agree, Compared: e.Compared,
	}, nil
}

// rollout is the request form of a row.
func rollout(r Row) *rewardv1.Rollout {
	fields := map[string]*structpb.Value{}
	if r.Checker != "" {
		cpFields(r, fields)
	}
	if r.Answer != "" {
		fields["answer"] = structpb.NewStringValue(r.Answer)
	}
	if r.Test != "" {
		fields["test"] = structpb.NewStringValue(r.Test)
		fields["entry_point"] = structpb.NewStringValue(r.EntryPoint)
	}
	if r.Tests != "" {
		fields["tests"] = structpb.NewStringValue(r.Tests)
	}
	return &rewardv1.Rollout{Id: r.ID, Group: r.Group, Prompt: r.Prompt, Completion: r.Completion, Fields: &structpb.Struct{Fields: fields}}
}

// runLength is how long a baseline script runs: the same number of batches
// as the load (--requests) or the same time (--duration).
func runLength(opts Options) []string {
	if opts.Requests > 0 {
		return []string{"--batches", strconv.Itoa(opts.Requests)}
	}
	return []string{"--duration", strconv.FormatFloat(opts.Duration.Seconds(), 'f', -1, 64)}
}
