package server

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"

	"github.com/rewardd/rewardd/scorers"
)

// task is one function to apply to every rollout of a request.
type task struct {
	Function *scorers.Function
	// Label is the function label in metrics: the served name, or
	// inlineLabel for a function the request defined.
	Label string
}

// engine evaluates functions on rollouts over ONE bounded worker pool shared
// by every request in the process, so total concurrency stays bounded
// however many requests arrive: the pool's slots, and with --worker-nice
// as many again for heavy requests at a lower CPU priority (back). Work is
// cut into spans of rollouts of one function, each cut to take about
// spanTarget of worker time (see cutter); a span holds a slot while it
// runs. Slots go to the requests waiting for one fairly, by the worker
// time each has used (see fairGate), so a small request is not kept
// waiting behind a large one.
type engine struct {
	workers int
	// nice is how much lower the CPU priority of a heavy request's pool
	// goroutines is (see heavyWork); 0: the server's.
	nice int
	// gate hands out the pool's slots; back, when nice is on, as many
	// again to the goroutines of heavy requests, at the lower priority
	// (worker.lower).
	gate, back *fairGate
	costs      costs
	m          *engineMetrics
	log        *zap.Logger
	// lowerFailed logs, once, that a thread's priority could not be
	// lowered.
	lowerFailed sync.Once
	// procs is the spare P of the lowered goroutines; nil: GOMAXPROCS is
	// left as it is.
	procs *spareProc
}

// newEngine returns an engine with a pool of workers slots, whose heavy
// requests score nice lower in CPU priority. A scorer panic is logged on
// log with its stack, once.
func newEngine(workers, nice int, m *engineMetrics, log *zap.Logger) *engine {
	m.poolCapacity.Set(float64(workers))
	if was, err := niceOf(0); nice > 0 && (err != nil || !canRaiseTo(was)) {
		log.Info("--worker-nice is off: the server could not raise a worker's CPU priority back after lowering it; give it CAP_SYS_NICE, or RLIMIT_NICE of 20 - its nice value",
			zap.Int("worker_nice", nice), zap.Error(err))
		nice = 0
	}
	e := &engine{workers: workers, nice: nice, gate: newFairGate(workers), m: m, log: log}
	if nice > 0 {
		e.back = newFairGate(workers)
	}
	return e
}

// Workers returns the pool size.
func (e *engine) Workers() int { return e.workers }

// yieldEvery is how long a pool worker scores before it lets other
// goroutines run (see work).
const yieldEvery = time.Millisecond

// join opens a request's account of worker time at the pool, for Score
// and serial. work bounds the worker time the request may use (0: no
// bound): once it is spent, the spans not yet started give their rollouts
// an Error saying so.
func (e *engine) join(work time.Duration) *share { return e.gate.join(work) }

// Score applies every task to every rollout and sets results[k][i] for task
// k and rollout i (results has a column of len(rollouts) per task), as work
// of the request whose account is s (join). It blocks until all are done
// or ctx ends. On ctx end it stops queued spans and waits for running
// ones; every result is still set: those decided before ctx ended stand,
// and the rest (never started, or an Error its scorer returned once ctx
// had ended: cut short) are an Error "not scored: " + context.Cause(ctx).
// It then returns a *cutShortError wrapping ctx's error. A panic while
// scoring one rollout becomes an Error result for that rollout only.
// Admission (how many requests, how much memory) is the caller's.
func (e *engine) Score(ctx context.Context, s *share, tasks []task, rollouts []*scorers.Rollout, results [][]scorers.Result) error {
	n := len(rollouts)
	if len(results) != len(tasks) {
		return fmt.Errorf("engine: %d result columns for %d tasks", len(results), len(tasks))
	}
	for k, col := range results {
		if len(col) != n {
			return fmt.Errorf("engine: result column %d has room for %d rollouts, not %d", k, len(col), n)
		}
	}
	if n == 0 || len(tasks) == 0 {
		return nil
	}

	c := e.cutter(tasks, rollouts)
	var wg conc.WaitGroup
	for range min(e.workers, c.fewest()) {
		wg.Go(func() { e.work(ctx, c, s, results) })
	}
	wg.Wait()
	if s.spent() {
		e.m.workExhausted.Inc()
	}
	if ctx.Err() != nil {
		return cutShort(ctx, results)
	}
	e.m.rolloutsScored.Add(float64(n))
	return nil
}

// cutShortError is Score's error when ctx ended before it was done: ctx's
// error, and how many rollouts some function did not score.
type cutShortError struct {
	err error
	// rollouts is how many rollouts have a cut-short result (notScored)
	// in at least one column.
	rollouts int
}

func (e *cutShortError) Error() string { return e.err.Error() }
func (e *cutShortError) Unwrap() error { return e.err }

// notScored is the result of a rollout that ctx's end left unscored.
func notScored(ctx context.Context) scorers.Result {
	return scorers.Errorf("not scored: %v", context.Cause(ctx))
}

// cutShort gives the results that ctx's end left unset notScored (spans
// that never ran: no evaluation, so the outcome metrics do not count
// them), and returns Score's error.
func cutShort(ctx context.Context, results [][]scorers.Result) error {
	cut := notScored(ctx)
	unscored := make([]bool, len(results[0]))
	for _, col := range results {
		for i := range col {
			if col[i].Outcome == 0 {
				col[i] = cut
			}
			if col[i].Outcome == scorers.Error && col[i].Reason == cut.Reason {
				unscored[i] = true
			}
		}
	}
	n := 0
	for _, u := range unscored {
		if u {
			n++
		}
	}
	return &cutShortError{err: ctx.Err(), rollouts: n}
}

// serial runs f on one pool slot as work of the request whose account is
// s, for work of a request outside its spans (decoding it): f calls
// scorers.Yield with the ctx it is given after about a span's work, and
// the slot may then go to a request that has used the workers less, while
// this one waits its turn. It returns f's error, or ctx's when no slot
// came before ctx ended.
func (e *engine) serial(ctx context.Context, s *share, f func(ctx context.Context) error) error {
	w := &worker{engine: e, gate: e.gate, share: s}
	defer w.done()
	waitStart := time.Now()
	if err := w.take(ctx); err != nil {
		return err
	}
	w.start = time.Now()
	e.m.poolQueueWait.Observe(w.start.Sub(waitStart).Seconds())
	err := f(scorers.WithYield(ctx, w.yield))
	w.spanEnd(time.Now())
	return err
}

// work is one of a request's pool goroutines: it takes a slot and runs
// the request's next span on it until none is left or ctx ends.
func (e *engine) work(ctx context.Context, c *cutter, share *share, results [][]scorers.Result) {
	w := &worker{engine: e, gate: e.gate, share: share}
	defer w.done()
	wctx := scorers.WithYield(ctx, w.yield)
	lastYield := time.Now()
	for ctx.Err() == nil && c.more() {
		waitStart := time.Now()
		if err := w.take(ctx); err != nil {
			return
		}
		w.start = time.Now()
		sp, ok := c.next()
		if !ok {
			return
		}
		e.m.poolQueueWait.Observe(w.start.Sub(waitStart).Seconds())
		e.m.poolInflight.Inc()
		t := c.tasks[sp.task]
		refused := share.spent()
		switch {
		case refused:
			e.refuse(t, sp, c.rollouts, results[sp.task], share.budget)
		case sp.group == nil:
			e.runChunk(wctx, t, c.rollouts[sp.lo:sp.hi], results[sp.task][sp.lo:sp.hi])
		default:
			e.runGroup(wctx, t, c.rollouts, sp.group, results[sp.task])
		}
		e.m.poolInflight.Dec()
		now := time.Now()
		if d := w.spanEnd(now); !refused && ctx.Err() == nil {
			c.observe(sp, d) // a span refused or cut short says nothing of its cost
		}
		if !w.held {
			return // a yield lost the slot as ctx ended
		}
		// Let the goroutines the network woke (new requests, and their
		// refusals under overload) run now rather than at the scheduler's
		// next preemption; at most once per yieldEvery of work, as a yield
		// costs throughput.
		if now.Sub(lastYield) >= yieldEvery {
			runtime.Gosched()
			lastYield = now
		}
	}
}

// worker is one of a request's pool goroutines: whether it holds a slot,
// and since when its request has been using it.
type worker struct {
	engine *engine
	gate   *fairGate
	share  *share
	held   bool
	start  time.Time
	// spanTime is the worker time of the running span before start.
	spanTime time.Duration
	// scheduled is when the goroutine last let others run (see yield).
	scheduled time.Time
	// restore undoes lower once the request has been found heavy; nil
	// before.
	restore func()
}

// yieldGosched is how often a scorer's yields let the Go scheduler run the
// other goroutines: those that read new requests must run for a request to
// wait for the worker at all.
const yieldGosched = 100 * time.Microsecond

// take gets a slot for the next span: a new one, or the one held, kept or
// handed over as fairness says (fairGate.next).
func (w *worker) take(ctx context.Context) error {
	var err error
	if w.held {
		err = w.gate.next(ctx, w.share)
	} else {
		err = w.gate.acquire(ctx, w.share)
	}
	w.held = err == nil
	if w.held && w.restore == nil && w.engine.nice > 0 && w.share.worked() >= heavyWork {
		return w.lower(ctx)
	}
	return err
}

// done gives back the slot held and the priority lowered, when the
// goroutine has no more of its request's work to do.
func (w *worker) done() {
	if w.held {
		w.gate.release()
	}
	if w.restore != nil {
		w.restore()
	}
}

// lower goes on at the engine's lower CPU priority, with a spare P, for
// the rest of the goroutine, on a slot of the heavy requests' (engine.back):
// the slot held goes back to the requests at the server's priority, which
// then never wait for a heavy request's span, only share the CPU with it
// as the kernel weighs the two priorities. It fails when ctx ends before a
// heavy request's slot comes. Where the priority cannot be lowered, the
// goroutine goes on as it was.
func (w *worker) lower(ctx context.Context) error {
	e := w.engine
	restore, err := lowerPriority(e.nice)
	if err != nil {
		e.lowerFailed.Do(func() {
			e.log.Warn("cannot lower the CPU priority of a heavy request's worker; heavy requests score at the server's priority",
				zap.Int("worker_nice", e.nice), zap.Error(err))
		})
		w.restore = func() {} // tried once per goroutine
		return nil
	}
	w.restore = restore
	if p := e.procs; p != nil {
		p.take()
		w.restore = func() {
			restore()
			p.give()
		}
	}
	e.m.poolLowered.Inc()
	w.gate.release()
	w.gate = e.back
	err = w.gate.acquire(ctx, w.share)
	w.held = err == nil
	return err
}

// yield is scorers.Yield for the spans this worker runs: the time used so
// far is counted, and the slot goes to a waiting request that has used the
// workers less, while this one waits its turn.
func (w *worker) yield(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	if now.Sub(w.scheduled) >= yieldGosched {
		runtime.Gosched()
		w.scheduled = now
	}
	w.share.use(now.Sub(w.start))
	w.spanTime += now.Sub(w.start)
	err := w.take(ctx)
	w.start = time.Now()
	return err
}

// spanEnd counts the worker time of the span that ends at now and returns
// it.
func (w *worker) spanEnd(now time.Time) time.Duration {
	d := now.Sub(w.start)
	w.share.use(d)
	d += w.spanTime
	w.spanTime = 0
	return d
}

// refuse gives the rollouts of a span an Error: the request ran out of
// worker time before the span started.
func (e *engine) refuse(t task, sp span, rollouts []*scorers.Rollout, out []scorers.Result, work time.Duration) {
	r := scorers.Errorf("not scored: the request used up its worker time (%v, limits.max_request_work) before this rollout's turn", work)
	if sp.group != nil {
		for _, i := range sp.group {
			out[i] = r
		}
	} else {
		for i := sp.lo; i < sp.hi; i++ {
			out[i] = r
		}
	}
	e.observe(t, 0, out[:0])
}

// groupIndices lists the rollouts of each group, in order of first
// appearance (scorers.GroupIndices).
func groupIndices(rollouts []*scorers.Rollout) [][]int {
	return scorers.GroupIndices(len(rollouts), func(i int) string { return cmp.Or(rollouts[i].Group, rollouts[i].Prompt) })
}

// runChunk scores rollouts with one function into out, recording metrics
// once for the chunk.
func (e *engine) runChunk(ctx context.Context, t task, rollouts []*scorers.Rollout, out []scorers.Result) {
	start := time.Now()
	for i := 0; i < len(rollouts); {
		i = e.scoreFrom(ctx, t.Function, rollouts, out, i)
	}
	for i := range out {
		out[i] = sanitize(out[i])
	}
	e.observe(t, time.Since(start), out)
}

// runGroup scores one group with a GroupScorer and spreads the results back
// over out. A panic makes the whole group an Error: its values depend on each
// other.
func (e *engine) runGroup(ctx context.Context, t task, rollouts []*scorers.Rollout, idx []int, out []scorers.Result) {
	start := time.Now()
	group := make([]*scorers.Rollout, len(idx))
	for i, j := range idx {
		group[i] = rollouts[j]
	}
	res := make([]scorers.Result, len(idx))
	func() {
		defer func() {
			if p := recover(); p != nil {
				e.log.Error("scorer panicked", zap.String("function", t.Function.Name), zap.String("kind", t.Function.Kind),
					zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
				for i := range res {
					res[i] = scorers.Errorf("internal error: the %s scorer panicked on this rollout's group", t.Function.Kind)
				}
			}
		}()
		if ctx.Err() != nil {
			for i := range res {
				res[i] = notScored(ctx)
			}
			return
		}
		t.Function.Scorer.(scorers.GroupScorer).ScoreGroup(ctx, group, res)
		if ctx.Err() != nil {
			for i := range res {
				if res[i].Outcome == scorers.Error {
					res[i] = notScored(ctx) // cut short
				}
			}
		}
	}()
	for i, j := range idx {
		res[i] = sanitize(res[i])
		out[j] = res[i]
	}
	e.observe(t, time.Since(start), res)
}

// observe records one span's time and outcomes.
func (e *engine) observe(t task, elapsed time.Duration, results []scorers.Result) {
	var counts [4]int
	for _, r := range results {
		counts[r.Outcome]++
	}
	e.m.functionDuration.WithLabelValues(t.Label).Observe(elapsed.Seconds() / float64(len(results)))
	for _, o := range []scorers.Outcome{scorers.OK, scorers.NotApplicable, scorers.Error} {
		if counts[o] > 0 {
			e.m.functionOutcomes.WithLabelValues(t.Label, o.String()).Add(float64(counts[o]))
		}
	}
}

// scoreFrom scores rollouts[i:] until done, the context ends, or a scorer
// panics; it returns the index to resume from. A panic marks that one rollout
// as an Error and resumes after it, so the happy path pays no per-rollout
// defer. Once the context has ended, the rollouts left and an Error a
// scorer returns (its work was cut short) are notScored.
func (e *engine) scoreFrom(ctx context.Context, fn *scorers.Function, rollouts []*scorers.Rollout, out []scorers.Result, i int) (next int) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("scorer panicked", zap.String("function", fn.Name), zap.String("kind", fn.Kind),
				zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			out[i] = scorers.Errorf("internal error: the %s scorer panicked on this rollout", fn.Kind)
			next = i + 1
		}
	}()
	s := fn.Scorer
	for ; i < len(rollouts); i++ {
		if i%16 == 0 && ctx.Err() != nil {
			cut := notScored(ctx)
			for ; i < len(rollouts); i++ {
				out[i] = cut
			}
			return i
		}
		out[i] = s.Score(ctx, rollouts[i])
		if out[i].Outcome == scorers.Error && ctx.Err() != nil {
			out[i] = notScored(ctx)
		}
	}
	return i
}

// sanitize enforces the Result contract: an OK value is finite, anything else
// carries NaN, and an unset outcome is an error rather than a silent 0.
func sanitize(r scorers.Result) scorers.Result {
	switch r.Outcome {
	case scorers.OK:
		if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
			return scorers.Errorf("scorer returned the non-finite score %v", r.Value)
		}
		return r
	case scorers.NotApplicable, scorers.Error:
		r.Value = math.NaN()
		if r.Reason == "" {
			r.Reason = r.Outcome.String()
		}
		return r
	default:
		return scorers.Errorf("scorer returned no outcome (%s)", fmt.Sprint(r.Outcome))
	}
}
