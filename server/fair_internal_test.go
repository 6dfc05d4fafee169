package server

import (
	"context"
	"testing"
	"time"

	"github.com/sourcegraph/conc"
)

// TestGateHeadStart: a request that arrives while another holds the only
// slot takes it at the holder's next span, and the holder gets it back
// when the newcomer is done.
func TestGateHeadStart(t *testing.T) {
	ctx := context.Background()
	g := newFairGate(1)
	long := runFor(t, g, 2*joinCredit)
	short := g.join(0)
	var wg conc.WaitGroup
	defer wg.Wait()
	shortIn := make(chan error, 1)
	wg.Go(func() { shortIn <- g.acquire(ctx, short) })
	waitForWaiters(t, g, 1)
	longBack := make(chan error, 1)
	wg.Go(func() { longBack <- g.next(ctx, long) })
	if err := <-shortIn; err != nil {
		t.Fatal(err)
	}
	waitForWaiters(t, g, 1) // long, behind the newcomer
	select {
	case <-longBack:
		t.Fatal("the long request kept the slot although a newcomer has used less")
	default:
	}
	g.release()
	if err := <-longBack; err != nil {
		t.Fatal(err)
	}
	g.release()
}

// TestGateNoHeadStartPastCredit: a newcomer joins joinCredit behind the
// clock: it keeps the slot until it has used more than the request it
// overtook, which then gets the slot back at the newcomer's next span.
func TestGateNoHeadStartPastCredit(t *testing.T) {
	ctx := context.Background()
	g := newFairGate(1)
	long := runFor(t, g, 2*joinCredit) // clock 2*joinCredit, used 4*joinCredit
	late := g.join(0)                  // used joinCredit
	var wg conc.WaitGroup
	defer wg.Wait()
	lateIn := make(chan error, 1)
	wg.Go(func() { lateIn <- g.acquire(ctx, late) })
	waitForWaiters(t, g, 1)
	longBack := make(chan error, 1)
	wg.Go(func() { longBack <- g.next(ctx, long) })
	if err := <-lateIn; err != nil {
		t.Fatal(err)
	}
	waitForWaiters(t, g, 1)
	late.use(3*joinCredit - time.Millisecond) // just short of long's
	lateKept := make(chan error, 1)
	wg.Go(func() { lateKept <- g.next(ctx, late) })
	select {
	case err := <-lateKept:
		if err != nil {
			t.Fatal(err)
		}
	case <-longBack:
		// Let the newcomer's next return before failing.
		g.release()
		<-lateKept
		g.release()
		t.Fatal("the newcomer lost the slot before it had used as much as the request it overtook")
	}
	late.use(2 * time.Millisecond) // more than long
	lateBack := make(chan error, 1)
	wg.Go(func() { lateBack <- g.next(ctx, late) })
	if err := <-longBack; err != nil {
		t.Fatal(err)
	}
	g.release()
	if err := <-lateBack; err != nil {
		t.Fatal(err)
	}
	g.release()
}

// runFor returns a request that holds g's only slot, was granted it when it
// had used d (so the gate's clock is d), and has used 2d.
func runFor(t *testing.T, g *fairGate, d time.Duration) *share {
	t.Helper()
	ctx := context.Background()
	s := g.join(0)
	if err := g.acquire(ctx, s); err != nil {
		t.Fatal(err)
	}
	s.use(d)
	g.release()
	if err := g.acquire(ctx, s); err != nil {
		t.Fatal(err)
	}
	s.use(d)
	return s
}

// waitForWaiters waits until n requests wait at g (at most 10 s).
func waitForWaiters(t *testing.T, g *fairGate, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		g.mu.Lock()
		k := len(g.waiting)
		g.mu.Unlock()
		if k == n {
			return
		}
	}
	t.Fatalf("%d requests never waited at the gate", n)
}
