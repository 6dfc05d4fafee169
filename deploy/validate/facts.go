package validate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ServeFacts are what the manifests must agree with in cmd/rewardd/serve.go.
type ServeFacts struct {
	Flags       map[string]string // flag name (without dashes) → its type: "String", "Int", "Bool", …
	Defaults    map[string]string // flag name → its default, where that is a literal (strings unquoted)
	GracePeriod time.Duration     // how long in-flight requests get after SIGTERM
}

// ReadServeFacts parses cmd/rewardd/serve.go under root: every fs.String /
// fs.Int / fs.Bool / fs.Duration("name", default, …) call names a flag, also
// inside the helpers serve passes its flag set to (in another file of the
// package, or cli.AddSandboxFlags(fs.FlagSet) in internal/cli), and the constant
// gracePeriod is the drain time.
func ReadServeFacts(root string) (*ServeFacts, error) {
	dir := filepath.Join(root, "cmd", "rewardd")
	path := filepath.Join(dir, "serve.go")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	facts := &ServeFacts{Flags: map[string]string{}, Defaults: map[string]string{}}
	helpers := facts.readServe(f)
	// The helpers' flags are serve's flags too.
	if err := facts.readHelpers(fset, root, path, helpers); err != nil {
		return nil, err
	}
	if len(facts.Flags) == 0 {
		return nil, fmt.Errorf("%s: found no fs.String(\"…\") flag definitions; update ReadServeFacts", path)
	}
	if facts.GracePeriod <= 0 {
		return nil, fmt.Errorf("%s: found no constant gracePeriod of the form N * time.Unit; update ReadServeFacts", path)
	}
	return facts, nil
}

// readServe records serve.go's flags and gracePeriod, and returns the
// functions serve hands its flag set to.
func (facts *ServeFacts) readServe(f *ast.File) (helpers map[string]bool) {
	helpers = map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			facts.flag(n)
			name := ""
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && x.Name == "cli" {
					name = fn.Sel.Name
				}
			}
			for _, a := range n.Args {
				if isFlagSet(a) && name != "" {
					helpers[name] = true
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if id.Name == "gracePeriod" && i < len(n.Values) {
					d, err := evalDuration(n.Values[i])
					if err != nil {
						facts.GracePeriod = -1
						return true
					}
					facts.GracePeriod = d
				}
			}
		}
		return true
	})
	return helpers
}

// readHelpers records the flags the helpers define, looking for them in
// the other files of cmd/rewardd and in internal/cli; serve is serve.go's
// path.
func (facts *ServeFacts) readHelpers(fset *token.FileSet, root, serve string, helpers map[string]bool) error {
	dir := filepath.Dir(serve)
	found := map[string]bool{}
	others, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	shared, err := filepath.Glob(filepath.Join(root, "internal", "cli", "*.go"))
	if err != nil {
		return err
	}
	others = append(others, shared...)
	for _, o := range others {
		if o == serve || strings.HasSuffix(o, "_test.go") || len(helpers) == 0 {
			continue
		}
		of, err := parser.ParseFile(fset, o, nil, 0)
		if err != nil {
			return err
		}
		for _, d := range of.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !helpers[fd.Name.Name] || fd.Body == nil {
				continue
			}
			found[fd.Name.Name] = true
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					facts.flag(c)
				}
				return true
			})
		}
	}
	for h := range helpers {
		if !found[h] {
			return fmt.Errorf("%s: serve passes its flags to %s, which no other file of cmd/rewardd or internal/cli defines; update ReadServeFacts", serve, h)
		}
	}
	return nil
}

// flag records fs.String("name", default, …) and its kin.
func (facts *ServeFacts) flag(n *ast.CallExpr) {
	sel, ok := n.Fun.(*ast.SelectorExpr)
	if !ok || len(n.Args) == 0 {
		return
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "fs" {
		return
	}
	switch sel.Sel.Name {
	case "String", "Int", "Int64", "Uint", "Bool", "Duration", "Float64":
		name, ok := stringLit(n.Args[0])
		if !ok {
			return
		}
		facts.Flags[name] = sel.Sel.Name
		if len(n.Args) > 1 {
			if lit, ok := n.Args[1].(*ast.BasicLit); ok {
				v := lit.Value
				if s, ok := stringLit(lit); ok {
					v = s
				}
				facts.Defaults[name] = v
			} else if id, ok := n.Args[1].(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
				facts.Defaults[name] = id.Name
			}
		}
	}
}

// evalDuration evaluates `N * time.Unit` (or `time.Unit * N`, or `time.Unit`).
func evalDuration(e ast.Expr) (time.Duration, error) {
	units := map[string]time.Duration{
		"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
		"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return evalDuration(e.X)
	case *ast.BasicLit:
		if e.Kind == token.INT {
			n, err := strconv.ParseInt(e.Value, 0, 64)
			return time.Duration(n), err
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == "time" {
			if u, ok := units[e.Sel.Name]; ok {
				return u, nil
			}
		}
	case *ast.BinaryExpr:
		if e.Op == token.MUL {
			a, err := evalDuration(e.X)
			if err != nil {
				return 0, err
			}
			b, err := evalDuration(e.Y)
			if err != nil {
				return 0, err
			}
			return a * b, nil
		}
	}
	return 0, fmt.Errorf("cannot evaluate %T", e)
}

// MetricKind is the Prometheus type of a metric.
type MetricKind string

const (
	Counter   MetricKind = "counter"
	Gauge     MetricKind = "gauge"
	Histogram MetricKind = "histogram"
	Summary   MetricKind = "summary"
)

// Metric is one metric the server registers.
type Metric struct {
	Name   string
	Kind   MetricKind
	Labels []string
	File   string // where it is registered, relative to the repository root
}

// Series returns the names the metric is exposed under, each with its
// labels: a histogram adds _bucket (with le), _sum and _count.
func (m Metric) Series() map[string][]string {
	switch m.Kind {
	case Histogram:
		return map[string][]string{
			m.Name + "_bucket": append(slices.Clone(m.Labels), "le"),
			m.Name + "_sum":    m.Labels,
			m.Name + "_count":  m.Labels,
		}
	case Summary:
		return map[string][]string{
			m.Name:            append(slices.Clone(m.Labels), "quantile"),
			m.Name + "_sum":   m.Labels,
			m.Name + "_count": m.Labels,
		}
	}
	return map[string][]string{m.Name: m.Labels}
}

// MetricFiles are the files under the repository root that register the
// metrics `rewardd serve` exports: the server's, and the code_exec
// sandbox's. TestMetricFilesAreAll keeps the list complete.
var MetricFiles = []string{
	filepath.Join("cmd", "rewardd", "version.go"),
	filepath.Join("server", "metrics.go"),
	filepath.Join("scorers", "codeexec", "sandbox", "metrics.go"),
}

// ReadMetrics parses the MetricFiles under root for the metrics they create:
// each prometheus.NewX(prometheus.XOpts{Name: "…"}, []string{labels}) call.
// Names built at runtime are not found, and the style guide forbids them.
func ReadMetrics(root string) ([]Metric, error) {
	var all []Metric
	for _, rel := range MetricFiles {
		ms, err := readMetricsFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		for i := range ms {
			ms[i].File = filepath.ToSlash(rel)
		}
		all = append(all, ms...)
	}
	return all, nil
}

func readMetricsFile(path string) ([]Metric, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	constructors := map[string]MetricKind{
		"NewCounter": Counter, "NewCounterVec": Counter,
		"NewGauge": Gauge, "NewGaugeVec": Gauge,
		"NewHistogram": Histogram, "NewHistogramVec": Histogram,
		"NewSummary": Summary, "NewSummaryVec": Summary,
	}
	var metrics []Metric
	var errs []error
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "prometheus" {
			return true
		}
		kind, ok := constructors[sel.Sel.Name]
		if !ok || len(call.Args) == 0 {
			return true
		}
		m := Metric{Kind: kind}
		if opts, ok := call.Args[0].(*ast.CompositeLit); ok {
			for _, elt := range opts.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
					m.Name, _ = stringLit(kv.Value)
				}
			}
		}
		if m.Name == "" {
			errs = append(errs, fmt.Errorf("%s: prometheus.%s without a literal Name", fset.Position(call.Pos()), sel.Sel.Name))
			return true
		}
		if len(call.Args) > 1 {
			labels, ok := call.Args[1].(*ast.CompositeLit)
			if !ok {
				errs = append(errs, fmt.Errorf("%s: %s: labels are not a literal []string", fset.Position(call.Pos()), m.Name))
				return true
			}
			for _, elt := range labels.Elts {
				l, ok := stringLit(elt)
				if !ok {
					errs = append(errs, fmt.Errorf("%s: %s: a label that is not a string literal", fset.Position(call.Pos()), m.Name))
					continue
				}
				m.Labels = append(m.Labels, l)
			}
		}
		metrics = append(metrics, m)
		return true
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %v", path, errs)
	}
	if len(metrics) == 0 {
		return nil, fmt.Errorf("%s: no prometheus.New…(…Opts{Name: \"…\"}) call found; update ReadMetrics", path)
	}
	return metrics, nil
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}

// isFlagSet reports whether e is serve's flag set: fs, or the *flag.FlagSet
// inside it (fs.FlagSet).
func isFlagSet(e ast.Expr) bool {
	if sel, ok := e.(*ast.SelectorExpr); ok && sel.Sel.Name == "FlagSet" {
		e = sel.X
	}
	x, ok := e.(*ast.Ident)
	return ok && x.Name == "fs"
}
