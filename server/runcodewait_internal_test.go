package server

import (
	"testing"
	"time"
)

// TestRunCodeWait: /run_code answers before its SandboxFusion client gives
// up: verl waits compile_timeout + run_timeout + 10 s; SandboxFusion's
// defaults stand for a timeout the request lacks or that is no number of
// seconds; limits.request_timeout bounds it.
func TestRunCodeWait(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name         string
		compile, run *float64
		limit, want  time.Duration
	}{
		{"verl's defaults", f(10), f(10), 2 * time.Minute, 28 * time.Second},
		{"timeout 1", f(1), f(1), 2 * time.Minute, 10 * time.Second},
		{"fractions", f(0.5), f(2.25), 2 * time.Minute, 10750 * time.Millisecond},
		{"none", nil, nil, 2 * time.Minute, 28 * time.Second},
		{"not numbers of seconds", f(-1), f(0), 2 * time.Minute, 28 * time.Second},
		{"over the request timeout", f(10), f(1e300), time.Minute, time.Minute},
		{"a short request timeout", f(10), f(10), 5 * time.Second, 5 * time.Second},
	} {
		if got := runCodeWait(&runCodeRequest{CompileTimeout: c.compile, RunTimeout: c.run}, c.limit); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
