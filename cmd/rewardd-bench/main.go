// Command rewardd-bench loads a rewardd server with a scenario's rollouts
// and reports throughput, latency, CPU and memory next to the Python
// baselines of the same run, or runs an overload attack against a running
// server (bench/README.md). It is a binary of its own so that the server's
// stays free of the load generator.
//
// Exit status: 2 for bad usage, 1 when the run fails or any request fails
// (an attack: when the server did not meet the bar), else 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"google.golang.org/grpc"

	"github.com/rewardd/rewardd/bench"
	"github.com/rewardd/rewardd/internal/cli"
	"github.com/rewardd/rewardd/server/config"
)

func main() { cli.Main("rewardd-bench", run) }

// flags are rewardd-bench's command line.
type flags struct {
	configPath      *string
	addr            *string
	tokenFile       *string
	caFile          *string
	scenario        *string
	data            *string
	wrong           *float64
	batchSize       *int
	groupSize       *int
	clients         *int
	duration        *time.Duration
	requests        *int
	warmup          *int
	length          *int
	workers         *int
	seed            *uint64
	functions       *string
	sweep           *string
	baseline        *bool
	python          *string
	e2eRows         *int
	out             *string
	svg             *string
	cpuProfile      *string
	memProfile      *string
	traceFile       *string
	sbFlags         cli.SandboxFlags
	progress        *bool
	attack          *string
	httpAddr        *string
	serverPID       *int
	attackers       *int
	httpClients     *int
	phase           *time.Duration
	budget          *string
	attackerProcess *bool
	attackerOnly    *bool
	servers         *string
	rounds          *int
	// set holds the flags given on the command line.
	set map[string]bool
}

// parseFlags defines the flags and parses args.
func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	d := bench.Defaults()
	fs := cli.NewFlags("rewardd-bench", stderr)
	progress := cli.IsTerminal(stderr)
	f := &flags{set: map[string]bool{}}
	f.configPath = fs.String("config", "", "config of the in-process server (default: the embedded default config)")
	f.addr = fs.String("addr", "", "host:port of a running rewardd (gRPC) to load instead of an in-process server")
	f.tokenFile = fs.String("auth-token-file", "", "with --addr: file holding the server's bearer token")
	f.caFile = fs.String("tls-ca", "", "with --addr: PEM CA bundle to verify the server's TLS certificate (enables TLS)")
	f.scenario = fs.String("scenario", d.Scenario, "scenario: gsm8k, mixed, long; humaneval, stdio or cp (code_exec: programs in the sandbox, against a naive subprocess runner; needs root)")
	f.data = fs.String("data", "", "the scenario's data (default "+d.Data+", "+bench.HumanEvalData+" for humaneval, "+bench.CPData+" for cp)")
	f.wrong = fs.Float64("wrong", d.Wrong, "share of rollouts whose final answer is made wrong (humaneval: whose body is replaced by \"return None\")")
	f.batchSize = fs.Int("batch-size", d.BatchSize, fmt.Sprintf("rollouts per request (long: %d, cp: %d)", bench.LongBatchSize, bench.CPBatchSize))
	f.groupSize = fs.Int("group-size", d.GroupSize, fmt.Sprintf("completions per prompt (GRPO group; cp: %d, every solution once, and above 1 that many rollouts per problem, its accepted solutions in turn)", bench.CPGroupSize))
	f.clients = fs.Int("clients", d.Clients, "concurrent clients, each with its own connection")
	f.duration = fs.Duration("duration", d.Duration, "how long to send (per sweep point with --sweep; cp: per language, and without it every solution once)")
	f.requests = fs.Int("requests", 0, "send this many requests in all instead of running for --duration")
	f.warmup = fs.Int("warmup", d.Warmup, "requests per client before the clock starts")
	f.length = fs.Int("completion-length", 0, "pad or trim every completion to this many bytes (0: as the scenario makes them)")
	f.workers = fs.Int("workers", runtime.GOMAXPROCS(0), "worker pool size of the in-process server")
	f.seed = fs.Uint64("seed", d.Seed, "seed of the wrong rollouts and the mixed formats")
	f.functions = fs.String("functions", "", "comma-separated served functions every request asks for (default "+
		strings.Join(bench.BaselineFunctions, ",")+", which the Python baseline implements; "+strings.Join(bench.HumanEvalFunctions, ",")+" for humaneval)")
	f.sweep = fs.String("sweep", "", "measure how cost grows: batch (64 → 16,384), length (256 B → 128 KiB) or clients (1 → 16)")
	f.baseline = fs.Bool("baseline", true, "run the Python baselines in the same invocation")
	f.python = fs.String("python", "/usr/bin/python3", "Python interpreter of the baselines (needs grpcio and grpc_tools)")
	f.e2eRows = fs.Int("e2e-rows", d.E2ERows, fmt.Sprintf("rollouts of the batch the Python client sends end to end (long: %d)", bench.LongE2ERows))
	f.out = fs.String("out", "", "write the result as JSON to this file")
	f.svg = fs.String("svg", "", "write the picture as SVG to this file")
	f.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the measured load to this file (not with --sweep)")
	f.memProfile = fs.String("memprofile", "", "write an allocation profile, taken after the measured load, to this file (not with --sweep)")
	f.traceFile = fs.String("trace", "", "write a runtime execution trace of the measured load to this file, for go tool trace (not with --sweep)")
	f.sbFlags = cli.AddSandboxFlags(fs)
	f.progress = fs.Bool("progress", progress, "show a progress bar on stderr")
	f.attack = fs.String("attack", "", "run an overload load against --addr: this attack ("+strings.Join(bench.Attacks(), ", ")+
		") next to valid clients, in capacity, attack (--duration) and recovery phases; see bench/overload.sh")
	f.httpAddr = fs.String("http-addr", "", "with --attack: the server's HTTP address (its /metrics; the HTTP clients and attacks)")
	f.serverPID = fs.Int("server-pid", 0, "with --attack: the server's process id, for its CPU, peak RSS and open files from /proc")
	f.attackers = fs.Int("attackers", 0, "with --attack: the attack's connections, clients or streams (default: the attack's)")
	f.httpClients = fs.Int("http-clients", 0, "with --attack: valid HTTP clients (default 4 for the slow and idle attacks, else 0)")
	f.phase = fs.Duration("phase", bench.OverloadDefaults().Capacity, "with --attack: the length of the capacity and the recovery phase")
	f.budget = fs.String("memory-budget", "", "with --attack: the server's limits.memory_budget (such as 1GiB), which its peak RSS must stay under")
	f.attackerProcess = fs.Bool("attacker-process", true, "with --attack: run the attacker in a process of its own at nice 19, so that the valid clients' figures measure the server, not the load generator's core")
	f.servers = fs.String("servers", "", "compare rewardd binaries side by side: name=binary,name=binary…; each round starts each binary (rewardd serve on loopback, with --config when given), loads it with the scenario and its Python baseline, and stops it")
	f.rounds = fs.Int("rounds", 3, "with --servers: rounds, each server once a round, the order reversed every other round")
	f.attackerOnly = fs.Bool("attacker-only", false, "with --attack: be that attacker process (driven over stdin and stdout)")
	if err := cli.ParseFlags(fs, args); err != nil {
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return f, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if *f.attack != "" {
		return attack(ctx, f, args, stdin, stdout, stderr)
	}
	if err := f.checkLoad(); err != nil {
		return err
	}
	opts := f.loadOptions(stderr)
	if *f.servers != "" {
		servers, err := parseServers(*f.servers)
		if err != nil {
			return err
		}
		if err := remote(&opts, "", ""); err != nil {
			return err
		}
		configPath, cleanup, err := f.serversConfig()
		if err != nil {
			return err
		}
		defer cleanup()
		return benchError(sideBySide(ctx, opts, servers, configPath, *f.rounds, stdout, stderr))
	}
	if *f.addr == "" {
		log, err := cli.NewLogger("warn", stderr)
		if err != nil {
			return err
		}
		defer log.Sync()
		code := cli.NewCodeSandbox(f.sbFlags, *f.workers, nil, log)
		defer code.Close()
		if opts.Config, err = f.config(code); err != nil {
			return err
		}
		opts.Registry, opts.Log = code.Registry(), log
	} else if err := remote(&opts, *f.tokenFile, *f.caFile); err != nil {
		return err
	}
	closeProfiles, err := f.openProfiles(&opts)
	defer closeProfiles()
	if err != nil {
		return err
	}
	rep, failed, sent, err := measure(ctx, opts, *f.scenario, *f.sweep)
	if err != nil {
		return benchError(err)
	}
	if err := writeReport(rep, stdout, *f.out, *f.svg); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d requests failed (errors by status above)", failed, sent)
	}
	return nil
}

// checkLoad refuses the flags that do not go together in a load run.
func (f *flags) checkLoad() error {
	set := f.set
	for _, name := range []string{"http-addr", "server-pid", "attackers", "http-clients", "phase", "memory-budget", "attacker-process", "attacker-only"} {
		if set[name] {
			return cli.Usagef("--%s goes with --attack", name)
		}
	}
	oneRun := func(flag string) error {
		return cli.Usagef("--%s measures one run; rerun the sweep's worst point alone with it", flag)
	}
	switch {
	case set["requests"] && set["duration"]:
		return cli.Usagef("give --requests or --duration, not both")
	case set["requests"] && *f.requests < 1:
		return cli.Usagef("--requests must be at least 1")
	case *f.servers != "" && (*f.addr != "" || set["workers"] || *f.sweep != "" || *f.out != "" || *f.svg != "" ||
		*f.cpuProfile != "" || *f.memProfile != "" || *f.traceFile != "" || *f.scenario == bench.CP):
		return cli.Usagef("--servers starts each binary (with --config when given): not with --addr, --workers, --sweep, --out, --svg, profiles or the cp scenario")
	case *f.servers == "" && set["rounds"]:
		return cli.Usagef("--rounds goes with --servers")
	case set["rounds"] && *f.rounds < 1:
		return cli.Usagef("--rounds must be at least 1")
	case *f.addr != "" && (set["workers"] || set["config"]):
		return cli.Usagef("--workers and --config are for the in-process server, not with --addr")
	case *f.addr == "" && (*f.tokenFile != "" || *f.caFile != ""):
		return cli.Usagef("--auth-token-file and --tls-ca go with --addr")
	case *f.sweep != "" && *f.cpuProfile != "":
		return oneRun("cpuprofile")
	case *f.sweep != "" && *f.memProfile != "":
		return oneRun("memprofile")
	case *f.sweep != "" && *f.traceFile != "":
		return oneRun("trace")
	case *f.sweep != "" && set[map[string]string{bench.SweepBatch: "batch-size", bench.SweepLength: "completion-length", bench.SweepClients: "clients"}[*f.sweep]]:
		return cli.Usagef("--sweep %s sets that value itself", *f.sweep)
	case *f.scenario == bench.CP && (*f.sweep != "" || *f.svg != ""):
		return cli.Usagef("the cp scenario has no --sweep and draws no --svg: it reports a run per language")
	}
	if *f.sweep != "" {
		if _, err := bench.SweepValues(*f.sweep); err != nil {
			return cli.Usagef("--sweep: %v", err)
		}
	}
	return nil
}

// loadOptions are the options of a load run; those not set on the command
// line take the scenario's defaults.
func (f *flags) loadOptions(stderr io.Writer) bench.Options {
	opts := bench.Options{
		Scenario: *f.scenario, Data: *f.data, Wrong: *f.wrong, BatchSize: *f.batchSize, GroupSize: *f.groupSize,
		Clients: *f.clients, Duration: *f.duration, Warmup: *f.warmup, CompletionLength: *f.length,
		Seed: *f.seed, Workers: *f.workers, Addr: *f.addr, E2ERows: *f.e2eRows,
	}
	if *f.functions != "" {
		opts.Functions = strings.Split(*f.functions, ",")
	}
	if !f.set["batch-size"] {
		opts.BatchSize = 0
	}
	if !f.set["group-size"] {
		opts.GroupSize = 0
	}
	if !f.set["e2e-rows"] {
		opts.E2ERows = 0
	}
	if f.set["requests"] {
		opts.Requests, opts.Duration = *f.requests, 0
	}
	if *f.scenario == bench.CP && !f.set["duration"] && !f.set["requests"] {
		opts.Duration = 0 // every solution once
	}
	if *f.scenario == bench.CP && !f.set["warmup"] {
		opts.Warmup = 0 // its warm-up compiles the special checkers
	}
	if *f.baseline {
		opts.Python = *f.python
	}
	if *f.progress {
		opts.Progress = stderr
	}
	return opts
}

// config is the in-process server's: the scenario's own when it has one
// (humaneval: one code_exec function), else the embedded default, unless
// --config.
func (f *flags) config(code *cli.CodeSandbox) (*config.Config, error) {
	if name, yaml := bench.ScenarioConfig(*f.scenario); *f.configPath == "" && yaml != nil {
		return config.Load(name, yaml, code.Registry())
	}
	return cli.LoadConfig(*f.configPath, code.Registry())
}

// serversConfig is the config file the --servers binaries start with:
// --config, else the scenario's own (humaneval, stdio: one code_exec
// function) written to a temporary file that cleanup removes, else none
// (their embedded default).
func (f *flags) serversConfig() (path string, cleanup func(), err error) {
	name, yaml := bench.ScenarioConfig(*f.scenario)
	if *f.configPath != "" || yaml == nil {
		return *f.configPath, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "rewardd-bench-config")
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, yaml, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("write the config of %s: %w", name, err)
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// remote fills in the options' dial options and token for a remote server.
func remote(opts *bench.Options, tokenFile, caFile string) error {
	var err error
	opts.DialOptions, opts.AuthToken, err = credentials(tokenFile, caFile)
	opts.TLSCAFile = caFile
	return err
}

// credentials are the gRPC dial options and the HTTP bearer token from the
// token and CA files.
func credentials(tokenFile, caFile string) ([]grpc.DialOption, string, error) {
	dialOpts, err := cli.DialOptions(tokenFile, caFile)
	if err != nil {
		return nil, "", err
	}
	token, err := readToken(tokenFile)
	return dialOpts, token, err
}

// readToken reads the bearer token file ("" for none).
func readToken(tokenFile string) (string, error) {
	if tokenFile == "" {
		return "", nil
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", cli.Usagef("--auth-token-file: %v", err)
	}
	return strings.TrimSpace(string(token)), nil
}

// openProfiles creates the files the measured run's profiles and execution
// trace go to; the returned function closes them.
func (f *flags) openProfiles(opts *bench.Options) (func(), error) {
	var files []*os.File
	closeAll := func() {
		for _, file := range files {
			file.Close()
		}
	}
	for _, out := range []struct {
		flag, path string
		w          *io.Writer
	}{
		{"--cpuprofile", *f.cpuProfile, &opts.CPUProfile},
		{"--memprofile", *f.memProfile, &opts.MemProfile},
		{"--trace", *f.traceFile, &opts.Trace},
	} {
		if out.path == "" {
			continue
		}
		file, err := os.Create(out.path)
		if err != nil {
			return closeAll, cli.Usagef("%s: %v", out.flag, err)
		}
		files = append(files, file)
		*out.w = file
	}
	return closeAll, nil
}

// report is what a load run writes.
type report interface {
	WriteText(io.Writer) error
	WriteSVG(io.Writer) error
}

// measure runs the load (a sweep, the cp scenario's runs, or one run) and
// counts its requests.
func measure(ctx context.Context, opts bench.Options, scenario, sweep string) (rep report, failed, sent int, err error) {
	switch {
	case sweep != "":
		res, err := bench.Sweep(ctx, opts, sweep)
		if err != nil {
			return nil, 0, 0, err
		}
		for _, p := range res.Points {
			failed += p.Result.Requests.Failed()
			sent += p.Result.Requests.Sent
		}
		return res, failed, sent, nil
	case scenario == bench.CP:
		res, err := bench.RunCP(ctx, opts)
		if err != nil {
			return nil, 0, 0, err
		}
		for _, r := range res.Runs {
			failed += r.Requests.Failed()
			sent += r.Requests.Sent
		}
		return res, failed, sent, nil
	default:
		res, err := bench.Run(ctx, opts)
		if err != nil {
			return nil, 0, 0, err
		}
		return res, res.Requests.Failed(), res.Requests.Sent, nil
	}
}

// writeReport writes rep as text on stdout, and as JSON and SVG to the
// files given.
func writeReport(rep report, stdout io.Writer, out, svg string) error {
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if out != "" {
		if err := writeTo(out, func(w io.Writer) error { return bench.WriteJSON(w, rep) }); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if svg != "" {
		if err := writeTo(svg, rep.WriteSVG); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	return nil
}

// attack runs an overload attack, or is its attacker process.
func attack(ctx context.Context, f *flags, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	opts, err := f.overloadOptions()
	if err != nil {
		return err
	}
	if *f.attackerOnly {
		return serveAttacker(ctx, opts, *f.tokenFile, *f.caFile, stdin, stdout)
	}
	if *f.attackerProcess {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("the attacker process: %w", err)
		}
		opts.AttackerCommand = exec.CommandContext(ctx, "nice", append([]string{"-n", "19", exe}, append(args, "--attacker-only")...)...)
	}
	return runOverload(ctx, opts, *f.tokenFile, *f.caFile, *f.out, stdout, stderr)
}

// overloadOptions are the options of an attack, after refusing the flags
// that do not go with one.
func (f *flags) overloadOptions() (bench.OverloadOptions, error) {
	for _, name := range []string{"scenario", "requests", "sweep", "config", "workers", "cpuprofile", "memprofile", "trace", "svg", "baseline", "completion-length", "functions"} {
		if f.set[name] {
			return bench.OverloadOptions{}, cli.Usagef("--%s does not go with --attack", name)
		}
	}
	if *f.addr == "" || *f.httpAddr == "" {
		return bench.OverloadOptions{}, cli.Usagef("--attack needs --addr and --http-addr (of a running rewardd serve)")
	}
	opts := bench.OverloadOptions{
		Attack: *f.attack, Addr: *f.addr, HTTPAddr: *f.httpAddr, ServerPID: *f.serverPID, Data: *f.data,
		Clients: *f.clients, BatchSize: *f.batchSize, HTTPClients: *f.httpClients, Attackers: *f.attackers,
		Capacity: *f.phase, Recover: *f.phase, Duration: *f.duration,
	}
	if !f.set["clients"] {
		opts.Clients = 0 // the overload default
	}
	if !f.set["duration"] {
		opts.Duration = 0 // the overload default
	}
	if *f.budget != "" {
		b, err := humanize.ParseBytes(*f.budget)
		if err != nil {
			return opts, cli.Usagef("--memory-budget: %v", err)
		}
		opts.MemoryBudget = int64(b)
	}
	return opts, nil
}

// withCredentials fills in the options' gRPC dial options and HTTP token
// from the token and CA files.
func withCredentials(opts *bench.OverloadOptions, tokenFile, caFile string) error {
	dialOpts, err := cli.DialOptions(tokenFile, caFile)
	if err != nil {
		return err
	}
	opts.DialOptions = dialOpts
	if tokenFile != "" {
		token, err := os.ReadFile(tokenFile)
		if err != nil {
			return cli.Usagef("--auth-token-file: %v", err)
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
		return cli.Usagef("%v", err)
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
