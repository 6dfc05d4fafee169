package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
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
// everything back when its answer is written.
//
// Holds are refused at once when they do not fit. Receipts (what a gRPC
// message may take while grpc reads it, limits.max_message_bytes, whose
// length nobody sees before it is read) wait for room instead, served
// smallest expected message first, so that a flood of big messages delays
// a small one by one read at most. Four rules keep the budget open to
// small requests:
//
//   - A big hold (more than small bytes), and the receipt of a message
//     expected big, may not take the last headroom bytes of the capacity
//     (but for what the hold's own receipt, given back once its message
//     is decoded, holds of them): the receipt of a message expected small
//     always finds room once the receipts being read are given back.
//   - Stream receipts sum to at most streamCap (and are big): idle streams
//     waiting for their next batch cannot hold the whole budget.
//   - A receipt of a message expected small may not take the last small
//     bytes: they keep room for the holds of the small requests.
//   - What grpc buffers of the calls waiting for their receipts (their
//     windows, see windowBytes) comes from a sixteenth of the capacity of
//     its own, so that many waiting calls do not take the room of holds.
type admission struct {
	maxInflight int64
	inflight    atomic.Int64 // slots taken; changed with slotMu held
	m           *serviceMetrics

	// slotMu guards inflight's changes and the requests waiting for a
	// slot (waitSlot), oldest first, whose bodies sum to queuedBytes.
	slotMu      sync.Mutex
	slotQueue   []*slotWaiter
	queuedBytes int64

	// capacity is what requests may reserve, windowCap of it for windows
	// only.
	capacity, windowCap, headroom, small, streamCap int64

	mu         sync.Mutex
	held       int64
	streamHeld int64 // stream receipts, part of held
	windows    int64 // windows, part of held
	// promised is room kept for the receipts expected big that were
	// taken: what their messages will hold once read (see receipt), less
	// what those holds have reserved already.
	promised int64
	// waiters wait for a receipt, smallest expected message first, then
	// oldest.
	waiters []*receiptWaiter
	seq     uint64
}

// admissionLimits are the sizes an admission is built with.
type admissionLimits struct {
	maxInflight int
	// capacity is what requests may reserve; message is
	// limits.max_message_bytes, the size of a receipt.
	capacity, message int64
}

func newAdmission(l admissionLimits, m *serviceMetrics) *admission {
	m.memoryCapacity.Set(float64(l.capacity))
	return &admission{maxInflight: int64(l.maxInflight), m: m, capacity: l.capacity, windowCap: l.capacity / 16,
		headroom: l.message, small: l.message / 8, streamCap: l.capacity / 4}
}

// windowBytes is what grpc buffers of a call's message before its handler
// asks to read it: the stream's flow-control window (grpc.InitialWindowSize,
// fixed), which grows to the message's length only when the message is
// read.
const windowBytes = 128 << 10

// full reports whether every count slot is taken: a transport may refuse a
// request on that before reading anything of it.
func (a *admission) full() bool { return a.inflight.Load() >= a.maxInflight }

func (a *admission) takeSlot() bool {
	a.slotMu.Lock()
	defer a.slotMu.Unlock()
	if a.inflight.Load() >= a.maxInflight {
		a.m.poolRejected.Inc()
		return false
	}
	a.inflight.Add(1)
	return true
}

// giveSlot gives a slot back: to the request that has waited longest for
// one (waitSlot), else to the count.
func (a *admission) giveSlot() {
	a.slotMu.Lock()
	defer a.slotMu.Unlock()
	if len(a.slotQueue) > 0 {
		w := a.slotQueue[0]
		a.slotQueue = a.slotQueue[1:]
		a.queuedBytes -= w.bytes
		close(w.handed)
		return
	}
	a.inflight.Add(-1)
}

// slotWaiter is a request waiting in waitSlot; handed is closed when
// giveSlot hands it a slot.
type slotWaiter struct {
	bytes  int64
	handed chan struct{}
}

// errQueueFull refuses a request whose body would take the bodies waiting
// for a slot over limits.queue_bytes.
var errQueueFull = fmt.Errorf("%w (and the queue for a slot is full: limits.queue_bytes)", ErrOverloaded)

// waitSlot takes a slot, waiting for one in turn (oldest first) until ctx
// ends when all are taken, the request's body of bytes counting against
// maxQueued while it waits. It fails with errQueueFull at once when that
// does not fit, or with ctx's error.
func (a *admission) waitSlot(ctx context.Context, bytes, maxQueued int64) error {
	a.slotMu.Lock()
	if a.inflight.Load() < a.maxInflight {
		a.inflight.Add(1)
		a.slotMu.Unlock()
		return nil
	}
	if a.queuedBytes+bytes > maxQueued {
		a.slotMu.Unlock()
		a.m.poolRejected.Inc()
		return errQueueFull
	}
	w := &slotWaiter{bytes: bytes, handed: make(chan struct{})}
	a.slotQueue = append(a.slotQueue, w)
	a.queuedBytes += bytes
	a.slotMu.Unlock()
	a.m.slotWaiting.Inc()
	defer a.m.slotWaiting.Dec()
	select {
	case <-w.handed:
		return nil
	case <-ctx.Done():
	}
	a.slotMu.Lock()
	i := slices.Index(a.slotQueue, w)
	if i >= 0 {
		a.slotQueue = slices.Delete(a.slotQueue, i, i+1)
		a.queuedBytes -= bytes
	}
	a.slotMu.Unlock()
	if i < 0 { // handed a slot as ctx ended: pass it on
		a.giveSlot()
	}
	a.m.poolRejected.Inc()
	return ctx.Err()
}

// kind is what a reservation is, for the rules above.
type kind int

const (
	hold          kind = iota // big or small by its size
	window                    // what grpc buffers of a call waiting for its receipt
	smallReceipt              // a receipt of a message expected small
	bigReceipt                // a receipt of a message expected big
	streamReceipt             // a ScoreStream's receipt
)

// fits reports whether n bytes of kind k fit now, with room bytes free
// for them (n, or more for a receipt expected big: see receipt), and
// extra bytes of the headroom allowed to them (see reserve). a.mu is
// held.
func (a *admission) fits(n, room, extra int64, k kind) bool {
	if k == window {
		return a.windows+n <= a.windowCap
	}
	limit := a.capacity - a.windowCap
	switch {
	case k == smallReceipt:
		limit -= a.small
	case k == bigReceipt, k == streamReceipt, k == hold && n > a.small:
		limit -= a.headroom - extra
	}
	if k == streamReceipt && a.streamHeld+n > a.streamCap {
		return false
	}
	return a.held-a.windows+a.promised+room <= limit
}

// reserve takes n bytes, covered of them from the room promised to the
// caller's receipt, or fails with a *MemoryError. A big hold of a caller
// holding a receipt of own bytes may use own bytes of the headroom: the
// receipt goes back once the message is decoded, and the headroom with
// it (a message of max_message_bytes holds about three times that while
// it is decoded, more than the budget less the headroom may hold).
func (a *admission) reserve(n, covered, own int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.fits(n, n-covered, min(own, a.headroom), hold) {
		a.m.memoryRejected.Inc()
		return a.refusal(n)
	}
	a.held += n
	a.promised -= covered
	a.m.memoryHeld.Set(float64(a.held))
	return nil
}

// refusal is the error for n bytes that do not fit. a.mu is held.
func (a *admission) refusal(n int64) *MemoryError {
	return &MemoryError{Need: n, Held: a.held, Capacity: a.capacity}
}

// grant is bytes taken: a receipt's, with room promised beside them, a
// window's, or a hold's.
type grant struct {
	n, promise     int64
	stream, window bool
	k              kind // a receipt's (hold for the others)
}

// take takes g. a.mu is held.
func (a *admission) take(g grant) {
	a.held += g.n
	a.promised += g.promise
	if g.stream {
		a.streamHeld += g.n
	}
	if g.window {
		a.windows += g.n
	}
	a.m.memoryHeld.Set(float64(a.held))
}

// reserveWindow takes windowBytes for a call's window, or fails with a
// *MemoryError.
func (a *admission) reserveWindow() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.fits(windowBytes, windowBytes, 0, window) {
		a.m.memoryRejected.Inc()
		return a.refusal(windowBytes)
	}
	a.take(grant{n: windowBytes, window: true})
	return nil
}

// receiptWaiter is a receipt waiting for room.
type receiptWaiter struct {
	grant
	expect  int64
	seq     uint64
	granted chan struct{} // closed when the receipt is taken for it
}

func (w *receiptWaiter) before(o *receiptWaiter) int {
	if c := cmp.Compare(w.expect, o.expect); c != 0 {
		return c
	}
	return cmp.Compare(w.seq, o.seq)
}

// receipt takes n bytes for a message expected to be expect bytes long
// (a guess: a wrong one changes only the order of the waiters), waiting for
// room while ctx allows, ahead of the waiters expecting bigger messages. A
// receipt expected big waits until there is room, below the headroom, for
// what its message is expected to hold next (its copy, what decoding makes
// and what scoring it holds: three times expect bounds them for messages
// of rollouts of a few hundred bytes or more, see grpcService.received and
// decodeCost), so that a message is
// not read only to be refused, and takes it as a promise until its holds
// reserve it or the receipt is given back; one whose size is not known
// (expect is n, as for a connection's first call) waits for its receipt's
// room alone. It fails with a *MemoryError when ctx ends first, or at once
// when n can never fit.
func (a *admission) receipt(ctx context.Context, n, expect int64, stream bool) (grant, error) {
	k := smallReceipt
	switch {
	case stream:
		k = streamReceipt
	case expect > a.small:
		k = bigReceipt
	}
	g := grant{n: n, stream: stream, k: k}
	if k != smallReceipt && expect < n {
		g.promise = min(3*expect, a.capacity-a.windowCap-a.headroom-n)
	}
	a.mu.Lock()
	if n > a.capacity-a.headroom && k != smallReceipt || k == streamReceipt && n > a.streamCap {
		defer a.mu.Unlock()
		a.m.memoryRejected.Inc()
		return grant{}, &MemoryError{Need: n, Held: 0, Capacity: a.capacity}
	}
	if a.fits(n, n+g.promise, 0, k) {
		a.take(g)
		a.mu.Unlock()
		return g, nil
	}
	a.seq++
	w := &receiptWaiter{grant: g, expect: expect, seq: a.seq, granted: make(chan struct{})}
	i, _ := slices.BinarySearchFunc(a.waiters, w, (*receiptWaiter).before)
	a.waiters = slices.Insert(a.waiters, i, w)
	a.mu.Unlock()
	select {
	case <-w.granted:
		return g, nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-w.granted:
		return g, nil // taken as ctx ended: the caller gives it back with the rest
	default:
	}
	a.waiters = slices.DeleteFunc(a.waiters, func(o *receiptWaiter) bool { return o == w })
	a.m.memoryRejected.Inc()
	return grant{}, a.refusal(n)
}

// give gives back g (or held bytes: a grant with no promise, not a
// stream's) and takes what now fits for the waiters, in their order.
func (a *admission) give(g grant) {
	if g == (grant{}) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held -= g.n
	a.promised -= g.promise
	if g.stream {
		a.streamHeld -= g.n
	}
	if g.window {
		a.windows -= g.n
	}
	a.m.memoryHeld.Set(float64(a.held))
	a.waiters = slices.DeleteFunc(a.waiters, func(w *receiptWaiter) bool {
		if !a.fits(w.n, w.n+w.promise, 0, w.k) {
			return false
		}
		a.take(w.grant)
		close(w.granted)
		return true
	})
}

// ticket is one request's hold on the admission: a count slot, the bytes
// it reserved, and a receipt. Its methods are safe for concurrent use;
// release gives everything back, and a ticket released is spent (later
// reserve, receipt and takeSlot calls fail).
type ticket struct {
	a *admission

	mu       sync.Mutex
	slot     bool
	bytes    int64
	receipt  grant // beside bytes; its promise shrinks as bytes grow
	drawn    int64 // of the receipt's bytes, now part of bytes
	window   bool  // windowBytes, beside bytes
	released bool
	// expect, when set, is where the size of the message received goes:
	// the guess for the next receipt of the same connection or stream.
	expect *atomic.Int64
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

// waitSlot is takeSlot that waits for a slot while ctx lasts (see
// admission.waitSlot), with bytes in the queue meanwhile.
func (t *ticket) waitSlot(ctx context.Context, bytes, maxQueued int64) error {
	t.mu.Lock()
	switch {
	case t.released:
		t.mu.Unlock()
		return errReleased
	case t.slot:
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	// Not under t.mu: the wait is long, and only this request's own
	// goroutine takes its slot.
	if err := t.a.waitSlot(ctx, bytes, maxQueued); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released { // released while it waited
		t.a.giveSlot()
		return errReleased
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

// reserve adds n bytes to the ticket, or fails with a *MemoryError. While
// the ticket holds the receipt of a message expected small, the bytes come
// first out of the receipt (the message read into it is among them): such
// a call is never refused what its message holds up to the receipt,
// whatever the other requests reserved meanwhile. Otherwise they come out
// of the room promised beside the receipt, then out of the free room, and
// a message expected big, or of unknown size, is refused after its read
// when what it holds does not fit there.
func (t *ticket) reserve(n int64) error {
	if n <= 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return errReleased
	}
	var drawn int64
	if t.receipt.k == smallReceipt {
		drawn = min(n, t.receipt.n-t.drawn)
	}
	rest := n - drawn
	covered := min(rest, t.receipt.promise)
	if rest > 0 {
		if err := t.a.reserve(rest, covered, t.receipt.n); err != nil {
			return err
		}
	}
	t.drawn += drawn
	t.receipt.promise -= covered
	t.bytes += n
	return nil
}

// receiptLeft is what of the receipt is not drawn into bytes. t.mu is
// held.
func (t *ticket) receiptLeft() grant {
	g := t.receipt
	g.n -= t.drawn
	return g
}

// reserveWindow reserves what grpc buffers of the call's message until its
// receipt is taken (windowBytes), or fails with a *MemoryError.
func (t *ticket) reserveWindow() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return errReleased
	}
	if t.window {
		return nil
	}
	if err := t.a.reserveWindow(); err != nil {
		return err
	}
	t.window = true
	return nil
}

// giveWindow gives the window back: the receipt covers it.
func (t *ticket) giveWindow() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.window {
		t.window = false
		t.a.give(grant{n: windowBytes, window: true})
	}
}

// takeReceipt reserves n bytes for a message about to be read, waiting for
// room while ctx allows (see admission.receipt), expecting the size its
// expect cell holds (0 when it has none: n). A ticket holds one receipt.
func (t *ticket) takeReceipt(ctx context.Context, n int64, stream bool) error {
	expect := n
	if t.expect != nil {
		expect = t.expect.Load()
	}
	g, err := t.a.receipt(ctx, n, expect, stream)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released || t.receipt.n > 0 {
		t.a.give(g)
		if t.released {
			return errReleased
		}
		return nil
	}
	t.receipt = g
	return nil
}

// received records the size of the message the receipt was for, as the
// next guess of its connection or stream.
func (t *ticket) received(n int) {
	if t.expect != nil {
		t.expect.Store(int64(n))
	}
}

// giveReceipt gives the receipt back: the message is read and what it
// holds now is reserved.
func (t *ticket) giveReceipt() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.a.give(t.receiptLeft())
	t.receipt, t.drawn = grant{}, 0
}

// shrink gives back n of the ticket's bytes (at most what it holds).
func (t *ticket) shrink(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n = min(n, t.bytes)
	if n > 0 {
		t.bytes -= n
		t.a.give(grant{n: n})
	}
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
	t.a.give(grant{n: t.bytes})
	t.a.give(t.receiptLeft())
	if t.window {
		t.a.give(grant{n: windowBytes, window: true})
	}
	t.bytes, t.receipt, t.drawn, t.window = 0, grant{}, 0, false
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
