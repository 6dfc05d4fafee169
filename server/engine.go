package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
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

// Workers returns the pool size.
func (e *Engine) Workers() int { return e.workers }

// chunking: at most maxChunk rollouts per chunk so a big request still spreads
// over the pool and yields slots to others between chunks; at least enough
// chunks to keep every worker busy.
const maxChunk = 256

// Score applies every task to every rollout and returns results[k][i] for
// task k and rollout i. It blocks until all are done or ctx ends; on ctx end it
// stops queued chunks, waits for running ones, and returns ctx's error. A
// panic while scoring one rollout becomes an Error result for that rollout
// only.
func (e *Engine) Score(ctx context.Context, tasks []Task, rollouts []*scorers.Rollout) ([][]scorers.Result, error) {
	if e.inflight.Add(1) > e.maxInflight {
		e.inflight.Add(-1)
		e.m.poolRejected.Inc()
		return nil, ErrOverloaded
	}
	defer e.inflight.Add(-1)

	n := len(rollouts)
	results := make([][]scorers.Result, len(tasks))
	for k := range results {
		results[k] = make([]scorers.Result, n)
	}
	if n == 0 || len(tasks) == 0 {
		return results, nil
	}

	chunk := min(maxChunk, max(1, (n+2*e.workers-1)/(2*e.workers)))
	perTask := (n + chunk - 1) / chunk
	total := perTask * len(tasks)

	var next atomic.Int64
	var wg conc.WaitGroup
	for range min(e.workers, total) {
		wg.Go(func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= total {
					return
				}
				waitStart := time.Now()
				if err := e.sem.Acquire(ctx, 1); err != nil {
					return
				}
				e.m.poolQueueWait.Observe(time.Since(waitStart).Seconds())
				e.m.poolInflight.Inc()
				k, lo := c/perTask, (c%perTask)*chunk
				hi := min(lo+chunk, n)
				e.runChunk(ctx, tasks[k], rollouts[lo:hi], results[k][lo:hi])
				e.m.poolInflight.Dec()
				e.sem.Release(1)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.m.rolloutsScored.Add(float64(n))
	return results, nil
}

// runChunk scores rollouts with one function into out, recording metrics
// once for the chunk.
func (e *Engine) runChunk(ctx context.Context, t Task, rollouts []*scorers.Rollout, out []scorers.Result) {
	start := time.Now()
	for i := 0; i < len(rollouts); {
		i = e.scoreFrom(ctx, t.Function, rollouts, out, i)
	}
	elapsed := time.Since(start)

	var counts [4]int
	for i := range out {
		out[i] = sanitize(out[i])
		counts[out[i].Outcome]++
	}
	e.m.functionDuration.WithLabelValues(t.Label).Observe(elapsed.Seconds() / float64(len(rollouts)))
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
