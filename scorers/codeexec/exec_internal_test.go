package codeexec

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// executorPool starts a sandbox pool of slots slots for the test, with its
// metrics on reg, and an Executor over it; both are closed at the end,
// the Executor first.
func executorPool(t *testing.T, slots int, reg *prometheus.Registry) *Executor {
	t.Helper()
	sandboxtest.SkipUnlessRoot(t)
	p, err := sandbox.Start(context.Background(), sandbox.Config{Slots: slots, Languages: []string{"python"}, Metrics: sandbox.NewMetrics(reg)})
	if err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	e := NewExecutor(func() (Runner, error) { return p, nil })
	t.Cleanup(e.Close)
	return e
}

// executions is how many programs the pool's sandbox has run to their end.
func executions(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, f := range families {
		if f.GetName() == "rewardd_sandbox_executions_total" {
			for _, m := range f.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return int(n)
}

// tokenProgram prints a random token of its run, then sleeps as many
// seconds as its stdin says.
const tokenProgram = "import os, sys, time\nprint(os.urandom(8).hex(), flush=True)\ntime.sleep(float(sys.stdin.read()))\n"

func tokenJob(sleep string, limits sandbox.Limits) ExecJob {
	return ExecJob{Language: "python", Source: tokenProgram, Stdin: sleep, Limits: limits}
}

func token(t *testing.T, res ExecResult, err error) string {
	t.Helper()
	if err != nil || res.Run == nil || res.Run.Status != sandbox.Ran {
		t.Fatalf("the run: %+v, %v; want it to have run", res.Run, err)
	}
	return strings.TrimSpace(string(res.Run.Stdout))
}

// TestExecutorRetryWaitsForTheSameRun: a call that stops waiting leaves
// its run going, and the same call made again gets that run's result:
// the program ran once. Calls made at once share one run; a call made
// after another took the run's result runs the program again.
func TestExecutorRetryWaitsForTheSameRun(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := executorPool(t, 2, reg)
	job := tokenJob("1", sandbox.DefaultLimits())

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := e.Exec(ctx, job); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call whose deadline ends before its 1 s run: %v, want its deadline", err)
	}
	res, err := e.Exec(context.Background(), job)
	first := token(t, res, err)
	if n := executions(t, reg); n != 1 {
		t.Errorf("a call given up and made again: the sandbox ran %d programs, want 1 (the retry waits for the first run)", n)
	}

	// At once: both wait for the run of the first, which sleeps a second.
	var wg sync.WaitGroup
	tokens := make([]string, 2)
	for i := range tokens {
		wg.Go(func() {
			res, err := e.Exec(context.Background(), job)
			if err == nil && res.Run != nil {
				tokens[i] = strings.TrimSpace(string(res.Run.Stdout))
			}
		})
	}
	wg.Wait()
	if tokens[0] == "" || tokens[0] != tokens[1] || tokens[0] == first {
		t.Errorf("two calls at once, after the first's result was taken: tokens %q, want one new run's token twice (not %q)", tokens, first)
	}
	if n := executions(t, reg); n != 2 {
		t.Errorf("the sandbox ran %d programs, want 2", n)
	}
}

// TestExecutorCancelsAbandonedRuns: a run no call has waited for in the
// grace is cancelled, so it gives its slot back: on a pool of one slot, a
// program that would sleep for a minute leaves room for another call soon
// after its caller gave up. Close ends the runs left and fails later calls.
func TestExecutorCancelsAbandonedRuns(t *testing.T) {
	e := executorPool(t, 1, prometheus.NewRegistry())
	e.grace = 200 * time.Millisecond
	long := sandbox.Limits{CPUSeconds: 30, WallSeconds: 120, MemoryMB: 256, OutputKB: 64, Processes: 16}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := e.Exec(ctx, tokenJob("60", long)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call whose deadline ends before its run: %v, want its deadline", err)
	}
	// The sleeper's own limit would end it after 60 s: a bound of 50 s
	// on the next call tells a cancelled run from one that went on.
	next, cancelNext := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancelNext()
	res, err := e.Exec(next, tokenJob("0", long))
	token(t, res, err)

	// Abandoned, then closed: Close cancels it, and Exec fails after.
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	e.grace = time.Hour
	e.Exec(ctx, tokenJob("60", long))
	e.Close()
	if _, err := e.Exec(context.Background(), tokenJob("0", long)); !errors.Is(err, errExecutorClosed) {
		t.Errorf("Exec after Close: %v, want %v", err, errExecutorClosed)
	}
}
