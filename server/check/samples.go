package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/server/jsonl"
)

// Thresholds of the warnings.
const (
	// mostThreshold is the share of rows (or groups) above which "most" of
	// them are NOT_APPLICABLE (or zero-variance).
	mostThreshold = 0.5
	// maxReasons is how many distinct ERROR reasons a finding quotes.
	maxReasons = 3
)

// SamplesReport is what the sample rows say about each function.
type SamplesReport struct {
	// File names the samples file.
	File string `json:"file"`
	// Rows is the number of rows scored; Malformed the lines not parsed.
	Rows      int `json:"rows"`
	Malformed int `json:"malformed_lines"`
	// Groups is the number of distinct groups (a row's group, or its prompt
	// when it has none, as aggregation groups rows).
	Groups int `json:"groups"`
	// BatchSize is the rows per Score call.
	BatchSize int `json:"batch_size"`
	// Functions holds one entry per function, in config order.
	Functions []FunctionStats `json:"functions"`
}

// FunctionStats is one function over the sample rows. Counts, values and
// groups are from the first pass; the second pass is compared with it.
type FunctionStats struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Rows int    `json:"rows"`
	// OK, NotApplicable and Error count the rows of each status.
	OK            int `json:"ok"`
	NotApplicable int `json:"not_applicable"`
	Error         int `json:"error"`
	// The shares of Rows.
	OKShare            float64 `json:"ok_share"`
	NotApplicableShare float64 `json:"not_applicable_share"`
	ErrorShare         float64 `json:"error_share"`
	// Mean, Min and Max are over the OK rows; null when there are none.
	Mean *float64 `json:"mean"`
	Min  *float64 `json:"min"`
	Max  *float64 `json:"max"`
	// Groups counts the groups with at least two OK scores: a group with
	// fewer has no variance to speak of. ZeroVarianceGroups counts those
	// whose OK scores are all equal; ZeroVarianceShare is their share (null
	// when Groups is 0).
	Groups             int      `json:"groups"`
	ZeroVarianceGroups int      `json:"zero_variance_groups"`
	ZeroVarianceShare  *float64 `json:"zero_variance_share"`
	// P50Seconds and P99Seconds are percentiles (nearest rank) of the time
	// per rollout, one sample per Score call (call time / rows in the
	// call), over both passes. The function is timed alone; the time
	// includes what Service.Score adds to a call (validation, the config's
	// aggregation), which batches of 32 rows make small.
	P50Seconds float64 `json:"p50_seconds_per_rollout"`
	P99Seconds float64 `json:"p99_seconds_per_rollout"`
	// Deterministic is true when both passes gave the same status and value
	// (NaN equal to NaN) on every row; NondeterministicRows counts the rows
	// where they did not.
	Deterministic        bool `json:"deterministic"`
	NondeterministicRows int  `json:"nondeterministic_rows"`
}

// ReadSamples reads JSONL sample rows from r (the format of `rewardd score`).
// Malformed lines are returned apart, and reading goes on; the error is for
// r itself failing.
func ReadSamples(r io.Reader, maxLine int) (rows []*jsonl.Row, malformed []*jsonl.LineError, err error) {
	rd := jsonl.NewReader(r, maxLine)
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rows, malformed, nil
		}
		var le *jsonl.LineError
		if errors.As(err, &le) {
			malformed = append(malformed, le)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, row)
	}
}

// localScores holds the first pass's scores by function name, for the live
// comparison.
type localScores struct {
	rows   []*jsonl.Row
	byName map[string]*rewardv1.FunctionScores
}

// checkSamples scores in.Rows twice with every function, one function per
// Score call, and adds the statistics and findings to r.
func checkSamples(ctx context.Context, r *Report, in Input, batch int) (*localScores, error) {
	cfg := in.Service.Config()
	s := &SamplesReport{File: in.SamplesName, Rows: len(in.Rows), Malformed: len(in.Malformed), BatchSize: batch}
	r.Samples = s
	for _, le := range in.Malformed {
		r.add(Failure, CodeSamples, "", "%s:%d: %v", in.SamplesName, le.Line, le.Err)
	}
	if len(in.Rows) == 0 {
		r.add(Failure, CodeSamples, "", "%s has no rows to score", in.SamplesName)
		return nil, nil
	}

	rollouts := make([]*rewardv1.Rollout, len(in.Rows))
	for i, row := range in.Rows {
		rollouts[i] = row.Rollout
	}
	groups := groupIndex(rollouts)
	s.Groups = len(groups)
	if loose := looseRows(rollouts); len(loose) > 0 {
		r.add(Warning, CodeNoGroup, "", "%d of %d rows have neither a group nor a prompt (first: %s): each is a group of its own, so GRPO gives it advantage 0 whatever its reward; give the rows a group (the prompt they answer)",
			len(loose), len(rollouts), where(in, loose[0]))
	}

	// One untimed call first, so that the first timed call does not pay for
	// what a process does once (page faults, lazily built tables).
	warm := &rewardv1.ScoreRequest{Rollouts: rollouts[:min(batch, len(rollouts))]}
	if _, err := in.Service.Score(ctx, warm); err != nil {
		return nil, fmt.Errorf("score %s: %w", in.SamplesName, err)
	}

	scores, times, err := scorePasses(ctx, in, cfg.Functions, rollouts, batch)
	if err != nil {
		return nil, err
	}
	local := &localScores{rows: in.Rows, byName: make(map[string]*rewardv1.FunctionScores)}
	present := func(name string) (bool, string) { return fieldPresent(rollouts, name) }
	for k, fn := range cfg.Functions {
		first, second := scores[0][k], scores[1][k]
		local.byName[fn.Name] = first
		st := stats(fn, first, groups, times[k])
		diff := mismatches(first, second)
		st.NondeterministicRows = len(diff)
		st.Deterministic = len(diff) == 0
		s.Functions = append(s.Functions, st)
		r.addFindings(in, fn, first, second, diff, st, present)
	}
	return local, nil
}

// passes is how many times checkSamples scores the rows with each function.
const passes = 2

// scorePasses scores rollouts with each function alone, pass 1 over every
// function, then pass 2, so that anything a function keeps between calls (a
// cache) has seen all the others run too. It returns the scores by pass and
// function, and the times per rollout by function over both passes.
func scorePasses(ctx context.Context, in Input, fns []*scorers.Function, rollouts []*rewardv1.Rollout, batch int) ([][]*rewardv1.FunctionScores, [][]float64, error) {
	scores := make([][]*rewardv1.FunctionScores, passes)
	times := make([][]float64, len(fns))
	for p := range passes {
		scores[p] = make([]*rewardv1.FunctionScores, len(fns))
		for k, fn := range fns {
			fs, t, err := scoreAlone(ctx, in, fn.Name, rollouts, batch)
			if err != nil {
				return nil, nil, err
			}
			scores[p][k] = fs
			times[k] = append(times[k], t...)
		}
	}
	return scores, times, nil
}

// addFindings adds what the two passes of fn over the rows show: rows the
// passes disagree on (diff), errors, mostly NOT_APPLICABLE, a constant
// score, parameters naming fields no row has (present says whether one
// has), zero-variance groups, and the kind's own checks.
func (r *Report) addFindings(in Input, fn *scorers.Function, first, second *rewardv1.FunctionScores, diff []int, st FunctionStats, present func(field string) (bool, string)) {
	if len(diff) > 0 {
		i := diff[0]
		r.add(Failure, CodeDeterminism, fn.Name, "two passes over the same rows disagree on %d row(s); first: %s: pass 1 gave %s, pass 2 gave %s",
			len(diff), where(in, i), outcome(first, i), outcome(second, i))
	}
	if st.Error > 0 {
		r.add(Failure, CodeErrors, fn.Name, "ERROR on %d of %d rows (%s): %s",
			st.Error, st.Rows, percent(st.Error, st.Rows), errorReasons(in, first))
	}
	if float64(st.NotApplicable) > mostThreshold*float64(st.Rows) {
		i := firstWith(first, rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE)
		r.add(Warning, CodeNotApplicable, fn.Name, "NOT_APPLICABLE on %d of %d rows (%s), e.g. %s: %q; is a field missing or misnamed?",
			st.NotApplicable, st.Rows, percent(st.NotApplicable, st.Rows), where(in, i), reasonOf(first, i))
	}
	constant := st.OK >= 2 && *st.Min == *st.Max
	if constant {
		r.add(Warning, CodeConstant, fn.Name, "always %v on its %d OK rows: a reward that never varies gives no advantage to learn from",
			*st.Min, st.OK)
	}
	for _, f := range fieldParams(fn) {
		if ok, why := present(f.field); !ok {
			if why != "" {
				why = " (first row: " + why + ")"
			}
			r.add(Warning, CodeMissingField, fn.Name, "%s is %q, but no sample row has a field %q%s", f.param, f.field, f.field, why)
		}
	}
	// A constant function is zero-variance everywhere; the constant
	// warning already says so.
	if !constant && st.ZeroVarianceShare != nil && *st.ZeroVarianceShare > mostThreshold {
		r.add(Warning, CodeZeroVariance, fn.Name, "the same score for every rollout in %d of %d groups (%s): GRPO learns nothing from this function there",
			st.ZeroVarianceGroups, st.Groups, percent(st.ZeroVarianceGroups, st.Groups))
	}
	if kc := in.KindChecks[fn.Kind]; kc != nil {
		for _, f := range kc(fn, in.Rows, first) {
			f.Function = cmp.Or(f.Function, fn.Name)
			r.add(f.Severity, f.Code, f.Function, "%s", f.Message)
		}
	}
}

// scoreAlone scores rollouts with the one function name, batch rows per
// Score call, and returns its scores and the time per rollout of each call.
func scoreAlone(ctx context.Context, in Input, name string, rollouts []*rewardv1.Rollout, batch int) (*rewardv1.FunctionScores, []float64, error) {
	n := len(rollouts)
	out := &rewardv1.FunctionScores{Name: name, Values: make([]float64, 0, n), Status: make([]rewardv1.ScoreStatus, 0, n)}
	var times []float64
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		req := &rewardv1.ScoreRequest{Functions: []string{name}, Rollouts: rollouts[lo:hi]}
		start := time.Now()
		resp, err := in.Service.Score(ctx, req)
		elapsed := time.Since(start)
		if err != nil {
			return nil, nil, fmt.Errorf("score %s rows %d to %d with %q: %w", in.SamplesName, in.Rows[lo].Line, in.Rows[hi-1].Line, name, err)
		}
		fs := resp.GetFunctions()[0]
		out.Values = append(out.Values, fs.GetValues()...)
		out.Status = append(out.Status, fs.GetStatus()...)
		for i, reason := range fs.GetErrors() {
			if out.Errors == nil {
				out.Errors = make(map[int32]string)
			}
			out.Errors[int32(lo)+i] = reason
		}
		for i, reason := range fs.GetReasons() {
			if out.Reasons == nil {
				out.Reasons = make(map[int32]string)
			}
			out.Reasons[int32(lo)+i] = reason
		}
		times = append(times, elapsed.Seconds()/float64(hi-lo))
	}
	return out, times, nil
}

// groupIndex returns the rows of each group, a row's group being its group
// id, or its prompt when it has none, and a row with neither a group of its
// own (as server.Service aggregates).
func groupIndex(rollouts []*rewardv1.Rollout) [][]int {
	return scorers.GroupIndices(len(rollouts), func(i int) string { return cmp.Or(rollouts[i].GetGroup(), rollouts[i].GetPrompt()) })
}

// looseRows returns the rows with neither a group nor a prompt.
func looseRows(rollouts []*rewardv1.Rollout) []int {
	var loose []int
	for i, r := range rollouts {
		if r.GetGroup() == "" && r.GetPrompt() == "" {
			loose = append(loose, i)
		}
	}
	return loose
}

// stats computes one function's statistics from its first-pass scores.
func stats(fn *scorers.Function, fs *rewardv1.FunctionScores, groups [][]int, times []float64) FunctionStats {
	st := FunctionStats{Name: fn.Name, Kind: fn.Kind, Rows: len(fs.GetValues())}
	sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for i, status := range fs.GetStatus() {
		switch status {
		case rewardv1.ScoreStatus_SCORE_STATUS_OK:
			st.OK++
			v := fs.GetValues()[i]
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		case rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE:
			st.NotApplicable++
		default:
			st.Error++
		}
	}
	if st.Rows > 0 {
		st.OKShare = float64(st.OK) / float64(st.Rows)
		st.NotApplicableShare = float64(st.NotApplicable) / float64(st.Rows)
		st.ErrorShare = float64(st.Error) / float64(st.Rows)
	}
	if st.OK > 0 {
		mean := sum / float64(st.OK)
		st.Mean, st.Min, st.Max = &mean, &lo, &hi
	}

	for _, rows := range groups {
		var okVals []float64
		for _, i := range rows {
			if fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_OK {
				okVals = append(okVals, fs.GetValues()[i])
			}
		}
		if len(okVals) < 2 {
			continue
		}
		st.Groups++
		if slices.Min(okVals) == slices.Max(okVals) {
			st.ZeroVarianceGroups++
		}
	}
	if st.Groups > 0 {
		share := float64(st.ZeroVarianceGroups) / float64(st.Groups)
		st.ZeroVarianceShare = &share
	}

	sorted := slices.Sorted(slices.Values(times))
	st.P50Seconds, st.P99Seconds = percentile(sorted, 0.50), percentile(sorted, 0.99)
	return st
}

// percentile returns the nearest-rank p-th percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// mismatches returns the rows where a and b differ in status or value. Values
// must be equal exactly; NaN equals NaN (every non-OK value is NaN).
func mismatches(a, b *rewardv1.FunctionScores) []int {
	var diff []int
	for i := range a.GetValues() {
		if i >= len(b.GetValues()) || !sameScore(a, b, i) {
			diff = append(diff, i)
		}
	}
	return diff
}

func sameScore(a, b *rewardv1.FunctionScores, i int) bool {
	va, vb := a.GetValues()[i], b.GetValues()[i]
	return a.GetStatus()[i] == b.GetStatus()[i] && (va == vb || math.IsNaN(va) && math.IsNaN(vb))
}

// outcome describes row i's score for a message: "0.5" or "ERROR (reason)".
func outcome(fs *rewardv1.FunctionScores, i int) string {
	if fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_OK {
		return fmt.Sprint(fs.GetValues()[i])
	}
	return fmt.Sprintf("%s (%s)", statusName(fs.GetStatus()[i]), reasonOf(fs, i))
}

// reasonOf is row i's reason, from errors (ERROR) or reasons (the others).
func reasonOf(fs *rewardv1.FunctionScores, i int) string {
	if reason, ok := fs.GetErrors()[int32(i)]; ok {
		return reason
	}
	return fs.GetReasons()[int32(i)]
}

func statusName(s rewardv1.ScoreStatus) string {
	return strings.TrimPrefix(s.String(), "SCORE_STATUS_")
}

// where names sample row i for a message: its file and line.
func where(in Input, i int) string {
	return fmt.Sprintf("%s:%d", in.SamplesName, in.Rows[i].Line)
}

func firstWith(fs *rewardv1.FunctionScores, status rewardv1.ScoreStatus) int {
	return slices.Index(fs.GetStatus(), status)
}

// errorReasons summarizes the ERROR reasons: the most frequent first, each
// with its count and first row.
func errorReasons(in Input, fs *rewardv1.FunctionScores) string {
	type reason struct {
		text         string
		count, first int
	}
	byText := make(map[string]*reason)
	for i, status := range fs.GetStatus() {
		if status != rewardv1.ScoreStatus_SCORE_STATUS_ERROR {
			continue
		}
		text := fs.GetErrors()[int32(i)]
		if byText[text] == nil {
			byText[text] = &reason{text: text, first: i}
		}
		byText[text].count++
	}
	reasons := slices.SortedFunc(maps.Values(byText), func(a, b *reason) int {
		return cmp.Or(b.count-a.count, a.first-b.first)
	})
	var parts []string
	for _, r := range reasons[:min(len(reasons), maxReasons)] {
		parts = append(parts, fmt.Sprintf("%q on %d row(s), first %s", r.text, r.count, where(in, r.first)))
	}
	if len(reasons) > maxReasons {
		parts = append(parts, fmt.Sprintf("and %d other reason(s)", len(reasons)-maxReasons))
	}
	return strings.Join(parts, "; ")
}

// fieldParam is a parameter naming the row field a function reads.
type fieldParam struct{ param, field string }

// fieldParams returns the parameters of fn whose key ends in "_field" and
// that name a field (reference_field, pattern_field, tests_field, …), read
// from the function's canonical parameters, in key order. A parameter left
// to its kind's default is not in the canonical form and is not checked by
// name; a field that is missing then shows as NOT_APPLICABLE rows.
func fieldParams(fn *scorers.Function) []fieldParam {
	var params map[string]any
	if err := yaml.Unmarshal(fn.Canonical, &params); err != nil {
		return nil
	}
	var out []fieldParam
	for _, key := range slices.Sorted(maps.Keys(params)) {
		if v, ok := params[key].(string); ok && v != "" && strings.HasSuffix(key, "_field") {
			out = append(out, fieldParam{param: key, field: v})
		}
	}
	return out
}

// fieldPresent reports whether at least one rollout has the field name (a
// path such as verification_info.answer, as scorers read it) with a
// non-null value; when none has, and name is a path, it says which part the
// first rollout lacks.
func fieldPresent(rollouts []*rewardv1.Rollout, name string) (bool, string) {
	why := ""
	for i, r := range rollouts {
		_, err := scorers.LookupField(r.GetFields().GetFields(), name)
		if err == nil {
			return true, ""
		}
		if i == 0 && strings.Contains(name, ".") {
			why = err.Error()
		}
	}
	return false, why
}

// percent formats n/d as a percentage that is never rounded to 0% or 100%
// when it is not exactly that.
func percent(n, d int) string {
	switch {
	case d == 0:
		return "–"
	case n == 0:
		return "0%"
	case n == d:
		return "100%"
	}
	p := 100 * float64(n) / float64(d)
	return fmt.Sprintf("%.1f%%", min(max(p, 0.1), 99.9))
}
