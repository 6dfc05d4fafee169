package scorers

import (
	"context"
	"fmt"
	"sync"
)

// A memo holds, for one request, values that scorers compute once and
// share between the rollouts of the request: a GRPO group repeats
// completions, and a compiled program or a program's verdict on a row's
// tests is the same for every copy. The engine scores one rollout per
// Score call, on many workers at once; the memo is how those calls share.
type memo struct {
	mu      sync.Mutex
	entries map[string]*memoEntry
}

type memoEntry struct {
	done chan struct{} // closed once val and err are set
	val  any
	err  error
}

type memoKey struct{}

// WithMemo returns a context carrying a new, empty memo: the values Memo
// computes under it are shared by everything that uses it (one request),
// and freed with it.
func WithMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &memo{})
}

// Memo returns the value f computes for key, computing it at most once
// per memo of ctx at a time: a call while another computes the same key
// waits for that value (or for ctx to end), and a later call gets it
// without calling f. An error is not kept: the calls waiting get it, the
// next call computes again. Without a memo in ctx, Memo calls f.
//
// Keys are shared by every caller of one memo: prefix them with what
// identifies the caller (a scorer, a function), and use one type T per
// key. f runs on the calling goroutine; if it panics, the calls waiting
// get an error and the panic goes on.
func Memo[T any](ctx context.Context, key string, f func() (T, error)) (T, error) {
	m, _ := ctx.Value(memoKey{}).(*memo)
	if m == nil {
		return f()
	}
	m.mu.Lock()
	if m.entries == nil {
		m.entries = map[string]*memoEntry{}
	}
	if e, ok := m.entries[key]; ok {
		m.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
		if e.err != nil {
			var zero T
			return zero, e.err
		}
		v, ok := e.val.(T)
		if !ok {
			var zero T
			return zero, fmt.Errorf("memo: key %q holds a %T, not a %T", key, e.val, zero)
		}
		return v, nil
	}
	e := &memoEntry{done: make(chan struct{})}
	m.entries[key] = e
	m.mu.Unlock()

	finished := false
	defer func() {
		if !finished {
			e.err = fmt.Errorf("memo: computing %q panicked", key)
		}
		if e.err != nil {
			m.mu.Lock()
			delete(m.entries, key)
			m.mu.Unlock()
		}
		close(e.done)
	}()
	v, err := f()
	e.val, e.err, finished = v, err, true
	return v, err
}
