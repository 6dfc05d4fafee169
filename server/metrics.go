package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
)

// inlineLabel is the function label of every function a request defines
// inline: label values come from a fixed list (the config), never from
// request data.
const inlineLabel = "inline"

// rewardd's Prometheus metrics, one struct per layer that writes them: the
// engine (engineMetrics), the service and its admission (serviceMetrics),
// the transports and their ports (transportMetrics). Each is registered on
// the Registerer the caller of New passes in. Names have the rewardd_ prefix
// and base units, _total on counters, label values from fixed lists.

// engineMetrics are the worker pool's and the functions' metrics.
type engineMetrics struct {
	rolloutsScored   prometheus.Counter
	functionDuration *prometheus.HistogramVec // function
	functionOutcomes *prometheus.CounterVec   // function, outcome
	poolInflight     prometheus.Gauge
	poolCapacity     prometheus.Gauge
	poolQueueWait    prometheus.Histogram
	workExhausted    prometheus.Counter
	poolLowered      prometheus.Counter
}

// newEngineMetrics creates the engine's metrics and registers them on reg.
// functions are the served function names; their series (and the inline
// one) are created at 0 so that dashboards see them before the first
// request.
func newEngineMetrics(reg prometheus.Registerer, functions []string) *engineMetrics {
	m := &engineMetrics{
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
			Help: "Spans running: on the worker pool's slots, and with --worker-nice on the heavy requests' slots beside them (as many, at the lower CPU priority), so up to twice rewardd_pool_capacity.",
		}),
		poolCapacity: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rewardd_pool_capacity",
			Help: "Worker pool slots in all (--workers); with --worker-nice, heavy requests have as many again at the lower CPU priority.",
		}),
		poolQueueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rewardd_pool_queue_wait_seconds",
			Help:    "Time a chunk of work waited for a worker pool slot.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12), // 1µs … ~4 s
		}),
		workExhausted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_work_budget_exhausted_total",
			Help: "Requests that ran out of limits.max_request_work: their unscored rollouts got ERROR.",
		}),
		poolLowered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_pool_lowered_total",
			Help: "Pool goroutines that went on at the lower CPU priority (--worker-nice) because their request had used 20ms of worker time.",
		}),
	}
	reg.MustRegister(m.rolloutsScored, m.functionDuration, m.functionOutcomes,
		m.poolInflight, m.poolCapacity, m.poolQueueWait, m.workExhausted, m.poolLowered)
	for _, fn := range append(functions, inlineLabel) {
		m.functionDuration.WithLabelValues(fn)
		for _, o := range []string{"ok", "not_applicable", "error"} {
			m.functionOutcomes.WithLabelValues(fn, o)
		}
	}
	return m
}

// serviceMetrics are the service's: admission (requests and memory
// refused, memory held) and aggregation.
type serviceMetrics struct {
	poolRejected   prometheus.Counter
	memoryCapacity prometheus.Gauge
	memoryHeld     prometheus.Gauge
	memoryRejected prometheus.Counter
	unscorable     prometheus.Counter
	// requestTimeouts counts the requests answered in part because
	// limits.request_timeout ran out.
	requestTimeouts prometheus.Counter
	// slotWaiting is the requests waiting for an admission slot
	// (limits.queue_wait).
	slotWaiting prometheus.Gauge
}

// newServiceMetrics creates the service's metrics and registers them on reg.
func newServiceMetrics(reg prometheus.Registerer) *serviceMetrics {
	m := &serviceMetrics{
		poolRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_pool_rejected_total",
			Help: "Requests refused with RESOURCE_EXHAUSTED because the server was at capacity.",
		}),
		memoryCapacity: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rewardd_memory_request_capacity_bytes",
			Help: "Memory the requests in progress may reserve (a share of limits.memory_budget).",
		}),
		memoryHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rewardd_memory_reserved_bytes",
			Help: "Memory reserved by the requests and streams in progress.",
		}),
		memoryRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_memory_rejected_total",
			Help: "Requests refused with RESOURCE_EXHAUSTED because their memory did not fit in the budget.",
		}),
		unscorable: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_unscorable_rollouts_total",
			Help: "Rollouts no function scored (every one NaN): aggregated with advantage 0, or answered the endpoint's unscorable_reward on /get_reward and /verify.",
		}),
		requestTimeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_request_timeouts_total",
			Help: "Requests that ran past limits.request_timeout before every rollout was scored: answered with the scores decided by then, the rest ERROR.",
		}),
		slotWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rewardd_queued_requests",
			Help: "Requests to /get_reward and /verify waiting for an admission slot (limits.queue_wait).",
		}),
	}
	reg.MustRegister(m.poolRejected, m.memoryCapacity, m.memoryHeld, m.memoryRejected, m.unscorable, m.requestTimeouts, m.slotWaiting)
	return m
}

// transportMetrics are the gRPC and HTTP transports': requests by method
// and code, timeouts, connections by port.
type transportMetrics struct {
	requests        *prometheus.CounterVec   // method, code
	requestDuration *prometheus.HistogramVec // method
	timeouts        *prometheus.CounterVec   // stage
	connections     *prometheus.GaugeVec     // port
	connsRefused    *prometheus.CounterVec   // port
}

// Stages of a request that a timeout can cut (the stage label).
func stages() []string { return []string{"read", "write", "stream_idle"} }

// Ports are the values of the port label.
func ports() []string { return []string{"grpc", "http"} }

// Methods are the values of the method label.
func methods() []string {
	return []string{"Score", "ScoreStream", "ListFunctions", "http_score", "http_functions", "http_get_reward", "http_verify", "http_aggregate_metrics", "http_run_code"}
}

// newTransportMetrics creates the transports' metrics and registers them on
// reg, every label value's series at 0.
func newTransportMetrics(reg prometheus.Registerer) *transportMetrics {
	m := &transportMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rewardd_requests_total",
			Help: "Requests handled, by method and gRPC status code.",
		}, []string{"method", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rewardd_request_duration_seconds",
			Help:    "Time to answer a request, by method.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14), // 100µs … ~15 min
		}, []string{"method"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rewardd_timeouts_total",
			Help: "Requests and streams cut by a timeout, by stage (read: the body did not arrive in limits.read_timeout; write: the answer was not taken in limits.write_timeout; stream_idle).",
		}, []string{"stage"}),
		connections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rewardd_connections",
			Help: "Open connections, by port.",
		}, []string{"port"}),
		connsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rewardd_connections_closed_total",
			Help: "Connections closed on arrival, or closed while idle to make room, because the port had limits.max_connections open.",
		}, []string{"port"}),
	}
	reg.MustRegister(m.requests, m.requestDuration, m.timeouts, m.connections, m.connsRefused)
	for _, s := range stages() {
		m.timeouts.WithLabelValues(s)
	}
	for _, p := range ports() {
		m.connections.WithLabelValues(p)
		m.connsRefused.WithLabelValues(p)
	}
	for _, method := range methods() {
		m.requestDuration.WithLabelValues(method)
		m.requests.WithLabelValues(method, codes.OK.String())
	}
	return m
}
