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
	h := &httpScore{svc: svc, m: m, log: log, ready: ready}
	scoring.HandleFunc("POST /v1/score", h.serve)
	(&compat{svc: svc, m: m, log: log, ready: ready}).register(scoring)
	guarded := auth.Middleware(scoring)
	for _, path := range []string{"/v1/score", "/get_reward", "/verify", "/seed_session"} {
		mux.Handle(path, guarded)
	}
	return mux
}

type httpScore struct {
	svc   *Service
	m     *Metrics
	log   *zap.Logger
	ready *Readiness
}

func (h *httpScore) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	st := h.score(w, r)
	h.m.requests.WithLabelValues("http_score", st.Code().String()).Inc()
	h.m.requestDuration.WithLabelValues("http_score").Observe(time.Since(start).Seconds())
}

// score answers one request and returns its status for the metrics.
func (h *httpScore) score(w http.ResponseWriter, r *http.Request) (st *status.Status) {
	if !h.ready.Ready() {
		st = toStatus(h.log, "http_score", errShuttingDown)
		writeStatus(w, st)
		return st
	}
	ctx, err := h.svc.engine.Admit(r.Context())
	if err != nil {
		st = toStatus(h.log, "http_score", err)
		writeStatus(w, st)
		return st
	}
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("handler panicked", zap.String("path", r.URL.Path), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			st = status.New(codes.Internal, "internal error")
			writeStatus(w, st)
		}
	}()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(h.svc.cfg.Limits.MaxMessageBytes)))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			st = status.Newf(codes.InvalidArgument, "request body is over %d bytes (limits.max_message_bytes)", tooBig.Limit)
		} else {
			st = status.Newf(codes.InvalidArgument, "read request body: %v", err)
		}
		writeStatus(w, st)
		return st
	}
	if !utf8.Valid(body) {
		st = status.Newf(codes.InvalidArgument, "request body: invalid UTF-8 at byte %d", jsonl.FirstInvalidUTF8(body))
		writeStatus(w, st)
		return st
	}
	var req rewardv1.ScoreRequest
	if err := protojson.Unmarshal(body, &req); err != nil {
		st = status.Newf(codes.InvalidArgument, "request body: %v", err)
		writeStatus(w, st)
		return st
	}
	resp, err := h.svc.Score(ctx, &req)
	if st = toStatus(h.log, "http_score", err); st.Code() != codes.OK {
		writeStatus(w, st)
		return st
	}
	out, err := protojson.Marshal(resp)
	if err != nil {
		st = toStatus(h.log, "http_score", fmt.Errorf("encode response: %w", err))
		writeStatus(w, st)
		return st
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
	return st
}

// writeStatus writes st as a google.rpc.Status JSON body ({"code": 3,
// "message": "…"}) with the matching HTTP status.
func writeStatus(w http.ResponseWriter, st *status.Status) {
	out, _ := protojson.Marshal(st.Proto())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus(st.Code()))
	w.Write(out)
}
