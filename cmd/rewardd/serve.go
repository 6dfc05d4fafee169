package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"

	"github.com/rewardd/rewardd/internal/cli"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// gracePeriod is how long in-flight requests may take to finish on shutdown
// before they are cut.
const gracePeriod = 30 * time.Second

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stdout)
	configPath := fs.String("config", "", "config file (default: the embedded default config)")
	grpcAddr := fs.String("grpc-addr", "127.0.0.1:50051", "gRPC listen address")
	httpAddr := fs.String("http-addr", "127.0.0.1:8080", "HTTP listen address (JSON scoring, /metrics, /healthz, /readyz)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "worker pool size shared by all requests")
	workerNice := fs.Int("worker-nice", 10, "how much lower (in nice values, 0-19) the CPU priority of a request is once it has used 20ms of worker time, so that reading requests, writing answers and light requests go first; 0: all at the server's")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	tokenFile := fs.String("auth-token-file", "", "file holding the bearer token required on the scoring endpoints (gRPC and HTTP); metrics and health stay open")
	tlsCert := fs.String("tls-cert", "", "TLS certificate file (PEM), with --tls-key: serve gRPC and HTTP over TLS")
	tlsKey := fs.String("tls-key", "", "TLS private key file (PEM)")
	sbFlags := cli.AddSandboxFlags(fs.FlagSet)
	printConfig := fs.Bool("print-config", false, "print the embedded default config and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *printConfig {
		_, err := stdout.Write(config.Default())
		return err
	}
	if *workers < 1 {
		return cli.Usagef("--workers must be at least 1, got %d", *workers)
	}
	if *workerNice < 0 || *workerNice > 19 {
		return cli.Usagef("--worker-nice must be 0 to 19, got %d", *workerNice)
	}
	auth, err := readAuth(*tokenFile)
	if err != nil {
		return err
	}
	tlsConfig, err := readTLS(*tlsCert, *tlsKey)
	if err != nil {
		return err
	}
	log, err := cli.NewLogger(*logLevel, stderr)
	if err != nil {
		return err
	}
	defer log.Sync()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	build := readBuildInfo()
	if err := build.register(reg); err != nil {
		return err
	}
	code := cli.NewCodeSandbox(sbFlags, *workers, sandbox.NewMetrics(reg), log)
	code.ProbeAll()
	defer code.Close()
	cfg, err := cli.LoadConfig(*configPath, code.Registry())
	if err != nil {
		return err
	}
	// When functions or requests run programs (code_exec in the config,
	// inline code_exec, POST /run_code), the sandbox starts now, and the
	// log says whether it did, rather than with the first such request;
	// a config whose functions need it is not ready without it. The
	// server serves once the sandbox has probed the languages of the
	// config's functions; the others' probes may still run (GET /readyz
	// says which).
	var unready error
	var languages server.Languages
	if needs, langs := codeExecFunctions(cfg); len(needs) > 0 || cfg.Inline.Allows("code_exec") {
		runner, err := code.Runner()
		if err != nil && len(needs) > 0 {
			unready = fmt.Errorf("code_exec function(s) %s need the sandbox, which could not start: %v", strings.Join(needs, ", "), err)
		}
		if pool, ok := runner.(*sandbox.Pool); ok && err == nil {
			languages = pool
			if err := pool.Await(ctx, langs...); err != nil && ctx.Err() == nil {
				unready = fmt.Errorf("code_exec function(s) %s need languages the sandbox does not run: %v", strings.Join(needs, ", "), err)
			}
		}
	}
	memoryLimit, err := limitMemory(cfg.Limits)
	if err != nil {
		return err
	}
	runCode := codeexec.NewExecutor(code.Runner)
	defer runCode.Close() // before the sandbox closes: its runs use it
	srv, err := server.New(server.Options{
		Config: cfg, Kinds: code.Registry(), Workers: *workers, WorkerNice: *workerNice, Log: log, Registry: reg,
		Auth: auth, RunCode: runCode, TLS: tlsConfig, Unready: unready, Languages: languages,
	})
	if err != nil {
		return err
	}
	gl, hl, err := listen(*grpcAddr, *httpAddr)
	if err != nil {
		return err
	}
	for _, l := range []net.Listener{gl, hl} {
		if !isLoopback(l.Addr()) && !auth.Enabled() {
			log.Warn("LISTENING ON A NON-LOOPBACK ADDRESS WITHOUT AUTHENTICATION: anyone who reaches it can run scoring (and, with code_exec, code) on this host; set --auth-token-file",
				zap.Stringer("addr", l.Addr()))
		}
	}
	build.logRegexEngine(log)
	lim := cfg.Limits
	log.Info("serving",
		zap.String("grpc_addr", gl.Addr().String()), zap.String("http_addr", hl.Addr().String()),
		zap.Strings("functions", cfg.Names()), zap.String("config_fingerprint", cfg.Fingerprint),
		zap.Int("workers", *workers), zap.Int("worker_nice", *workerNice), zap.Int("gomaxprocs", runtime.GOMAXPROCS(0)), zap.Bool("auth", auth.Enabled()), zap.Bool("tls", tlsConfig != nil),
		zap.String("memory_budget", lim.MemoryBudget.String()), zap.String("memory_budget_from", lim.MemoryBudgetSource()),
		zap.String("request_memory", config.ByteSize(lim.RequestMemory()).String()),
		zap.String("transport_memory", config.ByteSize(lim.TransportMemory()).String()), zap.String("go_memory_limit", memoryLimit),
		zap.String("max_message_bytes", config.ByteSize(lim.MaxMessageBytes).String()), zap.Int("max_connections", lim.MaxConnections),
		zap.String("version", build.String()))
	return serveUntilDone(ctx, srv, gl, hl, log)
}

// codeExecFunctions names the config's functions that run programs, and
// the languages they run them in.
func codeExecFunctions(cfg *config.Config) (names, languages []string) {
	for _, fn := range cfg.Functions {
		if fn.Kind != "code_exec" {
			continue
		}
		names = append(names, fn.Name)
		if sc, ok := fn.Scorer.(interface{ Languages() []string }); ok {
			for _, l := range sc.Languages() {
				if !slices.Contains(languages, l) {
					languages = append(languages, l)
				}
			}
		}
	}
	return names, languages
}

// serveUntilDone serves until ctx ends (a signal) or a port fails, then
// drains: in-flight requests get gracePeriod to finish.
func serveUntilDone(ctx context.Context, srv *server.Server, gl, hl net.Listener, log *zap.Logger) error {
	errc := make(chan error, 1)
	var wg conc.WaitGroup
	wg.Go(func() { errc <- srv.Serve(gl, hl) })
	var serveErr error
	select {
	case <-ctx.Done():
		// A second signal now takes the default action: stop at once.
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		log.Info("shutting down: readiness off, draining in-flight requests; a second signal stops at once",
			zap.Duration("grace_period", gracePeriod))
	case serveErr = <-errc:
		log.Error("server failed", zap.Error(serveErr))
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), gracePeriod)
	defer cancel()
	srv.Shutdown(shutdownCtx)
	wg.Wait()
	if serveErr != nil {
		return serveErr
	}
	log.Info("stopped")
	return nil
}

// readAuth reads the bearer token file; no file, no token.
func readAuth(tokenFile string) (*server.Auth, error) {
	if tokenFile == "" {
		return nil, nil
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, cli.Usagef("--auth-token-file: %v", err)
	}
	auth := server.NewAuth(string(token))
	if !auth.Enabled() {
		return nil, cli.Usagef("--auth-token-file: %s is empty", tokenFile)
	}
	return auth, nil
}

// readTLS loads the certificate and key; neither, no TLS.
func readTLS(certFile, keyFile string) (*tls.Config, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, cli.Usagef("--tls-cert and --tls-key go together")
	}
	if certFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, cli.Usagef("--tls-cert/--tls-key: %v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// listen opens both ports.
func listen(grpcAddr, httpAddr string) (gl, hl net.Listener, err error) {
	if gl, err = net.Listen("tcp", grpcAddr); err != nil {
		return nil, nil, fmt.Errorf("listen gRPC: %w", err)
	}
	if hl, err = net.Listen("tcp", httpAddr); err != nil {
		gl.Close()
		return nil, nil, fmt.Errorf("listen HTTP: %w", err)
	}
	return gl, hl, nil
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
