package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rewardd/rewardd/server/config"
)

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for a person: the config, a table of the
// per-function statistics, the live server, then every finding.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	r.writeConfig(&b)
	if s := r.Samples; s != nil {
		s.writeTable(&b)
	}
	if l := r.Live; l != nil {
		l.writeLine(&b)
	}
	if ls := r.Languages; ls != nil {
		ls.writeLine(&b)
	}
	if len(r.Findings) > 0 {
		b.WriteByte('\n')
		for _, f := range r.Findings {
			label := "WARN"
			if f.Severity == Failure {
				label = "FAIL"
			}
			fn := ""
			if f.Function != "" {
				fn = f.Function + ": "
			}
			fmt.Fprintf(&b, "%s  [%s] %s%s\n", label, f.Code, fn, f.Message)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeConfig writes the config's line: its problems, or its functions and
// fingerprint.
func (r *Report) writeConfig(b *strings.Builder) {
	if len(r.ConfigErrors) > 0 {
		fmt.Fprintf(b, "config   %s: %d problem(s)\n", r.Config, len(r.ConfigErrors))
		for _, e := range r.ConfigErrors {
			ce := &config.Error{File: e.File, Line: e.Line, Column: e.Column, Function: e.Function, Key: e.Key, Err: errors.New(e.Message)}
			fmt.Fprintf(b, "  %v\n", ce)
		}
	} else {
		names := make([]string, len(r.Functions))
		for i, f := range r.Functions {
			names[i] = f.Name
		}
		fmt.Fprintf(b, "config   %s: %d function(s) compile (%s), fingerprint %s\n",
			r.Config, len(r.Functions), strings.Join(names, ", "), r.Fingerprint)
	}
}

// writeTable writes the samples' line and the table of their statistics.
func (s *SamplesReport) writeTable(b *strings.Builder) {
	fmt.Fprintf(b, "samples  %s: %d row(s) in %d group(s)", s.File, s.Rows, s.Groups)
	if s.Malformed > 0 {
		fmt.Fprintf(b, ", %d malformed line(s) skipped", s.Malformed)
	}
	fmt.Fprintf(b, "; each function scored alone, twice, %d rows per call\n", s.BatchSize)
	if len(s.Functions) > 0 {
		b.WriteByte('\n')
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "function\tkind\trows\tmean\tmin\tmax\tok\tn/a\terror\tzero-var groups\tp50/rollout\tp99/rollout\tdeterministic")
		for _, f := range s.Functions {
			det := "yes"
			if !f.Deterministic {
				det = fmt.Sprintf("NO (%d rows)", f.NondeterministicRows)
			}
			zv := "–"
			if f.Groups > 0 {
				zv = fmt.Sprintf("%s of %d", percent(f.ZeroVarianceGroups, f.Groups), f.Groups)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				f.Name, f.Kind, f.Rows, number(f.Mean, "%.3f"), number(f.Min, "%.4g"), number(f.Max, "%.4g"),
				percent(f.OK, f.Rows), percent(f.NotApplicable, f.Rows), percent(f.Error, f.Rows),
				zv, duration(f.P50Seconds), duration(f.P99Seconds), det)
		}
		tw.Flush()
	}
}

// writeLine writes the live server's line.
func (l *LiveReport) writeLine(b *strings.Builder) {
	b.WriteByte('\n')
	fmt.Fprintf(b, "live     %s:", l.Addr)
	if l.Health == "" {
		b.WriteString(" no answer\n")
	} else {
		fmt.Fprintf(b, " %s", l.Health)
		if l.Fingerprint != "" {
			fmt.Fprintf(b, ", fingerprint %s, functions [%s]", l.Fingerprint, strings.Join(l.Functions, ", "))
		}
		if l.RowsCompared > 0 {
			total := 0
			for _, n := range l.Mismatches {
				total += n
			}
			fmt.Fprintf(b, ", %d sample row(s) scored there: %d score(s) differ", l.RowsCompared, total)
		}
		b.WriteByte('\n')
	}
}

// Summary is one line saying whether the check passed, and why not.
func (r *Report) Summary(strict bool) string {
	verdict := "passed"
	if r.Failed(strict) {
		verdict = "FAILED"
	}
	note := ""
	if r.Warnings > 0 && !strict {
		note = " (warnings fail the check only with --strict)"
	}
	return fmt.Sprintf("check %s: %d failure(s), %d warning(s)%s", verdict, r.Failures, r.Warnings, note)
}

func number(v *float64, format string) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf(format, *v)
}

// duration formats seconds with three significant digits in a unit that
// suits them.
func duration(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-6:
		return fmt.Sprintf("%.3gns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.3gµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3gms", s*1e3)
	default:
		return fmt.Sprintf("%.3gs", s)
	}
}
