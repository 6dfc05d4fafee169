package mathverify

import (
	"context"
	"errors"
)

// errBudget reports that a check used up its step budget. It is a sentinel
// inside the package; Score turns it into an Error result.
var errBudget = errors.New("step budget exhausted")

// budget counts the work of one check (one Score call) in steps: a step is
// one token lexed (and 8 bytes read), one syntax node built, one node
// evaluated at one point, one comparison, one 64-bit word of exact
// arithmetic (an exact operation costs 4 steps plus its size), or one KiB
// scanned by an extractor. Every loop of the lexer, parser, evaluator and
// comparer spends from it, so a check never does more than a bounded amount
// of work, whatever its input, and never needs a timer or a signal to stop.
type budget struct {
	limit, left int
	ctx         context.Context
	sinceCtx    int // steps since ctx was last looked at
}

func newBudget(ctx context.Context, limit int) *budget {
	return &budget{limit: limit, left: limit, ctx: ctx}
}

// ctxEvery is how many steps may pass between two looks at the context:
// at most about half a millisecond of work.
const ctxEvery = 4096

// spend takes n steps from the budget. It returns errBudget when the budget
// is exhausted (and on every later call), or the context's error once it is
// done.
func (b *budget) spend(n int) error {
	b.left -= n
	if b.left < 0 {
		b.left = -1
		return errBudget
	}
	b.sinceCtx += n
	if b.sinceCtx >= ctxEvery {
		b.sinceCtx = 0
		if err := b.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// used returns the steps spent so far.
func (b *budget) used() int { return b.limit - max(b.left, 0) }
