package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

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
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	tokenFile := fs.String("auth-token-file", "", "file holding the bearer token required on the scoring endpoints (gRPC and HTTP); metrics and health stay open")
	tlsCert := fs.String("tls-cert", "", "TLS certificate file (PEM), with --tls-key: serve gRPC and HTTP over TLS")
	tlsKey := fs.String("tls-key", "", "TLS private key file (PEM)")
	sbFlags := addSandboxFlags(fs)
	printConfig := fs.Bool("print-config", false, "print the embedded default config and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *printConfig {
		_, err := stdout.Write(defaultConfig)
		return err
	}
	if *workers < 1 {
		return &usageError{fmt.Sprintf("--workers must be at least 1, got %d", *workers)}
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return &usageError{"--tls-cert and --tls-key go together"}
	}
	var auth *server.Auth
	if *tokenFile != "" {
		token, err := os.ReadFile(*tokenFile)
		if err != nil {
			return &usageError{fmt.Sprintf("--auth-token-file: %v", err)}
		}
		if auth = server.NewAuth(string(token)); !auth.Enabled() {
			return &usageError{fmt.Sprintf("--auth-token-file: %s is empty", *tokenFile)}
		}
	}
	var grpcOpts []grpc.ServerOption
	var tlsConfig *tls.Config
	if *tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			return &usageError{fmt.Sprintf("--tls-cert/--tls-key: %v", err)}
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewTLS(tlsConfig)))
	}
	log, err := newLogger(*logLevel, stderr)
	if err != nil {
		return err
	}
	defer log.Sync()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	code := newCodeSandbox(sbFlags, *workers, sandbox.NewMetrics(reg), log)
	defer code.Close()
	cfg, err := loadConfig(*configPath, code.registry())
	if err != nil {
		return err
	}

	if cfg.Inline.Allows("code_exec") {
		// Requests may run programs (inline code_exec, POST /run_code):
		// the sandbox starts now, and the log says whether it did, rather
		// than with the first such request.
		code.runner()
	}

	lim := cfg.Limits
	memoryLimit := limitMemory(lim)
	metrics := server.NewMetrics(reg, functionNames(cfg))
	engine := server.NewEngine(*workers, metrics, log)
	svc := server.NewService(cfg, code.registry(), engine, log)
	var ready server.Readiness

	rawGL, err := net.Listen("tcp", *grpcAddr)
	if err != nil {
		return fmt.Errorf("listen gRPC: %w", err)
	}
	rawHL, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		rawGL.Close()
		return fmt.Errorf("listen HTTP: %w", err)
	}
	gl := server.NewListener(rawGL, "grpc", lim.MaxConnections, metrics)
	gs, health := server.NewGRPCServer(svc, metrics, log, auth, append(grpcOpts, grpc.StatsHandler(gl.StatsHandler()))...)
	httpConns := server.NewListener(rawHL, "http", lim.MaxConnections, metrics)
	var hl net.Listener = httpConns
	hs := httpConns.HTTPServer(server.NewHTTPHandler(svc, metrics, reg, &ready, log, auth, server.WithRunCode(codeexec.NewExecutor(code.runner))), lim, tlsConfig, log)
	for _, l := range []net.Listener{gl, hl} {
		if !isLoopback(l.Addr()) && !auth.Enabled() {
			log.Warn("LISTENING ON A NON-LOOPBACK ADDRESS WITHOUT AUTHENTICATION: anyone who reaches it can run scoring (and, with code_exec, code) on this host; set --auth-token-file",
				zap.Stringer("addr", l.Addr()))
		}
	}
	if tlsConfig != nil {
		hl = tls.NewListener(hl, tlsConfig)
	}

	errc := make(chan error, 2)
	var wg conc.WaitGroup
	wg.Go(func() { errc <- gs.Serve(gl) })
	wg.Go(func() {
		if err := hs.Serve(hl); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	})
	ready.Set(true)
	log.Info("serving",
		zap.String("grpc_addr", gl.Addr().String()), zap.String("http_addr", hl.Addr().String()),
		zap.Strings("functions", functionNames(cfg)), zap.String("config_fingerprint", cfg.Fingerprint),
		zap.Int("workers", *workers), zap.Bool("auth", auth.Enabled()), zap.Bool("tls", tlsConfig != nil),
		zap.String("memory_budget", lim.MemoryBudget.String()), zap.String("memory_budget_from", lim.MemoryBudgetSource()),
		zap.String("request_memory", config.ByteSize(lim.RequestMemory()).String()), zap.String("go_memory_limit", memoryLimit),
		zap.String("max_message_bytes", config.ByteSize(lim.MaxMessageBytes).String()), zap.Int("max_connections", lim.MaxConnections),
		zap.String("version", version()))

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

	// Readiness first, so balancers stop sending; then drain.
	ready.Set(false)
	health.Shutdown()
	stopped := make(chan struct{})
	timer := time.AfterFunc(gracePeriod, func() {
		log.Warn("grace period over, cutting in-flight requests")
		gs.Stop()
		close(stopped)
	})
	gs.GracefulStop()
	if timer.Stop() {
		close(stopped)
	}
	<-stopped
	shutdownCtx, cancel := context.WithTimeout(context.Background(), gracePeriod)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		hs.Close()
	}
	wg.Wait()
	if serveErr != nil {
		return fmt.Errorf("serve: %w", serveErr)
	}
	log.Info("stopped")
	return nil
}

// limitMemory sets the Go runtime's soft memory limit to the memory budget,
// so that the garbage collector works harder as the process nears it,
// unless GOMEMLIMIT says otherwise; it returns the limit in force.
func limitMemory(lim config.Limits) string {
	if v, set := os.LookupEnv("GOMEMLIMIT"); set {
		return v + " (GOMEMLIMIT)"
	}
	debug.SetMemoryLimit(int64(lim.MemoryBudget))
	return lim.MemoryBudget.String() + " (limits.memory_budget)"
}

func functionNames(cfg *config.Config) []string {
	names := make([]string, len(cfg.Functions))
	for i, fn := range cfg.Functions {
		names[i] = fn.Name
	}
	return names
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// newLogger returns a JSON logger on w at the named level.
func newLogger(level string, w io.Writer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, &usageError{fmt.Sprintf("--log-level: %v", err)}
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(w), lvl)
	return zap.New(core), nil
}
