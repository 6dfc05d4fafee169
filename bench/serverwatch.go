package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/procfs"
	"github.com/sourcegraph/conc"
)

// watchedMetrics are the prefixes of the server's metrics an overload
// phase reports: what admission, the memory budget, the timeouts and the
// connection bounds did, and what the garbage collector did.
var watchedMetrics = []string{
	"rewardd_requests_total", "rewardd_memory_", "rewardd_timeouts_total", "rewardd_connections",
	"rewardd_pool_", "rewardd_work_budget_exhausted_total",
	"go_gc_duration_seconds", "go_memstats_heap_inuse_bytes", "go_memstats_next_gc_bytes", "process_open_fds",
}

// ServerFigures are a running server's figures over one phase.
type ServerFigures struct {
	// CPUSeconds is the server process's CPU time (user + system) in the
	// phase, from /proc.
	CPUSeconds float64 `json:"cpu_seconds"`
	// PeakRSSBytes is the process's VmHWM at the end of the phase, reset at
	// its start (PeakRSSSinceStart when the reset failed: then it is the
	// peak since the process started).
	PeakRSSBytes      int64 `json:"peak_rss_bytes"`
	PeakRSSSinceStart bool  `json:"peak_rss_since_start,omitempty"`
	// MaxOpenFiles is the most file descriptors the process held at one
	// sample (every sampleEvery).
	MaxOpenFiles int `json:"max_open_files"`
	// Metrics are the watched series: counters as their increase over the
	// phase, gauges as their value at its start, end and highest sample.
	Metrics []MetricFigure `json:"metrics"`
	// ScrapeErrors counts samples whose /metrics could not be read.
	ScrapeErrors int `json:"scrape_errors,omitempty"`
}

// MetricFigure is one series over a phase.
type MetricFigure struct {
	Series string `json:"series"` // name{label="value",…}
	// Counter is true for a counter (and a histogram's or summary's _count
	// and _sum): Increase is what it rose by. Otherwise Before, After and
	// Max are a gauge's values.
	Counter  bool    `json:"counter,omitempty"`
	Increase float64 `json:"increase,omitempty"`
	Before   float64 `json:"before,omitempty"`
	After    float64 `json:"after,omitempty"`
	Max      float64 `json:"max,omitempty"`
}

// sampleEvery is how often a watch samples the server during a phase.
const sampleEvery = time.Second

// serverWatch reads a running server's process (through /proc, when its pid
// is known) and its /metrics.
type serverWatch struct {
	pid        int // 0: unknown
	metricsURL string
	client     *http.Client
}

func newServerWatch(pid int, httpAddr string) *serverWatch {
	// One kept-alive connection, so that a server whose port is full still
	// answers the watch; uncompressed, so that the watch costs the server's
	// core little.
	return &serverWatch{pid: pid, metricsURL: "http://" + httpAddr + "/metrics",
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}}
}

func (w *serverWatch) close() { w.client.CloseIdleConnections() }

// series is a scrape's watched values, by series name; counters marks the
// counters among them.
type series struct {
	values   map[string]float64
	counters map[string]bool
}

func (w *serverWatch) scrape(ctx context.Context) (series, error) {
	s := series{values: map[string]float64{}, counters: map[string]bool{}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.metricsURL, nil)
	if err != nil {
		return s, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("GET %s: %s", w.metricsURL, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return s, fmt.Errorf("parse %s: %w", w.metricsURL, err)
	}
	for name, f := range families {
		if !slices.ContainsFunc(watchedMetrics, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		for _, m := range f.GetMetric() {
			key := seriesName(name, m.GetLabel())
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				s.values[key], s.counters[key] = m.GetCounter().GetValue(), true
			case dto.MetricType_GAUGE:
				s.values[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				k := seriesName(name+"_count", m.GetLabel())
				s.values[k], s.counters[k] = float64(m.GetHistogram().GetSampleCount()), true
				k = seriesName(name+"_sum", m.GetLabel())
				s.values[k], s.counters[k] = m.GetHistogram().GetSampleSum(), true
			case dto.MetricType_SUMMARY:
				k := seriesName(name+"_count", m.GetLabel())
				s.values[k], s.counters[k] = float64(m.GetSummary().GetSampleCount()), true
				k = seriesName(name+"_sum", m.GetLabel())
				s.values[k], s.counters[k] = m.GetSummary().GetSampleSum(), true
			}
		}
	}
	return s, nil
}

func seriesName(name string, labels []*dto.LabelPair) string {
	if len(labels) == 0 {
		return name
	}
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// cpu is the process's CPU time so far.
func (w *serverWatch) cpu() time.Duration {
	if w.pid == 0 {
		return 0
	}
	p, err := procfs.NewProc(w.pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

// status reads VmHWM and the open descriptors.
func (w *serverWatch) status() (hwm int64, fds int) {
	if w.pid == 0 {
		return 0, 0
	}
	p, err := procfs.NewProc(w.pid)
	if err != nil {
		return 0, 0
	}
	if st, err := p.NewStatus(); err == nil {
		hwm = int64(st.VmHWM)
	}
	fds, _ = p.FileDescriptorsLen()
	return hwm, fds
}

// phaseWatch is a watch over one phase.
type phaseWatch struct {
	w      *serverWatch
	start  time.Duration
	before series
	reset  bool

	mu       sync.Mutex
	max      map[string]float64
	maxFDs   int
	failures int

	stop context.CancelFunc
	wg   conc.WaitGroup
}

// begin resets the server's peak RSS, reads its metrics and starts sampling
// them until end.
func (w *serverWatch) begin(ctx context.Context) *phaseWatch {
	pw := &phaseWatch{w: w, max: map[string]float64{}}
	if w.pid != 0 {
		pw.reset = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", w.pid), []byte("5"), 0) == nil
	}
	pw.start = w.cpu()
	var err error
	if pw.before, err = w.scrape(ctx); err != nil {
		pw.failures++
	}
	pw.observe(pw.before)
	sctx, stop := context.WithCancel(ctx)
	pw.stop = stop
	pw.wg.Go(func() {
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
			}
			s, err := w.scrape(sctx)
			if sctx.Err() != nil {
				return
			}
			pw.mu.Lock()
			if err != nil {
				pw.failures++
			}
			pw.mu.Unlock()
			pw.observe(s)
		}
	})
	return pw
}

func (pw *phaseWatch) observe(s series) {
	_, fds := pw.w.status()
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.maxFDs = max(pw.maxFDs, fds)
	for k, v := range s.values {
		if old, ok := pw.max[k]; !ok || v > old {
			pw.max[k] = v
		}
	}
}

// end stops sampling and returns the phase's figures.
func (pw *phaseWatch) end(ctx context.Context) ServerFigures {
	pw.stop()
	pw.wg.Wait()
	after, err := pw.w.scrape(ctx)
	if err != nil {
		pw.failures++
	}
	pw.observe(after)
	hwm, _ := pw.w.status()
	f := ServerFigures{
		CPUSeconds: (pw.w.cpu() - pw.start).Seconds(), PeakRSSBytes: hwm,
		PeakRSSSinceStart: pw.w.pid != 0 && !pw.reset, MaxOpenFiles: pw.maxFDs, ScrapeErrors: pw.failures,
	}
	names := make([]string, 0, len(after.values))
	for k := range after.values {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		m := MetricFigure{Series: k, Counter: after.counters[k]}
		if m.Counter {
			m.Increase = after.values[k] - pw.before.values[k]
		} else {
			m.Before, m.After, m.Max = pw.before.values[k], after.values[k], pw.max[k]
		}
		f.Metrics = append(f.Metrics, m)
	}
	return f
}

// metric returns the figure of series, and whether there is one.
func (f ServerFigures) metric(series string) (MetricFigure, bool) {
	for _, m := range f.Metrics {
		if m.Series == series {
			return m, true
		}
	}
	return MetricFigure{}, false
}
