package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/bench"
	"github.com/rewardd/rewardd/internal/clitest"
	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/internal/servertest"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/rematch"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// binary is the rewardd-bench executable built once for these tests: they
// run the real program, as a user would.
var binary string

func TestMain(m *testing.M) { clitest.Main(m, "rewardd-bench", &binary) }

func runBench(t *testing.T, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	return clitest.Run(t, binary, "", args...)
}

const gsm8kData = "../../../shared/data/gsm8k_test.jsonl"

// TestBenchRequests runs `rewardd-bench --requests 20` on the in-process
// server and checks the JSON result accounts for all 20 requests, and that
// the picture is written.
func TestBenchRequests(t *testing.T) {
	if _, err := os.Stat(gsm8kData); err != nil {
		t.Skipf("GSM8K data not found (CI has ../shared beside the repo): %v", err)
	}
	dir := t.TempDir()
	out, svg := filepath.Join(dir, "result.json"), filepath.Join(dir, "result.svg")
	stdout, stderr, exit := runBench(t, "--requests", "20", "--batch-size", "32", "--clients", "2",
		"--baseline=false", "--data", gsm8kData, "--out", out, "--svg", svg)
	if exit != 0 {
		t.Fatalf("exit %d; stderr:\n%s", exit, stderr)
	}
	if !strings.Contains(stdout, "20 sent = 20 OK + 0 failed") {
		t.Errorf("stdout does not account for the 20 requests:\n%s", stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Requests struct {
			Sent, OK int
			Errors   map[string]int
		}
		Rollouts  int64
		Functions []string
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests.Sent != 20 || res.Requests.OK != 20 || len(res.Requests.Errors) != 0 || res.Rollouts != 20*32 {
		t.Errorf("result: %+v", res)
	}
	if !slices.Equal(res.Functions, bench.BaselineFunctions) {
		t.Errorf("functions %v, want the baseline's %v", res.Functions, bench.BaselineFunctions)
	}
	pic, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(pic), "<svg") {
		t.Errorf("--svg: %v, %.40q", err, pic)
	}
}

// TestBenchAttack runs `rewardd-bench --attack unauth` against a server
// with a token (server.New, in this test's process), the attacker in a process of its own (the
// binary again, --attacker-only): the report has the three phases, the
// attacker's calls all refused UNAUTHENTICATED, and the bar; the JSON says
// the attacker ran apart. Whether the bar passes depends on the machine,
// so the exit status may be 0 or 1, never 2.
func TestBenchAttack(t *testing.T) {
	if _, err := os.Stat(gsm8kData); err != nil {
		t.Skipf("GSM8K data not found (CI has ../shared beside the repo): %v", err)
	}
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte("s3cret\n"), 0o600)
	cfg, err := config.Load(config.DefaultName, config.Default(), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	// The server is this test's process: its pid gives the report the
	// server's CPU, peak RSS and open files.
	srv := servertest.Start(t, server.Options{Config: cfg, Workers: 1, Auth: server.NewAuth("s3cret")})
	out := filepath.Join(dir, "overload.json")
	stdout, stderr, exit := runBench(t, "--attack", "unauth", "--addr", srv.GRPCAddr, "--http-addr", srv.HTTPAddr,
		"--server-pid", strconv.Itoa(os.Getpid()), "--auth-token-file", token, "--attackers", "2", "--batch-size", "16",
		"--phase", "300ms", "--duration", "1s", "--memory-budget", "64GiB", "--data", gsm8kData, "--out", out)
	if exit != 0 && exit != 1 {
		t.Fatalf("exit %d; stderr:\n%s", exit, stderr)
	}
	for _, want := range []string{"in a process of its own", "capacity, ", "attack, ", "recovery, ", "Unauthenticated", "verdict", "PASS  server peak RSS"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s\nstderr:\n%s", want, stdout, stderr)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Settings struct {
			AttackerProcess bool `json:"attacker_process"`
		}
		Phases []struct {
			Attacker *struct {
				Sent     int
				Outcomes map[string]int
			}
		}
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Settings.AttackerProcess || len(res.Phases) != 3 || res.Phases[1].Attacker == nil {
		t.Fatalf("result: %s", data)
	}
	a := res.Phases[1].Attacker
	if refused := a.Outcomes["Unauthenticated"]; refused == 0 || refused+a.Outcomes["open when the phase ended"] != a.Sent {
		t.Errorf("attacker: %d sent, outcomes %v: want each refused UNAUTHENTICATED or open at the end", a.Sent, a.Outcomes)
	}
}

// TestBenchHumanEval runs `rewardd-bench --scenario humaneval` on 8
// rollouts: the scenario's own config (one code_exec function), its default
// data, the sandbox (the binary re-executed as its helper) and the naive
// runner, which must agree with rewardd on every rollout.
func TestBenchHumanEval(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	const data = "../../../shared/data/humaneval.jsonl"
	if _, err := os.Stat(data); err != nil {
		t.Skipf("HumanEval data not found (CI has ../shared beside the repo): %v", err)
	}
	out := filepath.Join(t.TempDir(), "result.json")
	stdout, stderr, exit := runBench(t, "--scenario", "humaneval", "--data", data, "--requests", "1",
		"--batch-size", "8", "--group-size", "1", "--clients", "1", "--warmup", "0", "--out", out)
	if exit != 0 {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", exit, stdout, stderr)
	}
	for _, want := range []string{"1 sent = 1 OK + 0 failed", "submissions/s", "8 of 8 rollouts with the same score", "throughput"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Functions []string
		Code      struct {
			SubmissionsPerSecond float64 `json:"submissions_per_second"`
		}
		Baseline struct{ Agreement struct{ Compared, Agree int } }
		Ratios   struct{ Throughput float64 }
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Functions) != 1 || res.Functions[0] != "tests" || res.Code.SubmissionsPerSecond <= 0 ||
		res.Baseline.Agreement.Compared != 8 || res.Baseline.Agreement.Agree != 8 || res.Ratios.Throughput <= 0 {
		t.Errorf("result: %+v", res)
	}
}

// TestBenchUsage: bad usage exits 2 with a message that names the problem.
func TestBenchUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "humaneval", "--completion-length", "512"}, "no completion length"},
		{[]string{"--requests", "5", "--duration", "1s"}, "not both"},
		{[]string{"--sweep", "batch", "--batch-size", "8"}, "sets that value itself"},
		{[]string{"--sweep", "depth"}, "unknown sweep"},
		{[]string{"--scenario", "nope", "--requests", "1", "--baseline=false", "--data", gsm8kData}, "unknown scenario"},
		{[]string{"--functions", "accuracy,nope", "--requests", "1", "--data", gsm8kData}, "not \"nope\""},
		{[]string{"--requests", "1", "--baseline=false", "--data", "missing.jsonl"}, "missing.jsonl"},
		{[]string{"--attack", "unauth"}, "needs --addr and --http-addr"},
		{[]string{"--attack", "nope", "--addr", "127.0.0.1:1", "--http-addr", "127.0.0.1:2"}, "unknown attack"},
		{[]string{"--attack", "unauth", "--sweep", "batch", "--addr", "127.0.0.1:1", "--http-addr", "127.0.0.1:2"}, "--sweep does not go with --attack"},
		{[]string{"--http-addr", "127.0.0.1:2", "--requests", "1"}, "--http-addr goes with --attack"},
		{[]string{"--attack", "memory", "--addr", "127.0.0.1:1", "--http-addr", "127.0.0.1:2", "--memory-budget", "lots"}, "--memory-budget"},
		{[]string{"--servers", "a=/bin/true", "--requests", "1"}, "at least two"},
		{[]string{"--servers", "a=/bin/true,b", "--requests", "1"}, `"b" is not name=binary`},
		{[]string{"--servers", "a=/x,a=/y", "--requests", "1"}, `"a" is given twice`},
		{[]string{"--servers", "a=/x,b=/y", "--addr", "127.0.0.1:1"}, "not with --addr"},
		{[]string{"--rounds", "2", "--requests", "1"}, "--rounds goes with --servers"},
	} {
		_, stderr, exit := runBench(t, tc.args...)
		if exit != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want exit 2 and %q", tc.args, exit, stderr, tc.want)
		}
	}
}

// TestBenchServers runs `rewardd-bench --servers` on two copies of a real
// rewardd binary: each round starts each (the order reversed in round 2),
// loads it, stops it, and the comparison names both with the regex engine
// their startup line gave.
func TestBenchServers(t *testing.T) {
	if _, err := os.Stat(gsm8kData); err != nil {
		t.Skipf("GSM8K data not found (CI has ../shared beside the repo): %v", err)
	}
	rewardd, err := clitest.Build("../rewardd", t.TempDir(), "rewardd")
	if err != nil {
		t.Fatalf("build rewardd: %v", err)
	}
	stdout, stderr, exit := runBench(t, "--servers", "first="+rewardd+",second="+rewardd, "--rounds", "2",
		"--requests", "2", "--warmup", "0", "--batch-size", "16", "--clients", "1", "--baseline=false", "--data", gsm8kData)
	if exit != 0 {
		t.Fatalf("exit %d; stderr:\n%s", exit, stderr)
	}
	order := regexp.MustCompile(`(?m)^== round (\d), (\w+) \(.*regex engine (\w+)\)$`).FindAllStringSubmatch(stdout, -1)
	var got []string
	for _, m := range order {
		got = append(got, m[1]+" "+m[2])
		if m[3] != rematch.Engine() {
			t.Errorf("round %s, %s: regex engine %s, want %s", m[1], m[2], m[3], rematch.Engine())
		}
	}
	if want := []string{"1 first", "1 second", "2 second", "2 first"}; !slices.Equal(got, want) {
		t.Errorf("runs %v, want %v:\n%s", got, want, stdout)
	}
	if strings.Count(stdout, "2 sent = 2 OK + 0 failed") != 4 {
		t.Errorf("not every run accounts for its 2 requests:\n%s", stdout)
	}
	table := stdout[strings.Index(stdout, "side by side"):]
	for _, name := range []string{"first", "second"} {
		if !regexp.MustCompile(`(?m)^ *` + name + `  +` + regexp.QuoteMeta(rematch.Engine()) + ` .*×$`).MatchString(table) {
			t.Errorf("the comparison has no row for %s on %s:\n%s", name, rematch.Engine(), table)
		}
	}
}

// TestCodeComparison: a code scenario's side-by-side table pairs each
// round's CPU per submission with the first server's.
func TestCodeComparison(t *testing.T) {
	run := func(ms, perCPU float64) *bench.Result {
		return &bench.Result{Code: &bench.CodeResult{CPUMsPerSubmission: ms, Breakdown: &bench.CPUBreakdown{}},
			Ratios: &bench.Ratios{PerCPUSecond: perCPU}}
	}
	servers := []*binaryServer{
		{name: "old", runs: []*bench.Result{run(2.0, 5), run(2.2, 4.5)}},
		{name: "new", runs: []*bench.Result{run(1.5, 6.5), run(1.98, 5)}},
	}
	var out strings.Builder
	if err := writeCodeComparison(&out, servers); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1.500 1.980", "0.750 0.900", "0.825", "6.50× 5.00×"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, out.String())
		}
	}
	// A first server whose CPU read 0 ticks has no ratios, and says so.
	out.Reset()
	servers[0].runs[0].Code.CPUMsPerSubmission, servers[0].runs[1].Code.CPUMsPerSubmission = 0, 0
	if err := writeCodeComparison(&out, servers); err != nil || !strings.Contains(out.String(), "0.000 0.000") || strings.Contains(out.String(), "Inf") {
		t.Errorf("with a first server at 0 ms: %q, %v", out.String(), err)
	}
	out.Reset()
	servers[0].runs[0].Code = nil
	if err := writeCodeComparison(&out, servers); err != nil || out.Len() != 0 {
		t.Errorf("a scenario without code results wrote %q, %v; want nothing", out.String(), err)
	}
}

// TestServersHumanEval: --servers runs the humaneval scenario against two
// rewardd processes started with the scenario's config, and compares
// their CPU per submission, read from their process trees.
func TestServersHumanEval(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	const data = "../../../shared/data/humaneval.jsonl"
	if _, err := os.Stat(data); err != nil {
		t.Skipf("HumanEval data not found (CI has ../shared beside the repo): %v", err)
	}
	rewardd, err := clitest.Build("../rewardd", t.TempDir(), "rewardd")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, exit := runBench(t, "--scenario", "humaneval", "--data", data, "--servers", "a="+rewardd+",b="+rewardd,
		"--rounds", "1", "--requests", "1", "--batch-size", "8", "--clients", "1", "--warmup", "0", "--baseline=false")
	if exit != 0 {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", exit, stdout, stderr)
	}
	for _, want := range []string{"1 sent = 1 OK + 0 failed", "CPU per submission by process (server PID", "programs (the zygotes' children)",
		"CPU per submission (the server's process tree"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}
