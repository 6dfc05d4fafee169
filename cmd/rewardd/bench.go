package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/rewardd/rewardd/bench"
	"github.com/rewardd/rewardd/server/config"
)

// runBench loads a server with a scenario's rollouts and reports throughput,
// latency, CPU and memory next to the Python baselines of the same run (see
// bench/README.md).
//
// Exit status: 2 for bad usage, 1 when the run fails or any request fails,
// else 0.
func runBench(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	d := bench.Defaults()
	fs := newFlags("bench", stderr)
	configPath := fs.String("config", "", "config of the in-process server (default: the embedded default config)")
	addr := fs.String("addr", "", "host:port of a running rewardd (gRPC) to load instead of an in-process server")
	tokenFile := fs.String("auth-token-file", "", "with --addr: file holding the server's bearer token")
	caFile := fs.String("tls-ca", "", "with --addr: PEM CA bundle to verify the server's TLS certificate (enables TLS)")
	scenario := fs.String("scenario", d.Scenario, "scenario: gsm8k, mixed, long; humaneval, stdio or cp (code_exec: programs in the sandbox, against a naive subprocess runner; needs root)")
	data := fs.String("data", "", "the scenario's data (default "+d.Data+", "+bench.HumanEvalData+" for humaneval, "+bench.CPData+" for cp)")
	wrong := fs.Float64("wrong", d.Wrong, "share of rollouts whose final answer is made wrong (humaneval: whose body is replaced by \"return None\")")
	batchSize := fs.Int("batch-size", d.BatchSize, fmt.Sprintf("rollouts per request (long: %d, cp: %d)", bench.LongBatchSize, bench.CPBatchSize))
	groupSize := fs.Int("group-size", d.GroupSize, "completions per prompt (GRPO group)")
	clients := fs.Int("clients", d.Clients, "concurrent clients, each with its own connection")
	duration := fs.Duration("duration", d.Duration, "how long to send (per sweep point with --sweep; cp: per language, and without it every solution once)")
	requests := fs.Int("requests", 0, "send this many requests in all instead of running for --duration")
	warmup := fs.Int("warmup", d.Warmup, "requests per client before the clock starts")
	length := fs.Int("completion-length", 0, "pad or trim every completion to this many bytes (0: as the scenario makes them)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "worker pool size of the in-process server")
	seed := fs.Uint64("seed", d.Seed, "seed of the wrong rollouts and the mixed formats")
	functions := fs.String("functions", "", "comma-separated served functions every request asks for (default "+
		strings.Join(bench.BaselineFunctions, ",")+", which the Python baseline implements; "+strings.Join(bench.HumanEvalFunctions, ",")+" for humaneval)")
	sweep := fs.String("sweep", "", "measure how cost grows: batch (64 → 16,384), length (256 B → 128 KiB) or clients (1 → 16)")
	baseline := fs.Bool("baseline", true, "run the Python baselines in the same invocation")
	python := fs.String("python", "/usr/bin/python3", "Python interpreter of the baselines (needs grpcio and grpc_tools)")
	e2eRows := fs.Int("e2e-rows", d.E2ERows, fmt.Sprintf("rollouts of the batch the Python client sends end to end (long: %d)", bench.LongE2ERows))
	out := fs.String("out", "", "write the result as JSON to this file")
	svg := fs.String("svg", "", "write the picture as SVG to this file")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured load to this file (not with --sweep)")
	memProfile := fs.String("memprofile", "", "write an allocation profile, taken after the measured load, to this file (not with --sweep)")
	traceFile := fs.String("trace", "", "write a runtime execution trace of the measured load to this file, for go tool trace (not with --sweep)")
	sbFlags := addSandboxFlags(fs)
	progress := fs.Bool("progress", isTerminal(stderr), "show a progress bar on stderr")
	attack := fs.String("attack", "", "run an overload load against --addr: this attack ("+strings.Join(bench.Attacks(), ", ")+
		") next to valid clients, in capacity, attack (--duration) and recovery phases; see bench/overload.sh")
	httpAddr := fs.String("http-addr", "", "with --attack: the server's HTTP address (its /metrics; the HTTP clients and attacks)")
	serverPID := fs.Int("server-pid", 0, "with --attack: the server's process id, for its CPU, peak RSS and open files from /proc")
	attackers := fs.Int("attackers", 0, "with --attack: the attack's connections, clients or streams (default: the attack's)")
	httpClients := fs.Int("http-clients", 0, "with --attack: valid HTTP clients (default 2 for the slow and idle attacks, else 0)")
	phase := fs.Duration("phase", bench.OverloadDefaults().Capacity, "with --attack: the length of the capacity and the recovery phase")
	budget := fs.String("memory-budget", "", "with --attack: the server's limits.memory_budget (such as 1GiB), which its peak RSS must stay under")
	attackerProcess := fs.Bool("attacker-process", true, "with --attack: run the attacker in a process of its own at nice 19, so that the valid clients' figures measure the server, not the load generator's core")
	attackerOnly := fs.Bool("attacker-only", false, "with --attack: be that attacker process (driven over stdin and stdout)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *attack != "" {
		for _, name := range []string{"scenario", "requests", "sweep", "config", "workers", "cpuprofile", "memprofile", "trace", "svg", "baseline", "completion-length", "functions"} {
			if set[name] {
				return &usageError{fmt.Sprintf("bench: --%s does not go with --attack", name)}
			}
		}
		if *addr == "" || *httpAddr == "" {
			return &usageError{"bench: --attack needs --addr and --http-addr (of a running rewardd serve)"}
		}
		opts := bench.OverloadOptions{
			Attack: *attack, Addr: *addr, HTTPAddr: *httpAddr, ServerPID: *serverPID, Data: *data,
			Clients: *clients, BatchSize: *batchSize, HTTPClients: *httpClients, Attackers: *attackers,
			Capacity: *phase, Recover: *phase, Duration: *duration,
		}
		if !set["clients"] {
			opts.Clients = 0 // the overload default
		}
		if !set["duration"] {
			opts.Duration = 0 // the overload default
		}
		if *budget != "" {
			b, err := humanize.ParseBytes(*budget)
			if err != nil {
				return &usageError{fmt.Sprintf("bench: --memory-budget: %v", err)}
			}
			opts.MemoryBudget = int64(b)
		}
		if *attackerOnly {
			return serveAttacker(ctx, opts, *tokenFile, *caFile, stdin, stdout)
		}
		if *attackerProcess {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("the attacker process: %w", err)
			}
			opts.AttackerCommand = exec.CommandContext(ctx, "nice", append([]string{"-n", "19", exe, "bench"}, append(args, "--attacker-only")...)...)
		}
		return runOverload(ctx, opts, *tokenFile, *caFile, *out, stdout, stderr)
	}
	for _, name := range []string{"http-addr", "server-pid", "attackers", "http-clients", "phase", "memory-budget", "attacker-process", "attacker-only"} {
		if set[name] {
			return &usageError{fmt.Sprintf("bench: --%s goes with --attack", name)}
		}
	}
	switch {
	case set["requests"] && set["duration"]:
		return &usageError{"bench: give --requests or --duration, not both"}
	case set["requests"] && *requests < 1:
		return &usageError{"bench: --requests must be at least 1"}
	case *addr != "" && (set["workers"] || set["config"]):
		return &usageError{"bench: --workers and --config are for the in-process server, not with --addr"}
	case *addr == "" && (*tokenFile != "" || *caFile != ""):
		return &usageError{"bench: --auth-token-file and --tls-ca go with --addr"}
	case *sweep != "" && *cpuProfile != "":
		return &usageError{"bench: --cpuprofile profiles one run; rerun the sweep's worst point alone with it"}
	case *sweep != "" && *memProfile != "":
		return &usageError{"bench: --memprofile profiles one run; rerun the sweep's worst point alone with it"}
	case *sweep != "" && *traceFile != "":
		return &usageError{"bench: --trace traces one run; rerun the sweep's worst point alone with it"}
	case *sweep != "" && set[map[string]string{bench.SweepBatch: "batch-size", bench.SweepLength: "completion-length", bench.SweepClients: "clients"}[*sweep]]:
		return &usageError{fmt.Sprintf("bench: --sweep %s sets that value itself", *sweep)}
	}
	if *scenario == bench.CP && (*sweep != "" || *svg != "") {
		return &usageError{"bench: the cp scenario has no --sweep and draws no --svg: it reports a run per language"}
	}
	if *sweep != "" {
		if _, err := bench.SweepValues(*sweep); err != nil {
			return &usageError{"bench: --sweep: " + err.Error()}
		}
	}

	opts := bench.Options{
		Scenario: *scenario, Data: *data, Wrong: *wrong, BatchSize: *batchSize, GroupSize: *groupSize,
		Clients: *clients, Duration: *duration, Warmup: *warmup, CompletionLength: *length,
		Seed: *seed, Workers: *workers, Addr: *addr, E2ERows: *e2eRows,
	}
	if *functions != "" {
		opts.Functions = strings.Split(*functions, ",")
	}
	// Unset, they take the scenario's defaults.
	if !set["batch-size"] {
		opts.BatchSize = 0
	}
	if !set["e2e-rows"] {
		opts.E2ERows = 0
	}
	if set["requests"] {
		opts.Requests, opts.Duration = *requests, 0
	}
	if *scenario == bench.CP && !set["duration"] && !set["requests"] {
		opts.Duration = 0 // every solution once
	}
	if *scenario == bench.CP && !set["warmup"] {
		opts.Warmup = 0 // its warm-up compiles the special checkers
	}
	if *baseline {
		opts.Python = *python
	}
	if *progress {
		opts.Progress = stderr
	}
	if *addr == "" {
		log, err := newLogger("warn", stderr)
		if err != nil {
			return err
		}
		defer log.Sync()
		code := newCodeSandbox(sbFlags, *workers, nil, log)
		defer code.Close()
		// The scenario's own config when it has one (humaneval: one
		// code_exec function), else the embedded default, unless --config.
		var cfg *config.Config
		if name, yaml := bench.ScenarioConfig(*scenario); *configPath == "" && yaml != nil {
			cfg, err = config.Load(name, yaml, code.registry())
		} else {
			cfg, err = loadConfig(*configPath, code.registry())
		}
		if err != nil {
			return err
		}
		opts.Config, opts.Registry, opts.Log = cfg, code.registry(), log
	} else {
		dialOpts, err := dialOptions(*tokenFile, *caFile)
		if err != nil {
			return err
		}
		opts.DialOptions, opts.TLSCAFile = dialOpts, *caFile
		if *tokenFile != "" {
			token, err := os.ReadFile(*tokenFile)
			if err != nil {
				return &usageError{fmt.Sprintf("--auth-token-file: %v", err)}
			}
			opts.AuthToken = strings.TrimSpace(string(token))
		}
	}
	// The files the measured run's profiles and execution trace go to.
	for _, out := range []struct {
		flag, path string
		w          *io.Writer
	}{
		{"--cpuprofile", *cpuProfile, &opts.CPUProfile},
		{"--memprofile", *memProfile, &opts.MemProfile},
		{"--trace", *traceFile, &opts.Trace},
	} {
		if out.path == "" {
			continue
		}
		f, err := os.Create(out.path)
		if err != nil {
			return &usageError{fmt.Sprintf("%s: %v", out.flag, err)}
		}
		defer f.Close()
		*out.w = f
	}

	type report interface {
		WriteText(io.Writer) error
		WriteSVG(io.Writer) error
	}
	var rep report
	var failed, sent int
	switch {
	case *sweep != "":
		res, err := bench.Sweep(ctx, opts, *sweep)
		if err != nil {
			return benchError(err)
		}
		rep = res
		for _, p := range res.Points {
			failed += p.Result.Requests.Failed()
			sent += p.Result.Requests.Sent
		}
	case *scenario == bench.CP:
		res, err := bench.RunCP(ctx, opts)
		if err != nil {
			return benchError(err)
		}
		rep = res
		for _, r := range res.Runs {
			failed += r.Requests.Failed()
			sent += r.Requests.Sent
		}
	default:
		res, err := bench.Run(ctx, opts)
		if err != nil {
			return benchError(err)
		}
		rep = res
		failed, sent = res.Requests.Failed(), res.Requests.Sent
	}
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if *out != "" {
		if err := writeTo(*out, func(w io.Writer) error { return bench.WriteJSON(w, rep) }); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if *svg != "" {
		if err := writeTo(*svg, rep.WriteSVG); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("bench: %d of %d requests failed (errors by status above)", failed, sent)
	}
	return nil
}

// withCredentials fills in the options' gRPC dial options and HTTP token
// from the token and CA files.
func withCredentials(opts *bench.OverloadOptions, tokenFile, caFile string) error {
	dialOpts, err := dialOptions(tokenFile, caFile)
	if err != nil {
		return err
	}
	opts.DialOptions = dialOpts
	if tokenFile != "" {
		token, err := os.ReadFile(tokenFile)
		if err != nil {
			return &usageError{fmt.Sprintf("--auth-token-file: %v", err)}
		}
		opts.AuthToken = strings.TrimSpace(string(token))
	}
	return nil
}

// serveAttacker is the attacker process of an overload run.
func serveAttacker(ctx context.Context, opts bench.OverloadOptions, tokenFile, caFile string, stdin io.Reader, stdout io.Writer) error {
	if err := withCredentials(&opts, tokenFile, caFile); err != nil {
		return err
	}
	return benchError(bench.ServeAttacker(ctx, opts, stdin, stdout))
}

// runOverload runs an overload load (bench.Overload) and prints its report;
// it fails when the server did not meet the bar.
func runOverload(ctx context.Context, opts bench.OverloadOptions, tokenFile, caFile, out string, stdout, stderr io.Writer) error {
	if err := withCredentials(&opts, tokenFile, caFile); err != nil {
		return err
	}
	opts.Progress = stderr
	res, err := bench.Overload(ctx, opts)
	if err != nil {
		return benchError(err)
	}
	if err := res.WriteText(stdout); err != nil {
		return err
	}
	if out != "" {
		if err := writeTo(out, func(w io.Writer) error { return bench.WriteJSON(w, res) }); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if !res.Passed() {
		return errors.New("overload: the server did not meet the bar (FAIL above)")
	}
	return nil
}

// benchError makes the bench's option errors usage errors.
func benchError(err error) error {
	var oe *bench.OptionError
	if errors.As(err, &oe) {
		return &usageError{"bench: " + err.Error()}
	}
	return err
}

// writeTo creates path and writes it with write.
func writeTo(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
