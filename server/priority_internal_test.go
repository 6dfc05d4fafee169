package server

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/sys/unix"

	"github.com/rewardd/rewardd/internal/proctest"
	"github.com/rewardd/rewardd/scorers"
)

// threadNice is the nice value of the calling thread.
func threadNice(t *testing.T) int {
	n, err := niceOf(0)
	if err != nil {
		t.Error(err)
	}
	return n
}

// TestHeavyRequestScoresAtLowerPriority: a request's rollouts score at the
// server's priority until it has used heavyWork, then at nice lower, with a
// spare P; after it, the priority and GOMAXPROCS are back. A light request
// is never lowered.
func TestHeavyRequestScoresAtLowerPriority(t *testing.T) {
	base, procs := threadNice(t), runtime.GOMAXPROCS(0)
	skipUnlessRaisable(t, base)
	e, m := newTestEngine(t, 1)
	e.nice, e.back = 5, newFairGate(1)
	e.procs = &spareProc{base: procs}
	type seen struct{ nice, procs int }
	var mu sync.Mutex
	var seenAt []seen
	spin := newTask("spin", func(context.Context, *scorers.Rollout) scorers.Result {
		for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
		}
		mu.Lock()
		seenAt = append(seenAt, seen{threadNice(t), runtime.GOMAXPROCS(0)})
		mu.Unlock()
		return scorers.Score(1)
	})

	if _, err := score(context.Background(), e, []task{spin}, rollouts(2)); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(m.poolLowered); n != 0 {
		t.Errorf("a request of 4ms lowered %v goroutines", n)
	}
	seenAt = nil
	if _, err := score(context.Background(), e, []task{spin}, rollouts(40)); err != nil {
		t.Fatal(err)
	}
	if first, last := seenAt[0], seenAt[len(seenAt)-1]; first != (seen{base, procs}) || last != (seen{min(base+5, maxNice), procs + 1}) {
		t.Errorf("the first rollout scored at nice %d with GOMAXPROCS %d, the last at %d with %d; want %d, %d then %d, %d",
			first.nice, first.procs, last.nice, last.procs, base, procs, min(base+5, maxNice), procs+1)
	}
	if n := testutil.ToFloat64(m.poolLowered); n != 1 {
		t.Errorf("rewardd_pool_lowered_total %v after one heavy request on one worker, want 1", n)
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after the request, want %d back", got, procs)
	}
	proctest.AwaitAllAt(t, "self", base)
}

// TestLightRequestsDoNotWaitForHeavySpans: once a heavy request's
// goroutine is lowered it runs on a slot of the heavy requests' own, so a
// light request takes the pool's one slot even while a heavy span holds on
// (here it holds until the light request is answered: were it on the
// pool's slot, the light request would wait out its deadline).
func TestLightRequestsDoNotWaitForHeavySpans(t *testing.T) {
	base := threadNice(t)
	skipUnlessRaisable(t, base)
	e, _ := newTestEngine(t, 1)
	e.nice, e.back = 5, newFairGate(1)
	lowered, light := make(chan struct{}), make(chan struct{})
	var once sync.Once
	heavy := newTask("heavy", func(context.Context, *scorers.Rollout) scorers.Result {
		for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
		}
		if threadNice(t) != base {
			once.Do(func() {
				close(lowered)
				<-light
			})
		}
		return scorers.Score(1)
	})
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := score(context.Background(), e, []task{heavy}, rollouts(40)); err != nil {
			t.Errorf("the heavy request: %v", err)
		}
	})
	defer wg.Wait()
	select {
	case <-lowered:
	case <-time.After(30 * time.Second):
		close(light)
		t.Fatal("the heavy request was not lowered within 30s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := score(ctx, e, []task{newTask("light", func(context.Context, *scorers.Rollout) scorers.Result { return scorers.Score(2) })}, rollouts(1))
	close(light)
	if err != nil || res[0][0].Outcome != scorers.OK {
		t.Errorf("the light request while a heavy span held on: %v, %+v; want it answered", err, res)
	}
}

// TestLowerPriorityNeedsToRaiseBack: on a thread without CAP_SYS_NICE,
// lowerPriority lowers nothing, as it could not raise the priority back.
func TestLowerPriorityNeedsToRaiseBack(t *testing.T) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NICE, &rl); err != nil || rl.Cur >= 20 {
		t.Skipf("RLIMIT_NICE %d (%v) lets any thread raise its priority back", rl.Cur, err)
	}
	base := threadNice(t)
	offMainThread(func() {
		runtime.LockOSThread() // this thread loses CAP_SYS_NICE: the runtime ends it after
		if os.Geteuid() == 0 {
			hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
			var data [2]unix.CapUserData
			if err := unix.Capget(&hdr, &data[0]); err != nil {
				t.Error(err)
				return
			}
			data[0].Effective &^= 1 << unix.CAP_SYS_NICE
			if err := unix.Capset(&hdr, &data[0]); err != nil {
				t.Error(err)
				return
			}
		}
		if _, err := lowerPriority(3); !errors.Is(err, errCannotRaise) {
			t.Errorf("lowerPriority without CAP_SYS_NICE: %v, want errCannotRaise", err)
		}
		if n := threadNice(t); n != base {
			t.Errorf("nice %d after lowerPriority refused, want %d", n, base)
		}
	})
}

// skipUnlessRaisable skips a test that lowers a thread where this process
// could not raise it back to nice (no CAP_SYS_NICE, RLIMIT_NICE too low),
// so that nothing is lowered.
func skipUnlessRaisable(t *testing.T, nice int) {
	if !canRaiseTo(nice) {
		t.Skipf("this process cannot raise a thread back to nice %d (no CAP_SYS_NICE, RLIMIT_NICE below %d), so the engine lowers nothing", nice, 20-nice)
	}
}

// offMainThread runs f in a goroutine locked to a thread other than the
// process's main one (which the runtime parks for good instead of ending),
// and waits for it.
func offMainThread(f func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if syscall.Gettid() == syscall.Getpid() {
			offMainThread(f) // with the main thread held, f runs on another
			return
		}
		f()
	})
	wg.Wait()
}
