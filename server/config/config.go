// Package config reads rewardd's YAML config file: the served reward
// functions, their weights, the aggregation, and the request limits.
//
// Decoding is strict, as in Prometheus: defaults first, then the file, then
// validation. An unknown key, a value of the wrong type, a function that does
// not compile are all errors naming the file, line, function and key. Every
// problem is reported at once, not only the first.
package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/dustin/go-humanize"
	"go.yaml.in/yaml/v3"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server/aggregate"
)

// Config is a loaded, validated and compiled config.
type Config struct {
	// Functions are the served functions, in file order.
	Functions []*scorers.Function
	// Weights holds a weight for every served function (1 unless the file
	// says otherwise).
	Weights map[string]float64
	// Aggregation is the default aggregation, nil when the file sets none.
	Aggregation *Aggregation
	// Limits bound every request.
	Limits Limits
	// Inline says what functions a request may define for itself.
	Inline Inline
	// Compat configures the trainers' compatibility endpoints.
	Compat Compat
	// Fingerprint is a stable hash of what the config means (functions,
	// their effective parameters, weights, aggregation, and the limits that
	// change scores), not of how it is written.
	Fingerprint string
}

// Aggregation names how scores combine into rewards and advantages.
type Aggregation struct {
	// Mode is sum_then_normalize (GRPO), normalize_then_sum (GDPO) or
	// hatchery.
	Mode string `yaml:"mode"`
	// Scale is group, batch or none (GRPO); default group.
	Scale string `yaml:"scale"`
}

// Limits bound the work one request may ask for, and the server's memory,
// connections and time limits.
type Limits struct {
	// MaxRollouts is the most rollouts one request may carry.
	MaxRollouts int `yaml:"max_rollouts"`
	// MaxCompletionBytes bounds each completion.
	MaxCompletionBytes int `yaml:"max_completion_bytes"`
	// MaxPromptBytes bounds each prompt.
	MaxPromptBytes int `yaml:"max_prompt_bytes"`
	// MaxMessageBytes bounds a whole request message (gRPC or HTTP body).
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// MaxInlineFunctions bounds the functions a request may define inline.
	MaxInlineFunctions int `yaml:"max_inline_functions"`
	// RequestTimeout bounds the time spent on one request; a client deadline
	// shorter than this wins.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// MaxInflightRequests is how many requests may be in progress at once;
	// beyond it a request is answered RESOURCE_EXHAUSTED immediately.
	MaxInflightRequests int `yaml:"max_inflight_requests"`
	// MemoryBudget bounds the memory of the server process, in bytes (a
	// number, or a string such as "2GiB"): requests reserve what they hold
	// from RequestMemory(), a share of it, before they hold it, and are
	// refused with RESOURCE_EXHAUSTED when it does not fit. 0 (the
	// default) is half of the memory the process may use (its cgroup's
	// limit, else the machine's memory), or the Go memory limit
	// (GOMEMLIMIT) when that is less; a budget above the Go limit is an
	// error, as the collector would run back to back. Code execution runs in processes
	// of its own, bounded by their own limits, outside this budget.
	MemoryBudget ByteSize `yaml:"memory_budget"`
	// ReadTimeout bounds the time from a request's headers to the end of
	// its body.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds the time to write one answer (a client that does
	// not read it is cut off).
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes a connection that has had no request for that
	// long.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// StreamIdleTimeout ends a ScoreStream that has sent nothing and has
	// nothing in progress for that long.
	StreamIdleTimeout time.Duration `yaml:"stream_idle_timeout"`
	// MaxConnections bounds the open connections of each port (gRPC and
	// HTTP). What they may hold (TransportMemory) comes out of the memory
	// budget, at most an eighth of it: when the file does not set it, the
	// default 1024 is lowered to fit.
	MaxConnections int `yaml:"max_connections"`
	// MaxRequestWork bounds the worker time one request may use: the
	// rollouts still unscored when it runs out get ERROR.
	MaxRequestWork time.Duration `yaml:"max_request_work"`
	// QueueWait is how long a request to a trainer's compatibility endpoint
	// (/get_reward, /verify), whose clients send one sample per request in
	// bursts, waits for one of the max_inflight_requests slots before it is
	// refused with RESOURCE_EXHAUSTED (HTTP 429); 0 refuses at once, as the
	// other endpoints do. Set it under the client's own timeout (OpenRLHF's
	// is 180 s), so that a refusal reaches a client still waiting.
	QueueWait time.Duration `yaml:"queue_wait"`
	// QueueBytes bounds the bodies of the requests waiting for a slot, in
	// bytes: one that would take the sum over it is refused at once.
	QueueBytes ByteSize `yaml:"queue_bytes"`

	// memoryBudgetFrom says where MemoryBudget came from, for the start-up
	// log.
	memoryBudgetFrom string
}

// requestShare is the part of the memory budget that requests may reserve;
// the rest is the process's own (the runtime, caches, the garbage
// collector's headroom).
const requestShare = 0.7

// RequestMemory is what the requests in progress may reserve of the memory
// budget, in bytes: its request share, less what the connections
// limits.max_connections allows may hold (TransportMemory).
func (l Limits) RequestMemory() int64 {
	return int64(float64(l.MemoryBudget)*requestShare) - l.TransportMemory()
}

// ConnectionMemory bounds what one gRPC connection and one HTTP connection
// hold while open, outside any request's reservation: grpc's read and
// write buffers (its defaults, 32 KiB each), the HTTP/2 framer's and
// hpack's, the connections' goroutines, net/http's buffers (about 51 and
// 14 KiB idle), and a frame's buffer and stack growth of a busy one.
// limits.max_connections bounds the open connections of each port.
const ConnectionMemory = 96 << 10

// TransportMemory is what the open connections may hold at most,
// limits.max_connections times ConnectionMemory.
func (l Limits) TransportMemory() int64 { return int64(l.MaxConnections) * ConnectionMemory }

// transportShare is the most of the memory budget the connections may
// hold (TransportMemory).
const transportShare = 8

// MemoryBudgetSource says how the memory budget was chosen ("limits.memory_budget",
// or the default and what it is half of).
func (l Limits) MemoryBudgetSource() string { return l.memoryBudgetFrom }

// DefaultLimits are the limits when the file says nothing.
func DefaultLimits() Limits {
	return Limits{
		MaxRollouts:         16384,
		MaxCompletionBytes:  1 << 20,
		MaxPromptBytes:      1 << 20,
		MaxMessageBytes:     256 << 20,
		MaxInlineFunctions:  16,
		RequestTimeout:      2 * time.Minute,
		MaxInflightRequests: 64,
		ReadTimeout:         30 * time.Second,
		WriteTimeout:        30 * time.Second,
		IdleTimeout:         2 * time.Minute,
		StreamIdleTimeout:   5 * time.Minute,
		MaxConnections:      1024,
		MaxRequestWork:      10 * time.Minute,
		QueueWait:           60 * time.Second,
		QueueBytes:          64 << 20,
	}
}

// Inline says what functions a request may define for itself
// (ScoreRequest.inline): which kinds, and for code_exec, the largest limits
// it may ask for. A request's own limits can only lower the server's.
type Inline struct {
	// Kinds a request may define functions of. Default: every kind but
	// code_exec, which runs the request's programs: a server runs them for
	// a request only when its operator says so.
	Kinds []string `yaml:"kinds"`
	// CodeExecLimits are the largest limits an inline code_exec function
	// may set; a limit it leaves out takes code_exec's default. Default:
	// code_exec's defaults.
	CodeExecLimits sandbox.Limits `yaml:"code_exec_limits"`
}

// Names returns the names of the served functions, in file order.
func (c *Config) Names() []string {
	names := make([]string, len(c.Functions))
	for i, fn := range c.Functions {
		names[i] = fn.Name
	}
	return names
}

// Allows says whether a request may define a function of kind.
func (in Inline) Allows(kind string) bool { return slices.Contains(in.Kinds, kind) }

// Compat configures the endpoints that speak other trainers' bodies.
type Compat struct {
	// GetReward is OpenRLHF's POST /get_reward.
	GetReward CompatEndpoint `yaml:"get_reward"`
	// Verify is NeMo Gym's POST /verify.
	Verify CompatEndpoint `yaml:"verify"`
}

// CompatEndpoint configures one compatibility endpoint.
type CompatEndpoint struct {
	// UnscorableReward is the reward answered for a rollout that no
	// function scored (each NOT_APPLICABLE or ERROR), whose clients need a
	// number (OpenRLHF's torch.tensor(rewards), NeMo Gym's float reward).
	// Default 0.0. The statuses are answered beside it, and such rollouts
	// are counted in rewardd_unscorable_rollouts_total.
	UnscorableReward *float64 `yaml:"unscorable_reward"`
	// IncludeReasoning, on /verify, puts the text of the response's
	// reasoning items (their summaries, or their content when they have no
	// summary) before the assistant message's text in the completion.
	// Without it the completion is the message's text, and "" when the
	// response has only reasoning (or tool calls).
	IncludeReasoning bool `yaml:"include_reasoning"`
}

// Unscorable is e's unscorable_reward, 0 when the file leaves it out.
func (e CompatEndpoint) Unscorable() float64 {
	if e.UnscorableReward == nil {
		return 0
	}
	return *e.UnscorableReward
}

// file is the YAML layout of a config file.
type file struct {
	Functions   []yaml.Node        `yaml:"functions"`
	Weights     map[string]float64 `yaml:"weights"`
	Aggregation *Aggregation       `yaml:"aggregation"`
	Limits      Limits             `yaml:"limits"`
	Inline      *Inline            `yaml:"inline"`
	Compat      Compat             `yaml:"compat"`
}

// Error is one problem in a config file.
type Error struct {
	File         string
	Line, Column int
	// Function is the name of the function at fault, if any.
	Function string
	// Key is the key at fault ("functions[2].pattern", "weights.acc").
	Key string
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Function != "" {
		fmt.Fprintf(&b, "function %q: ", e.Function)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in a config file. Its Error method prints one
// per line.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Load parses, validates and compiles the config in data; filename is used in
// error messages only. The error, if any, is of type Errors.
func Load(filename string, data []byte, reg scorers.Registry) (*Config, error) {
	l := &loader{filename: filename, seen: make(map[string]int)}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		l.fail(0, 0, "", "", fmt.Errorf("parse YAML: %w", err))
		return nil, l.errs
	}
	l.root = &root
	f := l.decode()
	cfg := &Config{Weights: make(map[string]float64), Aggregation: f.Aggregation, Limits: f.Limits}
	l.compileFunctions(f, reg, cfg)
	l.applyWeights(f.Weights, cfg)
	if f.Aggregation != nil {
		l.checkAggregation(f.Aggregation, cfg)
	}
	cfg.Limits = l.checkLimits(f.Limits)
	cfg.Inline = l.compileInline(f.Inline, reg)
	l.checkCompat(f.Compat)
	cfg.Compat = f.Compat

	if len(l.errs) > 0 {
		slices.SortStableFunc(l.errs, func(a, b *Error) int { return a.Line - b.Line })
		return nil, l.errs
	}
	cfg.Fingerprint = fingerprint(cfg)
	return cfg, nil
}

// loader collects every problem of one config file while Load checks its
// sections in turn.
type loader struct {
	filename string
	root     *yaml.Node
	errs     Errors
	seen     map[string]int // function name → line of first definition
}

func (l *loader) fail(line, col int, function, key string, err error) {
	l.errs = append(l.errs, &Error{File: l.filename, Line: line, Column: col, Function: function, Key: key, Err: err})
}

// decode decodes the root strictly. What decodes is checked too, so that
// every problem is reported at once; a key that failed to decode is not
// checked again.
func (l *loader) decode() *file {
	f := &file{Limits: DefaultLimits()}
	undecoded := make(map[string]bool)
	for _, pe := range scorers.AllParamErrors(scorers.DecodeStrict(l.root, f)) {
		l.fail(pe.Line, pe.Column, "", pe.Key, pe.Err)
		top, _, _ := strings.Cut(pe.Key, ".")
		undecoded[top] = true
	}
	if len(f.Functions) == 0 && !undecoded["functions"] {
		l.fail(l.root.Line, l.root.Column, "", "functions", errors.New("no functions: a config serves at least one"))
	}
	return f
}

// compileFunctions compiles each function with reg into cfg, with weight 1,
// refusing duplicate names.
func (l *loader) compileFunctions(f *file, reg scorers.Registry, cfg *Config) {
	for i := range f.Functions {
		node := &f.Functions[i]
		key := fmt.Sprintf("functions[%d]", i)
		spec, err := specOf(node)
		if err != nil {
			var pe *scorers.ParamError
			errors.As(err, &pe)
			l.fail(pe.Line, pe.Column, "", key+"."+pe.Key, pe.Err)
			continue
		}
		if first, dup := l.seen[spec.Name]; dup {
			l.fail(node.Line, node.Column, spec.Name, key+".name", fmt.Errorf("duplicate name (first defined on line %d)", first))
			continue
		}
		l.seen[spec.Name] = node.Line
		fn, err := reg.Compile(spec)
		for _, pe := range scorers.AllParamErrors(err) {
			line, col := node.Line, node.Column
			if pe.Line > 0 {
				line, col = pe.Line, pe.Column
			}
			if pe.Key == "kind" {
				line, col = posOf(node, "kind", line, col)
			}
			l.fail(line, col, spec.Name, pe.Key, pe.Err)
		}
		if err != nil {
			continue
		}
		cfg.Functions = append(cfg.Functions, fn)
		cfg.Weights[fn.Name] = 1
	}
}

// applyWeights sets the configured weights, each of a defined function and
// finite.
func (l *loader) applyWeights(weights map[string]float64, cfg *Config) {
	weightsNode := valueOf(l.root, "weights")
	for name, w := range weights {
		line, col := posOf(weightsNode, name, 0, 0)
		if _, ok := l.seen[name]; !ok {
			l.fail(line, col, "", "weights."+name, fmt.Errorf("no function is called %q", name))
			continue
		}
		if math.IsNaN(w) || math.IsInf(w, 0) {
			l.fail(line, col, name, "weights."+name, fmt.Errorf("weight %v is not a finite number", w))
			continue
		}
		cfg.Weights[name] = w
	}
}

// checkAggregation checks the aggregation's mode and scale and that they
// agree with cfg's weights; it fills in a missing scale.
func (l *loader) checkAggregation(a *Aggregation, cfg *Config) {
	aggNode := valueOf(l.root, "aggregation")
	at := func(key string) (int, int) { return posOf(aggNode, key, aggNode.Line, aggNode.Column) }
	mode, modeErr := aggregate.ParseMode(a.Mode)
	if a.Mode == "" {
		modeErr = fmt.Errorf("is missing (sum_then_normalize, normalize_then_sum or hatchery)")
	}
	scale, scaleErr := aggregate.ParseScale(a.Scale)
	if a.Scale == "" {
		a.Scale = scale.String()
	}
	switch {
	case modeErr != nil:
		line, col := at("mode")
		l.fail(line, col, "", "aggregation.mode", modeErr)
	case scaleErr != nil:
		line, col := at("scale")
		l.fail(line, col, "", "aggregation.scale", scaleErr)
	case mode == aggregate.Hatchery:
		l.checkHatcheryWeights(cfg, at)
		if err := (aggregate.Spec{Mode: mode, Scale: scale}).Validate(); err != nil {
			line, col := at("scale")
			l.fail(line, col, "", "aggregation", err)
		}
	default:
		weights := make([]float64, len(cfg.Functions))
		for i, fn := range cfg.Functions {
			weights[i] = cfg.Weights[fn.Name]
		}
		if err := (aggregate.Spec{Mode: mode, Scale: scale, Weights: weights}).Validate(); err != nil {
			line, col := at("mode")
			l.fail(line, col, "", "aggregation", err)
		}
	}
}

// checkHatcheryWeights reports each weight other than 1, by name, at its own
// line, since hatchery sums the functions unweighted.
func (l *loader) checkHatcheryWeights(cfg *Config, at func(key string) (int, int)) {
	weightsNode := valueOf(l.root, "weights")
	modeLine, _ := at("mode")
	for _, fn := range cfg.Functions {
		if w := cfg.Weights[fn.Name]; w != 1 {
			line, col := posOf(weightsNode, fn.Name, 0, 0)
			l.fail(line, col, fn.Name, "weights."+fn.Name, fmt.Errorf("weight %v: aggregation mode hatchery (line %d) sums the functions unweighted, as Axolotl's Hatchery trainer does (remove the weight, or choose another mode)", w, modeLine))
		}
	}
}

// checkLimits reports the limits' problems and, when there are none,
// resolves the memory limits; it returns the limits as resolved.
func (l *loader) checkLimits(limits Limits) Limits {
	limitsNode := valueOf(l.root, "limits")
	problems := limits.problems()
	if len(problems) == 0 {
		line, _ := posOf(limitsNode, "max_message_bytes", 0, 0)
		connLine, _ := posOf(limitsNode, "max_connections", 0, 0)
		problems = limits.resolveMemory(line, connLine)
	}
	for _, p := range problems {
		line, col := posOf(limitsNode, p.key, 0, 0)
		l.fail(line, col, "", "limits."+p.key, p.err)
	}
	return limits
}

// checkCompat reports an unscorable_reward that is not a finite number.
func (l *loader) checkCompat(c Compat) {
	compatNode := valueOf(l.root, "compat")
	for _, e := range []struct {
		key string
		e   CompatEndpoint
	}{{"get_reward", c.GetReward}, {"verify", c.Verify}} {
		if v := e.e.Unscorable(); math.IsNaN(v) || math.IsInf(v, 0) {
			line, col := posOf(valueOf(compatNode, e.key), "unscorable_reward", 0, 0)
			l.fail(line, col, "", "compat."+e.key+".unscorable_reward", fmt.Errorf("must be a finite number, got %v", v))
		}
	}
}

// compileInline compiles the inline section, reporting its problems.
func (l *loader) compileInline(in *Inline, reg scorers.Registry) Inline {
	inline, problems := inlineOf(in, reg)
	inlineNode := valueOf(l.root, "inline")
	for _, p := range problems {
		line, col := posOf(inlineNode, p.key, inlineNode.Line, inlineNode.Column)
		l.fail(line, col, "", "inline."+p.key, p.err)
	}
	return inline
}

// specOf splits a function's mapping into its name, kind and the remaining
// parameters.
func specOf(node *yaml.Node) (scorers.Spec, error) {
	if node.Kind != yaml.MappingNode {
		return scorers.Spec{}, &scorers.ParamError{Line: node.Line, Column: node.Column,
			Err: errors.New("a function is a mapping with name, kind and the kind's parameters")}
	}
	spec := scorers.Spec{Params: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: node.Line, Column: node.Column}}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		switch k.Value {
		case "name", "kind":
			if v.Kind != yaml.ScalarNode {
				return spec, &scorers.ParamError{Key: k.Value, Line: v.Line, Column: v.Column, Err: errors.New("must be a string")}
			}
			if k.Value == "name" {
				spec.Name = v.Value
			} else {
				spec.Kind = v.Value
			}
		default:
			spec.Params.Content = append(spec.Params.Content, k, v)
		}
	}
	if spec.Name == "" {
		return spec, &scorers.ParamError{Key: "name", Line: node.Line, Column: node.Column, Err: errors.New("is missing")}
	}
	return spec, nil
}

// valueOf returns the value node of key in the document's top mapping, or an
// empty node.
func valueOf(root *yaml.Node, key string) *yaml.Node {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	}
	return &yaml.Node{}
}

// posOf returns the position of key in mapping node n, or the fallback.
func posOf(n *yaml.Node, key string, line, col int) (int, int) {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line, n.Content[i].Column
			}
		}
	}
	return line, col
}

// inlineOf fills in the defaults of the inline section and checks it.
func inlineOf(in *Inline, reg scorers.Registry) (Inline, []limitProblem) {
	var out Inline
	if in != nil {
		out = *in
	}
	var ps []limitProblem
	if in == nil || in.Kinds == nil {
		for _, k := range reg.Kinds() {
			if k != "code_exec" {
				out.Kinds = append(out.Kinds, k)
			}
		}
	}
	for _, k := range out.Kinds {
		if _, ok := reg[k]; !ok {
			ps = append(ps, limitProblem{"kinds", fmt.Errorf("unknown kind %q (one of %s)", k, strings.Join(reg.Kinds(), ", "))})
		}
	}
	l := &out.CodeExecLimits
	*l = l.WithDefaults(sandbox.DefaultLimits())
	if err := l.Validate(); err != nil {
		ps = append(ps, limitProblem{"code_exec_limits", err})
	}
	return out, ps
}

type limitProblem struct {
	key string
	err error
}

func (l Limits) problems() []limitProblem {
	var ps []limitProblem
	positive := func(key string, v int) {
		if v <= 0 {
			ps = append(ps, limitProblem{key, fmt.Errorf("must be positive, got %d", v)})
		}
	}
	positive("max_rollouts", l.MaxRollouts)
	positive("max_completion_bytes", l.MaxCompletionBytes)
	positive("max_prompt_bytes", l.MaxPromptBytes)
	positive("max_message_bytes", l.MaxMessageBytes)
	positive("max_inline_functions", l.MaxInlineFunctions)
	positive("max_inflight_requests", l.MaxInflightRequests)
	positive("max_connections", l.MaxConnections)
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"request_timeout", l.RequestTimeout}, {"read_timeout", l.ReadTimeout}, {"write_timeout", l.WriteTimeout},
		{"idle_timeout", l.IdleTimeout}, {"stream_idle_timeout", l.StreamIdleTimeout}, {"max_request_work", l.MaxRequestWork},
	} {
		if d.v <= 0 {
			ps = append(ps, limitProblem{d.key, fmt.Errorf("must be positive, got %v", d.v)})
		}
	}
	if l.MemoryBudget < 0 {
		ps = append(ps, limitProblem{"memory_budget", fmt.Errorf("must be positive, got %d", l.MemoryBudget)})
	}
	if l.QueueWait < 0 {
		ps = append(ps, limitProblem{"queue_wait", fmt.Errorf("must be 0 or positive, got %v", l.QueueWait)})
	}
	if l.QueueBytes < 0 {
		ps = append(ps, limitProblem{"queue_bytes", fmt.Errorf("must be 0 or positive, got %d", l.QueueBytes)})
	}
	return ps
}

// minMemoryBudget is the smallest memory budget a server runs with.
const minMemoryBudget = 64 << 20

// resolveMemory fills in the default memory budget, and checks that the
// connections limits.max_connections allows hold at most an eighth of it,
// and that a request of limits.max_message_bytes fits several times in
// what requests may reserve (a gRPC call reserves it while its message
// arrives: grpc reads a whole message before any handler sees its length).
// A max_connections or max_message_bytes the file does not set (its line
// 0) is lowered to fit instead.
func (l *Limits) resolveMemory(maxMessageLine, maxConnectionsLine int) []limitProblem {
	// The Go runtime's memory limit: GOMEMLIMIT, or what the process set
	// (math.MaxInt64: none).
	goLimit := ByteSize(debug.SetMemoryLimit(-1))
	switch {
	case l.MemoryBudget == 0:
		avail, from := availableMemory()
		l.MemoryBudget = ByteSize(avail / 2)
		l.memoryBudgetFrom = fmt.Sprintf("default: half of %s (%s)", ByteSize(avail), from)
		if goLimit < l.MemoryBudget {
			l.MemoryBudget = goLimit
			l.memoryBudgetFrom = fmt.Sprintf("default: the Go memory limit (GOMEMLIMIT), below half of %s (%s)", ByteSize(avail), from)
		}
	case goLimit < l.MemoryBudget:
		return []limitProblem{{"memory_budget", fmt.Errorf("%s is above the Go memory limit %s (GOMEMLIMIT): once the requests hold what the budget admits, the collector would run back to back; lower it to the limit or below, or raise or unset GOMEMLIMIT (without it the server sets the Go limit under the budget)",
			l.MemoryBudget, goLimit)}}
	default:
		l.memoryBudgetFrom = "limits.memory_budget"
	}
	if l.MemoryBudget < minMemoryBudget {
		return []limitProblem{{"memory_budget", fmt.Errorf("%s is too small to serve with, at least %s", l.MemoryBudget, ByteSize(minMemoryBudget))}}
	}
	if most := int64(l.MemoryBudget) / transportShare; l.TransportMemory() > most {
		if maxConnectionsLine != 0 {
			return []limitProblem{{"max_connections", fmt.Errorf("%d connections of each port may hold %s of transport buffers (%s each, gRPC and HTTP), more than an eighth of limits.memory_budget %s: lower it, or raise limits.memory_budget",
				l.MaxConnections, ByteSize(l.TransportMemory()), ByteSize(ConnectionMemory), l.MemoryBudget)}}
		}
		l.MaxConnections = int(most / ConnectionMemory)
	}
	most := l.RequestMemory() / 4
	if int64(l.MaxMessageBytes) <= most {
		return nil
	}
	if maxMessageLine == 0 {
		l.MaxMessageBytes = int(most &^ (1<<20 - 1))
		return nil
	}
	return []limitProblem{{"max_message_bytes", fmt.Errorf("%s is more than a quarter of what requests may reserve (%.0f%% of limits.memory_budget %s, less %s for limits.max_connections: %s): lower it, or raise limits.memory_budget",
		ByteSize(l.MaxMessageBytes), requestShare*100, l.MemoryBudget, ByteSize(l.TransportMemory()), ByteSize(l.RequestMemory()))}}
}

// availableMemory is the memory this process may use: its cgroup's memory
// limit, else the machine's memory, and which of the two it is.
func availableMemory() (uint64, string) {
	if n, err := memlimit.FromCgroup(); err == nil && n > 0 {
		return n, "the cgroup memory limit"
	}
	if n, err := memlimit.FromSystem(); err == nil && n > 0 {
		return n, "the machine's memory"
	}
	return 4 << 30, "an assumed 4 GiB: neither a cgroup limit nor the machine's memory could be read"
}

// ByteSize is a size in bytes. A config file writes it as a number of
// bytes or as a string with a unit: "512MiB", "2GiB", "1.5GB".
type ByteSize int64

// UnmarshalYAML reads a number of bytes or a size with a unit.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	var i int64
	if err := n.Decode(&i); err == nil {
		*b = ByteSize(i)
		return nil
	}
	// A *yaml.TypeError with the line, as yaml's own, so that the error
	// names the key.
	bad := func(what string) error {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(`line %d: %s is not a size in bytes, such as 1073741824 or "1GiB"`, n.Line, what)}}
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return bad(n.Tag)
	}
	v, err := humanize.ParseBytes(s)
	if err != nil || v > math.MaxInt64 {
		return bad(strconv.Quote(s))
	}
	*b = ByteSize(v)
	return nil
}

// String writes the size with a binary unit.
func (b ByteSize) String() string { return humanize.IBytes(uint64(b)) }

// fingerprint hashes what the config means: each function's name, kind and
// effective parameters (defaults filled in) in order, the weights by name,
// the aggregation, and the limits that change a rollout's scores: a
// completion or prompt over max_completion_bytes or max_prompt_bytes is an
// ERROR in every function. The other limits bound time, memory and
// connections, and are left out: a replica with more memory scores the same.
func fingerprint(cfg *Config) string {
	h := sha256.New()
	for _, fn := range cfg.Functions {
		fmt.Fprintf(h, "function %q %q %d\n", fn.Name, fn.Kind, len(fn.Canonical))
		h.Write(fn.Canonical)
		fmt.Fprintf(h, "weight %v\n", cfg.Weights[fn.Name])
	}
	if a := cfg.Aggregation; a != nil {
		fmt.Fprintf(h, "aggregation %q %q\n", a.Mode, a.Scale)
	}
	fmt.Fprintf(h, "limits max_completion_bytes %d max_prompt_bytes %d\n", cfg.Limits.MaxCompletionBytes, cfg.Limits.MaxPromptBytes)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:32]
}
