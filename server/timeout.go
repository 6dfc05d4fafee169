package server

import (
	"context"
	"sync/atomic"
	"time"
)

// timedContext is a call's context that the server ends early when one of
// its timeouts runs out: the message did not arrive in time, the client
// does not take its answers, a stream sat idle. Ended so, it reports
// context.DeadlineExceeded (grpc answers a read or write it cuts short with
// the context's error: the client sees DEADLINE_EXCEEDED); otherwise it is
// its parent.
type timedContext struct {
	context.Context
	cancel  context.CancelFunc
	expired atomic.Bool
	// stopRead stops the read timeout of a unary call (set by the tap
	// before the call's handler starts).
	stopRead func() bool
}

type timedKey struct{}

func newTimedContext(parent context.Context) *timedContext {
	ctx, cancel := context.WithCancel(parent)
	return &timedContext{Context: ctx, cancel: cancel}
}

// timedFrom returns the timedContext ctx derives from, or nil.
func timedFrom(ctx context.Context) *timedContext {
	c, _ := ctx.Value(timedKey{}).(*timedContext)
	return c
}

func (c *timedContext) Value(key any) any {
	if key == (timedKey{}) {
		return c
	}
	return c.Context.Value(key)
}

func (c *timedContext) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}

// expireAfter ends the context after d, calling onExpire first, unless the
// returned stop is called before; stop reports whether it stopped it.
func (c *timedContext) expireAfter(d time.Duration, onExpire func()) (stop func() bool) {
	return time.AfterFunc(d, func() {
		onExpire()
		c.expired.Store(true)
		c.cancel()
	}).Stop
}

// stopReadTimeout stops the read timeout the tap set on a unary call's
// context, once its message is in.
func stopReadTimeout(ctx context.Context) {
	if c := timedFrom(ctx); c != nil && c.stopRead != nil {
		c.stopRead()
	}
}
