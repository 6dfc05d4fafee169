package validate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Dashboard is the part of a Grafana dashboard JSON model the checks read.
type Dashboard struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []Panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// Panel is one Grafana panel; rows may nest panels.
type Panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	GridPos    *struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
		RefID        string `json:"refId"`
	} `json:"targets"`
	Panels []Panel `json:"panels"`
}

// Query is one PromQL expression of the dashboard and where it is.
type Query struct {
	Where  string
	Expr   string
	Legend string
}

// ParseDashboard decodes a dashboard and returns its queries: every panel
// target and every variable query.
func ParseDashboard(data []byte) (*Dashboard, []Query, error) {
	var d Dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, nil, err
	}
	var qs []Query
	var walk func(ps []Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				qs = append(qs, Query{Where: fmt.Sprintf("panel %d %q target %s", p.ID, p.Title, t.RefID), Expr: t.Expr, Legend: t.LegendFormat})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// Grafana runs query.query (older dashboards: query as a string);
		// definition is what its editor shows. They must agree.
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q.Query); err != nil {
			if err := json.Unmarshal(v.Query, &q); err != nil {
				return nil, nil, fmt.Errorf("variable %s: query: %w", v.Name, err)
			}
		}
		if v.Definition != "" && v.Definition != q.Query {
			return nil, nil, fmt.Errorf("variable %s: query %q and definition %q differ", v.Name, q.Query, v.Definition)
		}
		qs = append(qs, Query{Where: "variable " + v.Name, Expr: q.Query})
	}
	return &d, qs, nil
}

// targetLabels are the labels Prometheus itself attaches to every scraped
// series, which the dashboard filters and groups by.
var targetLabels = []string{"job", "instance"}

// runtimeSeries are the Go and process collectors' series (with no labels of
// their own) that the dashboard may use beside rewardd's; serve.go must
// register those collectors (TestDashboardMatchesMetrics checks it).
var runtimeSeries = []string{"process_resident_memory_bytes", "go_goroutines"}

// grpcCodes are the values of the code label: google.golang.org/grpc/codes
// Code.String().
var grpcCodes = []string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted",
	"OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

// outcomes are the values of the outcome label (server/metrics.go).
var outcomes = []string{"ok", "not_applicable", "error"}

// sandboxResults are the values of the result label
// (scorers/codeexec/sandbox/metrics.go executionResults; a test keeps them
// equal).
var sandboxResults = []string{"passed", "failed", "timeout", "memory", "crashed", "test_error", "canceled", "sandbox_error"}

var (
	// Grafana's interval variables, replaced by a duration before parsing.
	intervalVar = regexp.MustCompile(`\$(?:__rate_interval|__interval|__range)\b|\$\{(?:__rate_interval|__interval|__range)\}`)
	// Other dashboard variables, which the dashboard uses only in regex
	// matchers (=~"$job"): replaced by a regex matching anything.
	otherVar    = regexp.MustCompile(`\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?`)
	legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
	labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)
)

// CheckDashboard parses every query with Prometheus' own PromQL parser and
// checks it against the metrics the server registers: each series exists
// (histograms as _bucket/_sum/_count), each label a query matches or groups
// by belongs to its series (or is a target label), histogram_quantile reads
// a _bucket series and keeps le, code/outcome/result values are ones the
// server emits, and legends name only labels the result keeps.
func CheckDashboard(d *Dashboard, qs []Query, metrics []Metric) []error {
	series := map[string][]string{}
	for _, m := range metrics {
		for name, ls := range m.Series() {
			series[name] = ls
		}
	}
	for _, name := range runtimeSeries {
		series[name] = nil
	}
	c := &dashCheck{series: series, parser: parser.NewParser(parser.Options{})}

	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 {
		c.errs = append(c.errs, fmt.Errorf("dashboard needs uid, title and schemaVersion"))
	}
	ids := map[int]bool{}
	var walk func(ps []Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			if ids[p.ID] {
				c.errs = append(c.errs, fmt.Errorf("panel id %d used twice", p.ID))
			}
			ids[p.ID] = true
			if p.GridPos == nil {
				c.errs = append(c.errs, fmt.Errorf("panel %d %q has no gridPos", p.ID, p.Title))
			}
			if p.Type != "row" {
				if len(p.Targets) == 0 {
					c.errs = append(c.errs, fmt.Errorf("panel %d %q has no query", p.ID, p.Title))
				}
				if !strings.Contains(string(p.Datasource), "${datasource}") {
					c.errs = append(c.errs, fmt.Errorf("panel %d %q: datasource %s, want the ${datasource} variable", p.ID, p.Title, p.Datasource))
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)

	for _, q := range qs {
		c.query(q)
	}
	return c.errs
}

type dashCheck struct {
	series map[string][]string
	parser parser.Parser
	errs   []error
}

func (c *dashCheck) query(q Query) {
	fail := func(format string, args ...any) {
		c.errs = append(c.errs, fmt.Errorf("%s: %s\n\texpr: %s", q.Where, fmt.Sprintf(format, args...), q.Expr))
	}
	src := q.Expr
	var wantLabel string
	if m := labelValues.FindStringSubmatch(src); m != nil { // a variable's label_values(selector, label)
		src, wantLabel = m[1], m[2]
	}
	src = otherVar.ReplaceAllString(intervalVar.ReplaceAllString(src, "5m"), ".*")
	expr, err := c.parser.ParseExpr(src)
	if err != nil {
		fail("PromQL: %v", err)
		return
	}

	used := 0
	var problems []string
	parser.Inspect(expr, func(n parser.Node, path []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			used++
			problems = append(problems, c.selector(n)...)
		case *parser.AggregateExpr:
			have := c.inputLabels(n.Expr)
			for _, l := range n.Grouping {
				if !slices.Contains(have, l) {
					problems = append(problems, fmt.Sprintf("%s by/without %q: a label of none of its series", n.Op, l))
				}
			}
		case *parser.Call:
			if n.Func.Name == "histogram_quantile" && len(n.Args) == 2 {
				problems = append(problems, c.quantile(n.Args[1])...)
			}
		}
		return nil
	})
	for _, p := range problems {
		fail("%s", p)
	}
	if used == 0 {
		fail("selects no series")
	}
	out := c.outLabels(expr)
	if wantLabel != "" && !slices.Contains(out, wantLabel) {
		fail("label_values(…, %s): a label of none of its series", wantLabel)
	}
	for _, m := range legendLabel.FindAllStringSubmatch(q.Legend, -1) {
		if !slices.Contains(out, m[1]) {
			fail("legend {{%s}}: the result has only the labels %v", m[1], out)
		}
	}
}

// selector checks a series selector: the series exists, its matchers name
// its labels, and code/outcome/result values are ones the server emits.
func (c *dashCheck) selector(vs *parser.VectorSelector) []string {
	ls, ok := c.series[vs.Name]
	if !ok {
		return []string{fmt.Sprintf("series %s: rewardd registers no such metric (%s; histograms are read as _bucket, _sum, _count)", vs.Name, strings.Join(MetricFiles, ", "))}
	}
	var out []string
	for _, m := range vs.LabelMatchers {
		if m.Name == labels.MetricName {
			continue
		}
		if !slices.Contains(ls, m.Name) && !slices.Contains(targetLabels, m.Name) {
			out = append(out, fmt.Sprintf("%s has no label %q (labels: %v)", vs.Name, m.Name, ls))
		}
		if m.Type != labels.MatchEqual && m.Type != labels.MatchNotEqual {
			continue
		}
		if m.Name == "code" && !slices.Contains(grpcCodes, m.Value) {
			out = append(out, fmt.Sprintf("code=%q is not a gRPC code name (%v)", m.Value, grpcCodes))
		}
		if m.Name == "outcome" && !slices.Contains(outcomes, m.Value) {
			out = append(out, fmt.Sprintf("outcome=%q is not an outcome the server counts (%v)", m.Value, outcomes))
		}
		if m.Name == "result" && !slices.Contains(sandboxResults, m.Value) {
			out = append(out, fmt.Sprintf("result=%q is not a result the sandbox counts (%v)", m.Value, sandboxResults))
		}
	}
	return out
}

// quantile checks histogram_quantile's argument: it reads _bucket series
// and every aggregation on the way keeps le.
func (c *dashCheck) quantile(arg parser.Expr) []string {
	var out []string
	parser.Inspect(arg, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			if !strings.HasSuffix(n.Name, "_bucket") {
				out = append(out, fmt.Sprintf("histogram_quantile over %s, not a _bucket series", n.Name))
			}
		case *parser.AggregateExpr:
			if n.Without == slices.Contains(n.Grouping, "le") {
				out = append(out, fmt.Sprintf("histogram_quantile: %s drops le; want by (le, …)", n.Op))
			}
		}
		return nil
	})
	return out
}

// inputLabels are the labels any series under e carries.
func (c *dashCheck) inputLabels(e parser.Expr) []string {
	have := slices.Clone(targetLabels)
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			have = append(have, c.series[vs.Name]...)
		}
		return nil
	})
	return have
}

// outLabels are the labels the result of e keeps: what a legend can show.
func (c *dashCheck) outLabels(e parser.Expr) []string {
	switch e := e.(type) {
	case *parser.VectorSelector:
		return append(slices.Clone(targetLabels), c.series[e.Name]...)
	case *parser.MatrixSelector:
		return c.outLabels(e.VectorSelector)
	case *parser.SubqueryExpr:
		return c.outLabels(e.Expr)
	case *parser.ParenExpr:
		return c.outLabels(e.Expr)
	case *parser.UnaryExpr:
		return c.outLabels(e.Expr)
	case *parser.AggregateExpr:
		in := c.outLabels(e.Expr)
		switch {
		case e.Op == parser.TOPK || e.Op == parser.BOTTOMK || e.Op == parser.LIMITK || e.Op == parser.LIMIT_RATIO:
			return in
		case e.Without:
			return slices.DeleteFunc(in, func(l string) bool { return slices.Contains(e.Grouping, l) })
		}
		return slices.Clone(e.Grouping)
	case *parser.Call:
		if e.Func.Name == "histogram_quantile" && len(e.Args) == 2 {
			return slices.DeleteFunc(c.outLabels(e.Args[1]), func(l string) bool { return l == "le" })
		}
		for _, a := range e.Args {
			if t := a.Type(); t == parser.ValueTypeVector || t == parser.ValueTypeMatrix {
				return c.outLabels(a)
			}
		}
		return nil
	case *parser.BinaryExpr:
		lt, rt := e.LHS.Type(), e.RHS.Type()
		switch {
		case lt != parser.ValueTypeVector:
			return c.outLabels(e.RHS)
		case rt != parser.ValueTypeVector:
			return c.outLabels(e.LHS)
		case e.VectorMatching != nil && e.VectorMatching.Card == parser.CardOneToMany:
			return append(c.outLabels(e.RHS), e.VectorMatching.Include...)
		case e.VectorMatching != nil && e.VectorMatching.Card == parser.CardManyToOne:
			return append(c.outLabels(e.LHS), e.VectorMatching.Include...)
		}
		return c.outLabels(e.LHS)
	}
	return nil
}

// UsedSeries returns the names of the series the queries select.
func UsedSeries(qs []Query) (map[string]bool, error) {
	p := parser.NewParser(parser.Options{})
	used := map[string]bool{}
	for _, q := range qs {
		src := q.Expr
		if m := labelValues.FindStringSubmatch(src); m != nil {
			src = m[1]
		}
		expr, err := p.ParseExpr(otherVar.ReplaceAllString(intervalVar.ReplaceAllString(src, "5m"), ".*"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.Where, err)
		}
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				used[vs.Name] = true
			}
			return nil
		})
	}
	return used, nil
}
