package codeexec

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// buildCache keeps compiled programs across requests, the most recently
// used ones: at most max of them and, when maxBytes is above 0, at most
// maxBytes of compiled files (a build larger than a quarter of that is not
// kept). A program being compiled is compiled once, whoever else asks
// meanwhile. Errors of the sandbox are not kept, nor a compile that ran
// out of its time (on a loaded machine that need not be the program's
// fault); a program that does not compile is.
type buildCache struct {
	max      int
	maxBytes int64

	mu      sync.Mutex
	entries map[string]*list.Element // of *buildEntry
	order   *list.List               // most recently used first
	bytes   int64                    // of the entries' builds
}

type buildEntry struct {
	key   string
	done  chan struct{}
	build *sandbox.Build
	err   error
	size  int64 // counted in buildCache.bytes once done
}

func newBuildCache(max int, maxBytes int64) *buildCache {
	return &buildCache{max: max, maxBytes: maxBytes, entries: map[string]*list.Element{}, order: list.New()}
}

// get returns the build for key, calling compile when the cache has none.
// A caller that finds the build being compiled waits for it as long as
// ctx allows.
func (c *buildCache) get(ctx context.Context, key string, compile func() (*sandbox.Build, error)) (*sandbox.Build, error) {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		e := el.Value.(*buildEntry)
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.build, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e := &buildEntry{key: key, done: make(chan struct{})}
	c.entries[key] = c.order.PushFront(e)
	c.evict()
	c.mu.Unlock()

	finished := false
	defer func() {
		if !finished {
			e.err = fmt.Errorf("compiling the program panicked")
		}
		c.settle(e)
		close(e.done)
	}()
	e.build, e.err = compile()
	finished = true
	return e.build, e.err
}

// compile is get for a compile made under ctx: a compile that ended with
// the cancellation of the caller that started it (not this one's) is
// started again for this caller, up to twice.
func (c *buildCache) compile(ctx context.Context, key string, compile func() (*sandbox.Build, error)) (*sandbox.Build, error) {
	for attempt := 1; ; attempt++ {
		b, err := c.get(ctx, key, compile)
		if attempt < 3 && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue // not ours: the cache has dropped it
		}
		return b, err
	}
}

// buildKeyer is a Runner that can say what a compile makes (*sandbox.Pool:
// the language, the compiler's flags and version, the source, …), so that
// builds are kept across requests under that key. With a Runner that
// cannot, a program is compiled once per request (scorers.Memo) only.
type buildKeyer interface {
	BuildKey(ctx context.Context, job sandbox.CompileJob) (string, error)
}

// settle keeps a finished entry, or drops it when it is not to be kept
// (an error, a compile out of time, a build too large).
func (c *buildCache) settle(e *buildEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[e.key]
	if !ok || el.Value != e {
		return // evicted while it compiled
	}
	var size int64
	if e.build != nil {
		size = int64(e.build.Size())
	}
	if e.err != nil || e.build == nil || e.build.Status == sandbox.Timeout || c.maxBytes > 0 && size > c.maxBytes/4 {
		c.order.Remove(el)
		delete(c.entries, e.key)
		return
	}
	e.size = size
	c.bytes += size
	c.evict()
}

// evict drops the least recently used entries over the bounds.
func (c *buildCache) evict() {
	for c.order.Len() > c.max || c.maxBytes > 0 && c.bytes > c.maxBytes && c.order.Len() > 0 {
		old := c.order.Remove(c.order.Back()).(*buildEntry)
		delete(c.entries, old.key)
		c.bytes -= old.size
	}
}
