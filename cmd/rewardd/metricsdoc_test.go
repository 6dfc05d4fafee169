package main

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsDoc is the page that lists every metric.
const metricsDoc = "../../docs/metrics.md"

// metricRow is one row of a table of docs/metrics.md: | `name` | type |
// labels | meaning |. A name ending in * stands for every metric with that
// prefix (the Go client's collectors); its type and labels are not checked.
var metricRow = regexp.MustCompile("^\\| `([a-z_:]+\\*?)` \\| ([a-z]*) ?\\| ([^|]*)\\|")

// TestMetricsDocumented scrapes GET /metrics of a real `rewardd serve` (every
// series of the server's labelled metrics exists from the start, so the
// scrape holds every family the process registers) and holds
// docs/metrics.md to it: every family has a row with its type and labels,
// and every row names a family the server serves.
func TestMetricsDocumented(t *testing.T) {
	srv := startServer(t)
	resp, err := http.Get("http://" + srv.httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	if _, ok := families["rewardd_build_info"]; !ok || len(families) < 20 {
		t.Fatalf("/metrics has %d families, rewardd_build_info among them: %v; want every metric the server registers", len(families), ok)
	}

	data, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, gap := range metricGaps(families, string(data)) {
		t.Error(gap)
	}
}

// TestMetricsDocCatchesMistakes shows metricGaps failing on what it is for,
// on the families of a registry of its own: a metric without a row, a row
// of another type or other labels, a row of a metric gone, a second row.
func TestMetricsDocCatchesMistakes(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		prometheus.NewCounter(prometheus.CounterOpts{Name: "rewardd_a_total", Help: "a"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_threads_x", Help: "b"}),
	)
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewardd_b_total", Help: "b"}, []string{"port", "code"})
	c.WithLabelValues("grpc", "OK")
	reg.MustRegister(c)
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	families := map[string]*dto.MetricFamily{}
	for _, mf := range gathered {
		families[mf.GetName()] = mf
	}
	const good = "| `rewardd_a_total` | counter | | a |\n| `rewardd_b_total` | counter | `port`, `code` | b |\n| `go_*` | | | go |\n"
	if gaps := metricGaps(families, good); len(gaps) > 0 {
		t.Fatalf("the right rows: %q", gaps)
	}
	for name, doc := range map[string]string{
		"a metric without a row": strings.Replace(good, "| `rewardd_a_total` | counter | | a |\n", "", 1),
		"another type":           strings.Replace(good, "`rewardd_a_total` | counter", "`rewardd_a_total` | gauge", 1),
		"a label missing":        strings.Replace(good, "`port`, `code`", "`port`", 1),
		"a metric gone":          good + "| `rewardd_gone_total` | counter | | c |\n",
		"a prefix gone":          good + "| `process_*` | | | d |\n",
		"a second row":           good + "| `rewardd_a_total` | counter | | a |\n",
	} {
		if gaps := metricGaps(families, doc); len(gaps) == 0 {
			t.Errorf("%s: metricGaps finds nothing", name)
		}
	}
}

// metricGaps holds the rows of doc (docs/metrics.md's text) to families
// (what a server serves): every family has a row, of its type and labels;
// every row is of a family served. A row whose name ends in * covers the
// families of that prefix that are not rewardd's own.
func metricGaps(families map[string]*dto.MetricFamily, doc string) []string {
	var gaps []string
	errorf := func(format string, args ...any) { gaps = append(gaps, fmt.Sprintf(format, args...)) }
	type row struct{ typ, labels string }
	rows := map[string]row{}
	var prefixes []string
	for i, line := range strings.Split(doc, "\n") {
		m := metricRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[1]
		if _, dup := rows[name]; dup {
			errorf("%s:%d: %s has a second row", metricsDoc, i+1, name)
		}
		if p, ok := strings.CutSuffix(name, "*"); ok {
			prefixes = append(prefixes, p)
		}
		rows[name] = row{typ: m[2], labels: strings.TrimSpace(strings.ReplaceAll(m[3], "`", ""))}
	}

	var names []string
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		mf := families[name]
		r, ok := rows[name]
		if !ok {
			if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) }) && !strings.HasPrefix(name, "rewardd_") {
				continue
			}
			errorf("the server serves %s (%s, labels %q), which %s has no row for: add `| `%s` | %s | %s | <what it means> |`",
				name, typeName(mf), labelNames(mf), metricsDoc, name, typeName(mf), strings.Join(labelNames(mf), ", "))
			continue
		}
		if r.typ != typeName(mf) {
			errorf("%s: %s says %q, the server serves a %s", name, metricsDoc, r.typ, typeName(mf))
		}
		if got, want := sortedLabels(r.labels), strings.Join(labelNames(mf), ", "); got != want {
			errorf("%s: %s lists labels %q, the server's are %q", name, metricsDoc, got, want)
		}
	}
	for name := range rows {
		if p, ok := strings.CutSuffix(name, "*"); ok {
			if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, p) }) {
				errorf("%s has a row for %s, and the server serves no metric of that prefix", metricsDoc, name)
			}
			continue
		}
		if _, ok := families[name]; !ok {
			errorf("%s has a row for %s, which the server does not serve (any more?)", metricsDoc, name)
		}
	}
	return gaps
}

// typeName is a family's type as docs/metrics.md writes it.
func typeName(mf *dto.MetricFamily) string {
	return strings.ToLower(mf.GetType().String())
}

// labelNames are the label names of a family's series, sorted (as the
// client writes them).
func labelNames(mf *dto.MetricFamily) []string {
	var names []string
	if len(mf.GetMetric()) == 0 {
		return nil
	}
	for _, lp := range mf.GetMetric()[0].GetLabel() {
		names = append(names, lp.GetName())
	}
	return names
}

// sortedLabels is a row's comma-separated labels, sorted.
func sortedLabels(labels string) string {
	if labels == "" {
		return ""
	}
	names := strings.Split(labels, ", ")
	sort.Strings(names)
	return strings.Join(names, ", ")
}
