package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/server/check"
)

const checkData = "testdata/check"

// checkJSON runs `rewardd check … --json` and decodes the report.
func checkJSON(t *testing.T, args ...string) (r check.Report, stderr string, exit int) {
	t.Helper()
	stdout, stderr, exit := runRewardd(t, "", append(append([]string{"check"}, args...), "--json")...)
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("check %v: stdout is not a JSON report (%v), exit %d:\n%s\nstderr:\n%s", args, err, exit, stdout, stderr)
	}
	return r, stderr, exit
}

// findingKeys lists findings as "severity/code/function", sorted: what a
// finding is and where, not its message.
func findingKeys(r check.Report) []string {
	var keys []string
	for _, f := range r.Findings {
		keys = append(keys, fmt.Sprintf("%s/%s/%s", f.Severity, f.Code, f.Function))
	}
	slices.Sort(keys)
	return keys
}

func TestCheckGoodConfigs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(checkData, "*.good.yml"))
	if len(files) == 0 {
		t.Fatal("no good configs in testdata")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r, stderr, exit := checkJSON(t, "--config", path)
			if exit != 0 || len(r.Findings) != 0 || len(r.ConfigErrors) != 0 {
				t.Errorf("exit %d, findings %v, config errors %v; stderr:\n%s", exit, r.Findings, r.ConfigErrors, stderr)
			}
			if len(r.Functions) == 0 || !strings.HasPrefix(r.Fingerprint, "sha256:") || r.Config != path {
				t.Errorf("report names config %q, %d functions, fingerprint %q", r.Config, len(r.Functions), r.Fingerprint)
			}
			if _, _, exit := runRewardd(t, "", "check", "--config", path); exit != 0 {
				t.Errorf("table output: exit %d", exit)
			}
		})
	}
	// The embedded default, too.
	if r, _, exit := checkJSON(t); exit != 0 || len(r.Functions) != 6 {
		t.Errorf("default config: exit %d, %d functions", exit, len(r.Functions))
	}
}

// wantError is one expected config problem: where it is and what is at
// fault.
type wantError struct {
	line     int
	function string
	key      string
}

// TestCheckBadConfigs: every problem of a bad config is reported at once,
// each with its file, line, function and key; the exit status is 2.
func TestCheckBadConfigs(t *testing.T) {
	cases := map[string][]wantError{
		"many-problems.bad.yml": {
			{6, "accuracy", "extract"},
			{9, "cites", "pattern"},
			{13, "format", "tagz"},
			{16, "", "weights.acuracy"},
			{18, "", "aggregation.mode"},
		},
		"unknown-kind.bad.yml":     {{5, "judge", "kind"}},
		"field-typo.bad.yml":       {{6, "accuracy", "reference_feild"}},
		"wrong-type.bad.yml":       {{6, "steps", "count_target"}},
		"hatchery-weights.bad.yml": {{7, "format", "weights.format"}},
		"duplicate-name.bad.yml":   {{4, "format", "functions[1].name"}},
	}
	files, _ := filepath.Glob(filepath.Join(checkData, "*.bad.yml"))
	if len(files) != len(cases) {
		t.Errorf("%d bad configs in testdata, %d cases: every bad config needs its expected errors", len(files), len(cases))
	}
	for name, wants := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(checkData, name)
			r, stderr, exit := checkJSON(t, "--config", path)
			if exit != 2 {
				t.Errorf("exit %d, want 2", exit)
			}
			t.Logf("as the user sees it:\n%s", stderr)
			if len(r.ConfigErrors) != len(wants) {
				t.Fatalf("%d config errors, want %d: %+v", len(r.ConfigErrors), len(wants), r.ConfigErrors)
			}
			for i, w := range wants {
				e := r.ConfigErrors[i]
				if e.File != path || e.Line != w.line || e.Function != w.function || e.Key != w.key || e.Message == "" {
					t.Errorf("error %d: %s line %d, function %q, key %q; want %s line %d, function %q, key %q",
						i, e.File, e.Line, e.Function, e.Key, path, w.line, w.function, w.key)
				}
			}
			if keys := findingKeys(r); !slices.Equal(keys, []string{"failure/config/"}) {
				t.Errorf("findings %v", keys)
			}
			// Without --json: every problem on stderr, one line each, with
			// its file and line.
			_, stderr, exit = runRewardd(t, "", "check", "--config", path)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if exit != 2 || len(lines) != len(wants) {
				t.Fatalf("table mode: exit %d, %d stderr lines for %d problems:\n%s", exit, len(lines), len(wants), stderr)
			}
			for i, w := range wants {
				if !strings.Contains(lines[i], fmt.Sprintf("%s:%d", path, w.line)) {
					t.Errorf("stderr line %d does not locate %s:%d: %s", i, path, w.line, lines[i])
				}
			}
		})
	}
}

// TestCheckWarnings: warnings.jsonl trips every warning of warnings.good.yml.
// Warnings print but exit 0, unless --strict.
func TestCheckWarnings(t *testing.T) {
	args := []string{"--config", filepath.Join(checkData, "warnings.good.yml"), "--samples", filepath.Join(checkData, "warnings.jsonl")}
	r, stderr, exit := checkJSON(t, args...)
	if exit != 0 {
		t.Errorf("exit %d with warnings only, want 0; stderr:\n%s", exit, stderr)
	}
	want := []string{
		"warning/constant/cites",
		"warning/missing_field/solution_match",
		"warning/mostly_not_applicable/accuracy",
		"warning/mostly_not_applicable/solution_match",
		"warning/zero_variance/polite",
	}
	if keys := findingKeys(r); !slices.Equal(keys, want) {
		t.Errorf("findings %v, want %v", keys, want)
	}
	if r.Samples == nil || r.Samples.Rows != 6 || r.Samples.Groups != 2 || r.Warnings != len(want) || r.Failures != 0 {
		t.Errorf("samples %+v, %d warnings, %d failures", r.Samples, r.Warnings, r.Failures)
	}
	_, stderr, exit = runRewardd(t, "", append([]string{"check", "--strict"}, args...)...)
	if exit != 1 {
		t.Errorf("--strict with warnings: exit %d, want 1; stderr:\n%s", exit, stderr)
	}
}

// TestCheckFailures: ERROR rows and malformed lines fail the check (exit 1).
func TestCheckFailures(t *testing.T) {
	r, _, exit := checkJSON(t, "--config", filepath.Join(checkData, "math.good.yml"), "--samples", filepath.Join(checkData, "errors.jsonl"))
	if exit != 1 {
		t.Errorf("exit %d, want 1", exit)
	}
	want := []string{"failure/errors/accuracy", "failure/samples/", "failure/samples/", "warning/constant/cites"}
	if keys := findingKeys(r); !slices.Equal(keys, want) {
		t.Errorf("findings %v, want %v", keys, want)
	}
	for _, st := range r.Samples.Functions {
		if st.Name == "accuracy" && (st.Error != 2 || st.OK != 1 || st.ErrorShare != 2.0/3) {
			t.Errorf("accuracy: %d ERROR, %d OK, error share %v; want 2, 1, 2/3", st.Error, st.OK, st.ErrorShare)
		}
	}
	if r.Samples.Malformed != 2 {
		t.Errorf("%d malformed lines, want 2", r.Samples.Malformed)
	}
}

// TestCheckClean: rows where every function varies within its groups pass
// even --strict. verifiers.jsonl's rows carry the fields of the kinds
// instruction_following, multiple_choice, json_schema and tool_call, each
// group one row right by all four and one wrong by all four.
func TestCheckClean(t *testing.T) {
	for _, c := range []struct{ config, samples string }{
		{filepath.Join(checkData, "math.good.yml"), filepath.Join(checkData, "clean.jsonl")},
		{"", filepath.Join(checkData, "default.jsonl")},
		{filepath.Join(checkData, "verifiers.good.yml"), filepath.Join(checkData, "verifiers.jsonl")},
	} {
		args := []string{"--samples", c.samples, "--strict"}
		if c.config != "" {
			args = append(args, "--config", c.config)
		}
		r, stderr, exit := checkJSON(t, args...)
		if exit != 0 || len(r.Findings) != 0 {
			t.Errorf("%s on %s: exit %d, findings %v; stderr:\n%s", c.config, c.samples, exit, r.Findings, stderr)
		}
		for _, st := range r.Samples.Functions {
			if !st.Deterministic || st.OK != st.Rows || st.P50Seconds <= 0 {
				t.Errorf("%s: %+v", st.Name, st)
			}
			if strings.HasSuffix(c.samples, "verifiers.jsonl") && (st.Rows != 4 || st.Mean == nil || *st.Mean != 0.5 || *st.Min != 0 || *st.Max != 1) {
				t.Errorf("%s on verifiers.jsonl: %d rows, mean %v, min %v, max %v; want 4 rows, half of them 1, half 0", st.Name, st.Rows, st.Mean, st.Min, st.Max)
			}
		}
		if strings.HasSuffix(c.samples, "verifiers.jsonl") && len(r.Samples.Functions) != 4 {
			t.Errorf("verifiers.jsonl: %d functions checked, want 4", len(r.Samples.Functions))
		}
	}
}

// TestCheckLive runs a real `rewardd serve` on the embedded default config
// and checks it: with the same config it passes and scores equal; with
// other.good.yml (same functions, other weights) it fails, naming both
// fingerprints.
func TestCheckLive(t *testing.T) {
	srv := startServer(t)
	samples := filepath.Join(checkData, "default.jsonl")

	same, stderr, exit := checkJSON(t, "--samples", samples, "--addr", srv.grpcAddr)
	if exit != 0 || len(same.Findings) != 0 {
		t.Fatalf("same config: exit %d, findings %v; stderr:\n%s", exit, same.Findings, stderr)
	}
	l := same.Live
	if l == nil || l.Health != "SERVING" || l.Fingerprint != same.Fingerprint || l.RowsCompared != 8 ||
		!slices.Equal(l.Functions, []string{"accuracy", "format", "tag_count", "reasoning_steps", "repetition", "overlong"}) {
		t.Fatalf("live report %+v", l)
	}
	for name, n := range l.Mismatches {
		if n != 0 {
			t.Errorf("%s: %d rows scored differently by the server", name, n)
		}
	}

	other := filepath.Join(checkData, "other.good.yml")
	r, _, exit := checkJSON(t, "--config", other, "--samples", samples, "--addr", srv.grpcAddr)
	if exit != 1 {
		t.Errorf("other config: exit %d, want 1", exit)
	}
	// Same functions and parameters, so the same scores: only the
	// fingerprint (the weights) differs.
	if keys := findingKeys(r); !slices.Equal(keys, []string{"failure/live_fingerprint/"}) {
		t.Errorf("findings %v, want only the fingerprint failure", keys)
	}
	served, local := same.Fingerprint, r.Fingerprint
	if r.Live.Fingerprint != served || local == served {
		t.Fatalf("live fingerprint %q, local %q, served %q", r.Live.Fingerprint, local, served)
	}
	stdout, stderr, exit := runRewardd(t, "", "check", "--config", other, "--addr", srv.grpcAddr)
	t.Logf("rewardd check --config %s --addr %s (exit %d):\n%s%s", other, srv.grpcAddr, exit, stdout, stderr)
	if exit != 1 || !strings.Contains(stdout, served) || !strings.Contains(stdout, local) {
		t.Errorf("exit %d; want 1 and a report naming both the served fingerprint %s and the local %s", exit, served, local)
	}
}

func TestCheckUnreachableServer(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	r, _, exit := checkJSON(t, "--addr", addr)
	if exit != 1 || !slices.Equal(findingKeys(r), []string{"failure/live_health/"}) {
		t.Errorf("nobody at %s: exit %d, findings %v; want 1 and a health failure", addr, exit, findingKeys(r))
	}
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{
		{"check", "extra"},
		{"check", "--frobnicate"},
		{"check", "--samples", filepath.Join(t.TempDir(), "missing.jsonl")},
		{"check", "--config", filepath.Join(t.TempDir(), "missing.yml")},
	} {
		if _, stderr, exit := runRewardd(t, "", args...); exit != 2 {
			t.Errorf("%v: exit %d, want 2; stderr:\n%s", args, exit, stderr)
		}
	}
}

// gsm8kCheckSamples writes the samples of docs/check.md's table with the
// script that ships for it, examples/check/gsm8k_samples.py: four
// completions per question, one group per question.
func gsm8kCheckSamples(t *testing.T, questions int) string {
	t.Helper()
	const data = "../../../shared/data/gsm8k_test.jsonl"
	if _, err := os.Stat(data); err != nil {
		t.Skipf("GSM8K data not found (CI has ../shared beside the repo): %v", err)
	}
	out, err := exec.Command("/usr/bin/python3", "../../examples/check/gsm8k_samples.py", data, "--questions", strconv.Itoa(questions)).Output()
	if err != nil {
		t.Fatalf("gsm8k_samples.py: %v", err)
	}
	path := filepath.Join(t.TempDir(), "gsm8k-samples.jsonl")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckGSM8K checks the embedded default config on 400 GSM8K rows and
// logs the table a user sees.
func TestCheckGSM8K(t *testing.T) {
	const questions = 100
	samples := gsm8kCheckSamples(t, questions)
	stdout, stderr, exit := runRewardd(t, "", "check", "--samples", samples)
	t.Logf("rewardd check --samples gsm8k-samples.jsonl (exit %d):\n%s%s", exit, stdout, stderr)
	if exit != 0 {
		t.Errorf("exit %d, want 0", exit)
	}

	r, _, _ := checkJSON(t, "--samples", samples)
	if r.Failures != 0 || r.Samples.Rows != 4*questions || r.Samples.Groups != questions {
		t.Fatalf("%d failures, %d rows, %d groups", r.Failures, r.Samples.Rows, r.Samples.Groups)
	}
	want := map[string]float64{"accuracy": 0.5, "format": 0.5, "tag_count": 0.5}
	for _, st := range r.Samples.Functions {
		if !st.Deterministic || st.OK != st.Rows || st.Error != 0 {
			t.Errorf("%s: deterministic=%v, %d OK of %d, %d ERROR", st.Name, st.Deterministic, st.OK, st.Rows, st.Error)
		}
		mean := math.NaN()
		if st.Mean != nil {
			mean = *st.Mean
		}
		if w, ok := want[st.Name]; ok && (mean != w || st.ZeroVarianceGroups != 0 || st.Groups != questions) {
			t.Errorf("%s: mean %v, %d of %d groups zero-variance; want mean %v and none of %d", st.Name, mean, st.ZeroVarianceGroups, st.Groups, w, questions)
		}
	}
}

// TestCheckUnsafe: a code_exec function that lets a program redefine the
// prompt's helpers is a warning (exit 0; 1 with --strict), naming the
// parameter; the same function with the default is not.
func TestCheckUnsafe(t *testing.T) {
	args := []string{"--config", filepath.Join(checkData, "unsafe.warn.yml")}
	r, stderr, exit := checkJSON(t, args...)
	if exit != 0 {
		t.Errorf("exit %d with a warning only, want 0; stderr:\n%s", exit, stderr)
	}
	if keys := findingKeys(r); !slices.Equal(keys, []string{"warning/unsafe/humaneval"}) {
		t.Errorf("findings %v, want the one unsafe function", keys)
	}
	for _, f := range r.Findings {
		if !strings.Contains(f.Message, "restore_prompt_helpers") {
			t.Errorf("finding %q does not name the parameter", f.Message)
		}
	}
	if _, stderr, exit = runRewardd(t, "", append([]string{"check", "--strict"}, args...)...); exit != 1 {
		t.Errorf("--strict: exit %d, want 1; stderr:\n%s", exit, stderr)
	}
}
