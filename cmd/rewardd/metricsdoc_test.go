package main

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

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
	type row struct{ typ, labels string }
	rows := map[string]row{}
	var prefixes []string
	for i, line := range strings.Split(string(data), "\n") {
		m := metricRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[1]
		if _, dup := rows[name]; dup {
			t.Errorf("%s:%d: %s has a second row", metricsDoc, i+1, name)
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
			t.Errorf("the server serves %s (%s, labels %q), which %s has no row for: add `| `%s` | %s | %s | <what it means> |`",
				name, typeName(mf), labelNames(mf), metricsDoc, name, typeName(mf), strings.Join(labelNames(mf), ", "))
			continue
		}
		if r.typ != typeName(mf) {
			t.Errorf("%s: %s says %q, the server serves a %s", name, metricsDoc, r.typ, typeName(mf))
		}
		if got, want := sortedLabels(r.labels), strings.Join(labelNames(mf), ", "); got != want {
			t.Errorf("%s: %s lists labels %q, the server's are %q", name, metricsDoc, got, want)
		}
	}
	for name := range rows {
		if p, ok := strings.CutSuffix(name, "*"); ok {
			if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, p) }) {
				t.Errorf("%s has a row for %s, and the server serves no metric of that prefix", metricsDoc, name)
			}
			continue
		}
		if _, ok := families[name]; !ok {
			t.Errorf("%s has a row for %s, which the server does not serve (any more?)", metricsDoc, name)
		}
	}
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
