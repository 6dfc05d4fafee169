package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/internal/servertest"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

const dataPath = "../../shared/data/gsm8k_test.jsonl"

// defaultConfig loads the config `rewardd serve` embeds, with extra YAML
// (limits) appended.
func defaultConfig(t testing.TB, extra string) *config.Config {
	t.Helper()
	data, err := os.ReadFile("../server/config/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("default.yaml", append(data, extra...), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func needData(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(dataPath); err != nil {
		t.Skipf("GSM8K data not found (CI has ../shared beside the repo): %v", err)
	}
}

func tinyOptions(t testing.TB) Options {
	return Options{
		Scenario: GSM8K, Data: dataPath, BatchSize: 16, GroupSize: 4, Clients: 3, Requests: 7,
		Warmup: 0, Seed: 1, Config: defaultConfig(t, ""), Registry: builtin.Registry(), Workers: 2,
	}
}

// TestBenchAccountsForEveryRequest runs a tiny bench on the in-process server
// and checks the report's arithmetic: every request sent is accounted for,
// every rollout of every OK answer has a status in every function, and the
// rates, percentiles and bins agree with the counts.
func TestBenchAccountsForEveryRequest(t *testing.T) {
	needData(t)
	opts := tinyOptions(t)
	r, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests.Sent != opts.Requests || r.Requests.OK+r.Requests.Failed() != r.Requests.Sent {
		t.Fatalf("requests: %+v, want %d sent, all accounted for", r.Requests, opts.Requests)
	}
	if r.Requests.OK != opts.Requests {
		t.Fatalf("requests: %+v, want all OK", r.Requests)
	}
	if want := int64(r.Requests.OK * opts.BatchSize); r.Rollouts != want {
		t.Errorf("rollouts %d, want %d", r.Rollouts, want)
	}
	nf := len(BaselineFunctions)
	if len(r.Functions) != nf || r.Evaluations != r.Rollouts*int64(nf) {
		t.Errorf("functions %v, evaluations %d for %d rollouts", r.Functions, r.Evaluations, r.Rollouts)
	}
	if got, want := r.RolloutsPerSecond, float64(r.Rollouts)/r.ElapsedSeconds; math.Abs(got-want) > 1e-9*want {
		t.Errorf("rollouts/s %v, want %v", got, want)
	}
	if got, want := r.EvaluationsPerSecond, float64(nf)*r.RolloutsPerSecond; math.Abs(got-want) > 1e-9*want {
		t.Errorf("evaluations/s %v, want %v", got, want)
	}
	l := r.Latency
	if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max && l.Mean <= l.Max) {
		t.Errorf("latency percentiles out of order: %+v", l)
	}
	n := 0
	for _, b := range r.LatencyHistogram {
		n += b.Count
	}
	if n != r.Requests.OK {
		t.Errorf("histogram holds %d requests, want %d", n, r.Requests.OK)
	}
	// Bins are of equal width w but the last, which ends with the run.
	var integral float64
	w := 2 * r.Throughput[0].Seconds
	for i, s := range r.Throughput {
		if i == len(r.Throughput)-1 {
			w = r.ElapsedSeconds - float64(i)*w
		}
		integral += s.RolloutsPerSecond * w
	}
	if math.Abs(integral-float64(r.Rollouts)) > 0.5 {
		t.Errorf("throughput over time adds up to %.2f rollouts, want %d", integral, r.Rollouts)
	}

	// Each of the 7 distinct batches was sent once: accuracy is 1 on the
	// rows left right and 0 on the wrong ones, nothing is n/a or an error.
	right := rightRows(t, opts, opts.Requests*opts.BatchSize)
	for _, o := range r.Outcomes {
		if o.OK+o.NotApplicable+o.Error != r.Rollouts {
			t.Errorf("%s: %d+%d+%d outcomes for %d rollouts", o.Function, o.OK, o.NotApplicable, o.Error, r.Rollouts)
		}
		if o.NotApplicable+o.Error != 0 {
			t.Errorf("%s: %d n/a, %d errors on gold GSM8K rows", o.Function, o.NotApplicable, o.Error)
		}
		if o.Function == "accuracy" && math.Abs(o.MeanOK-float64(right)/float64(r.Rollouts)) > 1e-9 {
			t.Errorf("accuracy mean %v, want %d right of %d", o.MeanOK, right, r.Rollouts)
		}
	}
	if p := r.Process; p == nil || p.CPUSeconds <= 0 || p.PeakRSSBytes <= 0 || p.CPUMicrosPerRollout <= 0 {
		t.Errorf("process figures missing: %+v", p)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "7 sent = 7 OK + 0 failed") {
		t.Errorf("text report does not account for the requests:\n%s", text.String())
	}
}

// TestBenchCountsFailedRequests loads a remote server (--addr) that refuses
// every batch as over its limit, and one that admits one request at a time:
// failed requests are counted by status, none is dropped.
func TestBenchCountsFailedRequests(t *testing.T) {
	needData(t)
	for _, tc := range []struct {
		name   string
		limits string
		check  func(t *testing.T, r *Result)
	}{
		{"over max_rollouts", "limits:\n  max_rollouts: 8\n", func(t *testing.T, r *Result) {
			if r.Requests.OK != 0 || r.Requests.Errors[codes.InvalidArgument.String()] != r.Requests.Sent {
				t.Errorf("requests %+v, want every one INVALID_ARGUMENT", r.Requests)
			}
		}},
		{"one in flight", "limits:\n  max_inflight_requests: 1\n", func(t *testing.T, r *Result) {
			for code := range r.Requests.Errors {
				if code != codes.ResourceExhausted.String() {
					t.Errorf("error %s, want only RESOURCE_EXHAUSTED", code)
				}
			}
			refused := r.Requests.Errors[codes.ResourceExhausted.String()]
			if (refused > 0) != (r.RefusedLatency != nil) {
				t.Errorf("%d refused, refusal latency %+v", refused, r.RefusedLatency)
			} else if refused > 0 && !(r.RefusedLatency.P50 > 0 && r.RefusedLatency.P50 <= r.RefusedLatency.Max) {
				t.Errorf("refusal latency %+v", r.RefusedLatency)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, defaultConfig(t, tc.limits))
			opts := Options{
				Scenario: GSM8K, Data: dataPath, BatchSize: 16, GroupSize: 4, Clients: 4, Requests: 40, Seed: 1,
				Addr: addr, DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())},
			}
			r, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests.Sent != 40 || r.Requests.OK+r.Requests.Failed() != 40 {
				t.Fatalf("requests %+v: want 40 sent = OK + failed", r.Requests)
			}
			if r.Rollouts != int64(16*r.Requests.OK) {
				t.Errorf("%d rollouts from %d OK requests of 16", r.Rollouts, r.Requests.OK)
			}
			if r.Process != nil || len(r.Notes) == 0 {
				t.Errorf("remote server: process %+v, notes %q; want no process figures and a note", r.Process, r.Notes)
			}
			tc.check(t, r)
		})
	}
}

// serve starts a gRPC server for cfg on a loopback port.
func serve(t *testing.T, cfg *config.Config) string {
	t.Helper()
	return servertest.Start(t, server.Options{Config: cfg, Workers: 2}).GRPCAddr
}

const humanEvalPath = "../../shared/data/humaneval.jsonl"

// codeRegistry starts a sandbox pool for the test (skipping when it cannot
// run here) and returns the registry whose code_exec functions use it.
func codeRegistry(t *testing.T) scorers.Registry {
	t.Helper()
	sandboxtest.SkipUnlessRoot(t)
	if err := exec.Command(pythonPath, "-c", "pass").Run(); err != nil {
		t.Skipf("%s is needed for the sandbox and the naive runner: %v", pythonPath, err)
	}
	pool, err := sandbox.Start(context.Background(), sandbox.Config{Slots: 2, Python: pythonPath})
	if err != nil {
		t.Fatalf("start the sandbox: %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	return builtin.WithSandbox(func() (codeexec.Runner, error) { return pool, nil })
}

const pythonPath = "/usr/bin/python3"

// TestBenchHumanEval runs the humaneval scenario for real, small: 16
// rollouts of 16 problems (4 with `return None`) in one request, on the
// scenario's own config compiled with the sandbox registry, against the
// naive subprocess runner. Both must give the same pass/fail on every
// rollout; a config built from crafted rows where they cannot agree must
// show the disagreements, with why.
func TestBenchHumanEval(t *testing.T) {
	if _, err := os.Stat(humanEvalPath); err != nil {
		t.Skipf("HumanEval data not found (CI has ../shared beside the repo): %v", err)
	}
	reg := codeRegistry(t)

	t.Run("agree", func(t *testing.T) { testHumanEvalAgrees(t, reg) })
	t.Run("disagreements are reported", func(t *testing.T) { testHumanEvalDisagreements(t, reg) })
}

// testHumanEvalAgrees: on HumanEval rows, a quarter of them broken, rewardd
// and the naive runner agree on every rollout, and the report says so.
func testHumanEvalAgrees(t *testing.T, reg scorers.Registry) {
	opts := Options{
		Scenario: HumanEval, Data: humanEvalPath, Wrong: 0.25, BatchSize: 16, GroupSize: 1, Clients: 1,
		Requests: 1, Seed: 1, Registry: reg, Workers: 2, Python: pythonPath,
	}
	r, text := runLogged(t, opts)
	if r.Requests.Sent != 1 || r.Requests.OK != 1 || r.Rollouts != 16 {
		t.Fatalf("requests %+v, %d rollouts; want 1 OK request of 16", r.Requests, r.Rollouts)
	}
	if len(r.Functions) != 1 || r.Functions[0] != "tests" {
		t.Errorf("functions %v, want the scenario's [tests]", r.Functions)
	}
	canonical := rightRows(t, opts, 16)
	if canonical == 16 || canonical == 0 {
		t.Fatalf("%d canonical rows of 16: the test wants both kinds", canonical)
	}
	if o := r.Outcomes[0]; o.OK != 16 || math.Abs(o.MeanOK-float64(canonical)/16) > 1e-9 {
		t.Errorf("outcomes %+v, want 16 OK with mean %d/16 (the canonical ones pass)", o, canonical)
	}
	c := r.Code
	if c == nil || c.Timed != 16 || c.Latency == nil || c.Latency.P50 <= 0 || c.SubmissionsPerSecond <= 0 || c.Errors != 0 {
		t.Fatalf("code result %+v, want 16 timed submissions, no errors", c)
	}
	b := r.Baseline
	if b == nil || b.Rollouts != 16 || b.Batches != 1 || b.RolloutsPerSecond <= 0 || b.SubmissionLatency == nil || b.SubmissionLatency.P50 <= 0 {
		t.Fatalf("baseline %+v, want one batch of 16 submissions", b)
	}
	a := b.Agreement
	if a == nil || a.Compared != 16 || a.Agree != 16 || len(a.Examples) != 0 {
		t.Fatalf("agreement %+v, want 16 of 16", a)
	}
	if p := a.Passes; p.Canonical != canonical || p.RewarddPassed != canonical || p.PythonPassed != canonical ||
		p.RewarddCanonicalPassed != canonical || p.PythonCanonicalPassed != canonical {
		t.Errorf("passes %+v, want every canonical solution (%d) and nothing else passed on both sides", p, canonical)
	}
	if r.Ratios == nil || r.Ratios.Throughput <= 0 {
		t.Errorf("ratios %+v, want a throughput ratio", r.Ratios)
	}
	if !strings.Contains(text, "16 of 16 rollouts with the same score") {
		t.Errorf("text report does not state the agreement")
	}
	// The CPU breakdown counts the two slots' servers and the programs
	// the zygotes forked.
	parts := map[string]CPUPart{}
	if c.Breakdown != nil {
		for _, p := range c.Breakdown.Parts {
			parts[p.Name] = p
		}
	}
	if parts[partRunner].Processes != 2 || parts[partZygote].Processes != 2 || parts[partGo].Processes != 1 {
		t.Errorf("CPU breakdown %+v, want this process, 2 runners and 2 zygotes", c.Breakdown)
	}
	if _, ok := parts[partPrograms]; !ok {
		t.Errorf("CPU breakdown %+v has no programs part", c.Breakdown)
	}
	if !strings.Contains(text, "CPU per submission by process") {
		t.Errorf("text report does not show the CPU breakdown:\n%s", text)
	}
	checkSVG(t, r.WriteSVG)
}

// testHumanEvalDisagreements: on crafted rows that rewardd and the naive
// runner judge differently, the report shows each disagreement and why.
func testHumanEvalDisagreements(t *testing.T, reg scorers.Registry) {
	// Two programs the naive runner passes and rewardd refuses: one
	// returns an int subclass (rewardd accepts only built-in values),
	// one depends on __name__ being "__main__" (python -c).
	data := filepath.Join(t.TempDir(), "crafted.jsonl")
	var rows bytes.Buffer
	for _, r := range []map[string]string{
		{"task_id": "crafted/0", "prompt": "def f():\n", "canonical_solution": "    class X(int):\n        pass\n    return X(1)\n",
			"test": "def check(candidate):\n    assert candidate() == 1\n", "entry_point": "f"},
		{"task_id": "crafted/1", "prompt": "def g():\n", "canonical_solution": "    return __name__\n",
			"test": "def check(candidate):\n    assert candidate() == '__main__'\n", "entry_point": "g"},
	} {
		line, _ := json.Marshal(r)
		rows.Write(append(line, '\n'))
	}
	if err := os.WriteFile(data, rows.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Scenario: HumanEval, Data: data, BatchSize: 2, GroupSize: 1, Clients: 1,
		Requests: 1, Seed: 1, Registry: reg, Workers: 2, Python: pythonPath,
	}
	r, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	a := r.Baseline.Agreement
	if a.Compared != 2 || a.Agree != 0 || len(a.Examples) != 2 || a.Passes.PythonPassed != 2 || a.Passes.RewarddPassed != 0 {
		t.Fatalf("agreement %+v, want both rollouts to disagree (naive passes, rewardd fails)", a)
	}
	for _, d := range a.Examples {
		if d.Rewardd == nil || *d.Rewardd != 0 || d.Python == nil || *d.Python != 1 || !strings.Contains(d.Detail, "crafted/") || !strings.Contains(d.Detail, "rewardd: 0/1 tests passed") {
			t.Errorf("disagreement %+v %q, want rewardd 0, naive 1, and why", d, d.Detail)
		}
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "0 of 2 rollouts with the same score") || strings.Count(text.String(), "DISAGREE") != 2 {
		t.Errorf("text report hides the disagreements:\n%s", text.String())
	}
}

// TestBenchStdio runs the io-style code scenario, small: 8 submissions of 12
// stdin cases each, 3 of them broken so that they pass only some cases; the
// naive runner (one interpreter per case) must give the same fractions.
func TestBenchStdio(t *testing.T) {
	reg := codeRegistry(t)
	opts := Options{
		Scenario: Stdio, Wrong: 0.4, BatchSize: 8, GroupSize: 1, Clients: 1,
		Requests: 1, Seed: 1, Registry: reg, Workers: 2, Python: pythonPath,
	}
	r, _ := runLogged(t, opts)
	if r.Requests.OK != 1 || r.Rollouts != 8 || len(r.Functions) != 1 || r.Functions[0] != "io_tests" {
		t.Fatalf("requests %+v, %d rollouts, functions %v; want 1 OK request of 8 for io_tests", r.Requests, r.Rollouts, r.Functions)
	}
	canonical := rightRows(t, opts, 8)
	c := r.Code
	if c == nil || c.TestsPerSubmission != StdioTests || math.Abs(c.TestsPerSecond-StdioTests*c.SubmissionsPerSecond) > 1e-9 || c.Timed != 8 || c.Errors != 0 {
		t.Fatalf("code result %+v, want 8 timed submissions of %d tests", c, StdioTests)
	}
	b := r.Baseline
	if b == nil || b.Rollouts != 8 || b.TestsPerSecond <= 0 {
		t.Fatalf("baseline %+v", b)
	}
	a := b.Agreement
	if a.Compared != 8 || a.Agree != 8 {
		t.Fatalf("agreement %+v, want 8 of 8", a)
	}
	// The broken programs fail some cases, not all: partial scores.
	if p := a.Passes; canonical == 8 || p.RewarddPassed != canonical || p.RewarddCanonicalPassed != canonical ||
		r.Outcomes[0].MeanOK <= float64(canonical)/8 || r.Outcomes[0].MeanOK >= 1 {
		t.Errorf("passes %+v, mean %v: want the %d canonical programs to pass all and the broken ones some", p, r.Outcomes[0].MeanOK, canonical)
	}
	if r.Ratios == nil || r.Ratios.Throughput <= 0 {
		t.Errorf("ratios %+v", r.Ratios)
	}
}

// TestBenchHumanEvalOptions: what the humaneval scenario refuses, before
// anything runs.
func TestBenchHumanEvalOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"completion length", func(o *Options) { o.CompletionLength = 512 }, "no completion length"},
		{"two functions with the baseline", func(o *Options) { o.Functions, o.Python = []string{"tests", "other"}, pythonPath }, "one code_exec function"},
		{"no registry", func(o *Options) { o.Registry = nil }, "no scorer registry"},
		{"a registry without code_exec", func(o *Options) {
			o.Registry = scorers.Registry{}
		}, "code_exec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Scenario: HumanEval, Data: humanEvalPath, BatchSize: 4, Requests: 1, Registry: builtin.Registry()}
			tc.edit(&opts)
			_, err := Run(context.Background(), opts)
			var oe *OptionError
			if !errors.As(err, &oe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an OptionError saying %q", err, tc.want)
			}
		})
	}
}

// TestBenchHumanEvalWithoutSandbox: a code_exec function that cannot run
// programs (no sandbox in this process) stops the bench before it measures
// a run of ERRORs.
func TestBenchHumanEvalWithoutSandbox(t *testing.T) {
	if _, err := os.Stat(humanEvalPath); err != nil {
		t.Skipf("HumanEval data not found: %v", err)
	}
	opts := Options{Scenario: HumanEval, Data: humanEvalPath, BatchSize: 4, Requests: 1, Registry: builtin.Registry()}
	_, err := Run(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "cannot run programs") || !strings.Contains(err.Error(), "no code execution sandbox") {
		t.Fatalf("%v, want the bench to stop because the function cannot run programs", err)
	}
}

// TestBenchCompletionLength: --completion-length gives exactly that many bytes
// of valid UTF-8, keeping the final answer (and the tags, when padded).
func TestBenchCompletionLength(t *testing.T) {
	needData(t)
	for _, name := range []string{GSM8K, Mixed, Long} {
		for _, n := range []int{64, 256, 5000, 64 << 10} {
			if name == Long && n < 256 {
				continue // shorter than its answer tags
			}
			opts := tinyOptions(t)
			opts.Scenario, opts.CompletionLength = name, n
			sc, err := newScenario(&opts)
			if err != nil {
				t.Fatal(err)
			}
			plain := *sc
			plain.length = 0
			for i := range 200 {
				got, orig := sc.row(i).Completion, plain.row(i).Completion
				if len(got) != n || !utf8.ValidString(got) {
					t.Fatalf("%s row %d at %d: %d bytes, valid UTF-8 %v", name, i, n, len(got), utf8.ValidString(got))
				}
				if len(orig) <= n {
					if i := strings.LastIndex(orig, "####"); i >= 0 && !strings.HasSuffix(got, orig[i:]) {
						t.Fatalf("%s row %d padded to %d lost its final answer %q", name, i, n, orig[i:])
					}
					if strings.HasPrefix(orig, "<think>\n") && !strings.HasPrefix(got, "<think>\n") {
						t.Fatalf("%s row %d padded to %d lost its <think> tag", name, i, n)
					}
				}
			}
		}
	}
}

// TestBenchLong: the long scenario's rows look like a reasoning model's
// output (step markers, lists, LaTeX, second thoughts, the answer in tags
// or a box, some cut off) and run from 4 to 128 KiB.
func TestBenchLong(t *testing.T) {
	needData(t)
	opts := tinyOptions(t)
	opts.Scenario = Long
	sc, err := newScenario(&opts)
	if err != nil {
		t.Fatal(err)
	}
	shortest, longest, total := math.MaxInt, 0, 0
	seen := map[string]int{}
	const n = 400
	for i := range n {
		r := sc.row(i)
		c := r.Completion
		if !utf8.ValidString(c) || r.Answer == "" || r.Prompt == "" {
			t.Fatalf("row %d: valid UTF-8 %v, answer %q, prompt %q", i, utf8.ValidString(c), r.Answer, r.Prompt)
		}
		shortest, longest, total = min(shortest, len(c)), max(longest, len(c)), total+len(c)
		for _, marker := range []string{"Step ", "Wait, ", "$$", "\\(", "\n- ", "\n* ", "\n1. ", "First, ", "<think>", "</answer>", "\\boxed{", "Final answer: "} {
			if strings.Contains(c, marker) {
				seen[marker]++
			}
		}
		if strings.Contains(c, "<<") {
			t.Fatalf("row %d keeps GSM8K's calculator annotations", i)
		}
	}
	if shortest < longMin || longest > longMax+64 || total/n < 24<<10 || total/n > 48<<10 {
		t.Errorf("lengths %d–%d, mean %d: want 4–128 KiB, about 36 KiB on average", shortest, longest, total/n)
	}
	for _, marker := range []string{"Step ", "Wait, ", "$$", "\\(", "\n- ", "\n* ", "\n1. ", "First, ", "<think>", "</answer>", "\\boxed{", "Final answer: "} {
		if seen[marker] == 0 {
			t.Errorf("no row has %q", marker)
		}
	}
	if seen["</answer>"] < n/2 || seen["</answer>"] > n*3/4 {
		t.Errorf("%d of %d rows answer in tags, want about 60%%", seen["</answer>"], n)
	}
}

// TestBenchSweepGrowth checks the verdict arithmetic on made-up points.
func TestBenchSweepGrowth(t *testing.T) {
	pt := func(x int, batch int, bytes float64, cost float64) SweepPoint {
		return SweepPoint{X: x, CostPerUnit: cost, Result: &Result{Settings: Settings{BatchSize: batch}, CompletionBytes: Spread{Mean: bytes}}}
	}
	linear := &SweepResult{Kind: SweepBatch, Points: []SweepPoint{pt(64, 64, 300, 3), pt(256, 256, 300, 2), pt(1024, 1024, 300, 2.1)}}
	g := growth(linear)
	if !g.Linear || math.Abs(g.Ratio-1.05) > 1e-9 || math.Abs(g.Exponent-(1+math.Log(1.05)/math.Log(4))) > 1e-9 {
		t.Errorf("linear sweep: %+v", g)
	}
	worse := &SweepResult{Kind: SweepLength, Points: []SweepPoint{pt(256, 64, 256, 1), pt(1024, 64, 1024, 2)}}
	if g := growth(worse); g.Linear || math.Abs(g.Exponent-1.5) > 1e-9 {
		t.Errorf("superlinear sweep: %+v, want not linear with exponent 1.5", g)
	}
}

// TestBenchSweepClients runs a real (tiny) clients sweep.
func TestBenchSweepClients(t *testing.T) {
	needData(t)
	opts := tinyOptions(t)
	opts.Requests = 4
	s, err := Sweep(context.Background(), opts, SweepClients)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 5 {
		t.Fatalf("%d points, want 5", len(s.Points))
	}
	for _, p := range s.Points {
		if p.Result.Settings.Clients != p.X || p.Result.Requests.Sent != 4 || p.Result.Requests.OK != 4 {
			t.Errorf("point %d: clients %d, requests %+v", p.X, p.Result.Settings.Clients, p.Result.Requests)
		}
		if p.CostPerUnit <= 0 {
			t.Errorf("point %d: cost %v", p.X, p.CostPerUnit)
		}
	}
	checkSVG(t, s.WriteSVG)
	if err := s.WriteText(io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestBenchBaselines runs the Python baselines (in process and end to end) on a
// small mixed run: the two sides must give the same scores.
func TestBenchBaselines(t *testing.T) {
	needData(t)
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import grpc, grpc_tools").Run(); err != nil {
		t.Skipf("%s with grpcio and grpc_tools is needed for the baselines: %v", py, err)
	}
	opts := tinyOptions(t)
	// Mixed formats at 512 bytes: long completions make the race detector
	// crawl through the regexps.
	opts.Scenario, opts.BatchSize, opts.Requests, opts.Python = Mixed, 200, 2, py
	opts.CompletionLength = 512
	opts.E2ERows, opts.E2ERepeats = 300, 1
	r, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b := r.Baseline
	if b == nil || b.Batches != 2 || b.Rollouts != 400 || b.RolloutsPerSecond <= 0 {
		t.Fatalf("baseline %+v, want 2 batches of 200", b)
	}
	nf := len(BaselineFunctions)
	if a := b.Agreement; a == nil || a.Compared != 200*nf || a.Agree != a.Compared {
		t.Errorf("agreement %+v, want all %d scores equal", a, 200*nf)
	}
	if e := b.E2E; e == nil || e.Rows != 300 || e.Compared != 300*nf || e.Agree != e.Compared || e.ClientMs <= 0 {
		t.Errorf("end to end %+v, want 300 rows with the client's scores equal to in-process ones", e)
	}
	if r.Ratios == nil || r.Ratios.Throughput <= 0 || r.Ratios.E2E <= 0 || r.Ratios.PerCPUSecond <= 0 {
		t.Errorf("ratios %+v", r.Ratios)
	}
	if len(r.PerFunction) != nf || r.PerFunction[0].PythonNsPerRollout <= 0 {
		t.Errorf("per function %+v", r.PerFunction)
	}
	checkSVG(t, r.WriteSVG)
}

// checkSVG checks that write produces well-formed XML with an svg root.
func checkSVG(t *testing.T, write func(io.Writer) error) {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&b)
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
}

// cpPath is the competitive-programming data, beside the repository.
const cpPath = "../../shared/data/cp_problems.jsonl"

// TestBenchCP runs the cp scenario for real, small: two problems of
// cp_problems.jsonl (a float checker and a special checker), one request of
// two accepted solutions per language (C++: the float problem's; Python:
// one of each), against the naive runner. Every
// solution passes every test on both sides, the tests are counted from the
// rows, and both ratios are there.
func TestBenchCP(t *testing.T) {
	all, err := readCP(cpPath)
	if err != nil {
		t.Skipf("competitive-programming data (../shared beside the repo): %v", err)
	}
	reg := codeRegistry(t)
	var lines []string
	tests := map[string]int{}
	for _, id := range []string{"kattis-export/gcpc2021/montyshall", "icpc-problems/infinityissues"} {
		for _, p := range all {
			if p.ID != id {
				continue
			}
			b, err := json.Marshal(map[string]any{"id": p.ID, "tests": p.Tests, "time_limit_s": p.TimeLimit, "checker": p.Checker,
				"checker_files": p.CheckerFiles, "solutions": p.Solutions})
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(b))
			tests[p.ID] = p.tests
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d of the 2 problems found in %s", len(lines), cpPath)
	}
	data := filepath.Join(t.TempDir(), "cp.jsonl")
	if err := os.WriteFile(data, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := RunCP(context.Background(), Options{
		Data: data, BatchSize: 2, Clients: 1, Requests: 1, Registry: reg, Workers: 2, Python: pythonPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	text := logText(t, res)
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs, want one per language", len(res.Runs))
	}
	for i, r := range res.Runs {
		lang := CPLanguages[i]
		if r.Requests.OK != 1 || r.Rollouts != 2 || len(r.Functions) != 1 || r.Functions[0] != CPFunctions[lang] || r.Outcomes[0].MeanOK != 1 {
			t.Errorf("%s: requests %+v, %d rollouts, functions %v, outcomes %+v; want 1 OK request of 2 for %s, all passed",
				lang, r.Requests, r.Rollouts, r.Functions, r.Outcomes, CPFunctions[lang])
			continue
		}
		// The rows: montyshall's solutions first, then infinityissues'.
		two, err := readCP(data)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := (&scenario{name: CP, cpProblems: two, group: 1}).withLanguage(lang)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, row := range sc.rows(0, 2) {
			want += tests[row.Task]
		}
		if c := r.Code; c == nil || c.Tests != int64(want) || c.Errors != 0 || c.CPUMsPerTest <= 0 {
			t.Errorf("%s: code result %+v, want %d tests", lang, c, want)
		}
		b := r.Baseline
		if b == nil || b.Tests != int64(want) || b.CPUMsPerTest <= 0 || b.Agreement.Compared != 2 || b.Agreement.Agree != 2 || b.Agreement.Passes.PythonPassed != 2 {
			t.Errorf("%s: baseline %+v; want %d tests, both solutions passed on both sides", lang, b, want)
		}
		if r.Ratios == nil || r.Ratios.TestsPerSecond <= 0 || r.Ratios.CPUPerTest <= 0 {
			t.Errorf("%s: ratios %+v", lang, r.Ratios)
		}
	}
	if !strings.Contains(text, "cp_python") || !strings.Contains(text, "naive tests/s") {
		t.Errorf("the report has no side-by-side table")
	}
}

// rightRows counts the rows that are not wrong among the first n the
// scenario of opts sends.
func rightRows(t *testing.T, opts Options, n int) int {
	t.Helper()
	sc, err := newScenario(&opts)
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for _, row := range sc.rows(0, n) {
		if !row.Wrong {
			right++
		}
	}
	return right
}

// runLogged runs the benchmark of opts and logs its text report, which it
// also returns.
func runLogged(t *testing.T, opts Options) (*Result, string) {
	t.Helper()
	r, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r, logText(t, r)
}

// logText logs the text report of r and returns it.
func logText(t *testing.T, r interface{ WriteText(io.Writer) error }) string {
	t.Helper()
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", text.String())
	return text.String()
}
