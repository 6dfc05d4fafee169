package bench

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// The pictures are plain SVG written here: two panels side by side, lines,
// bars and axes with ticks, and a histogram with its CDF on a second y axis
// (rightAxis). gonum.org/v1/plot was tried in their place (issue 34) and
// not taken: it has no second y axis, and it would bring eight modules
// (fonts, LaTeX, PDF, rasterizers) into go.mod and ~9 MB into rewardd-bench
// for what these ~470 lines do.

const (
	svgWidth, svgHeight = 960, 480
	panelW, panelH      = 380, 280
	panelTop            = 80
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"}

// WriteSVG draws a run: the latency distribution (histogram and CDF) and
// the throughput over time, with the Python baseline's rate.
func (r *Result) WriteSVG(w io.Writer) error {
	c := newCanvas(w)
	title := fmt.Sprintf("rewardd-bench %s: batch %d, %d client(s) — %s rollouts/s, p99 %s",
		r.Scenario, r.Settings.BatchSize, r.Settings.Clients, num(r.RolloutsPerSecond), dur(r.Latency.P99))
	sub := fmt.Sprintf("%s; %d function(s); completions %.0f B on average; load average %s",
		r.Target, len(r.Functions), r.CompletionBytes.Mean, loads(r.Machine.LoadBefore))
	if b := r.Baseline; b != nil && r.Ratios != nil {
		sub += fmt.Sprintf("; %s %s rollouts/s (rewardd %.2f×)", baselineName(r), num(b.RolloutsPerSecond), r.Ratios.Throughput)
	}
	c.header(title, sub)
	if r.Code != nil && r.Code.LatencyCDF != nil {
		c.submissionCDF(r)
	} else {
		c.requestLatency(r)
	}

	// Right: throughput over time.
	right := panel{x: 560, y: panelTop, title: "throughput over time (rollouts/s)"}
	top := 0.0
	for _, s := range r.Throughput {
		top = max(top, s.RolloutsPerSecond)
	}
	if b := r.Baseline; b != nil {
		top = max(top, b.RolloutsPerSecond)
	}
	right.xa = axis{lo: 0, hi: max(r.ElapsedSeconds, 1e-3), label: "seconds"}
	right.ya = axis{lo: 0, hi: max(top*1.15, 1)}
	c.frame(right)
	var pts [][2]float64
	for _, s := range r.Throughput {
		pts = append(pts, [2]float64{s.Seconds, s.RolloutsPerSecond})
	}
	c.line(right, right.xa, right.ya, pts, palette[0], false)
	c.legend(right, 0, "rewardd ("+num(r.RolloutsPerSecond)+"/s overall)", palette[0], false)
	if b := r.Baseline; b != nil {
		c.line(right, right.xa, right.ya, [][2]float64{{0, b.RolloutsPerSecond}, {right.xa.hi, b.RolloutsPerSecond}}, palette[1], true)
		c.legend(right, 1, baselineName(r)+" ("+num(b.RolloutsPerSecond)+"/s)", palette[1], true)
	}
	return c.end()
}

// baselineName names the Python baseline of r in the pictures.
func baselineName(r *Result) string {
	if r.Code != nil {
		return "naive subprocess runner"
	}
	return "Python in process"
}

// submissionCDF draws, for a code scenario, the distribution of the time
// per submission on both sides (left panel).
func (c *canvas) submissionCDF(r *Result) {
	left := panel{x: 70, y: panelTop, title: "time per submission (ms, log scale)"}
	lines := [][]Quantile{r.Code.LatencyCDF}
	if b := r.Baseline; b != nil && b.SubmissionCDF != nil {
		lines = append(lines, b.SubmissionCDF)
	}
	lo, hi := math.Inf(1), 0.0
	for _, l := range lines {
		for _, q := range l {
			if q.Ms > 0 {
				lo, hi = min(lo, q.Ms), max(hi, q.Ms)
			}
		}
	}
	if hi <= lo {
		lo, hi = lo/2, hi*2
	}
	left.xa = axis{lo: lo, hi: hi, log: true}
	left.ya = axis{lo: 0, hi: 1, label: "share of submissions (CDF)"}
	c.frame(left)
	for i, l := range lines {
		var pts [][2]float64
		for _, q := range l {
			pts = append(pts, [2]float64{max(q.Ms, lo), q.Q})
		}
		c.line(left, left.xa, left.ya, pts, palette[i], i > 0)
	}
	c.vmark(left, r.Code.Latency.P50, "p50 "+dur(r.Code.Latency.P50), palette[0])
	c.vmark(left, r.Code.Latency.P99, "p99 "+dur(r.Code.Latency.P99), palette[0])
	c.legend(left, 0, "rewardd, in the scorer", palette[0], false)
	if len(lines) > 1 {
		c.legend(left, 1, baselineName(r)+", one subprocess.run", palette[1], true)
	}
}

// requestLatency draws the latency per request (left panel).
func (c *canvas) requestLatency(r *Result) {

	// Left: latency histogram (log x) with the CDF on a second y axis.
	left := panel{x: 70, y: panelTop, title: "latency per request (ms, log scale)"}
	if len(r.LatencyHistogram) > 0 {
		lo, hi := r.LatencyHistogram[0].LoMs, r.LatencyHistogram[len(r.LatencyHistogram)-1].HiMs
		if hi <= lo {
			lo, hi = lo/2, hi*2
		}
		most := 0
		for _, b := range r.LatencyHistogram {
			most = max(most, b.Count)
		}
		left.xa = axis{lo: lo, hi: hi, log: true}
		left.ya = axis{lo: 0, hi: float64(most) * 1.1, label: "requests"}
		c.frame(left)
		for _, b := range r.LatencyHistogram {
			c.bar(left, b.LoMs, b.HiMs, float64(b.Count), "#9ecae1")
		}
		cdfAxis := axis{lo: 0, hi: 1}
		var pts [][2]float64
		for _, q := range r.LatencyCDF {
			pts = append(pts, [2]float64{q.Ms, q.Q})
		}
		c.line(left, left.xa, cdfAxis, pts, palette[0], false)
		c.rightAxis(left, cdfAxis, "CDF")
		for _, m := range []struct {
			name string
			v    float64
		}{{"p50", r.Latency.P50}, {"p99", r.Latency.P99}} {
			c.vmark(left, m.v, m.name+" "+dur(m.v), palette[1])
		}
	} else {
		c.frame(left)
	}
}

// WriteSVG draws a sweep: cost per rollout against the swept setting, and
// latency.
func (s *SweepResult) WriteSVG(w io.Writer) error {
	c := newCanvas(w)
	xname := map[string]string{SweepBatch: "batch size (rollouts)", SweepLength: "completion length (bytes)", SweepClients: "concurrent clients"}[s.Kind]
	c.header("rewardd-bench sweep: cost against "+xname, s.Growth.Verdict)
	if len(s.Points) == 0 {
		return c.end()
	}
	xa := s.xAxis(xname)
	s.drawCost(c, xa)
	s.drawLatency(c, xa)
	return c.end()
}

// xAxis is the swept setting's axis, a tick at each point.
func (s *SweepResult) xAxis(xname string) axis {
	xs := make([]float64, len(s.Points))
	for i, p := range s.Points {
		xs[i] = float64(p.X)
	}
	xa := axis{lo: xs[0] / 1.3, hi: xs[len(xs)-1] * 1.3, log: true, label: xname, ticks: xs,
		format: func(v float64) string { return fmt.Sprint(int(v)) }}
	if s.Kind == SweepLength {
		xa.format = func(v float64) string {
			// Compact: the points of a length sweep are a factor 2 apart.
			if v >= 1024 {
				return fmt.Sprintf("%dK", int(v)/1024)
			}
			return fmt.Sprintf("%dB", int(v))
		}
	}
	return xa
}

// drawCost draws the left panel: rewardd's CPU and wall time per rollout,
// and the Python baseline's.
func (s *SweepResult) drawCost(c *canvas, xa axis) {
	series := []struct {
		name   string
		get    func(SweepPoint) float64
		dashed bool
	}{
		{"rewardd CPU µs/rollout", func(p SweepPoint) float64 { return p.CPUMicrosPerRollout }, false},
		{"rewardd wall µs/rollout (1/throughput)", func(p SweepPoint) float64 { return p.WallMicrosPerRollout }, false},
		{"Python in process µs/rollout", func(p SweepPoint) float64 {
			if p.PythonMicrosPerRollout == 0 && s.Baseline != nil {
				return ratio(1e6, s.Baseline.RolloutsPerSecond)
			}
			return p.PythonMicrosPerRollout
		}, true},
	}
	lo, hi := math.Inf(1), 0.0
	for _, sr := range series {
		for _, p := range s.Points {
			if v := sr.get(p); v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	left := panel{x: 70, y: panelTop, title: "cost per rollout (µs, log scale)", xa: xa,
		ya: axis{lo: lo / 1.5, hi: hi * 1.5, log: true}}
	c.frame(left)
	for i, sr := range series {
		var pts [][2]float64
		for _, p := range s.Points {
			if v := sr.get(p); v > 0 {
				pts = append(pts, [2]float64{float64(p.X), v})
			}
		}
		if len(pts) == 0 {
			continue
		}
		c.line(left, left.xa, left.ya, pts, palette[i], sr.dashed)
		c.dots(left, left.xa, left.ya, pts, palette[i])
		c.legend(left, i, sr.name, palette[i], sr.dashed)
	}
}

// drawLatency draws the right panel: the p50 and p99 request latency.
func (s *SweepResult) drawLatency(c *canvas, xa axis) {
	lo, hi := math.Inf(1), 0.0
	for _, p := range s.Points {
		if p.Result.Latency.P50 > 0 {
			lo = min(lo, p.Result.Latency.P50)
		}
		hi = max(hi, p.Result.Latency.P99)
	}
	right := panel{x: 560, y: panelTop, title: "latency per request (ms, log scale)", xa: xa,
		ya: axis{lo: lo / 1.5, hi: max(hi*1.5, lo), log: true}}
	c.frame(right)
	for i, q := range []struct {
		name string
		get  func(Latency) float64
	}{{"p50", func(l Latency) float64 { return l.P50 }}, {"p99", func(l Latency) float64 { return l.P99 }}} {
		var pts [][2]float64
		for _, p := range s.Points {
			if v := q.get(p.Result.Latency); v > 0 {
				pts = append(pts, [2]float64{float64(p.X), v})
			}
		}
		c.line(right, right.xa, right.ya, pts, palette[i], false)
		c.dots(right, right.xa, right.ya, pts, palette[i])
		c.legend(right, i, q.name, palette[i], false)
	}
}

// axis maps values to a panel's extent.
type axis struct {
	lo, hi float64
	log    bool
	label  string
	ticks  []float64 // explicit ticks; nil for automatic ones
	// format writes a tick's label; nil for the compact default.
	format func(float64) string
}

func (a axis) tickLabel(v float64) string {
	if a.format != nil {
		return a.format(v)
	}
	return label(v)
}

// frac returns where v lies on the axis, 0 at lo and 1 at hi.
func (a axis) frac(v float64) float64 {
	if a.log {
		if v <= 0 {
			return 0
		}
		return (math.Log(v) - math.Log(a.lo)) / (math.Log(a.hi) - math.Log(a.lo))
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// tickValues returns the axis's ticks: 1-2-5 steps on a linear axis, powers
// of ten (with 2 and 5 when the axis spans few decades) on a log one.
func (a axis) tickValues() []float64 {
	if a.ticks != nil {
		return a.ticks
	}
	var out []float64
	if a.log {
		decades := math.Log10(a.hi / a.lo)
		mults := []float64{1}
		if decades < 3 {
			mults = []float64{1, 2, 5}
		}
		for e := math.Floor(math.Log10(a.lo)); e <= math.Ceil(math.Log10(a.hi)); e++ {
			for _, m := range mults {
				if v := m * math.Pow(10, e); v >= a.lo && v <= a.hi {
					out = append(out, v)
				}
			}
		}
		return out
	}
	step := math.Pow(10, math.Floor(math.Log10((a.hi-a.lo)/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (a.hi-a.lo)/(step*m) <= 6 {
			step *= m
			break
		}
	}
	for v := math.Ceil(a.lo/step) * step; v <= a.hi+step/1e6; v += step {
		out = append(out, v)
	}
	return out
}

type panel struct {
	x, y   float64
	title  string
	xa, ya axis
}

func (p panel) px(a axis, v float64) float64 { return p.x + panelW*clamp01(a.frac(v)) }
func (p panel) py(a axis, v float64) float64 { return p.y + panelH*(1-clamp01(a.frac(v))) }

func clamp01(f float64) float64 { return min(1, max(0, f)) }

// canvas writes SVG elements; the first write error sticks.
type canvas struct {
	w   *bufio.Writer
	err error
}

func newCanvas(w io.Writer) *canvas {
	c := &canvas{w: bufio.NewWriter(w)}
	c.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	c.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	return c
}

func (c *canvas) printf(format string, args ...any) {
	if c.err == nil {
		_, c.err = fmt.Fprintf(c.w, format, args...)
	}
}

func (c *canvas) text(x, y float64, anchor, s string, extra string) {
	c.printf(`<text x="%.1f" y="%.1f" text-anchor="%s"%s>%s</text>`+"\n", x, y, anchor, extra, html.EscapeString(s))
}

func (c *canvas) header(title, sub string) {
	c.text(20, 26, "start", title, ` font-size="16" font-weight="bold"`)
	c.text(20, 48, "start", sub, ` fill="#555"`)
}

func (c *canvas) end() error {
	c.printf("</svg>\n")
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}

// frame draws a panel's box, title, ticks and axis labels.
func (c *canvas) frame(p panel) {
	c.printf(`<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", p.x, p.y, panelW, panelH)
	c.text(p.x+panelW/2, p.y-10, "middle", p.title, ` font-weight="bold"`)
	if p.xa.hi <= p.xa.lo || p.ya.hi <= p.ya.lo {
		c.text(p.x+panelW/2, p.y+panelH/2, "middle", "no data", ` fill="#999"`)
		return
	}
	for _, v := range p.xa.tickValues() {
		x := p.px(p.xa, v)
		c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, p.y, x, p.y+panelH)
		c.text(x, p.y+panelH+16, "middle", p.xa.tickLabel(v), "")
	}
	for _, v := range p.ya.tickValues() {
		y := p.py(p.ya, v)
		c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", p.x, y, p.x+panelW, y)
		c.text(p.x-6, y+4, "end", p.ya.tickLabel(v), "")
	}
	if p.xa.label != "" {
		c.text(p.x+panelW/2, p.y+panelH+34, "middle", p.xa.label, "")
	}
	if p.ya.label != "" {
		c.printf(`<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n",
			p.x-52, p.y+panelH/2, html.EscapeString(p.ya.label))
	}
}

// rightAxis labels a second y axis on the panel's right edge.
func (c *canvas) rightAxis(p panel, a axis, name string) {
	for _, v := range a.tickValues() {
		c.text(p.x+panelW+6, p.py(a, v)+4, "start", label(v), ` fill="`+palette[0]+`"`)
	}
	c.text(p.x+panelW+6, p.y-10, "start", name, ` fill="`+palette[0]+`"`)
}

func (c *canvas) bar(p panel, x0, x1, y float64, color string) {
	l, r := p.px(p.xa, x0), p.px(p.xa, x1)
	top := p.py(p.ya, y)
	c.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", l, top, max(r-l-0.5, 0.5), p.y+panelH-top, color)
}

func (c *canvas) line(p panel, xa, ya axis, pts [][2]float64, color string, dashed bool) {
	if len(pts) == 0 {
		return
	}
	var b strings.Builder
	for _, pt := range pts {
		fmt.Fprintf(&b, "%.1f,%.1f ", p.px(xa, pt[0]), p.py(ya, pt[1]))
	}
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	c.printf(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.TrimSpace(b.String()), color, dash)
}

func (c *canvas) dots(p panel, xa, ya axis, pts [][2]float64, color string) {
	for _, pt := range pts {
		c.printf(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", p.px(xa, pt[0]), p.py(ya, pt[1]), color)
	}
}

// vmark draws a labelled vertical line at x = v.
func (c *canvas) vmark(p panel, v float64, name, color string) {
	x := p.px(p.xa, v)
	c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="3 3"/>`+"\n", x, p.y, x, p.y+panelH, color)
	y := p.y + 14 + 14*float64(strings.Count(name, "p99"))
	if x > p.x+panelW*0.75 { // near the right edge: label on the left
		c.text(x-3, y, "end", name, ` fill="`+color+`"`)
		return
	}
	c.text(x+3, y, "start", name, ` fill="`+color+`"`)
}

// legend writes entry i of a panel's legend, under the panel.
func (c *canvas) legend(p panel, i int, name, color string, dashed bool) {
	y := p.y + panelH + 50 + 16*float64(i)
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", p.x, y-4, p.x+24, y-4, color, dash)
	c.text(p.x+30, y, "start", name, "")
}

// label formats a tick value compactly.
func label(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1e6:
		return trim(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return trim(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 1:
		return trim(fmt.Sprintf("%.2f", v))
	default:
		return trim(fmt.Sprintf("%.3g", v))
	}
}

func trim(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
