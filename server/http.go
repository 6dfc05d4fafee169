package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/server/jsonl"
)

// Readiness says whether the server takes new work; it flips to not ready
// first thing on shutdown so load balancers stop sending.
type Readiness struct{ ready atomic.Bool }

// Set marks the server ready or not.
func (r *Readiness) Set(ready bool) { r.ready.Store(ready) }

// Ready reports whether the server takes new work.
func (r *Readiness) Ready() bool { return r.ready.Load() }

// NewHTTPHandler serves the HTTP port: /metrics from gatherer, /healthz
// (the process is alive), /readyz (it takes work), POST /v1/score (a
// ScoreRequest as protobuf JSON, answered with a ScoreResponse), and the
// bodies other trainers speak: OpenRLHF's POST /get_reward and NeMo Gym's
// POST /verify and /seed_session.
//
// auth (nil for none) guards the scoring endpoints; metrics, health and
// readiness stay open.
func NewHTTPHandler(svc *Service, m *Metrics, gatherer prometheus.Gatherer, ready *Readiness, log *zap.Logger, auth *Auth) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Ready() {
			http.Error(w, "not ready\n", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	scoring := http.NewServeMux()
	api := &jsonAPI{svc: svc, m: m, log: log, ready: ready}
	scoring.HandleFunc("POST /v1/score", api.endpoint("http_score", api.score))
	api.registerCompat(scoring)
	guarded := auth.Middleware(scoring)
	for _, path := range []string{"/v1/score", "/get_reward", "/verify", "/seed_session"} {
		mux.Handle(path, guarded)
	}
	return mux
}

// jsonAPI serves the HTTP scoring endpoints: rewardd's own /v1/score and the
// bodies other trainers speak (compat.go), all through endpoint.
type jsonAPI struct {
	svc   *Service
	m     *Metrics
	log   *zap.Logger
	ready *Readiness
}

// endpoint wraps a JSON handler: it refuses work while draining, takes an
// admission slot before reading the body (bounded, valid UTF-8), runs h,
// writes its error as a google.rpc.Status JSON body, turns a panic into an
// internal error, and records the request under method.
func (a *jsonAPI) endpoint(method string, h func(w http.ResponseWriter, r *http.Request, body []byte) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		err := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					a.log.Error("handler panicked", zap.String("path", r.URL.Path), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
					err = status.Error(codes.Internal, "internal error")
				}
			}()
			if !a.ready.Ready() {
				return errShuttingDown
			}
			ctx, err := a.svc.engine.Admit(r.Context())
			if err != nil {
				return err
			}
			defer a.svc.engine.Release(ctx)
			r = r.WithContext(ctx)
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(a.svc.cfg.Limits.MaxMessageBytes)))
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				return invalid("request body is over %d bytes (limits.max_message_bytes)", tooBig.Limit)
			case err != nil:
				return invalid("read request body: %v", err)
			case !utf8.Valid(body):
				return invalid("request body: invalid UTF-8 at byte %d", jsonl.FirstInvalidUTF8(body))
			}
			return h(w, r, body)
		}()
		st := toStatus(a.log, method, err)
		if st.Code() != codes.OK {
			writeStatus(w, st)
		}
		a.m.requests.WithLabelValues(method, st.Code().String()).Inc()
		a.m.requestDuration.WithLabelValues(method).Observe(time.Since(start).Seconds())
	}
}

// score answers POST /v1/score: a ScoreRequest as protobuf JSON, answered
// with a ScoreResponse.
func (a *jsonAPI) score(w http.ResponseWriter, r *http.Request, body []byte) error {
	var req rewardv1.ScoreRequest
	if err := protojson.Unmarshal(body, &req); err != nil {
		return invalid("request body: %v", err)
	}
	resp, err := a.svc.Score(r.Context(), &req)
	if err != nil {
		return err
	}
	out, err := protojson.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
	return nil
}

// writeStatus writes st as a google.rpc.Status JSON body ({"code": 3,
// "message": "…"}) with the matching HTTP status.
func writeStatus(w http.ResponseWriter, st *status.Status) {
	out, _ := protojson.Marshal(st.Proto())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus(st.Code()))
	w.Write(out)
}
