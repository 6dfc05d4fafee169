package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/server/config"
)

// Options configure New. Every field but Config has a useful zero value.
type Options struct {
	// Config is what the server serves (config.Load). Required.
	Config *config.Config
	// Kinds compiles the functions requests define inline. Nil:
	// builtin.Registry(), whose code_exec functions have no sandbox.
	Kinds scorers.Registry
	// Workers is the size of the one worker pool every request shares.
	// Zero: runtime.GOMAXPROCS(0).
	Workers int
	// WorkerNice is how much lower (in Linux nice values) the CPU priority
	// of a heavy request's workers is: past 20ms of worker time, a
	// request scores behind the network and the light requests, on slots
	// of the heavy requests' own, and the Go runtime has a P more than
	// GOMAXPROCS for each such worker, up to GOMAXPROCS more (unless the
	// GOMAXPROCS environment variable is set), so that threads are free
	// to run the network and the light requests. Zero: every request
	// scores at the server's priority on the pool's slots, and GOMAXPROCS
	// is left alone.
	WorkerNice int
	// ConnectionAge is how long a gRPC connection serves new calls before
	// the server asks its client to reconnect (so that clients balancing
	// over a headless Service find the replicas a scale-up added); the
	// calls in flight then still have limits.request_timeout and
	// limits.write_timeout to be answered. Zero: 5 minutes.
	ConnectionAge time.Duration
	// Log receives what the server logs. Nil: nothing is logged.
	Log *zap.Logger
	// Registry is where the metrics are registered, and what GET /metrics
	// serves (with whatever else the caller registered on it, such as the
	// Go collectors or the sandbox's metrics). Nil: a registry of the
	// server's own (Server.Metrics).
	Registry *prometheus.Registry
	// Auth guards the scoring endpoints of both ports. Nil: no token.
	Auth *Auth
	// RunCode runs the programs of POST /run_code; the caller closes it
	// after Shutdown. Nil: every program the config allows is answered
	// with SandboxError.
	RunCode *codeexec.Executor
	// TLS, when set, serves both ports over TLS.
	TLS *tls.Config
	// Unready, when set, is why the server is not fit to serve its config
	// (code_exec functions whose sandbox could not start): it still
	// serves, every such rollout ERROR, but GET /readyz answers 503 with
	// it and gRPC health is NOT_SERVING, so that a load balancer or a
	// trainer's wait for readiness does not send it work.
	Unready error
	// Languages says which code_exec languages this server's sandbox runs
	// (*sandbox.Pool), which GET /readyz lists; nil when it has none
	// running.
	Languages Languages
}

// Languages says which code_exec languages a sandbox runs. *sandbox.Pool
// is one.
type Languages interface {
	// Languages are the languages it runs now, by name.
	Languages() []string
	// Probing are the languages whose sandbox probe has not ended yet:
	// each then runs, or is left out.
	Probing() []string
}

// Server is rewardd's service behind its two transports, wired once for
// every caller (`rewardd serve`, `rewardd score`, `rewardd check`, the
// benchmark's in-process target, the tests): the engine with its worker
// pool, the Service, the gRPC server (RewardService, health, reflection)
// and the HTTP handler, their metrics on one registry, and each port's
// connections bounded by limits.max_connections.
type Server struct {
	svc      *Service
	grpc     *grpc.Server
	health   *health.Server
	handler  http.Handler
	routes   []string // what handler serves: "METHOD /path"
	http     *http.Server
	registry *prometheus.Registry
	log      *zap.Logger
	tls      *tls.Config
	ready    readiness

	grpcConns, httpConns *listener

	// mu orders Serve's goroutines before Shutdown's wait for them.
	mu       sync.Mutex
	stopping bool
	stopped  chan struct{} // closed by Shutdown
	serving  conc.WaitGroup
}

// New wires a server from opts. It is ready (GET /readyz, gRPC health)
// until Shutdown unless opts.Unready says why not, and serves nothing until
// Serve.
func New(opts Options) (*Server, error) {
	if opts.Config == nil {
		return nil, errors.New("server.New: Options.Config is nil")
	}
	cfg := opts.Config
	if opts.Kinds == nil {
		opts.Kinds = builtin.Registry()
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	engine := newEngine(opts.Workers, opts.WorkerNice, newEngineMetrics(opts.Registry, cfg.Names()), opts.Log)
	if opts.WorkerNice > 0 && os.Getenv("GOMAXPROCS") == "" {
		engine.procs = &spareProc{base: runtime.GOMAXPROCS(0)}
	}
	svc := newService(cfg, opts.Kinds, engine, newServiceMetrics(opts.Registry), opts.Log)
	tm := newTransportMetrics(opts.Registry)

	s := &Server{svc: svc, registry: opts.Registry, log: opts.Log, tls: opts.TLS, stopped: make(chan struct{}),
		grpcConns: newListener("grpc", cfg.Limits.MaxConnections, tm),
		httpConns: newListener("http", cfg.Limits.MaxConnections, tm)}
	grpcOpts := []grpc.ServerOption{grpc.StatsHandler(s.grpcConns.statsHandler())}
	if opts.TLS != nil {
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewTLS(opts.TLS)))
	}
	if opts.ConnectionAge <= 0 {
		opts.ConnectionAge = 5 * time.Minute
	}
	s.grpc, s.health = newGRPCServer(newGRPCService(svc, tm, opts.Log, opts.Auth), opts.ConnectionAge, grpcOpts...)
	s.ready.unfit, s.ready.languages = opts.Unready, opts.Languages
	if opts.Unready != nil {
		s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
		s.health.SetServingStatus(rewardv1.RewardService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
	}
	s.handler, s.routes = newHTTPHandler(svc, tm, opts.Registry, &s.ready, opts.Log, opts.Auth, opts.RunCode)
	s.http = s.httpConns.httpServer(s.handler, cfg.Limits, opts.TLS, opts.Log)
	s.ready.Set(true)
	return s, nil
}

// Service is the transport-free service: what `rewardd score` and `rewardd
// check` call directly.
func (s *Server) Service() *Service { return s.svc }

// Metrics is the registry the server's metrics are on.
func (s *Server) Metrics() *prometheus.Registry { return s.registry }

// Health is the gRPC health service, SERVING until Shutdown.
func (s *Server) Health() *health.Server { return s.health }

// Handler is the HTTP port's handler, for a caller that serves it on a
// server of its own (httptest); Serve serves it with the port's limits.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves gRPC on grpcL and HTTP on httpL (over TLS when Options.TLS
// is set), each bounded to limits.max_connections; a nil listener leaves
// its port unserved. It blocks until Shutdown, then returns nil, or until a
// port fails, then returns its error with the other port still serving:
// the caller calls Shutdown either way. Serve is called once; after
// Shutdown it serves nothing and returns nil.
func (s *Server) Serve(grpcL, httpL net.Listener) error {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return nil
	}
	errc := make(chan error, 2)
	if grpcL != nil {
		s.grpcConns.Listener = grpcL
		s.serving.Go(func() {
			if err := s.grpc.Serve(s.grpcConns); err != nil {
				errc <- err
			}
		})
	}
	if httpL != nil {
		s.httpConns.Listener = httpL
		var hl net.Listener = s.httpConns
		if s.tls != nil {
			hl = tls.NewListener(hl, s.tls)
		}
		s.serving.Go(func() {
			if err := s.http.Serve(hl); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		})
	}
	s.mu.Unlock()
	select {
	case err := <-errc:
		return err
	case <-s.stopped:
		return nil
	}
}

// Shutdown stops the server: readiness and health go off first, so that
// balancers stop sending, then the calls and requests in progress finish
// while ctx allows; when ctx ends they are cut. It returns when both ports
// have stopped serving, with ctx's error if it had to cut.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.stopping {
		s.stopping = true
		close(s.stopped)
	}
	s.mu.Unlock()
	s.ready.Set(false)
	s.health.Shutdown()
	var drain conc.WaitGroup
	drained := make(chan struct{})
	drain.Go(func() {
		s.grpc.GracefulStop()
		close(drained)
	})
	select {
	case <-drained:
	case <-ctx.Done():
		s.log.Warn("grace period over, cutting in-flight requests")
		s.grpc.Stop()
	}
	drain.Wait()
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
	}
	s.serving.Wait()
	return err
}
