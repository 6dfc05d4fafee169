package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server/config"
)

func load(t *testing.T, name string) (*config.Config, error) {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return config.Load(path, data, builtin.Registry())
}

func TestGood(t *testing.T) {
	cfg, err := load(t, "math.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"accuracy", "format", "cites"}; !slices.Equal(cfg.Names(), want) {
		t.Errorf("functions = %v, want %v", cfg.Names(), want)
	}
	for i, kind := range []string{"exact_match", "format", "regex"} {
		if got := cfg.Functions[i].Kind; got != kind {
			t.Errorf("function %s is of kind %s, want %s", cfg.Functions[i].Name, got, kind)
		}
	}
	if w := cfg.Weights; w["accuracy"] != 1 || w["format"] != 0.2 || w["cites"] != 1 {
		t.Errorf("weights = %v, want accuracy 1, format 0.2, cites 1 (the default)", w)
	}
	if a := cfg.Aggregation; a == nil || a.Mode != "normalize_then_sum" || a.Scale != "group" {
		t.Errorf("aggregation = %+v", a)
	}
	if cfg.Limits.MaxRollouts != 4096 || cfg.Limits.RequestTimeout != 30*time.Second {
		t.Errorf("limits = %+v, want max_rollouts 4096, request_timeout 30s", cfg.Limits)
	}
	if d := config.DefaultLimits(); cfg.Limits.MaxCompletionBytes != d.MaxCompletionBytes {
		t.Errorf("unset limit max_completion_bytes = %d, want the default %d", cfg.Limits.MaxCompletionBytes, d.MaxCompletionBytes)
	}
	if !strings.HasPrefix(cfg.Fingerprint, "sha256:") {
		t.Errorf("fingerprint %q", cfg.Fingerprint)
	}
}

func TestFingerprint(t *testing.T) {
	a, err := load(t, "math.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := load(t, "math-reordered.good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint != b.Fingerprint {
		t.Errorf("same meaning, different fingerprints: %s vs %s", a.Fingerprint, b.Fingerprint)
	}
	data, _ := os.ReadFile("testdata/math.good.yml")
	for _, change := range []struct{ from, to string }{
		{"format: 0.2", "format: 0.3"},
		{"count_target: 3", "count_target: 4"},
		{"mode: normalize_then_sum", "mode: sum_then_normalize"},
		{"name: cites", "name: citations"},
		{"max_rollouts: 4096", "max_rollouts: 4096\n  max_completion_bytes: 30"},
		{"max_rollouts: 4096", "max_rollouts: 4096\n  max_prompt_bytes: 1000"},
	} {
		changed := strings.Replace(string(data), change.from, change.to, 1)
		c, err := config.Load("changed.yml", []byte(changed), builtin.Registry())
		if err != nil {
			t.Fatalf("%s → %s: %v", change.from, change.to, err)
		}
		if c.Fingerprint == a.Fingerprint {
			t.Errorf("%s → %s did not change the fingerprint", change.from, change.to)
		}
	}
}

// TestFingerprintEffective checks that the fingerprint is of the config a
// server runs: defaults written out or left out fingerprint the same, and a
// limit that changes scores changes it while one that does not leaves it.
func TestFingerprintEffective(t *testing.T) {
	fingerprint := func(src string) string {
		t.Helper()
		cfg, err := config.Load("f.yml", []byte(src), builtin.Registry())
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return cfg.Fingerprint
	}
	const short = "functions:\n  - {name: acc, kind: exact_match}\n"
	base := fingerprint(short)
	for _, same := range []string{
		"functions:\n  - {name: acc, kind: exact_match, reference_field: answer, extract: [none], normalize: [strip], tolerance: 0}\n",
		short + "limits: {max_completion_bytes: 1048576}\n",
		short + "limits: {max_connections: 16, request_timeout: 10s, max_inflight_requests: 8}\n",
	} {
		if got := fingerprint(same); got != base {
			t.Errorf("%s\nfingerprints %s, want %s as\n%s", same, got, base, short)
		}
	}
	for _, other := range []string{
		short + "limits: {max_completion_bytes: 30}\n",
		short + "limits: {max_prompt_bytes: 30}\n",
		"functions:\n  - {name: acc, kind: exact_match, normalize: [strip, lower]}\n",
	} {
		if got := fingerprint(other); got == base {
			t.Errorf("%s\nfingerprints as\n%s", other, short)
		}
	}
}

// want is one expected problem: where it is and what is at fault.
type want struct {
	line     int
	function string
	key      string
}

func TestBad(t *testing.T) {
	cases := map[string][]want{
		"unknown-top-key.bad.yml":      {{4, "", "wieghts"}},
		"unknown-function-key.bad.yml": {{5, "accuracy", "extrct"}},
		"bad-regex.bad.yml":            {{6, "cites", "pattern"}},
		"unknown-kind.bad.yml":         {{3, "judge", "kind"}},
		"duplicate-name.bad.yml":       {{4, "format", "functions[1].name"}},
		"weight-for-nothing.bad.yml":   {{6, "", "weights.acuracy"}},
		"bad-aggregation.bad.yml":      {{5, "", "aggregation.mode"}},
		"bad-limit.bad.yml":            {{5, "", "limits.max_rollouts"}},
		"bad-inline.bad.yml":           {{5, "", "inline.kinds"}, {6, "", "inline.code_exec_limits"}},
		"bad-memory-budget.bad.yml":    {{5, "", "limits.memory_budget"}},
		"bad-compat.bad.yml":           {{6, "", "compat.verify.unscorable_reward"}},
		"bad-queue.bad.yml":            {{5, "", "limits.queue_bytes"}},
		"wrong-type.bad.yml":           {{6, "cites", "count_target"}},
		"no-functions.bad.yml":         {{1, "", "functions"}},
		"many-problems.bad.yml": {
			{5, "a", "pattern"},
			{8, "b", "extract"},
			{11, "c", "mode"},
			{13, "", "weights.d"},
		},
		"zero-limit.bad.yml": {{6, "", "inline.code_exec_limits.cpu_seconds"}},
		"one-function-many-problems.bad.yml": {
			{6, "acc", "normalize"},
			{7, "acc", "tolerance"},
			{10, "rep", "ngram_size"},
			{14, "sim", "max_chars"},
			{17, "cites", "pattern"},
			{18, "cites", "modee"},
		},
	}
	files, _ := filepath.Glob("testdata/*.bad.yml")
	if len(files) != len(cases) {
		t.Errorf("%d bad files in testdata, %d cases: every bad file needs its expected errors", len(files), len(cases))
	}
	for name, wants := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, name)
			var errs config.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			t.Logf("error as the user sees it:\n%v", err)
			if len(errs) != len(wants) {
				t.Fatalf("%d errors, want %d", len(errs), len(wants))
			}
			for i, w := range wants {
				e := errs[i]
				if e.Line != w.line || e.Function != w.function || e.Key != w.key {
					t.Errorf("error %d at line %d, function %q, key %q; want line %d, function %q, key %q",
						i, e.Line, e.Function, e.Key, w.line, w.function, w.key)
				}
				if e.File != filepath.Join("testdata", name) {
					t.Errorf("error %d names file %q", i, e.File)
				}
			}
		})
	}
}

func TestNotYAML(t *testing.T) {
	_, err := config.Load("x.yml", []byte("functions: [\n"), builtin.Registry())
	var errs config.Errors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("err = %v, want one config error", err)
	}
}

// TestMemoryBudgetUnderTheGoLimit: a budget in the file above the Go memory
// limit (GOMEMLIMIT) is an error naming both; the default budget is lowered
// to the limit, and says so.
func TestMemoryBudgetUnderTheGoLimit(t *testing.T) {
	const goLimit = 256 << 20
	was := debug.SetMemoryLimit(goLimit)
	t.Cleanup(func() { debug.SetMemoryLimit(was) })

	src := string(config.Default()) + "limits: {memory_budget: 1GiB}\n"
	_, err := config.Load("budget.yml", []byte(src), builtin.Registry())
	if err == nil || !strings.Contains(err.Error(), "limits.memory_budget") || !strings.Contains(err.Error(), "GOMEMLIMIT") || !strings.Contains(err.Error(), "256 MiB") {
		t.Errorf("memory_budget 1GiB under GOMEMLIMIT=256MiB: %v; want an error naming limits.memory_budget, GOMEMLIMIT and 256 MiB", err)
	}

	cfg, err := config.Load("default.yml", config.Default(), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Limits.MemoryBudget; got > goLimit {
		t.Errorf("default memory budget %s under GOMEMLIMIT=256MiB, want at most the limit", got)
	}
	if got := cfg.Limits.MemoryBudget; got == goLimit && !strings.Contains(cfg.Limits.MemoryBudgetSource(), "GOMEMLIMIT") {
		t.Errorf("the budget is the Go limit, and its source says %q", cfg.Limits.MemoryBudgetSource())
	}

	src = string(config.Default()) + "limits: {memory_budget: 200MiB}\n"
	if cfg, err = config.Load("below.yml", []byte(src), builtin.Registry()); err != nil {
		t.Errorf("memory_budget 200MiB under GOMEMLIMIT=256MiB: %v", err)
	} else if cfg.Limits.MemoryBudget != 200<<20 {
		t.Errorf("memory_budget 200MiB under GOMEMLIMIT=256MiB: budget %v, want it as set", cfg.Limits.MemoryBudget)
	}
}
