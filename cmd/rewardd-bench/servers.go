package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/rewardd/rewardd/bench"
	"github.com/rewardd/rewardd/internal/cli"
)

// binaryServer is one rewardd binary of a --servers run.
type binaryServer struct {
	name, binary string
	// engine is the regex engine its startup line named.
	engine string
	// runs are its results, one a round.
	runs []*bench.Result
}

// parseServers reads --servers: name=binary pairs, comma-separated.
func parseServers(spec string) ([]*binaryServer, error) {
	var out []*binaryServer
	for _, part := range strings.Split(spec, ",") {
		name, binary, ok := strings.Cut(part, "=")
		if !ok || name == "" || binary == "" {
			return nil, cli.Usagef("--servers: %q is not name=binary", part)
		}
		if slices.ContainsFunc(out, func(s *binaryServer) bool { return s.name == name }) {
			return nil, cli.Usagef("--servers: the name %q is given twice", name)
		}
		out = append(out, &binaryServer{name: name, binary: binary})
	}
	if len(out) < 2 {
		return nil, cli.Usagef("--servers needs at least two name=binary pairs to compare")
	}
	return out, nil
}

// sideBySide runs the load against each of the servers in turn, rounds
// times, each round in the other order from the last (ABBA…), so that the
// servers share the machine's drift; each run has its own Python baseline.
// It prints each run and then the comparison: each server's median
// rollouts/s, its ratio to Python, and its time per rollout against the
// first server's, paired by round.
func sideBySide(ctx context.Context, opts bench.Options, servers []*binaryServer, configPath string, rounds int, stdout, stderr io.Writer) error {
	for round := range rounds {
		order := slices.Clone(servers)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			fmt.Fprintf(stderr, "round %d of %d: %s (%s)\n", round+1, rounds, s.name, s.binary)
			res, err := s.run(ctx, opts, configPath)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			fmt.Fprintf(stdout, "== round %d, %s (%s, regex engine %s)\n", round+1, s.name, s.binary, s.engine)
			if err := res.WriteText(stdout); err != nil {
				return err
			}
			if n := res.Requests.Failed(); n > 0 {
				return fmt.Errorf("%s: %d of %d requests failed", s.name, n, res.Requests.Sent)
			}
			s.runs = append(s.runs, res)
		}
	}
	return writeComparison(stdout, servers)
}

// run starts the server on loopback ports chosen by the kernel, with
// configPath ("": its embedded default), loads it, and stops it.
func (s *binaryServer) run(ctx context.Context, opts bench.Options, configPath string) (*bench.Result, error) {
	args := []string{"serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}
	if configPath != "" {
		args = append(args, "--config", configPath)
	}
	cmd := exec.CommandContext(ctx, s.binary, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	logs, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	// The reader owns the log pipe: it finds the startup lines, then
	// drains the rest until the server exits.
	started := make(chan startup, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		readStartup(logs, started)
	}()
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		<-readDone
		return cmd.Wait()
	}
	st := <-started
	if st.grpcAddr == "" {
		err := stop()
		return nil, fmt.Errorf("the server did not say where it serves (exit: %v); its log:\n%s", err, st.log)
	}
	s.engine = st.engine
	if err := probed(ctx, st.httpAddr); err != nil {
		stop()
		return nil, err
	}
	opts.Addr, opts.ServerPID = st.grpcAddr, cmd.Process.Pid
	res, runErr := bench.Run(ctx, opts)
	if err := stop(); err != nil && runErr == nil && !isTerminated(err) {
		runErr = fmt.Errorf("the server's exit: %w", err)
	}
	return res, runErr
}

// probed waits until GET /readyz at httpAddr lists no code_exec language
// as being probed: a server serves before the languages its config does
// not use are probed, and their probes' CPU would count in the load's.
func probed(ctx context.Context, httpAddr string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpAddr+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("GET /readyz: %w", err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("GET /readyz: %w", err)
		}
		if !strings.Contains(string(body), "code_exec languages being probed:") {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// isTerminated reports whether err is the exit of a process that the
// SIGTERM it was sent ended (rewardd exits 0 on it; this covers a build
// that does not).
func isTerminated(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

// startup is what a server's first log lines say.
type startup struct {
	grpcAddr, httpAddr, engine string
	// log is what it wrote before the serving line (or before it exited).
	log string
}

// readStartup reads a server's JSON log lines from r until the "serving"
// line, sends what they said on started, and drains r.
func readStartup(r io.Reader, started chan<- startup) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var st startup
	var log strings.Builder
	sent := false
	for sc.Scan() {
		if sent {
			continue
		}
		log.WriteString(sc.Text() + "\n")
		var line struct {
			Msg         string `json:"msg"`
			GRPCAddr    string `json:"grpc_addr"`
			HTTPAddr    string `json:"http_addr"`
			RegexEngine string `json:"regex_engine"`
			Version     string `json:"version"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if line.RegexEngine != "" {
			st.engine = line.RegexEngine
		}
		if line.Msg == "serving" {
			st.grpcAddr, st.httpAddr = line.GRPCAddr, line.HTTPAddr
			if st.engine == "" {
				// A build from before the engine had a line of its own:
				// its version reads "rewardd … (…, regex engine regexp)".
				_, engine, ok := strings.Cut(line.Version, "regex engine ")
				st.engine = strings.TrimSuffix(engine, ")")
				if !ok {
					st.engine = "unknown"
				}
			}
			started <- st
			sent = true
		}
	}
	if !sent {
		st.log = log.String()
		started <- st
	}
}

// writeComparison writes the servers' comparison table.
func writeComparison(w io.Writer, servers []*binaryServer) error {
	first := servers[0]
	fmt.Fprintf(w, "\nside by side  %d rounds, servers alternated (ABBA…); time ratio = %s's rollouts/s ÷ the server's, paired by round\n", len(first.runs), first.name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tregex engine\trollouts/s by round\tmedian\tPython rollouts/s (median)\trewardd ÷ Python, by round\tend to end ÷ Python\ttime ÷ "+first.name+", by round\tmedian\t")
	for _, s := range servers {
		var rates, pyRates, vsPython, e2e, vsFirst []float64
		for i, r := range s.runs {
			rates = append(rates, r.RolloutsPerSecond)
			if r.Baseline != nil && r.Ratios != nil {
				pyRates = append(pyRates, r.Baseline.RolloutsPerSecond)
				vsPython = append(vsPython, r.Ratios.Throughput)
				e2e = append(e2e, r.Ratios.E2E)
			}
			vsFirst = append(vsFirst, first.runs[i].RolloutsPerSecond/r.RolloutsPerSecond)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%.2f×\t\n", s.name, s.engine, list(rates, "%.0f"), median(rates),
			orNone(pyRates, func(v []float64) string { return fmt.Sprintf("%.0f", median(v)) }),
			orNone(vsPython, func(v []float64) string { return list(v, "%.2f×") }),
			orNone(e2e, func(v []float64) string { return list(v, "%.2f×") }),
			list(vsFirst, "%.2f×"), median(vsFirst))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeCodeComparison(w, servers)
}

// writeCodeComparison writes, for a code scenario, each server's CPU per
// submission by round (its process tree's, from /proc) and against the
// first server's, paired by round.
func writeCodeComparison(w io.Writer, servers []*binaryServer) error {
	first := servers[0]
	cpu := func(r *bench.Result) float64 {
		if r.Code == nil {
			return 0
		}
		return r.Code.CPUMsPerSubmission
	}
	// A run's CPU is counted by the kernel's 10 ms tick: a short one may
	// read 0, which is printed, not taken for a missing figure.
	if len(first.runs) == 0 || first.runs[0].Code == nil || first.runs[0].Code.Breakdown == nil {
		return nil
	}
	fmt.Fprintf(w, "\nCPU per submission (the server's process tree: rewardd and its sandboxes), by round; ratio = the server's ÷ %s's, paired by round\n", first.name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tms by round\tmedian\t÷ "+first.name+", by round\tmedian\tper CPU second ÷ Python, by round\t")
	for _, s := range servers {
		var ms, vsFirst, perCPU []float64
		for i, r := range s.runs {
			ms = append(ms, cpu(r))
			if base := cpu(first.runs[i]); base > 0 {
				vsFirst = append(vsFirst, cpu(r)/base)
			}
			if r.Ratios != nil && r.Ratios.PerCPUSecond > 0 {
				perCPU = append(perCPU, r.Ratios.PerCPUSecond)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t%s\t%s\t\n", s.name, list(ms, "%.3f"), median(ms),
			orNone(vsFirst, func(v []float64) string { return list(v, "%.3f") }),
			orNone(vsFirst, func(v []float64) string { return fmt.Sprintf("%.3f", median(v)) }),
			orNone(perCPU, func(v []float64) string { return list(v, "%.2f×") }))
	}
	return tw.Flush()
}

func list(v []float64, format string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, " ")
}

func orNone(v []float64, f func([]float64) string) string {
	if len(v) == 0 {
		return "-"
	}
	return f(v)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
