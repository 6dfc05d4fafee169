package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
	"golang.org/x/sync/semaphore"

	"github.com/rewardd/rewardd/scorers"
)

// ErrOverloaded is returned when the engine already holds as many requests
// as it admits. It maps to RESOURCE_EXHAUSTED (HTTP 429): the caller should
// back off or try another replica.
var ErrOverloaded = errors.New("server at capacity, retry later or on another replica")

// Task is one function to apply to every rollout of a request.
type Task struct {
	Function *scorers.Function
	// Label is the function label in metrics: the served name, or
	// InlineLabel for a function the request defined.
	Label string
}

// Engine evaluates functions on rollouts over ONE bounded worker pool shared
// by every request in the process, so total concurrency stays at the pool size
// however many requests arrive. Work is cut into chunks of rollouts of one
// function; a chunk holds a pool slot while it runs.
//
// Admission is bounded too: beyond maxInflight requests in progress, Score
// fails at once with ErrOverloaded instead of queueing without bound.
type Engine struct {
	workers     int
	sem         *semaphore.Weighted
	maxInflight int64
	inflight    atomic.Int64
	m           *Metrics
	log         *zap.Logger
}

// NewEngine returns an engine with a pool of workers slots admitting at most
// maxInflight concurrent requests.
// A scorer panic is logged on log with its stack, once.
func NewEngine(workers, maxInflight int, m *Metrics, log *zap.Logger) *Engine {
	m.poolCapacity.Set(float64(workers))
	return &Engine{
		workers:     workers,
		sem:         semaphore.NewWeighted(int64(workers)),
		maxInflight: int64(maxInflight),
		m:           m,
		log:         log,
	}
}

// admittedKey marks a context whose request holds an admission slot
// already (see Admit); its value is the *admission.
type admittedKey struct{}

// admission is one slot taken by Admit, given back once: by Score when the
// work is done, or when the request's context ends, whichever comes first.
type admission struct {
	once sync.Once
	e    *Engine
}

func (a *admission) release() { a.once.Do(a.e.release) }

// Admit takes an admission slot for a request before its body is read or
// decoded, so that the excess is refused in microseconds instead of after
// megabytes have arrived. Score on the returned context does not take a
// second slot and gives this one back when its work is done; if Score is never
// reached (the body does not decode), the slot comes back when ctx ends
// (transports end a request's context when it is answered). It fails with
// ErrOverloaded when the engine is full.
func (e *Engine) Admit(ctx context.Context) (context.Context, error) {
	if !e.reserve() {
		return ctx, ErrOverloaded
	}
	a := &admission{e: e}
	context.AfterFunc(ctx, a.release)
	return context.WithValue(ctx, admittedKey{}, a), nil
}

// Release gives back the admission slot ctx holds (see Admit), if it still
// holds one. A transport calls it once its handler is done and before the
// answer goes out: a request that failed before Score (an unknown function,
// say) would otherwise keep its slot until its context ends, which can be
// after the client has the answer and has sent its next request, which is
// then refused.
func (e *Engine) Release(ctx context.Context) {
	if a, ok := ctx.Value(admittedKey{}).(*admission); ok {
		a.release()
	}
}

func (e *Engine) reserve() bool {
	if e.inflight.Add(1) > e.maxInflight {
		e.inflight.Add(-1)
		e.m.poolRejected.Inc()
		return false
	}
	return true
}

func (e *Engine) release() { e.inflight.Add(-1) }

// Workers returns the pool size.
func (e *Engine) Workers() int { return e.workers }

// maxChunk bounds the rollouts of one span of pool work (see plan).
const maxChunk = 256

// yieldEvery is how long a pool worker scores before it lets other
// goroutines run (see Score).
const yieldEvery = time.Millisecond

// Score applies every task to every rollout and sets results[k][i] for task
// k and rollout i (results has a column of len(rollouts) per task). It
// blocks until all are done or ctx ends; on ctx end it stops queued chunks,
// waits for running ones, and returns ctx's error, with results partly set.
// A panic while scoring one rollout becomes an Error result for that
// rollout only.
func (e *Engine) Score(ctx context.Context, tasks []Task, rollouts []*scorers.Rollout, results [][]scorers.Result) error {
	if a, ok := ctx.Value(admittedKey{}).(*admission); ok {
		// Give the slot back as soon as the work is done, before the
		// answer is written: a client that sends its next request the
		// moment it has this answer must find the slot free.
		defer a.release()
	} else {
		if !e.reserve() {
			return ErrOverloaded
		}
		defer e.release()
	}

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

	spans := e.plan(tasks, rollouts)
	var next atomic.Int64
	var wg conc.WaitGroup
	for range min(e.workers, len(spans)) {
		wg.Go(func() {
			lastYield := time.Now()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(spans) {
					return
				}
				waitStart := time.Now()
				if err := e.sem.Acquire(ctx, 1); err != nil {
					return
				}
				e.m.poolQueueWait.Observe(time.Since(waitStart).Seconds())
				e.m.poolInflight.Inc()
				sp := spans[i]
				if sp.group == nil {
					e.runChunk(ctx, tasks[sp.task], rollouts[sp.lo:sp.hi], results[sp.task][sp.lo:sp.hi])
				} else {
					e.runGroup(ctx, tasks[sp.task], rollouts, sp.group, results[sp.task])
				}
				e.m.poolInflight.Dec()
				e.sem.Release(1)
				// Let the goroutines the network woke run now rather than
				// at the scheduler's next preemption (up to 10 ms away when
				// every P is scoring): with the server on one core and 10x
				// its capacity offered, refusals came back after a median
				// 13 ms with no yield and 6-8 ms with one after every span.
				// A yield after every span (~0.1 ms) cost 15-25% of the
				// throughput of a loaded 2-core machine, so it is at most
				// one per yieldEvery of work.
				if now := time.Now(); now.Sub(lastYield) >= yieldEvery {
					runtime.Gosched()
					lastYield = now
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	e.m.rolloutsScored.Add(float64(n))
	return nil
}

// span is one unit of pool work: rollouts lo..hi of one task, or, for a
// GroupScorer, the rollouts of one group (their indices).
type span struct {
	task, lo, hi int
	group        []int
}

// plan cuts the work into spans: at most maxChunk rollouts per span so a big
// request still spreads over the pool and yields slots to others between
// spans, and enough spans to keep every worker busy. A GroupScorer's work is
// cut at group boundaries, one group per span.
func (e *Engine) plan(tasks []Task, rollouts []*scorers.Rollout) []span {
	n := len(rollouts)
	chunk := min(maxChunk, max(1, (n+2*e.workers-1)/(2*e.workers)))
	var groups [][]int
	spans := make([]span, 0, len(tasks)*((n+chunk-1)/chunk))
	for k, t := range tasks {
		if _, ok := t.Function.Scorer.(scorers.GroupScorer); ok {
			if groups == nil {
				groups = groupIndices(rollouts)
			}
			for _, g := range groups {
				spans = append(spans, span{task: k, group: g})
			}
			continue
		}
		for lo := 0; lo < n; lo += chunk {
			spans = append(spans, span{task: k, lo: lo, hi: min(lo+chunk, n)})
		}
	}
	return spans
}

// groupIndices lists the rollouts of each group, in order of first
// appearance. A rollout's group is its Group, or its Prompt when it has none,
// as aggregation defines it; a rollout with neither is a group of its own.
func groupIndices(rollouts []*scorers.Rollout) [][]int {
	var groups [][]int
	index := make(map[string]int)
	for i, r := range rollouts {
		key := r.Group
		if key == "" {
			key = r.Prompt
		}
		if key == "" {
			groups = append(groups, []int{i})
			continue
		}
		g, ok := index[key]
		if !ok {
			g = len(groups)
			index[key] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// runChunk scores rollouts with one function into out, recording metrics
// once for the chunk.
func (e *Engine) runChunk(ctx context.Context, t Task, rollouts []*scorers.Rollout, out []scorers.Result) {
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
func (e *Engine) runGroup(ctx context.Context, t Task, rollouts []*scorers.Rollout, idx []int, out []scorers.Result) {
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
				res[i] = scorers.Errorf("cancelled: %v", ctx.Err())
			}
			return
		}
		t.Function.Scorer.(scorers.GroupScorer).ScoreGroup(ctx, group, res)
	}()
	for i, j := range idx {
		res[i] = sanitize(res[i])
		out[j] = res[i]
	}
	e.observe(t, time.Since(start), res)
}

// observe records one span's time and outcomes.
func (e *Engine) observe(t Task, elapsed time.Duration, results []scorers.Result) {
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
// defer.
func (e *Engine) scoreFrom(ctx context.Context, fn *scorers.Function, rollouts []*scorers.Rollout, out []scorers.Result, i int) (next int) {
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
			for ; i < len(rollouts); i++ {
				out[i] = scorers.Errorf("cancelled: %v", ctx.Err())
			}
			return i
		}
		out[i] = s.Score(ctx, rollouts[i])
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
