// Package server is rewardd's service: request validation, the engine that
// fans rollouts × functions out over one bounded worker pool, aggregation,
// and the gRPC and HTTP transports in front of them.
package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/rewardd/rewardd/server/aggregate"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server/config"
)

// Service answers Score and ListFunctions independently of any transport:
// the gRPC server, the HTTP endpoints and `rewardd score` all call it, so a
// batch scores the same whichever way it arrives. Its errors are plain Go
// errors (RequestError, ErrOverloaded, context errors); transports map them
// with toStatus.
type Service struct {
	cfg    *config.Config
	reg    scorers.Registry
	engine *engine
	adm    *admission
	m      *serviceMetrics
	log    *zap.Logger
	// served indexes cfg.Functions by name.
	served map[string]*scorers.Function
	// memory is where every call, over any transport, takes the memory it
	// scores in (callMemory).
	memory *memoryPool
}

// newService returns a service for cfg. reg compiles the functions requests
// define inline; eng is shared by every transport of the process.
func newService(cfg *config.Config, reg scorers.Registry, eng *engine, m *serviceMetrics, log *zap.Logger) *Service {
	served := make(map[string]*scorers.Function, len(cfg.Functions))
	for _, fn := range cfg.Functions {
		served[fn.Name] = fn
	}
	adm := newAdmission(admissionLimits{maxInflight: cfg.Limits.MaxInflightRequests, capacity: cfg.Limits.RequestMemory(), message: int64(cfg.Limits.MaxMessageBytes)}, m)
	return &Service{cfg: cfg, reg: reg, engine: eng, adm: adm, m: m, log: log, served: served, memory: new(memoryPool)}
}

// Config returns the config the service serves.
func (s *Service) Config() *config.Config { return s.cfg }

// limits are the config's limits, which the transports enforce too.
func (s *Service) limits() config.Limits { return s.cfg.Limits }

// ticket admits a request that a transport is about to read (see ticket).
func (s *Service) ticket() *ticket { return s.adm.ticket() }

// overloaded reports, and counts as a refusal, that every admission slot
// is taken: a transport may refuse a request on that before reading it.
func (s *Service) overloaded() bool {
	if !s.adm.full() {
		return false
	}
	s.m.poolRejected.Inc()
	return true
}

// weight is the config's weight of a served function (0 for another).
func (s *Service) weight(name string) float64 { return s.cfg.Weights[name] }

// countUnscorable counts n rollouts aggregated with no function's score.
func (s *Service) countUnscorable(n int) { s.m.unscorable.Add(float64(n)) }

// Score scores one batch; one that runs past limits.request_timeout is
// answered with the scores decided by then (see score). The response may
// share strings with req (its batch_id, and what a scorer's reason quotes
// of a rollout); the rest of it is the caller's.
func (s *Service) Score(ctx context.Context, req *rewardv1.ScoreRequest) (*rewardv1.ScoreResponse, error) {
	cm := s.memory.get()
	defer cm.release()
	resp, err := s.score(ctx, req, cm, nil)
	if err != nil {
		return nil, err
	}
	// The columns are cm's, which the next call writes over.
	for _, fs := range resp.Functions {
		fs.Values, fs.Status = slices.Clone(fs.Values), slices.Clone(fs.Status)
	}
	return resp, nil
}

// score is Score in cm: the rollouts as the scorers see them, their
// results and the response's value and status columns are cm's, and live
// as long as cm is not released. The request's worker time is counted in
// account, when its decoding already was (grpcService.received); nil:
// from now.
//
// A request still scoring when limits.request_timeout runs out is
// answered with what it has: the scores decided by then stand, the
// rollouts not yet scored get an Error naming the limit, and a warning
// says how many. A ctx that ends first (the client cancelled, or its own
// deadline passed) ends the call with ctx's error: nobody waits for an
// answer.
func (s *Service) score(ctx context.Context, req *rewardv1.ScoreRequest, cm *callMemory, account *share) (*rewardv1.ScoreResponse, error) {
	limit := s.cfg.Limits.RequestTimeout
	ctx, cancel := context.WithTimeoutCause(scorers.WithMemo(ctx), limit, &requestTimeoutError{limit: limit})
	defer cancel()

	if err := s.validate(req); err != nil {
		return nil, err
	}
	tasks, err := s.tasks(req)
	if err != nil {
		return nil, err
	}
	// A transport admits a request before reading it (see ticket); a call
	// from within the process is admitted here.
	t := ticketFrom(ctx)
	if t == nil {
		t = s.adm.ticket()
		defer t.release()
	}
	n := len(req.GetRollouts())
	if err := t.takeSlot(); err != nil {
		return nil, err
	}
	if err := t.reserve(scoringCost(n, len(tasks)) + expansionCost(req)); err != nil {
		return nil, err
	}
	if err := expand(req); err != nil {
		return nil, err
	}
	ptrs, rejected := s.rollouts(req, cm)
	results := cm.resultColumns(len(tasks), len(ptrs))
	if account == nil {
		account = s.engine.join(s.cfg.Limits.MaxRequestWork)
	}
	err = s.engine.Score(ctx, account, tasks, ptrs, results)
	// The work is done: the slot goes back before the answer is written, so
	// that a client sending its next request the moment it has this answer
	// finds it free. The memory stays reserved until the answer is written.
	t.giveSlot()
	var cut *cutShortError
	var timedOut *requestTimeoutError
	switch {
	case errors.As(err, &cut) && errors.As(context.Cause(ctx), &timedOut):
		// The server's own limit: answered with what was scored.
	case err != nil:
		return nil, err
	}
	if rejected != nil {
		results = scatter(results, n, rejected)
	}

	resp := &rewardv1.ScoreResponse{
		BatchId:           req.GetBatchId(),
		ConfigFingerprint: s.cfg.Fingerprint,
		Functions:         make([]*rewardv1.FunctionScores, len(tasks)),
	}
	values, status := cm.responseColumns(len(tasks) * n)
	for k, t := range tasks {
		resp.Functions[k] = functionScores(t.Function.Name, results[k], values[k*n:(k+1)*n:(k+1)*n], status[k*n:(k+1)*n:(k+1)*n], !req.GetOmitOkReasons(), req.GetReasonsAsLists())
	}
	if err := s.aggregate(req, tasks, resp); err != nil {
		return nil, err
	}
	if cut != nil && cut.rollouts > 0 {
		s.m.requestTimeouts.Inc()
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("%v: %d of %d rollouts not scored by every function (ERROR, \"not scored: …\"); the other scores stand. Raise limits.request_timeout, or send smaller batches", timedOut, cut.rollouts, n))
	}
	return resp, nil
}

// requestTimeoutError is the cause of a request's context when
// limits.request_timeout ends it.
type requestTimeoutError struct{ limit time.Duration }

func (e *requestTimeoutError) Error() string {
	return fmt.Sprintf("the request ran past limits.request_timeout (%v)", e.limit)
}

// rollouts returns the request's rollouts as the scorers see them, but for
// those over a per-rollout limit, which are rejected with their reason (by
// index in the request): they get an Error in every function and are not
// scored; the rest of the batch is. The rollouts are cm's.
func (s *Service) rollouts(req *rewardv1.ScoreRequest, cm *callMemory) ([]*scorers.Rollout, map[int]string) {
	var rejected map[int]string
	rollouts, ptrs := cm.scoring(len(req.GetRollouts()))
	for i, r := range req.GetRollouts() {
		if reason := s.rolloutProblem(r); reason != "" {
			if rejected == nil {
				rejected = make(map[int]string)
			}
			rejected[i] = reason
			continue
		}
		rollouts = append(rollouts, scorers.Rollout{
			ID: r.GetId(), Group: r.GetGroup(), Prompt: r.GetPrompt(), Completion: r.GetCompletion(),
			Fields: r.GetFields().GetFields(),
		})
	}
	for i := range rollouts {
		ptrs = append(ptrs, &rollouts[i])
	}
	return ptrs, rejected
}

// validate checks the request against the limits; the error names the
// rollout and the limit at fault.
func (s *Service) validate(req *rewardv1.ScoreRequest) error {
	lim := s.cfg.Limits
	if n := len(req.GetRollouts()); n > lim.MaxRollouts {
		return invalid("batch has %d rollouts; the limit is %d (limits.max_rollouts): split it", n, lim.MaxRollouts)
	}
	if n := len(req.GetInline()); n > lim.MaxInlineFunctions {
		return invalid("request defines %d inline functions; the limit is %d (limits.max_inline_functions)", n, lim.MaxInlineFunctions)
	}
	return nil
}

// expand rewrites a request in the prompt-once form (prompts, prompt_fields,
// rollout_fields, Rollout.prompt_index) as the rollouts' own prompts and
// fields, so that what follows reads every request alike. The rollouts of a
// prompt share one fields Struct unless they have fields of their own (a
// rollout column, Rollout.fields), which are merged into a Struct per
// rollout. A null column value is a field the row does not have. Errors
// name the rollout, column or field at fault.
func expand(req *rewardv1.ScoreRequest) error {
	prompts, pcols, rcols := req.GetPrompts(), req.GetPromptFields(), req.GetRolloutFields()
	if len(prompts) == 0 && len(pcols) == 0 && len(rcols) == 0 {
		return nil
	}
	if len(pcols) > 0 && len(prompts) == 0 {
		return invalid("prompt_fields has %d columns but the request has no prompts (send them in prompts, and name each rollout's by prompt_index)", len(pcols))
	}
	n := len(req.GetRollouts())
	seen := make(map[string]string, len(pcols)+len(rcols))
	for _, cols := range []struct {
		what string
		cols []*rewardv1.FieldColumn
		n    int
		of   string
	}{{"prompt_fields", pcols, len(prompts), "prompts"}, {"rollout_fields", rcols, n, "rollouts"}} {
		for i, c := range cols.cols {
			if len(c.GetValues()) != cols.n {
				return invalid("%s[%d] %q has %d values for %d %s", cols.what, i, c.GetName(), len(c.GetValues()), cols.n, cols.of)
			}
			if where, dup := seen[c.GetName()]; dup {
				return invalid("%s[%d]: field %q is already a column of %s", cols.what, i, c.GetName(), where)
			}
			seen[c.GetName()] = cols.what
		}
	}
	var shared []*structpb.Struct // per prompt
	if len(pcols) > 0 {
		shared = make([]*structpb.Struct, len(prompts))
		for p := range prompts {
			m := make(map[string]*structpb.Value, len(pcols))
			for _, c := range pcols {
				if v := c.Values[p]; !isNull(v) {
					m[c.Name] = v
				}
			}
			shared[p] = &structpb.Struct{Fields: m}
		}
	}
	for i, r := range req.GetRollouts() {
		var base *structpb.Struct
		if len(prompts) > 0 {
			p := int(r.GetPromptIndex())
			switch {
			case r.GetPrompt() != "":
				return invalid("rollout %d has a prompt of its own and the request has prompts: name its prompt by prompt_index", i)
			case p >= len(prompts):
				return invalid("rollout %d: prompt_index %d is out of range (%d prompts)", i, p, len(prompts))
			}
			r.Prompt = prompts[p]
			if shared != nil {
				base = shared[p]
			}
		}
		own := r.GetFields().GetFields()
		if len(rcols) == 0 && (len(own) == 0 || base == nil) {
			if len(own) == 0 && base != nil {
				r.Fields = base
			}
			continue
		}
		m := make(map[string]*structpb.Value, len(base.GetFields())+len(rcols)+len(own))
		maps.Copy(m, base.GetFields())
		for _, c := range rcols {
			if v := c.Values[i]; !isNull(v) {
				m[c.Name] = v
			}
		}
		for k, v := range own {
			if _, dup := seen[k]; dup {
				return invalid("rollout %d: field %q is in its fields and in %s", i, k, seen[k])
			}
			m[k] = v
		}
		r.Fields = &structpb.Struct{Fields: m}
	}
	req.Prompts, req.PromptFields, req.RolloutFields = nil, nil, nil
	return nil
}

// isNull reports whether v is no value (null, or unset).
func isNull(v *structpb.Value) bool {
	_, null := v.GetKind().(*structpb.Value_NullValue)
	return null || v.GetKind() == nil
}

// rolloutProblem says why a rollout is over a per-rollout limit, or "" when
// it is within them. Such a rollout gets an Error in every function instead of
// failing its whole batch.
func (s *Service) rolloutProblem(r *rewardv1.Rollout) string {
	lim := s.cfg.Limits
	if n := len(r.GetCompletion()); n > lim.MaxCompletionBytes {
		return fmt.Sprintf("completion is %d bytes; the limit is %d (limits.max_completion_bytes)", n, lim.MaxCompletionBytes)
	}
	if n := len(r.GetPrompt()); n > lim.MaxPromptBytes {
		return fmt.Sprintf("prompt is %d bytes; the limit is %d (limits.max_prompt_bytes)", n, lim.MaxPromptBytes)
	}
	return ""
}

// scatter spreads results of the accepted rollouts back over all n rollouts,
// the rejected ones getting an Error with their reason.
func scatter(results [][]scorers.Result, n int, rejected map[int]string) [][]scorers.Result {
	out := make([][]scorers.Result, len(results))
	for k, col := range results {
		full := make([]scorers.Result, n)
		j := 0
		for i := range full {
			if reason, bad := rejected[i]; bad {
				full[i] = scorers.Errorf("%s", reason)
				continue
			}
			full[i] = col[j]
			j++
		}
		out[k] = full
	}
	return out
}

// tasks resolves the functions a request asks for: the named served ones
// (all of them when none are named and none are inline), then the inline ones.
func (s *Service) tasks(req *rewardv1.ScoreRequest) ([]task, error) {
	names := req.GetFunctions()
	if len(names) == 0 && len(req.GetInline()) == 0 {
		tasks := make([]task, len(s.cfg.Functions))
		for i, fn := range s.cfg.Functions {
			tasks[i] = task{Function: fn, Label: fn.Name}
		}
		return tasks, nil
	}
	tasks := make([]task, 0, len(names)+len(req.GetInline()))
	seen := make(map[string]bool, cap(tasks))
	for _, name := range names {
		fn, ok := s.served[name]
		if !ok {
			return nil, notFound("function %q is not served (served: %s)", name, strings.Join(s.cfg.Names(), ", "))
		}
		if seen[name] {
			return nil, invalid("function %q is asked for twice", name)
		}
		seen[name] = true
		tasks = append(tasks, task{Function: fn, Label: fn.Name})
	}
	for i, spec := range req.GetInline() {
		fn, err := s.compileInline(spec)
		if err != nil {
			return nil, invalid("inline[%d] %q: %v", i, spec.GetName(), err)
		}
		if seen[fn.Name] {
			return nil, invalid("inline[%d] %q: the request already asks for a function of that name", i, fn.Name)
		}
		seen[fn.Name] = true
		tasks = append(tasks, task{Function: fn, Label: inlineLabel})
	}
	return tasks, nil
}

// compileInline compiles a request-defined function with the same decoder as
// the config file (the params Struct is turned into JSON, which is YAML),
// when the config allows its kind and its limits (inline).
func (s *Service) compileInline(spec *rewardv1.FunctionSpec) (*scorers.Function, error) {
	in := s.cfg.Inline
	if !in.Allows(spec.GetKind()) {
		return nil, fmt.Errorf("kind %q may not be defined in a request on this server (the config's inline.kinds allows %s)", spec.GetKind(), strings.Join(in.Kinds, ", "))
	}
	fn, err := s.compileSpec(spec)
	if err != nil {
		return nil, err
	}
	if b, ok := fn.Scorer.(interface{ LimitsWithin(sandbox.Limits) error }); ok {
		if err := b.LimitsWithin(in.CodeExecLimits); err != nil {
			return nil, fmt.Errorf("%v (the config's inline.code_exec_limits): a request can only lower the server's limits", err)
		}
	}
	return fn, nil
}

func (s *Service) compileSpec(spec *rewardv1.FunctionSpec) (*scorers.Function, error) {
	var params *yaml.Node
	if spec.GetParams() != nil {
		js, err := protojson.Marshal(spec.GetParams())
		if err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(js, &doc); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		params = doc.Content[0]
	}
	return s.reg.Compile(scorers.Spec{Name: spec.GetName(), Kind: spec.GetKind(), Params: params})
}

// functionScores turns one function's results into its response column, in
// values and status (of len(results) each). The errors map carries the
// reason of every entry that is not OK, and with okReasons the reason of
// every OK entry that has one; the executions map what running a rollout's
// program found. With lists the reasons go into reason_rollouts and
// reason_texts, in rollout order, instead of the reasons map.
func functionScores(name string, results []scorers.Result, values []float64, status []rewardv1.ScoreStatus, okReasons, lists bool) *rewardv1.FunctionScores {
	fs := &rewardv1.FunctionScores{Name: name, Values: values, Status: status}
	errs, reasons := 0, 0
	for _, r := range results {
		switch {
		case r.Outcome == scorers.Error:
			errs++
		case r.Outcome == scorers.NotApplicable || okReasons && r.Reason != "":
			reasons++
		}
	}
	// Sized once: a reason on every rollout (format's on completions
	// without tags) grew the map ten times per 1,024 rollouts.
	if errs > 0 {
		fs.Errors = make(map[int32]string, errs)
	}
	switch {
	case reasons > 0 && lists:
		fs.ReasonRollouts = make([]int32, 0, reasons)
		fs.ReasonTexts = make([]string, 0, reasons)
	case reasons > 0:
		fs.Reasons = make(map[int32]string, reasons)
	}
	for i, r := range results {
		fs.Values[i] = r.Value
		fs.Status[i] = rewardv1.ScoreStatus(r.Outcome)
		if r.Execution != nil {
			if fs.Executions == nil {
				fs.Executions = make(map[int32]*rewardv1.Execution)
			}
			fs.Executions[int32(i)] = executionProto(r.Execution)
		}
		// A reason may quote a program's output: proto3 strings are
		// UTF-8.
		switch {
		case r.Outcome == scorers.Error:
			fs.Errors[int32(i)] = strings.ToValidUTF8(r.Reason, "\uFFFD")
		case (r.Outcome == scorers.NotApplicable || okReasons && r.Reason != "") && lists:
			fs.ReasonRollouts = append(fs.ReasonRollouts, int32(i))
			fs.ReasonTexts = append(fs.ReasonTexts, strings.ToValidUTF8(r.Reason, "\uFFFD"))
		case r.Outcome == scorers.NotApplicable || okReasons && r.Reason != "":
			fs.Reasons[int32(i)] = strings.ToValidUTF8(r.Reason, "\uFFFD")
		}
	}
	return fs
}

// ListFunctions lists the served functions and the config fingerprint.
func (s *Service) ListFunctions(context.Context, *rewardv1.ListFunctionsRequest) (*rewardv1.ListFunctionsResponse, error) {
	resp := &rewardv1.ListFunctionsResponse{ConfigFingerprint: s.cfg.Fingerprint}
	for _, fn := range s.cfg.Functions {
		params, err := paramsStruct(fn.Canonical)
		if err != nil { // toStatus logs it, and answers "internal error"
			return nil, fmt.Errorf("function %q: parameters as a Struct: %w", fn.Name, err)
		}
		resp.Functions = append(resp.Functions, &rewardv1.FunctionInfo{
			Name: fn.Name, Kind: fn.Kind, Weight: s.cfg.Weights[fn.Name], ParamsYaml: string(fn.Canonical), Params: params,
		})
	}
	if a := s.cfg.Aggregation; a != nil {
		mode, _ := modeOf(a.Mode)
		scale, _ := scaleOf(a.Scale)
		resp.Aggregation = &rewardv1.Aggregation{Mode: mode, Scale: scale}
	}
	return resp, nil
}

// paramsStruct is a function's canonical YAML parameters as the Struct an
// inline FunctionSpec takes.
func paramsStruct(canonical []byte) (*structpb.Struct, error) {
	params := map[string]any{}
	if err := yaml.Unmarshal(canonical, &params); err != nil {
		return nil, err
	}
	return structpb.NewStruct(params)
}

// aggregate fills rewards and advantages when the request or the config
// asks. The request's mode, scale and weights win over the config's. A
// rollout's group is its group id, or its prompt when it has none: the
// completions of one prompt are a GRPO group.
func (s *Service) aggregate(req *rewardv1.ScoreRequest, tasks []task, resp *rewardv1.ScoreResponse) error {
	ra, ca := req.GetAggregation(), s.cfg.Aggregation
	if ra == nil && ca == nil {
		return nil
	}
	spec, err := aggregationSpec(ra, ca)
	if err != nil {
		return err
	}
	var unweighted []string
	spec.Weights, unweighted, err = s.aggregationWeights(ra, tasks, spec.Mode)
	if err != nil {
		return err
	}
	groups := make([]string, len(req.GetRollouts()))
	for i, r := range req.GetRollouts() {
		if groups[i] = r.GetGroup(); groups[i] == "" {
			groups[i] = r.GetPrompt()
		}
	}
	scores := make([][]float64, len(resp.GetFunctions()))
	for k, fs := range resp.GetFunctions() {
		scores[k] = fs.GetValues()
	}
	res, err := aggregate.Compute(spec, groups, scores)
	if err != nil {
		return invalid("aggregation: %v", err)
	}
	resp.Rewards, resp.Advantages, resp.Unscorable = res.Rewards, res.Advantages, int32(res.Unscorable)
	s.countUnscorable(res.Unscorable)
	if len(unweighted) > 0 {
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("aggregation mode hatchery sums the functions unweighted: the config's weights (%s) are not applied", strings.Join(unweighted, ", ")))
	}
	if w := looseWarning(groups); w != "" {
		resp.Warnings = append(resp.Warnings, w)
	}
	if w := singletonWarning(groups, spec.Scale); w != "" {
		resp.Warnings = append(resp.Warnings, w)
	}
	return nil
}

// aggregationSpec is the mode and scale of the aggregation: the request's
// where it gives them, else the config's.
func aggregationSpec(ra *rewardv1.Aggregation, ca *config.Aggregation) (aggregate.Spec, error) {
	var spec aggregate.Spec
	var err error
	switch {
	case ra.GetMode() != rewardv1.AggregationMode_AGGREGATION_MODE_UNSPECIFIED:
		spec.Mode, err = aggregate.ParseMode(strings.ToLower(strings.TrimPrefix(ra.GetMode().String(), "AGGREGATION_MODE_")))
	case ca != nil:
		spec.Mode, err = aggregate.ParseMode(ca.Mode)
		if err == nil && ra.GetScale() == rewardv1.AggregationScale_AGGREGATION_SCALE_UNSPECIFIED {
			spec.Scale, err = aggregate.ParseScale(ca.Scale)
		}
	default:
		return spec, invalid("aggregation: no mode given and the server config sets none (sum_then_normalize, normalize_then_sum or hatchery)")
	}
	if err == nil && ra.GetScale() != rewardv1.AggregationScale_AGGREGATION_SCALE_UNSPECIFIED {
		spec.Scale, err = aggregate.ParseScale(strings.ToLower(strings.TrimPrefix(ra.GetScale().String(), "AGGREGATION_SCALE_")))
	}
	if err != nil {
		return spec, invalid("aggregation: %v", err)
	}
	return spec, nil
}

// aggregationWeights is the weight of each task's function in mode: the
// request's, else the config's (inline functions have none), else 1.
// Hatchery sums the functions unweighted: the config's weights, which are
// for its own mode, are not applied (unweighted lists them, for the
// answer to say so), and a weight the request gives is refused by name.
func (s *Service) aggregationWeights(ra *rewardv1.Aggregation, tasks []task, mode aggregate.Mode) (weights []float64, unweighted []string, err error) {
	weights = make([]float64, len(tasks))
	inRequest := make(map[string]bool, len(tasks))
	for k, t := range tasks {
		name := t.Function.Name
		inRequest[name] = true
		weights[k] = 1
		if w, ok := s.cfg.Weights[name]; ok && t.Label != inlineLabel {
			if mode != aggregate.Hatchery {
				weights[k] = w
			} else if w != 1 {
				unweighted = append(unweighted, fmt.Sprintf("%s: %v", name, w))
			}
		}
		if w, ok := ra.GetWeights()[name]; ok {
			if mode == aggregate.Hatchery && w != 1 {
				return nil, nil, invalid("aggregation.weights[%q] is %v: mode hatchery sums the functions unweighted, as Axolotl's Hatchery trainer does (leave the weight out, or ask for another mode)", name, w)
			}
			weights[k] = w
		}
	}
	for name := range ra.GetWeights() {
		if !inRequest[name] {
			return nil, nil, invalid("aggregation.weights: %q is not a function of this request", name)
		}
	}
	return weights, unweighted, nil
}

// looseWarning says which rollouts have neither a group nor a prompt: each
// is a group of its own in every mode, so its advantage says nothing of
// its reward (0 in GRPO and Hatchery), whatever the request's split.
func looseWarning(groups []string) string {
	first, n := -1, 0
	for i, g := range groups {
		if g == "" {
			n++
			if first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d rollout(s) have neither a group nor a prompt (first: rollout %d): each is a group of its own, with no other completion of its prompt to compare it with, so its advantage does not come from its reward (GRPO gives it 0). Send each rollout's group id, or its prompt", n, first)
}

// singletonWarning says which groups have one rollout in the request: with
// the advantages normalised over the group, theirs are 0 (the group's mean
// is the rollout's own reward). A group whose rollouts a trainer split over
// two requests looks like this. Rollouts with neither a group nor a prompt
// are looseWarning's.
func singletonWarning(groups []string, scale aggregate.Scale) string {
	if scale != aggregate.ScaleGroup {
		return ""
	}
	size := make(map[string]int, len(groups))
	for _, g := range groups {
		if g != "" {
			size[g]++
		}
	}
	single, example := 0, ""
	for i, g := range groups {
		if g != "" && size[g] == 1 {
			single++
			if example == "" {
				example = fmt.Sprintf("rollout %d, group %q", i, g)
			}
		}
	}
	if single == 0 {
		return ""
	}
	return fmt.Sprintf("%d rollout(s) are alone in their group in this request (%s): nothing in the group to compare them with (GRPO gives them advantage 0). A group's rollouts must come in one request, with the same group or prompt", single, example)
}

func modeOf(name string) (rewardv1.AggregationMode, bool) {
	v, ok := rewardv1.AggregationMode_value["AGGREGATION_MODE_"+strings.ToUpper(name)]
	return rewardv1.AggregationMode(v), ok
}

func scaleOf(name string) (rewardv1.AggregationScale, bool) {
	v, ok := rewardv1.AggregationScale_value["AGGREGATION_SCALE_"+strings.ToUpper(name)]
	return rewardv1.AggregationScale(v), ok
}
