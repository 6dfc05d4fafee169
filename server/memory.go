package server

import (
	"sync"

	"google.golang.org/grpc/mem"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
)

// callMemory is the memory one Score call is decoded, scored and answered
// in: the request's wire form, which the decoded request's strings are
// substrings of (decodeScoreRequest), its decoded Rollout messages, the
// rollouts as the scorers see them, their results, and the response's
// value and status columns.
//
// A call takes its callMemory from the service's pool (memoryPool.get)
// and owns it until its answer is encoded: a unary gRPC Score's when the
// codec has marshaled the response (protoCodec.Marshal), a ScoreStream
// batch's when its answer is sent, Service.Score's (HTTP, in-process
// callers) when it has copied the response's columns out. Then release
// gives it back, and the next call writes over it. Nothing of the
// request, of the response, or made from either without a copy may be
// used after release: what outlives a call (a stream's group ids, its
// batch ids) is kept as hashes or copies. A gRPC Score call that fails
// leaves its memory to the collector, since its error is read after the
// handler returns. TestCallMemoryOutlivesNothing runs the server with
// release overwriting the wire form, so a string used after release
// reads wrong.
//
// The zero callMemory allocates afresh and is never given back.
type callMemory struct {
	wire     []byte
	rollouts []rewardv1.Rollout
	msgs     []*rewardv1.Rollout
	scored   []scorers.Rollout
	ptrs     []*scorers.Rollout
	results  []scorers.Result
	columns  [][]scorers.Result
	values   []float64
	status   []rewardv1.ScoreStatus
	pool     *memoryPool // nil: not pooled
}

// memoryPool holds the callMemory of calls that are done, for the next
// calls to take, so that a request's memory is not allocated and faulted
// in afresh (bench/README.md, "Memory reused between requests"). Garbage
// collection empties it: memory a burst of large requests left behind is
// gone after two cycles without them.
type memoryPool struct {
	pool sync.Pool
	// poison, a test hook, makes release overwrite the wire form.
	poison bool
}

// get returns a callMemory of p's, which the caller releases.
func (p *memoryPool) get() *callMemory {
	m, _ := p.pool.Get().(*callMemory)
	if m == nil {
		m = &callMemory{pool: p}
	}
	return m
}

// release gives m back to its pool, dropping what it refers to (the
// request's fields, the results' reasons) so that the pool keeps nothing
// else alive. It does nothing for a callMemory that is not pooled.
func (m *callMemory) release() {
	if m.pool == nil {
		return
	}
	if m.pool.poison {
		for i := range m.wire {
			m.wire[i] = poisonByte
		}
	}
	clear(m.rollouts)
	clear(m.msgs)
	clear(m.scored)
	clear(m.results)
	m.pool.pool.Put(m)
}

// poisonByte is what release writes over the wire form under the test
// hook: a string cut from it reads as a run of '~'.
const poisonByte = '~'

// copyWire copies data, a received request, into m's wire form and
// returns it, yielding as p says (nil: without a yield); when a yield
// fails it stops, and returns p's error. The buffer keeps a quarter more
// room than this request needs, so that the next ones, which a trainer
// makes of about the same size, fit in it too.
func (m *callMemory) copyWire(data mem.BufferSlice, p *pacer) ([]byte, error) {
	n := data.Len()
	if cap(m.wire) < n {
		m.wire = make([]byte, n, n+n/4)
	}
	m.wire = m.wire[:n]
	off := 0
	for _, buf := range data {
		c := copy(m.wire[off:], buf.ReadOnlyData())
		off += c
		if !p.step(c) {
			return nil, p.failed()
		}
	}
	return m.wire, nil
}

// decoded returns n empty Rollout messages and an empty slice with room
// for n pointers, for decodeScoreRequest; a nil m allocates them.
func (m *callMemory) decoded(n int) ([]rewardv1.Rollout, []*rewardv1.Rollout) {
	if m == nil {
		return make([]rewardv1.Rollout, n), make([]*rewardv1.Rollout, 0, n)
	}
	m.rollouts, m.msgs = grow(m.rollouts, n), grow(m.msgs, n)
	return m.rollouts, m.msgs[:0]
}

// scoring returns room for n rollouts as the scorers see them, and as
// many pointers, both empty.
func (m *callMemory) scoring(n int) ([]scorers.Rollout, []*scorers.Rollout) {
	m.scored, m.ptrs = grow(m.scored, n), grow(m.ptrs, n)
	return m.scored[:0], m.ptrs[:0]
}

// resultColumns returns a column of n results for each of tasks.
func (m *callMemory) resultColumns(tasks, n int) [][]scorers.Result {
	m.results, m.columns = grow(m.results, tasks*n), grow(m.columns, tasks)
	for k := range m.columns {
		m.columns[k] = m.results[k*n : (k+1)*n : (k+1)*n]
	}
	return m.columns
}

// responseColumns returns room for n values and n statuses.
func (m *callMemory) responseColumns(n int) ([]float64, []rewardv1.ScoreStatus) {
	m.values, m.status = grow(m.values, n), grow(m.status, n)
	return m.values, m.status
}

// grow returns s with length n, zeroed, reallocated when its capacity is
// less.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
