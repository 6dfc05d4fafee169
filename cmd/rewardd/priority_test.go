package main

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/proctest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// TestServeLowersHeavyRequests: `rewardd serve` scores a request that
// brings a lot of work on a thread at --worker-nice lower priority, once it
// has used 20ms, and gives the priority back after; a light request is not
// lowered.
func TestServeLowersHeavyRequests(t *testing.T) {
	srv := startServer(t, "--workers", "1", "--worker-nice", "7")
	if strings.Contains(srv.logText(), "--worker-nice is off") {
		t.Skip("the server says it cannot raise a thread's priority back (no CAP_SYS_NICE, RLIMIT_NICE too low), so it lowers nothing")
	}
	if !strings.Contains(srv.logText(), `"worker_nice":7`) {
		t.Errorf("the start log does not say worker_nice 7:\n%s", srv.logText())
	}
	pid := strconv.Itoa(srv.cmd.Process.Pid)
	base := proctest.ThreadNices(t, pid)[pid]
	client := srv.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// 512 rollouts of 16 KB of words: the default functions take well over
	// 20ms on them.
	words := strings.Repeat("the answer follows from the steps above so ", 16<<10/43)
	heavy := &rewardv1.ScoreRequest{}
	for i := range 512 {
		heavy.Rollouts = append(heavy.Rollouts, &rewardv1.Rollout{
			Completion: "<think>" + words + strconv.Itoa(i) + "</think><answer>7</answer>",
			Fields:     &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue("7")}},
		})
	}
	lowest := base
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			for _, n := range proctest.ThreadNices(t, pid) {
				lowest = max(lowest, n)
			}
		}
	})
	resp, err := client.Score(ctx, heavy)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(resp.GetFunctions()[0].GetValues()); got != 512 {
		t.Fatalf("%d values for 512 rollouts", got)
	}
	if lowest != base+7 {
		t.Errorf("while the heavy request scored, the lowest thread priority seen was nice %d; want %d (the server's %d + 7)", lowest, base+7, base)
	}
	// The request's scoring goroutine is lowered, and its handler's too
	// when decoding the 8 MiB message alone passes 20ms (as under -race).
	heavyLowered := metric(t, srv, "rewardd_pool_lowered_total")
	if heavyLowered != "1" && heavyLowered != "2" {
		t.Errorf("rewardd_pool_lowered_total %s after one heavy request on one worker, want 1 (or 2, with its decoding)", heavyLowered)
	}
	if _, err := client.Score(ctx, &rewardv1.ScoreRequest{Rollouts: heavy.Rollouts[:1]}); err != nil {
		t.Fatal(err)
	}
	if n := metric(t, srv, "rewardd_pool_lowered_total"); n != heavyLowered {
		t.Errorf("rewardd_pool_lowered_total %s after a 1-rollout request, want %s still", n, heavyLowered)
	}
	proctest.AwaitAllAt(t, pid, base)
}

// metric is the value of the sample named name (with its labels, if any)
// as srv's /metrics says it.
func metric(t *testing.T, srv *process, name string) string {
	t.Helper()
	code, metrics := httpGet(t, "http://"+srv.httpAddr+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatalf("/metrics lacks %s", name)
	return ""
}
