package server

import (
	"context"
	"sync"
	"time"
)

// fairGate hands out the pool's slots. A free slot goes at once to whoever
// asks when nobody waits; otherwise to the waiting request that has used
// the least worker time, counted from when it arrived. A request joins
// joinCredit below the worker time of the last request served (not at
// zero, so that it cannot take more than that ahead of one that has been
// running): a request needing less than joinCredit of work is answered
// before a long one takes another turn, and past that every request gets
// an equal share of the workers however much work it brings. A small
// request thus waits at most about one span of each other request's work,
// not behind all of a large one. A long request can be held back only
// while newly arrived requests keep every worker busy (as a CPU hog under
// Linux's CFS, whose sleeper credit this is); limits.max_request_work and
// the request's deadline bound each of them.
type fairGate struct {
	mu      sync.Mutex
	free    int
	waiting []*waiter
	// clock is the used time of the last request a slot went to.
	clock time.Duration
}

// share is one request's account at the gate.
type share struct {
	// budget bounds used (0: no bound).
	budget time.Duration

	mu   sync.Mutex
	used time.Duration // since the request joined, plus the clock then
	own  time.Duration // its own worker time
}

type waiter struct {
	share   *share
	ready   chan struct{}
	granted bool // under fairGate.mu
}

func newFairGate(slots int) *fairGate { return &fairGate{free: slots} }

// joinCredit is the head start of a request that arrives: more than the few
// milliseconds of work of a 1,024-rollout batch of string functions.
const joinCredit = 50 * time.Millisecond

// join opens the account of a request with the given worker time budget.
func (g *fairGate) join(budget time.Duration) *share {
	g.mu.Lock()
	defer g.mu.Unlock()
	return &share{budget: budget, used: max(0, g.clock-joinCredit)}
}

// use records d of worker time.
func (s *share) use(d time.Duration) {
	s.mu.Lock()
	s.used += d
	s.own += d
	s.mu.Unlock()
}

func (s *share) load() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// worked is the request's own worker time so far.
func (s *share) worked() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.own
}

// spent says whether the request has used its budget.
func (s *share) spent() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.budget > 0 && s.own >= s.budget
}

// acquire takes a slot for s, waiting while ctx allows.
func (g *fairGate) acquire(ctx context.Context, s *share) error {
	g.mu.Lock()
	if g.free > 0 && len(g.waiting) == 0 {
		g.free--
		g.clock = max(g.clock, s.load())
		g.mu.Unlock()
		return nil
	}
	w := &waiter{share: s, ready: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		if w.granted {
			// The slot came as ctx ended: pass it on.
			g.mu.Unlock()
			g.release()
			return ctx.Err()
		}
		for i, o := range g.waiting {
			if o == w {
				g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
				break
			}
		}
		g.mu.Unlock()
		return ctx.Err()
	}
}

// release gives a slot back: to the waiter whose request has used the least
// (the earliest of those tied), or to the free slots.
func (g *fairGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) == 0 {
		g.free++
		return
	}
	g.handOver(g.least())
}

// next is release then acquire for a worker of s that holds a slot and has
// more of s's work to do: it keeps the slot while no waiter has used less
// than s, and otherwise hands it over and waits its turn.
func (g *fairGate) next(ctx context.Context, s *share) error {
	g.mu.Lock()
	if len(g.waiting) == 0 {
		g.mu.Unlock()
		return nil
	}
	best := g.least()
	if g.waiting[best].share.load() >= s.load() {
		g.mu.Unlock()
		return nil
	}
	g.handOver(best)
	g.mu.Unlock()
	return g.acquire(ctx, s)
}

// least is the index of the waiter whose request has used the least, the
// earliest of those tied; under g.mu, with someone waiting.
func (g *fairGate) least() int {
	best, bestUsed := 0, g.waiting[0].share.load()
	for i, w := range g.waiting[1:] {
		if u := w.share.load(); u < bestUsed {
			best, bestUsed = i+1, u
		}
	}
	return best
}

// handOver gives a slot to waiter i; under g.mu.
func (g *fairGate) handOver(i int) {
	w := g.waiting[i]
	g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
	g.clock = max(g.clock, w.share.load())
	w.granted = true
	close(w.ready)
}
