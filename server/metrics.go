package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
)

// InlineLabel is the function label of every function a request defines
// inline: label values come from a fixed list (the config), never from
// request data.
const InlineLabel = "inline"

// Metrics are rewardd's Prometheus metrics, registered on the Registerer the
// caller passes in. Names follow design §7: rewardd_ prefix, base units,
// _total on counters, label values from fixed lists.
type Metrics struct {
	requests         *prometheus.CounterVec   // method, code
	requestDuration  *prometheus.HistogramVec // method
	rolloutsScored   prometheus.Counter
	functionDuration *prometheus.HistogramVec // function
	functionOutcomes *prometheus.CounterVec   // function, outcome
	poolInflight     prometheus.Gauge
	poolCapacity     prometheus.Gauge
	poolQueueWait    prometheus.Histogram
	poolRejected     prometheus.Counter
	unscorable       prometheus.Counter
}

// Methods are the values of the method label.
func methods() []string {
	return []string{"Score", "ScoreStream", "ListFunctions", "http_score", "http_get_reward", "http_verify"}
}

// NewMetrics creates the metrics and registers them on reg. functions are the
// served function names; their series (and the inline one) are created at 0
// so that dashboards see them before the first request.
func NewMetrics(reg prometheus.Registerer, functions []string) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rewardd_requests_total",
			Help: "Requests handled, by method and gRPC status code.",
		}, []string{"method", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rewardd_request_duration_seconds",
			Help:    "Time to answer a request, by method.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14), // 100µs … ~15 min
		}, []string{"method"}),
		rolloutsScored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_rollouts_scored_total",
			Help: "Rollouts scored (each counted once, whatever the number of functions).",
		}),
		functionDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rewardd_function_duration_seconds",
			Help:    "Mean time of one function on one rollout, observed once per scheduled chunk of rollouts.",
			Buckets: prometheus.ExponentialBuckets(1e-7, 4, 14), // 100ns … ~27 s
		}, []string{"function"}),
		functionOutcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rewardd_function_outcomes_total",
			Help: "Function evaluations by outcome (ok, not_applicable, error).",
		}, []string{"function", "outcome"}),
		poolInflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rewardd_pool_inflight",
			Help: "Worker pool slots in use.",
		}),
		poolCapacity: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rewardd_pool_capacity",
			Help: "Worker pool slots in all.",
		}),
		poolQueueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rewardd_pool_queue_wait_seconds",
			Help:    "Time a chunk of work waited for a worker pool slot.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12), // 1µs … ~4 s
		}),
		poolRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_pool_rejected_total",
			Help: "Requests refused with RESOURCE_EXHAUSTED because the server was at capacity.",
		}),
		unscorable: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_unscorable_rollouts_total",
			Help: "Rollouts aggregated with every function NaN: their advantage is 0.",
		}),
	}
	reg.MustRegister(m.requests, m.requestDuration, m.rolloutsScored, m.functionDuration,
		m.functionOutcomes, m.poolInflight, m.poolCapacity, m.poolQueueWait, m.poolRejected, m.unscorable)

	for _, fn := range append(functions, InlineLabel) {
		m.functionDuration.WithLabelValues(fn)
		for _, o := range []string{"ok", "not_applicable", "error"} {
			m.functionOutcomes.WithLabelValues(fn, o)
		}
	}
	for _, method := range methods() {
		m.requestDuration.WithLabelValues(method)
		m.requests.WithLabelValues(method, codes.OK.String())
	}
	return m
}
