package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/server/config"
)

// registerCompat serves the HTTP bodies other trainers already speak, mapped
// onto the same Service: OpenRLHF's remote reward (POST /get_reward), a
// NeMo Gym resources server (POST /verify, POST /seed_session, POST
// /aggregate_metrics, GET /reverify_mode: nemogym.go), and
// SandboxFusion's POST /run_code (runcode.go), which runs a program in the
// sandbox.
func (c *jsonAPI) registerCompat(mux *routeMux) {
	mux.HandleFunc("POST /get_reward", c.queuedEndpoint("http_get_reward", c.getReward))
	mux.HandleFunc("POST /verify", c.queuedEndpoint("http_verify", c.verify))
	mux.HandleFunc("POST /run_code", retryableOverload(c.endpoint("http_run_code", c.runCode)))
	mux.HandleFunc("POST /seed_session", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{})
	})
	mux.HandleFunc("POST /aggregate_metrics", c.endpoint("http_aggregate_metrics", c.aggregateMetrics))
	mux.HandleFunc("GET /reverify_mode", reverifyMode)
}

// stringOrList is a JSON string or list of strings; single says which.
type stringOrList struct {
	vals   []string
	single bool
}

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &s.vals); err == nil {
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return errors.New("want a string or a list of strings")
	}
	s.vals, s.single = []string{one}, true
	return nil
}

// getReward answers OpenRLHF's remote reward request, batch or single
// sample: {"query": [...], "prompts": [...], "labels": [...]} where a query
// is the prompt followed by the response. The label goes into the row field
// named by ?label_field= (default "answer"). The answer is {"rewards",
// "scores", "extra_logs": {function: [...]}}: rewards and scores are the
// weighted sum of the functions (TRL's nansum); extra_logs holds each
// function's scores, null where it gave none, and "errors" says why.
func (c *jsonAPI) getReward(w http.ResponseWriter, r *http.Request, body []byte) error {
	in, err := decodeRewardRequest(body)
	if err != nil {
		return err
	}
	labelField := r.URL.Query().Get("label_field")
	if labelField == "" {
		labelField = "answer"
	}
	req, err := in.scoreRequest(labelField)
	if err != nil {
		return err
	}
	resp, err := c.svc.Score(r.Context(), req)
	if err != nil {
		return err
	}
	fill, err := c.unscorableReward(r, c.svc.cfg.Compat.GetReward)
	if err != nil {
		return err
	}
	rewards, unscorable := c.weightedSum(resp, fill)
	writeJSON(w, rewardAnswer(resp, rewards, unscorable, in.Query.single))
	return nil
}

// rewardRequest is OpenRLHF's remote reward request.
type rewardRequest struct{ Query, Prompts, Labels *stringOrList }

// decodeRewardRequest decodes and checks a remote reward request: a query,
// and prompts and labels, if any, one per query.
func decodeRewardRequest(body []byte) (*rewardRequest, error) {
	var raw map[string]json.RawMessage
	if err := decodeJSON(body, &raw); err != nil {
		return nil, err
	}
	in := new(rewardRequest)
	for key, dst := range map[string]**stringOrList{"query": &in.Query, "prompts": &in.Prompts, "labels": &in.Labels} {
		v, ok := raw[key]
		if !ok || string(v) == "null" {
			continue
		}
		*dst = new(stringOrList)
		if err := json.Unmarshal(v, *dst); err != nil {
			return nil, invalid("request body: %q: %v", key, err)
		}
	}
	if in.Query == nil {
		return nil, invalid(`request body: "query" is missing`)
	}
	n := len(in.Query.vals)
	if in.Prompts != nil && len(in.Prompts.vals) != n {
		return nil, invalid(`request body: "prompts" has %d entries, "query" has %d`, len(in.Prompts.vals), n)
	}
	if in.Labels != nil && len(in.Labels.vals) != n {
		return nil, invalid(`request body: "labels" has %d entries, "query" has %d`, len(in.Labels.vals), n)
	}
	return in, nil
}

// scoreRequest is in as rollouts: a query's response is the query minus
// its prompt, and its label goes into the row field labelField.
func (in *rewardRequest) scoreRequest(labelField string) (*rewardv1.ScoreRequest, error) {
	req := &rewardv1.ScoreRequest{Rollouts: make([]*rewardv1.Rollout, len(in.Query.vals))}
	for i, q := range in.Query.vals {
		ro := &rewardv1.Rollout{Completion: q}
		if in.Prompts != nil {
			p := in.Prompts.vals[i]
			if !strings.HasPrefix(q, p) {
				return nil, invalid(`request body: query[%d] does not start with prompts[%d]: the response is the query minus its prompt`, i, i)
			}
			ro.Prompt, ro.Completion = p, q[len(p):]
		}
		if in.Labels != nil {
			ro.Fields = &structpb.Struct{Fields: map[string]*structpb.Value{labelField: structpb.NewStringValue(in.Labels.vals[i])}}
		}
		req.Rollouts[i] = ro
	}
	return req, nil
}

// rewardAnswer is the answer to a remote reward request: rewards and scores
// both the weighted sums, each function's scores and outcomes, and the
// errors, reasons and unscorable rows where there are any; single for a
// request of one sample, answered with values rather than lists.
func rewardAnswer(resp *rewardv1.ScoreResponse, rewards []*float64, unscorable []int, single bool) map[string]any {
	logs := make(map[string]any, len(resp.GetFunctions()))
	outcomes := make(map[string]any, len(resp.GetFunctions()))
	errs := make(map[string]map[int32]string)
	reasons := make(map[string]map[int32]string)
	for _, fs := range resp.GetFunctions() {
		logs[fs.GetName()] = nullable(fs.GetValues())
		o, e, why := explain(fs)
		outcomes[fs.GetName()] = o
		if len(e) > 0 {
			errs[fs.GetName()] = e
		}
		if len(why) > 0 {
			reasons[fs.GetName()] = why
		}
	}
	out := map[string]any{"rewards": rewards, "scores": rewards, "extra_logs": logs, "outcomes": outcomes}
	if single {
		for k, v := range logs {
			logs[k] = v.([]*float64)[0]
			outcomes[k] = outcomes[k].([]string)[0]
		}
		out["rewards"], out["scores"] = rewards[0], rewards[0]
	}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	if len(reasons) > 0 {
		out["reasons"] = reasons
	}
	if len(unscorable) > 0 {
		out["unscorable"] = unscorable
	}
	return out
}

// verify answers a NeMo Gym resources server's verify request: the body
// (responses_create_params, the model's response in the Responses API
// shape, and the task's own fields) comes back with "reward", the weighted
// sum of the functions, "reward_components" and each component at the top
// level too. Task fields become row fields (e.g. expected_answer).
func (c *jsonAPI) verify(w http.ResponseWriter, r *http.Request, body []byte) error {
	var in map[string]any
	if err := decodeJSON(body, &in); err != nil {
		return err
	}
	completion, err := responseText(in["response"], c.svc.cfg.Compat.Verify.IncludeReasoning)
	if err != nil {
		return invalid("request body: response: %v", err)
	}
	prompt, err := inputText(in["responses_create_params"])
	if err != nil {
		return invalid("request body: responses_create_params: %v", err)
	}
	fields := make(map[string]*structpb.Value)
	for k, v := range in {
		if k == "response" || k == "responses_create_params" {
			continue
		}
		if fields[k], err = structpb.NewValue(v); err != nil {
			return invalid("request body: %s: %v", k, err)
		}
	}
	resp, err := c.svc.Score(r.Context(), &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{
		{Prompt: prompt, Completion: completion, Fields: &structpb.Struct{Fields: fields}},
	}})
	if err != nil {
		return err
	}
	components := make(map[string]*float64, len(resp.GetFunctions()))
	for _, fs := range resp.GetFunctions() {
		v := nullable(fs.GetValues())[0]
		components[fs.GetName()] = v
		in[fs.GetName()] = v
		outcomes, errs, reasons := explain(fs)
		in[fs.GetName()+"_outcome"] = outcomes[0]
		if reason, ok := errs[0]; ok {
			in[fs.GetName()+"_error"] = reason
		}
		if reason, ok := reasons[0]; ok {
			in[fs.GetName()+"_reason"] = reason
		}
	}
	fill, err := c.unscorableReward(r, c.svc.cfg.Compat.Verify)
	if err != nil {
		return err
	}
	rewards, unscorable := c.weightedSum(resp, fill)
	in["reward"] = rewards[0]
	in["reward_components"] = components
	if len(unscorable) > 0 {
		in["unscorable"] = true
	}
	writeJSON(w, in)
	return nil
}

// unscorableReward is the reward of a rollout no function scored on an
// endpoint configured as e: its unscorable_reward (default 0.0), unless the
// request asks ?unscorable=null (nil: JSON null) or ?unscorable=zero.
func (c *jsonAPI) unscorableReward(r *http.Request, e config.CompatEndpoint) (*float64, error) {
	switch q := r.URL.Query().Get("unscorable"); q {
	case "":
		v := e.Unscorable()
		return &v, nil
	case "null":
		return nil, nil
	case "zero":
		return new(float64), nil
	default:
		return nil, invalid(`query: unscorable=%q: want "null" or "zero" (or leave it out for the config's unscorable_reward)`, q)
	}
}

// weightedSum is each rollout's weighted sum of the functions' OK scores,
// with the config's weights (TRL's nansum over the functions that scored
// it), and the indices of the rollouts no function scored (all NOT_APPLICABLE
// or ERROR). Their reward is fill (nil: null), the number a trainer that
// needs one gets; the indices say which they are, the functions' outcomes
// why, and they are counted in rewardd_unscorable_rollouts_total.
func (c *jsonAPI) weightedSum(resp *rewardv1.ScoreResponse, fill *float64) ([]*float64, []int) {
	var sums []float64
	var scored []bool
	for k, fs := range resp.GetFunctions() {
		if k == 0 {
			sums, scored = make([]float64, len(fs.GetValues())), make([]bool, len(fs.GetValues()))
		}
		w := c.svc.weight(fs.GetName())
		for i, v := range fs.GetValues() {
			if !math.IsNaN(v) {
				sums[i] += w * v
				scored[i] = true
			}
		}
	}
	out := make([]*float64, len(sums))
	var unscorable []int
	for i := range sums {
		if !scored[i] {
			unscorable = append(unscorable, i)
			out[i] = fill
			continue
		}
		out[i] = &sums[i]
	}
	c.svc.countUnscorable(len(unscorable))
	return out, unscorable
}

// responseText is the completion of a Responses API response: {"output":
// [{"type": "message", "role": "assistant", "content": [{"type":
// "output_text", "text": "…"}]}]}. It is the text of the last assistant
// message, "" when there is none (a response of reasoning or tool calls
// only, which NeMo Gym still needs a reward for); with reasoning, the text
// of the reasoning items (each one's summary, or its content when it has no
// summary) comes first, a newline after each.
func responseText(v any, reasoning bool) (string, error) {
	resp, ok := v.(map[string]any)
	if !ok {
		return "", errors.New(`want an object with "output"`)
	}
	output, ok := resp["output"].([]any)
	if !ok {
		return "", errors.New(`"output" is missing or not a list`)
	}
	var b strings.Builder
	if reasoning {
		for _, o := range output {
			item, _ := o.(map[string]any)
			if item["type"] != "reasoning" {
				continue
			}
			parts, _ := item["summary"].([]any)
			if len(parts) == 0 {
				parts, _ = item["content"].([]any)
			}
			for _, p := range parts {
				part, _ := p.(map[string]any)
				if text, ok := part["text"].(string); ok {
					b.WriteString(text)
					b.WriteByte('\n')
				}
			}
		}
	}
	for i := len(output) - 1; i >= 0; i-- {
		item, _ := output[i].(map[string]any)
		if item["type"] != "message" || item["role"] != nil && item["role"] != "assistant" {
			continue
		}
		parts, _ := item["content"].([]any)
		for _, p := range parts {
			part, _ := p.(map[string]any)
			if text, ok := part["text"].(string); ok && (part["type"] == "output_text" || part["type"] == nil) {
				b.WriteString(text)
			}
		}
		break
	}
	return b.String(), nil
}

// inputText renders responses_create_params.input (a string or a list of
// messages whose content is a string or a list of text parts) as one prompt.
func inputText(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	params, ok := v.(map[string]any)
	if !ok {
		return "", errors.New("want an object")
	}
	switch in := params["input"].(type) {
	case nil:
		return "", nil
	case string:
		return in, nil
	case []any:
		var lines []string
		for _, m := range in {
			msg, _ := m.(map[string]any)
			switch content := msg["content"].(type) {
			case string:
				lines = append(lines, content)
			case []any:
				for _, p := range content {
					if part, _ := p.(map[string]any); part != nil {
						if text, ok := part["text"].(string); ok {
							lines = append(lines, text)
						}
					}
				}
			}
		}
		return strings.Join(lines, "\n"), nil
	default:
		return "", fmt.Errorf("input: want a string or a list of messages")
	}
}

// decodeJSON decodes a request body that must be a JSON object.
func decodeJSON(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return invalid("request body: want a JSON object: %v", err)
	}
	return nil
}

// explain names the outcome of each of fs's entries ("ok", "not_applicable",
// "error") and splits its reasons into those of the entries it did not
// score (errs: ERROR and NOT_APPLICABLE, whose values are null) and those
// of its OK scores (reasons): the bodies of other trainers say why a value
// is null apart from why a score is what it is.
func explain(fs *rewardv1.FunctionScores) (outcomes []string, errs, reasons map[int32]string) {
	outcomes = make([]string, len(fs.GetStatus()))
	for i, st := range fs.GetStatus() {
		outcomes[i] = scorers.Outcome(st).String()
	}
	add := func(m *map[int32]string, i int32, reason string) {
		if *m == nil {
			*m = make(map[int32]string)
		}
		(*m)[i] = reason
	}
	for i, reason := range fs.GetErrors() {
		add(&errs, i, reason)
	}
	for i, reason := range fs.GetReasons() {
		if fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_OK {
			add(&reasons, i, reason)
		} else {
			add(&errs, i, reason)
		}
	}
	return outcomes, errs, reasons
}

// nullable turns NaN into JSON null.
func nullable(vals []float64) []*float64 {
	out := make([]*float64, len(vals))
	for i := range vals {
		if !math.IsNaN(vals[i]) {
			out[i] = &vals[i]
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		writeStatus(w, status.New(codes.Internal, "internal error"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}
