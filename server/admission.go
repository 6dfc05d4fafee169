package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrOverloaded is returned when the server already holds as many requests
// as it admits. It maps to RESOURCE_EXHAUSTED (HTTP 429): the caller should
// back off or try another replica.
var ErrOverloaded = errors.New("server at capacity, retry later or on another replica")

// MemoryError is returned when a request's memory does not fit in what the
// memory budget has left. It maps to RESOURCE_EXHAUSTED (HTTP 429).
type MemoryError struct {
	Need, Held, Capacity int64 // bytes
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("memory budget: this request needs %s more; requests in progress hold %s of the %s they may hold (limits.memory_budget): retry later or on another replica, or send smaller batches",
		mib(e.Need), mib(e.Held), mib(e.Capacity))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// admission bounds the requests in progress twice: by count (at most
// maxInflight hold a slot) and by the memory they hold, in bytes (what they
// reserved sums to at most capacity). A request takes a ticket, reserves an
// upper bound of the memory it is about to hold before it holds it (before
// its body is read, before it is decoded, before it is scored), and gives
// everything back when its answer is written. What does not fit is refused
// at once; nothing queues.
type admission struct {
	maxInflight int64
	inflight    atomic.Int64
	m           *serviceMetrics

	mu       sync.Mutex
	capacity int64
	held     int64
	// freed is closed, and replaced, whenever bytes are given back: what
	// waits for room (a stream that stops reading) wakes up then.
	freed chan struct{}
}

func newAdmission(maxInflight int, capacity int64, m *serviceMetrics) *admission {
	m.memoryCapacity.Set(float64(capacity))
	return &admission{maxInflight: int64(maxInflight), capacity: capacity, m: m, freed: make(chan struct{})}
}

// full reports whether every count slot is taken: a transport may refuse a
// request on that before reading anything of it.
func (a *admission) full() bool { return a.inflight.Load() >= a.maxInflight }

func (a *admission) takeSlot() bool {
	if a.inflight.Add(1) > a.maxInflight {
		a.inflight.Add(-1)
		a.m.poolRejected.Inc()
		return false
	}
	return true
}

func (a *admission) giveSlot() { a.inflight.Add(-1) }

// reserve takes n bytes, or fails with a *MemoryError.
func (a *admission) reserve(n int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held+n > a.capacity {
		a.m.memoryRejected.Inc()
		return &MemoryError{Need: n, Held: a.held, Capacity: a.capacity}
	}
	a.held += n
	a.m.memoryHeld.Set(float64(a.held))
	return nil
}

// reserveWait takes n bytes, waiting for room while ctx allows. It fails at
// once when n is more than the whole capacity.
func (a *admission) reserveWait(ctx context.Context, n int64) error {
	for {
		a.mu.Lock()
		if n > a.capacity {
			a.mu.Unlock()
			return &MemoryError{Need: n, Held: 0, Capacity: a.capacity}
		}
		if a.held+n <= a.capacity {
			a.held += n
			a.m.memoryHeld.Set(float64(a.held))
			a.mu.Unlock()
			return nil
		}
		freed := a.freed
		a.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (a *admission) unreserve(n int64) {
	if n == 0 {
		return
	}
	a.mu.Lock()
	a.held -= n
	a.m.memoryHeld.Set(float64(a.held))
	close(a.freed)
	a.freed = make(chan struct{})
	a.mu.Unlock()
}

// ticket is one request's hold on the admission: a count slot and the
// bytes it reserved. Its methods are safe for concurrent use; release
// gives everything back, and a ticket released is spent (later reserve and
// takeSlot calls fail).
type ticket struct {
	a *admission

	mu       sync.Mutex
	slot     bool
	bytes    int64
	released bool
}

// errReleased is what a released ticket's methods return. A ticket is
// released early only when its call has ended (the client cancelled, or a
// timeout cut it), so the error is that cancellation.
var errReleased = fmt.Errorf("the call ended before its work did: %w", context.Canceled)

func (a *admission) ticket() *ticket { return &ticket{a: a} }

// takeSlot takes a count slot, or fails with ErrOverloaded. A ticket holds
// at most one.
func (t *ticket) takeSlot() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.released:
		return errReleased
	case t.slot:
		return nil
	case !t.a.takeSlot():
		return ErrOverloaded
	}
	t.slot = true
	return nil
}

// giveSlot gives the count slot back early (when the work is done, before
// the answer is written) and keeps the bytes.
func (t *ticket) giveSlot() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.slot {
		t.slot = false
		t.a.giveSlot()
	}
}

// reserve adds n bytes to the ticket, or fails with a *MemoryError.
func (t *ticket) reserve(n int64) error {
	if n <= 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return errReleased
	}
	if err := t.a.reserve(n); err != nil {
		return err
	}
	t.bytes += n
	return nil
}

// reserveWait is reserve, waiting for room while ctx allows.
func (t *ticket) reserveWait(ctx context.Context, n int64) error {
	if err := t.a.reserveWait(ctx, n); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		t.a.unreserve(n)
		return errReleased
	}
	t.bytes += n
	return nil
}

// shrink gives back n of the ticket's bytes (at most what it holds).
func (t *ticket) shrink(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n = min(n, t.bytes)
	if n > 0 {
		t.bytes -= n
		t.a.unreserve(n)
	}
}

// held is the ticket's bytes.
func (t *ticket) held() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes
}

// release gives back everything the ticket holds, once.
func (t *ticket) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return
	}
	t.released = true
	if t.slot {
		t.slot = false
		t.a.giveSlot()
	}
	if t.bytes > 0 {
		t.a.unreserve(t.bytes)
		t.bytes = 0
	}
}

// ticketKey marks the context of a request that holds a ticket already.
type ticketKey struct{}

// withTicket returns ctx carrying t. Whoever made t releases it.
func withTicket(ctx context.Context, t *ticket) context.Context {
	return context.WithValue(ctx, ticketKey{}, t)
}

func ticketFrom(ctx context.Context) *ticket {
	t, _ := ctx.Value(ticketKey{}).(*ticket)
	return t
}
