// Package check validates a reward config before a training run relies on
// it: what `rewardd check` does.
//
// Long RL runs die hours in because of a reward config mistake a minute of
// checking would have caught: a reference column that is missing, a regex
// that never matches, a function that gives every rollout of a group the
// same score (zero advantage, nothing learned), a server serving another
// config than the trainer expects. Run takes a compiled config (config.Load
// has already compiled every function and collected every problem), and
// optionally sample rows and a connection to a live server, and returns a
// Report: per-function statistics and a list of findings.
//
// A finding is a failure or a warning:
//
//   - failures: a malformed or missing samples file, a function that scores
//     ERROR on any sample row, a function whose two passes over the samples
//     disagree (non-determinism), and every live-server problem (not
//     serving, other functions, another fingerprint, other scores);
//   - warnings: a function whose parameters let a program pass without
//     solving the task, NOT_APPLICABLE on most rows, constant over its OK
//     rows (always 0, always 1, …), reading a row field that no sample row
//     has, or zero-variance in most groups.
//
// Failures fail the check; warnings fail it only when the caller is strict
// (Report.Failed). Scoring goes through server.Service, the same code the
// server runs: this package computes statistics, it does not score.
package check

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
	"github.com/rewardd/rewardd/server/jsonl"
)

// Severity says whether a finding fails the check.
type Severity string

const (
	// Failure always fails the check.
	Failure Severity = "failure"
	// Warning fails the check only in strict mode.
	Warning Severity = "warning"
)

// Code names what a finding is about. Codes are stable: tools (and tests)
// match on them, not on messages.
type Code string

const (
	// CodeConfig: the config does not load. Report.ConfigErrors has each
	// problem.
	CodeConfig Code = "config"
	// CodeSamples: the samples file has malformed lines, or no rows.
	CodeSamples Code = "samples"
	// CodeErrors: a function scored ERROR on some sample rows.
	CodeErrors Code = "errors"
	// CodeDeterminism: two passes over the same rows gave different values
	// or statuses.
	CodeDeterminism Code = "determinism"
	// CodeNotApplicable: a function is NOT_APPLICABLE on more than half of
	// the rows, usually a missing or misnamed field.
	CodeNotApplicable Code = "mostly_not_applicable"
	// CodeConstant: a function gives the same value on every OK row.
	CodeConstant Code = "constant"
	// CodeMissingField: a function reads a row field (a *_field parameter)
	// that no sample row has.
	CodeMissingField Code = "missing_field"
	// CodeZeroVariance: in more than half of the groups, a function's scores
	// are all equal, so GRPO learns nothing from it there.
	CodeZeroVariance Code = "zero_variance"
	// CodeNoGroup: sample rows with neither a group nor a prompt, each a
	// group of its own, whose advantages say nothing of their rewards.
	CodeNoGroup Code = "no_group"
	// CodeUnsafe: a function's parameters let a program pass without
	// solving the task (scorers.Cautious).
	CodeUnsafe Code = "unsafe"
	// CodeLiveHealth: the live server does not answer health, or is not
	// SERVING.
	CodeLiveHealth Code = "live_health"
	// CodeLiveFunctions: the live server serves other functions, or does not
	// answer ListFunctions.
	CodeLiveFunctions Code = "live_functions"
	// CodeLiveFingerprint: the live server's config fingerprint differs from
	// the local config's.
	CodeLiveFingerprint Code = "live_fingerprint"
	// CodeLiveScores: the live server scores the samples differently, or
	// does not score them.
	CodeLiveScores Code = "live_scores"
)

// Finding is one problem the check found.
type Finding struct {
	Severity Severity `json:"severity"`
	Code     Code     `json:"code"`
	// Function is the function at fault, if the finding is about one.
	Function string `json:"function,omitempty"`
	Message  string `json:"message"`
}

// KindCheck is a check that only makes sense for one kind of function. Run
// calls it with the function, the sample rows and the function's scores from
// the first pass (aligned with rows), and adds the findings it returns.
//
// No kind registers one today; Run adds no finding for kinds without one.
type KindCheck func(fn *scorers.Function, rows []*jsonl.Row, scores *rewardv1.FunctionScores) []Finding

// Input is what one check run looks at.
type Input struct {
	// ConfigName names the config in the report ("rewards.yml").
	ConfigName string
	// Service scores the samples locally; its config is the one checked.
	// Give it a one-worker engine: the times per rollout are then the cost
	// of one rollout on one core, not divided by the pool's parallelism.
	Service *server.Service

	// SamplesName names the samples in the report; empty means no samples
	// were given, and the sample checks are skipped.
	SamplesName string
	// Rows are the parsed sample rows, in file order.
	Rows []*jsonl.Row
	// Malformed are the sample lines that could not be parsed; each is a
	// failure.
	Malformed []*jsonl.LineError

	// Live, when set, is a connection to a running rewardd to compare with.
	Live grpc.ClientConnInterface
	// LiveAddr names the live server in the report.
	LiveAddr string
	// LiveTimeout bounds each call to the live server (default 30 s).
	LiveTimeout time.Duration

	// BatchSize is how many rows each Score call carries (default 32,
	// capped at the config's max_rollouts). Each batch gives one sample of
	// the time per rollout, so smaller batches give a finer p50/p99 and more
	// call overhead in it.
	BatchSize int
	// KindChecks holds the extra checks of particular kinds, by kind name.
	KindChecks map[string]KindCheck
}

// DefaultBatchSize is the rows per Score call when Input.BatchSize is 0.
const DefaultBatchSize = 32

// Report is the outcome of a check.
type Report struct {
	// Config names the config file.
	Config string `json:"config"`
	// Fingerprint is the config's fingerprint (empty when it does not load).
	Fingerprint string `json:"fingerprint,omitempty"`
	// ConfigErrors holds every problem of a config that does not load.
	ConfigErrors []ConfigError `json:"config_errors,omitempty"`
	// Functions are the config's functions, all compiled.
	Functions []FunctionInfo `json:"functions,omitempty"`
	// Samples holds the statistics of the sample run, if samples were given.
	Samples *SamplesReport `json:"samples,omitempty"`
	// Live holds what the live server said, if one was checked.
	Live *LiveReport `json:"live,omitempty"`
	// Languages says which code_exec languages this machine can run.
	Languages *Languages `json:"code_exec_languages,omitempty"`
	// Findings are the failures and warnings, in the order they were found.
	Findings []Finding `json:"findings"`
	// Failures and Warnings count the findings of each severity.
	Failures int `json:"failures"`
	Warnings int `json:"warnings"`
}

// ConfigError is one problem of a config file (a config.Error, flattened
// for JSON).
type ConfigError struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Function string `json:"function,omitempty"`
	Key      string `json:"key,omitempty"`
	Message  string `json:"message"`
}

// FunctionInfo describes one compiled function of the config.
type FunctionInfo struct {
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	Weight float64 `json:"weight"`
}

// Failed reports whether the check failed: any failure, or in strict mode
// any warning too.
func (r *Report) Failed(strict bool) bool {
	return r.Failures > 0 || strict && r.Warnings > 0
}

func (r *Report) add(sev Severity, code Code, function, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Severity: sev, Code: code, Function: function, Message: fmt.Sprintf(format, args...)})
	if sev == Failure {
		r.Failures++
	} else {
		r.Warnings++
	}
}

// ConfigFailed returns the report of a config that does not load: one
// failure, and every problem in ConfigErrors.
func ConfigFailed(name string, errs config.Errors) *Report {
	r := &Report{Config: name}
	for _, e := range errs {
		r.ConfigErrors = append(r.ConfigErrors, ConfigError{
			File: e.File, Line: e.Line, Column: e.Column, Function: e.Function, Key: e.Key, Message: e.Err.Error(),
		})
	}
	r.add(Failure, CodeConfig, "", "%s does not load: %d problem(s)", name, len(errs))
	return r
}

// Run checks in's config: on the samples when there are some, against the
// live server when there is one. Problems with the config or the server are
// findings in the report; the error is for the check itself not running to
// its end (ctx ended, the local service refused a batch).
func Run(ctx context.Context, in Input) (*Report, error) {
	cfg := in.Service.Config()
	r := &Report{Config: in.ConfigName, Fingerprint: cfg.Fingerprint, Findings: []Finding{}}
	for _, fn := range cfg.Functions {
		r.Functions = append(r.Functions, FunctionInfo{Name: fn.Name, Kind: fn.Kind, Weight: cfg.Weights[fn.Name]})
		if c, ok := fn.Scorer.(scorers.Cautious); ok {
			for _, msg := range c.Cautions() {
				r.add(Warning, CodeUnsafe, fn.Name, "%s", msg)
			}
		}
	}
	batch := in.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	batch = min(batch, cfg.Limits.MaxRollouts)

	var local *localScores
	if in.SamplesName != "" {
		var err error
		if local, err = checkSamples(ctx, r, in, batch); err != nil {
			return nil, err
		}
	}
	if in.Live != nil {
		if err := checkLive(ctx, r, in, local, batch); err != nil {
			return nil, err
		}
	}
	return r, nil
}
