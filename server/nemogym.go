package server

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
)

// NeMo Gym's resources-server endpoints beside /verify
// (nemo_gym/base_resources_server.py, SimpleResourcesServer): its rollout
// collection posts the verify responses of a run to /aggregate_metrics and
// logs what comes back; its re-verification asks GET /reverify_mode first.

// Keys NeMo Gym puts in each verify response (nemo_gym/global_config.py).
const (
	ngTaskIndex    = "_ng_task_index"
	ngRolloutIndex = "_ng_rollout_index"
)

// reverifyMode answers GET /reverify_mode: "stateless", as /verify scores a
// body from the body alone, the same every time.
func reverifyMode(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, "stateless")
}

// aggregateMetrics answers POST /aggregate_metrics, {"verify_responses":
// [...]}, as NeMo Gym's compute_aggregate_metrics does with its default
// hooks: for each numeric field of the responses (bools as 0 and 1, the
// response's usage counts too) its mean, max, min, median and sample std,
// "mean/reward" and so on, per task (_ng_task_index) in
// group_level_metrics and over all in agent_metrics; key_metrics are the
// mean/ entries of agent_metrics. A field missing or null in a response is
// left out of its statistics; a std of one value is left out, unless no
// field has one (every group of one rollout), when it is 0, as pandas gives
// it there. W&B histograms are not computed: NeMo Gym drops them from this
// answer.
func (c *jsonAPI) aggregateMetrics(w http.ResponseWriter, _ *http.Request, body []byte) error {
	var in struct {
		VerifyResponses []map[string]any `json:"verify_responses"`
	}
	if err := decodeJSON(body, &in); err != nil {
		return err
	}
	if in.VerifyResponses == nil {
		return invalid(`request body: "verify_responses" is missing or not a list`)
	}
	out := map[string]any{"group_level_metrics": []any{}, "agent_metrics": map[string]any{}, "key_metrics": map[string]any{}}
	if len(in.VerifyResponses) == 0 {
		writeJSON(w, out)
		return nil
	}
	type rollout struct {
		task, index float64
		values      map[string]float64
	}
	rows := make([]rollout, len(in.VerifyResponses))
	for i, vr := range in.VerifyResponses {
		r := rollout{values: numericFields(vr)}
		if resp, ok := vr["response"].(map[string]any); ok {
			if usage, ok := resp["usage"].(map[string]any); ok {
				for k, v := range numericFields(usage) {
					r.values[k] = v
				}
			}
		}
		r.task, r.index = r.values[ngTaskIndex], r.values[ngRolloutIndex]
		delete(r.values, ngTaskIndex)
		delete(r.values, ngRolloutIndex)
		rows[i] = r
	}
	slices.SortStableFunc(rows, func(a, b rollout) int { return cmp.Or(cmp.Compare(a.task, b.task), cmp.Compare(a.index, b.index)) })
	stats := func(group []rollout) map[string]any {
		cols := map[string][]float64{}
		for _, r := range group {
			for k, v := range r.values {
				cols[k] = append(cols[k], v)
			}
		}
		return describe(cols, len(group))
	}
	var groups []any
	for start := 0; start < len(rows); {
		end := start
		var infos []any
		for end < len(rows) && rows[end].task == rows[start].task {
			infos = append(infos, map[string]any{
				"rollout_id": fmt.Sprintf("%v:%v", rows[end].task, rows[end].index),
				ngTaskIndex:  rows[end].task, ngRolloutIndex: rows[end].index,
			})
			end++
		}
		g := stats(rows[start:end])
		g[ngTaskIndex] = rows[start].task
		g["num_rollouts"], g["expected_num_rollouts"], g["missing_num_rollouts"] = end-start, end-start, 0
		g["reward_profile_completion_pct"] = 100.0
		g["rollout_infos"] = infos
		groups = append(groups, g)
		start = end
	}
	agent := stats(rows)
	key := map[string]any{}
	for k, v := range agent {
		if strings.HasPrefix(k, "mean/") {
			key[k] = v
		}
	}
	out["group_level_metrics"], out["agent_metrics"], out["key_metrics"] = groups, agent, key
	writeJSON(w, out)
	return nil
}

// numericFields are the fields of m that are numbers or bools (as 0, 1).
func numericFields(m map[string]any) map[string]float64 {
	out := make(map[string]float64)
	for k, v := range m {
		switch v := v.(type) {
		case float64:
			out[k] = v
		case bool:
			out[k] = 0
			if v {
				out[k] = 1
			}
		}
	}
	return out
}

// describe is pandas' mean, max, min, median and std (ddof 1) of each
// column of a group of n rows (a column holds the rows that have it).
func describe(cols map[string][]float64, n int) map[string]any {
	out := make(map[string]any)
	anyStd := false
	for _, vals := range cols {
		if len(vals) >= 2 {
			anyStd = true
		}
	}
	for name, vals := range cols {
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		sum := 0.0
		for _, v := range vals {
			sum += v
		}
		mean := sum / float64(len(vals))
		median := sorted[len(sorted)/2]
		if len(sorted)%2 == 0 {
			median = (sorted[len(sorted)/2-1] + median) / 2
		}
		out["mean/"+name], out["max/"+name], out["min/"+name], out["median/"+name] = mean, sorted[len(sorted)-1], sorted[0], median
		switch {
		case len(vals) >= 2:
			ss := 0.0
			for _, v := range vals {
				ss += (v - mean) * (v - mean)
			}
			out["std/"+name] = math.Sqrt(ss / float64(len(vals)-1))
		case !anyStd && len(vals) == n:
			out["std/"+name] = 0.0
		}
	}
	return out
}
