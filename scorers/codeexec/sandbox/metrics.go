package sandbox

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the sandbox's Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	executions *prometheus.CounterVec
	duration   prometheus.Histogram
	busySlots  prometheus.Gauge
	slots      prometheus.Gauge
	restarts   prometheus.Counter
}

// executionResults are the values of the result label, fixed up front.
var executionResults = []string{"passed", "failed", "timeout", "memory", "crashed", "test_error", "canceled", "sandbox_error"}

// NewMetrics registers the sandbox metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rewardd_sandbox_executions_total",
			Help: "Submissions run by code_exec, by result: passed (every test), failed, timeout, memory, crashed (the worst of its tests), test_error (the row's own tests are broken: the dataset's fault), canceled (the caller gave up before the verdict) or sandbox_error (the sandbox could not run it).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rewardd_sandbox_execution_duration_seconds",
			Help:    "Time from taking a sandbox slot to the submission's verdict, all of its tests included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		busySlots: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rewardd_sandbox_slots_busy",
			Help: "Sandbox slots running a submission now.",
		}),
		slots: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rewardd_sandbox_slots",
			Help: "Sandbox slots (fork servers) in the pool.",
		}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rewardd_sandbox_restarts_total",
			Help: "Fork servers replaced after they died or stopped answering.",
		}),
	}
	reg.MustRegister(m.executions, m.duration, m.busySlots, m.slots, m.restarts)
	for _, r := range executionResults {
		m.executions.WithLabelValues(r)
	}
	return m
}

func (m *Metrics) busy(d float64) {
	if m != nil {
		m.busySlots.Add(d)
	}
}

func (m *Metrics) restarted() {
	if m != nil {
		m.restarts.Inc()
	}
}

// executed counts one submission. A run whose caller gave up (ctx ended:
// the request's deadline, the client gone) is "canceled", not the
// sandbox's failure.
func (m *Metrics) executed(ctx context.Context, res Result, err error, d time.Duration) {
	if m == nil {
		return
	}
	var broken *HarnessError
	label := "sandbox_error"
	switch {
	case err == nil:
		label = res.outcome()
	case errors.As(err, &broken):
		label = "test_error"
	case ctx.Err() != nil:
		label = "canceled"
	}
	m.executions.WithLabelValues(label).Inc()
	m.duration.Observe(d.Seconds())
}
