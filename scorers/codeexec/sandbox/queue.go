package sandbox

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// slotQueue hands a pool's idle slots to the jobs that wait for one.
//
// The next slot goes to the job whose program has held slots the least,
// less how long the job has waited: a program's slot time is what its
// compiles and runs held slots for while any of them was waiting or
// running (a program with none is forgotten). So a program whose tests
// each run to their time limit does not hold back the programs behind it
// (SandboxFusion's clients, verl's among them, send a program's tests as
// concurrent requests and score a request that waits past their timeout
// as a sandbox error): a cheap program's compile and tests go first, and
// the expensive program's next test waits about as long as its program has
// already held slots. Jobs of programs that have held none (every
// code_exec submission runs all its tests in one job) take slots in the
// order they came.
type slotQueue struct {
	mu sync.Mutex
	// idle are the idle slots, the one idle longest first.
	idle []*slot
	// waiting are the jobs waiting, in the order they came.
	waiting []*slotWaiter
	// programs are the programs with a job waiting or in a slot.
	programs map[string]*programUse
	// back is signalled when a slot becomes idle (Close waits for all).
	back *sync.Cond
}

// slotWaiter is a job waiting for a slot; the slot is sent on ready.
type slotWaiter struct {
	program *programUse
	since   time.Time
	ready   chan *slot
}

// programUse is what the jobs of one program hold and have held.
type programUse struct {
	key string
	// jobs are the program's jobs waiting or in a slot.
	jobs int
	// held is the slot time its jobs held.
	held time.Duration
}

func newSlotQueue() *slotQueue {
	q := &slotQueue{programs: map[string]*programUse{}}
	q.back = sync.NewCond(&q.mu)
	return q
}

// programKey names the program of a job: its language and its source.
func programKey(language, source string) string {
	h := sha256.Sum256([]byte(language + "\x00" + source))
	return string(h[:])
}

// take returns a slot for a job of program, waiting as long as ctx allows
// and the pool is open (done); the caller gives it back with put.
func (q *slotQueue) take(ctx context.Context, done <-chan struct{}, program string) (*slot, error) {
	q.mu.Lock()
	u := q.programs[program]
	if u == nil {
		u = &programUse{key: program}
		q.programs[program] = u
	}
	u.jobs++
	if len(q.waiting) == 0 && len(q.idle) > 0 {
		// The slot idle longest: each slot's last job has its time to
		// settle (what a killed program's servers give back).
		s := q.idle[0]
		q.idle = q.idle[1:]
		q.mu.Unlock()
		return s, nil
	}
	w := &slotWaiter{program: u, since: time.Now(), ready: make(chan *slot, 1)}
	q.waiting = append(q.waiting, w)
	q.mu.Unlock()

	var err error
	select {
	case s := <-w.ready:
		return s, nil
	case <-done:
		err = errClosed
	case <-ctx.Done():
		err = ctx.Err()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, o := range q.waiting {
		if o == w {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			q.forget(u)
			return nil, err
		}
	}
	// A slot was handed over meanwhile: pass it on.
	q.release(<-w.ready, u, 0)
	return nil, err
}

// put gives back slot s, which a job of program held for held.
func (q *slotQueue) put(s *slot, program string, held time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.release(s, q.programs[program], held)
}

// add makes s idle, for the first time.
func (q *slotQueue) add(s *slot) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.idle = append(q.idle, s)
	q.back.Broadcast()
}

// release hands s, which a job of u held for held, to the waiting job that
// comes first (see slotQueue), or makes it idle. q.mu is held.
func (q *slotQueue) release(s *slot, u *programUse, held time.Duration) {
	u.held += held
	q.forget(u)
	if len(q.waiting) == 0 {
		q.idle = append(q.idle, s)
		q.back.Broadcast()
		return
	}
	now := time.Now()
	next := 0
	for i, w := range q.waiting[1:] {
		if priority(w, now) < priority(q.waiting[next], now) {
			next = i + 1
		}
	}
	w := q.waiting[next]
	q.waiting = append(q.waiting[:next], q.waiting[next+1:]...)
	w.ready <- s
}

// priority orders the waiting jobs: the lowest goes first.
func priority(w *slotWaiter, now time.Time) time.Duration {
	return w.program.held - now.Sub(w.since)
}

// forget counts one job of u out, and u itself once it has none. q.mu is
// held.
func (q *slotQueue) forget(u *programUse) {
	u.jobs--
	if u.jobs == 0 {
		delete(q.programs, u.key)
	}
}

// drain waits until n slots are idle and returns them.
func (q *slotQueue) drain(n int) []*slot {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.idle) < n {
		q.back.Wait()
	}
	all := q.idle
	q.idle = nil
	return all
}
