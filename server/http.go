package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/server/aggregate"
	"github.com/rewardd/rewardd/server/config"
	"github.com/rewardd/rewardd/server/jsonl"
)

// readiness says whether the server takes new work; it flips to not ready
// first thing on shutdown so load balancers stop sending. unfit, set before
// serving, keeps GET /readyz at 503 (Options.Unready) while the server
// still takes work. languages (Options.Languages) are listed when ready.
type readiness struct {
	ready     atomic.Bool
	unfit     error
	languages Languages
}

// Set marks the server ready or not.
func (r *readiness) Set(ready bool) { r.ready.Store(ready) }

// Ready reports whether the server takes new work.
func (r *readiness) Ready() bool { return r.ready.Load() }

// newHTTPHandler serves the HTTP port: /metrics from gatherer, /healthz
// (the process is alive), /readyz (it takes work), POST /v1/score (a
// ScoreRequest as protobuf JSON, answered with a ScoreResponse), GET
// /v1/functions (ListFunctions' answer as protobuf JSON), and the
// bodies other trainers speak: OpenRLHF's POST /get_reward and NeMo Gym's
// POST /verify and /seed_session.
//
// auth (nil for none) guards the scoring endpoints; metrics, health and
// readiness stay open. It also serves SandboxFusion's POST /run_code
// (runcode.go), to the extent the config allows, running programs with exec
// (nil: every program the config allows gets SandboxError).
func newHTTPHandler(svc *Service, m *transportMetrics, gatherer prometheus.Gatherer, ready *readiness, log *zap.Logger, auth *Auth, exec *codeexec.Executor) (http.Handler, []string) {
	open := &routeMux{ServeMux: http.NewServeMux()}
	open.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	open.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})
	open.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Ready() {
			http.Error(w, "not ready\n", http.StatusServiceUnavailable)
			return
		}
		if ready.unfit != nil {
			http.Error(w, "not ready: "+ready.unfit.Error()+"\n", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
		if ready.languages == nil {
			return
		}
		// Probing before running: a language whose probe ends between
		// the two reads is then in both lists, never in neither.
		probing, running := ready.languages.Probing(), ready.languages.Languages()
		io.WriteString(w, "code_exec languages: "+strings.Join(running, ", ")+"\n")
		if len(probing) > 0 {
			io.WriteString(w, "code_exec languages being probed: "+strings.Join(probing, ", ")+"\n")
		}
	})
	scoring := &routeMux{ServeMux: http.NewServeMux()}
	api := &jsonAPI{svc: svc, m: m, log: log, ready: ready, exec: exec}
	scoring.HandleFunc("POST /v1/score", api.endpoint("http_score", api.score))
	scoring.HandleFunc("GET /v1/functions", api.endpoint("http_functions", api.functions))
	api.registerCompat(scoring)
	// Each path of scoring reaches it through auth, whatever the method:
	// scoring answers 405 for a method it does not serve there.
	guarded := auth.middleware(scoring)
	routes := slices.Clone(open.patterns)
	for _, pattern := range scoring.patterns {
		_, path, _ := strings.Cut(pattern, " ")
		if !slices.Contains(open.paths, path) {
			open.ServeMux.Handle(path, guarded)
			open.paths = append(open.paths, path)
		}
		routes = append(routes, pattern)
	}
	return open.ServeMux, routes
}

// routeMux is an http.ServeMux that remembers the patterns registered on
// it ("METHOD /path"), so that what the HTTP port serves can be listed
// (Server.routes) and held to docs/openapi.yaml by a test.
type routeMux struct {
	*http.ServeMux
	patterns []string
	paths    []string // the patterns' paths, each once
}

// Handle registers h for pattern, which names a method: "GET /metrics".
func (m *routeMux) Handle(pattern string, h http.Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || method == "" {
		panic(fmt.Sprintf("routeMux: pattern %q names no method", pattern))
	}
	m.ServeMux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
	if !slices.Contains(m.paths, path) {
		m.paths = append(m.paths, path)
	}
}

// HandleFunc registers h for pattern, as Handle.
func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// jsonAPI serves the HTTP scoring endpoints: rewardd's own /v1/score and the
// bodies other trainers speak (compat.go, runcode.go), all through endpoint.
type jsonAPI struct {
	svc   *Service
	m     *transportMetrics
	log   *zap.Logger
	ready *readiness
	exec  *codeexec.Executor // nil: no sandbox
}

// endpoint wraps a JSON handler: it refuses work while draining, or at once
// when every admission slot is taken; reads the body (bounded in size and
// in time, and in the memory budget as it arrives, valid UTF-8); reserves
// the memory decoding it takes and an admission slot; runs h; writes its
// error as a google.rpc.Status JSON body; turns a panic into an internal
// error; and records the request under method.
func (a *jsonAPI) endpoint(method string, h func(w http.ResponseWriter, r *http.Request, body []byte) error) http.HandlerFunc {
	return a.handler(method, false, h)
}

// queuedEndpoint is endpoint for the bodies of trainers that send one
// sample per request in bursts (OpenRLHF, NeMo Gym): when every admission
// slot is taken, a request waits for one, oldest first, up to
// limits.queue_wait, its body counted against limits.queue_bytes, instead
// of being refused at once; only a request whose wait runs out, or that
// does not fit in the queue, gets RESOURCE_EXHAUSTED (429).
func (a *jsonAPI) queuedEndpoint(method string, h func(w http.ResponseWriter, r *http.Request, body []byte) error) http.HandlerFunc {
	return a.handler(method, true, h)
}

func (a *jsonAPI) handler(method string, queue bool, h func(w http.ResponseWriter, r *http.Request, body []byte) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		lim := a.svc.limits()
		rc := http.NewResponseController(w)
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
			queue := queue && lim.QueueWait > 0
			if !queue && a.svc.overloaded() {
				return ErrOverloaded
			}
			// Errors of the two deadlines are ignored: a ResponseWriter
			// that cannot set them (a test recorder) has no connection
			// to hold.
			rc.SetReadDeadline(start.Add(lim.ReadTimeout))
			rc.SetWriteDeadline(start.Add(lim.RequestTimeout + lim.WriteTimeout))
			t := a.svc.ticket()
			defer t.release()
			body, err := readBody(http.MaxBytesReader(w, r.Body, int64(lim.MaxMessageBytes)), r.ContentLength, t)
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				return invalid("request body is over %d bytes (limits.max_message_bytes)", tooBig.Limit)
			case errors.Is(err, os.ErrDeadlineExceeded):
				a.m.timeouts.WithLabelValues("read").Inc()
				return &timeoutError{fmt.Sprintf("the request body did not arrive within %v (limits.read_timeout)", lim.ReadTimeout)}
			case err != nil:
				var me *MemoryError
				if errors.As(err, &me) {
					return err
				}
				return invalid("read request body: %v", err)
			case !utf8.Valid(body):
				return invalid("request body: invalid UTF-8 at byte %d", jsonl.FirstInvalidUTF8(body))
			}
			if err := t.reserve(decodeCost(len(body), jsonShape(body))); err != nil {
				return err
			}
			if err := a.takeSlot(r.Context(), t, queue, int64(len(body)), lim); err != nil {
				return err
			}
			// The request's time starts now that its body is in: an
			// answer written at the end of limits.request_timeout (what
			// was scored by then) still has limits.write_timeout.
			rc.SetWriteDeadline(time.Now().Add(lim.RequestTimeout + lim.WriteTimeout))
			return h(w, r.WithContext(withTicket(r.Context(), t)), body)
		}()
		st := toStatus(a.log, method, err)
		var own httpAnswer
		switch {
		case st.Code() == codes.OK:
		case errors.As(err, &own):
			own.writeHTTP(w)
		default:
			writeStatus(w, st)
		}
		a.m.requests.WithLabelValues(method, st.Code().String()).Inc()
		a.m.requestDuration.WithLabelValues(method).Observe(time.Since(start).Seconds())
	}
}

// takeSlot takes t's admission slot: at once, or when queue is set
// waiting for one up to lim.QueueWait with bytes in the queue.
func (a *jsonAPI) takeSlot(ctx context.Context, t *ticket, queue bool, bytes int64, lim config.Limits) error {
	if !queue {
		return t.takeSlot()
	}
	wait, cancel := context.WithTimeout(ctx, lim.QueueWait)
	defer cancel()
	err := t.waitSlot(wait, bytes, int64(lim.QueueBytes))
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("%w (waited %v for a slot: limits.queue_wait)", ErrOverloaded, lim.QueueWait)
	}
	return err
}

// readBody reads a request body into memory that t reserves as it arrives,
// a chunk at a time, so that a body that trickles in holds only what has
// come. size is the Content-Length, or -1.
func readBody(body io.Reader, size int64, t *ticket) ([]byte, error) {
	const minChunk, maxChunk = 16 << 10, 256 << 10
	var chunks [][]byte
	total := 0
	for next := minChunk; ; next = min(2*next, maxChunk) {
		if size >= 0 {
			// Room for the rest and one byte more, to see the end in
			// the same read.
			next = int(min(int64(maxChunk), max(int64(minChunk), size-int64(total)+1)))
		}
		if err := t.reserve(int64(next)); err != nil {
			return nil, err
		}
		buf := make([]byte, next)
		n, err := io.ReadFull(body, buf)
		chunks = append(chunks, buf[:n])
		total += n
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	if err := t.reserve(int64(total)); err != nil {
		return nil, err
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
		t.shrink(int64(cap(c)))
	}
	return out, nil
}

// score answers POST /v1/score: a ScoreRequest as protobuf JSON, answered
// with a ScoreResponse.
func (a *jsonAPI) score(w http.ResponseWriter, r *http.Request, body []byte) error {
	var req rewardv1.ScoreRequest
	if err := protojson.Unmarshal(body, &req); err != nil {
		// Only a body protojson refuses pays for looking at its
		// aggregation's names.
		fixed, ferr := configNames(r.Context(), body)
		switch {
		case ferr != nil:
			return ferr
		case fixed == nil:
			return invalid("request body: %v", err)
		}
		proto.Reset(&req)
		if err := protojson.Unmarshal(fixed, &req); err != nil {
			return invalid("request body: %v", err)
		}
	}
	resp, err := a.svc.Score(r.Context(), &req)
	if err != nil {
		return err
	}
	return writeProtoJSON(w, resp)
}

// writeProtoJSON writes resp as the answer, in protojson.
func writeProtoJSON(w http.ResponseWriter, resp proto.Message) error {
	out, err := protojson.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
	return nil
}

// functions answers GET /v1/functions with ListFunctions' answer as JSON:
// each served function's name, kind, weight, params (the form an inline
// function takes) and paramsYaml, the config fingerprint and the default
// aggregation.
func (a *jsonAPI) functions(w http.ResponseWriter, r *http.Request, _ []byte) error {
	resp, err := a.svc.ListFunctions(r.Context(), &rewardv1.ListFunctionsRequest{})
	if err != nil {
		return err
	}
	return writeProtoJSON(w, resp)
}

// configNames returns body with its aggregation's mode and scale, when the
// request spells them as the config file does ("sum_then_normalize",
// "batch"), in the names of the proto's JSON mapping
// ("AGGREGATION_MODE_SUM_THEN_NORMALIZE"), which protojson reads; nil when
// it spells them no such way (protojson's error then stands). A string that
// is neither is an INVALID_ARGUMENT naming the field and every valid value.
// The copies it makes of body are reserved on the request's ticket first.
func configNames(ctx context.Context, body []byte) ([]byte, error) {
	if !bytes.Contains(body, []byte(`"aggregation"`)) {
		return nil, nil
	}
	if t := ticketFrom(ctx); t != nil {
		// The decoded copy, and the rewritten one.
		if err := t.reserve(2 * int64(len(body))); err != nil {
			return nil, err
		}
	}
	var top map[string]json.RawMessage
	var agg map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || json.Unmarshal(top["aggregation"], &agg) != nil {
		return nil, nil
	}
	fields := []struct {
		key, prefix string
		values      map[string]int32
		short       []string
	}{
		{"mode", "AGGREGATION_MODE_", rewardv1.AggregationMode_value, aggregate.ModeNames()},
		{"scale", "AGGREGATION_SCALE_", rewardv1.AggregationScale_value, aggregate.ScaleNames()},
	}
	changed := false
	for _, f := range fields {
		var name string
		if json.Unmarshal(agg[f.key], &name) != nil {
			continue // absent, or a number: protojson's to judge
		}
		if _, ok := f.values[name]; ok {
			continue
		}
		if !slices.Contains(f.short, name) {
			long := make([]string, len(f.short))
			for i, n := range f.short {
				long[i] = f.prefix + strings.ToUpper(n)
			}
			return nil, invalid("request body: aggregation.%s: %q is not a valid value (valid: %s; or as the proto names them: %s)",
				f.key, name, strings.Join(f.short, ", "), strings.Join(long, ", "))
		}
		agg[f.key], _ = json.Marshal(f.prefix + strings.ToUpper(name))
		changed = true
	}
	if !changed {
		return nil, nil
	}
	var err error
	if top["aggregation"], err = json.Marshal(agg); err == nil {
		body, err = json.Marshal(top)
	}
	if err != nil {
		return nil, fmt.Errorf("rewrite the aggregation's names: %w", err)
	}
	return body, nil
}

// writeStatus writes st as a google.rpc.Status JSON body ({"code": 3,
// "message": "…"}) with the matching HTTP status.
func writeStatus(w http.ResponseWriter, st *status.Status) {
	out, _ := protojson.Marshal(st.Proto())
	w.Header().Set("Content-Type", "application/json")
	code := httpStatus(st.Code())
	if st.Code() == codes.DeadlineExceeded && strings.HasPrefix(st.Message(), timeoutPrefix) {
		// The client was too slow, not the server: 408, not 504.
		code = http.StatusRequestTimeout
	}
	w.WriteHeader(code)
	w.Write(out)
}
