package bench

import (
	"context"
	"fmt"
	"math"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

const scoreMethod = "/reward.v1.RewardService/Score"

// codeBadResponse is the error key of an answer that came back OK but does
// not hold one value and one status per rollout for every function: the
// bench counts it as a failed request rather than trusting it.
const codeBadResponse = "BAD_RESPONSE"

// batch is one distinct request of the load, encoded once.
type batch struct {
	rows    []Row
	encoded preEncoded
	tests   int // the tests its code rows' programs run
}

// call is the record of one request.
type call struct {
	start    time.Duration // since the clock started
	took     time.Duration
	code     string // codes.Code name, or codeBadResponse
	rollouts int
	tests    int // the batch's
}

// tally holds the per-function outcomes of the answers a client received.
type tally struct {
	ok, na, errs []int64
	sum          []float64 // of OK values
}

func newTally(n int) *tally {
	return &tally{ok: make([]int64, n), na: make([]int64, n), errs: make([]int64, n), sum: make([]float64, n)}
}

func (t *tally) add(o *tally) {
	for k := range t.ok {
		t.ok[k] += o.ok[k]
		t.na[k] += o.na[k]
		t.errs[k] += o.errs[k]
		t.sum[k] += o.sum[k]
	}
}

// check verifies that resp answers every function for every rollout and
// counts its outcomes; it returns a reason when it does not.
func (t *tally) check(resp *rewardv1.ScoreResponse, functions []string, rollouts int) string {
	if len(resp.GetFunctions()) != len(functions) {
		return fmt.Sprintf("%d functions in the answer, want %d", len(resp.GetFunctions()), len(functions))
	}
	for k, fs := range resp.GetFunctions() {
		if fs.GetName() != functions[k] || len(fs.GetValues()) != rollouts || len(fs.GetStatus()) != rollouts {
			return fmt.Sprintf("function %d is %q with %d values and %d statuses, want %q with %d",
				k, fs.GetName(), len(fs.GetValues()), len(fs.GetStatus()), functions[k], rollouts)
		}
	}
	for k, fs := range resp.GetFunctions() {
		for i, st := range fs.GetStatus() {
			switch st {
			case rewardv1.ScoreStatus_SCORE_STATUS_OK:
				t.ok[k]++
				t.sum[k] += fs.GetValues()[i]
			case rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE:
				t.na[k]++
			default:
				t.errs[k]++
			}
		}
	}
	return ""
}

// load is one measured phase: clients sending batches until a request count
// or a duration is reached.
type load struct {
	conns     []*grpc.ClientConn
	batches   []batch
	functions []string
	requests  int           // total, over all clients; 0: use duration
	duration  time.Duration // used when requests is 0
	progress  *progress
	// kept, when not nil, receives the first OK answer to each batch (by
	// index), for the agreement check of a code scenario.
	kept []atomic.Pointer[rewardv1.ScoreResponse]
}

// loadResult is what a load phase observed.
type loadResult struct {
	calls   []call
	tally   *tally
	elapsed time.Duration
	// firstBad is the first bad answer's reason, for the report.
	firstBad string
	// errorExamples are the first messages of rollouts scored ERROR.
	errorExamples []string
}

// maxErrorExamples bounds loadResult.errorExamples.
const maxErrorExamples = 5

// run sends the load. Every request sent is recorded exactly once, with the
// status it ended with; requests in flight when the duration ends are
// waited for. ctx ending cancels the calls in flight (they are recorded as
// CANCELLED) and sends no more.
func (l *load) run(ctx context.Context, perClient int) *loadResult {
	var issued atomic.Int64
	var mu sync.Mutex
	res := &loadResult{tally: newTally(len(l.functions))}
	t0 := time.Now()
	var wg conc.WaitGroup
	for _, conn := range l.conns {
		wg.Go(func() {
			calls := make([]call, 0, max(perClient, 16))
			tl := newTally(len(l.functions))
			firstBad := ""
			var errorExamples []string
			for {
				if ctx.Err() != nil {
					break
				}
				var seq int64
				if l.requests > 0 {
					if seq = issued.Add(1) - 1; seq >= int64(l.requests) {
						break
					}
				} else if time.Since(t0) >= l.duration {
					break
				} else {
					seq = issued.Add(1) - 1
				}
				b := &l.batches[int(seq)%len(l.batches)]
				resp := new(rewardv1.ScoreResponse)
				start := time.Now()
				var err error
				// A region per request, so that an execution trace
				// (--trace) shows what a slow request waited for.
				trace.WithRegion(ctx, "request", func() { err = conn.Invoke(ctx, scoreMethod, b.encoded, resp) })
				took := time.Since(start)
				code := status.Code(err).String()
				if err == nil {
					if why := tl.check(resp, l.functions, len(b.rows)); why != "" {
						code = codeBadResponse
						if firstBad == "" {
							firstBad = why
						}
					} else {
						if l.kept != nil {
							l.kept[int(seq)%len(l.batches)].CompareAndSwap(nil, resp)
						}
						for _, fs := range resp.GetFunctions() {
							for i, msg := range fs.GetErrors() {
								// Reasons of OK scores are no errors.
								if len(errorExamples) < maxErrorExamples && int(i) < len(b.rows) && fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_ERROR {
									errorExamples = append(errorExamples, fmt.Sprintf("%s %s: %s", fs.GetName(), b.rows[i].ID, msg))
								}
							}
						}
					}
				}
				calls = append(calls, call{start: start.Sub(t0), took: took, code: code, rollouts: len(b.rows), tests: b.tests})
				l.progress.done(1)
			}
			mu.Lock()
			res.calls = append(res.calls, calls...)
			res.tally.add(tl)
			if res.firstBad == "" {
				res.firstBad = firstBad
			}
			for _, e := range errorExamples {
				if len(res.errorExamples) < maxErrorExamples {
					res.errorExamples = append(res.errorExamples, e)
				}
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(t0)
	return res
}

// warmup sends n requests on every connection, outside the clock, and
// returns how they ended.
func (l *load) warmup(ctx context.Context, n int) Requests {
	r := Requests{Errors: map[string]int{}}
	for _, conn := range l.conns {
		for i := range n {
			b := &l.batches[i%len(l.batches)]
			err := conn.Invoke(ctx, scoreMethod, b.encoded, new(rewardv1.ScoreResponse))
			r.Sent++
			if err == nil {
				r.OK++
			} else {
				r.Errors[status.Code(err).String()]++
			}
		}
	}
	return r
}

// summarize computes the report's figures from a load phase.
func summarize(lr *loadResult, functions []string) *Result {
	r := &Result{Requests: Requests{Errors: map[string]int{}}}
	r.ElapsedSeconds = lr.elapsed.Seconds()
	var lat, refused []time.Duration
	for _, c := range lr.calls {
		r.Requests.Sent++
		if c.code != codes.OK.String() {
			r.Requests.Errors[c.code]++
			if c.code == codes.ResourceExhausted.String() {
				refused = append(refused, c.took)
			}
			continue
		}
		r.Requests.OK++
		r.Rollouts += int64(c.rollouts)
		lat = append(lat, c.took)
	}
	r.Evaluations = r.Rollouts * int64(len(functions))
	if r.ElapsedSeconds > 0 {
		r.RolloutsPerSecond = float64(r.Rollouts) / r.ElapsedSeconds
		r.EvaluationsPerSecond = float64(r.Evaluations) / r.ElapsedSeconds
	}
	r.Latency = latencyOf(lat)
	if len(refused) > 0 {
		l := latencyOf(refused)
		r.RefusedLatency = &l
	}
	r.LatencyHistogram = histogram(lat, 40)
	r.LatencyCDF = cdf(lat, 100)
	r.Throughput = throughput(lr.calls, lr.elapsed)
	for k, name := range functions {
		o := Outcome{Function: name, OK: lr.tally.ok[k], NotApplicable: lr.tally.na[k], Error: lr.tally.errs[k]}
		if o.OK > 0 {
			o.MeanOK = lr.tally.sum[k] / float64(o.OK)
		}
		r.Outcomes = append(r.Outcomes, o)
	}
	if lr.firstBad != "" {
		r.Notes = append(r.Notes, "a bad answer: "+lr.firstBad)
	}
	return r
}

// throughput bins completed rollouts by the time their request ended.
func throughput(calls []call, elapsed time.Duration) []Sample {
	if elapsed <= 0 || len(calls) == 0 {
		return nil
	}
	// About 50 bins, each wide enough for a few requests; a last bin
	// narrower than half the others is merged into the one before.
	width := max(elapsed/50, 4*elapsed/time.Duration(len(calls)), time.Millisecond)
	nbins := int(elapsed / width)
	if elapsed-time.Duration(nbins)*width >= width/2 || nbins == 0 {
		nbins++
	}
	bins := make([]int64, nbins)
	for _, c := range calls {
		if c.code == codes.OK.String() {
			bins[min(len(bins)-1, int((c.start+c.took)/width))] += int64(c.rollouts)
		}
	}
	out := make([]Sample, len(bins))
	for i, n := range bins {
		w := width
		if i == len(bins)-1 { // the last bin ends with the run
			w = elapsed - time.Duration(i)*width
		}
		out[i] = Sample{Seconds: (time.Duration(i)*width + w/2).Seconds()}
		if w > 0 {
			out[i].RolloutsPerSecond = float64(n) / w.Seconds()
		}
	}
	return out
}

// progress is a progress bar on the caller's writer, or nothing.
type progress struct {
	done func(n int)
	stop func()
}

var noProgress = &progress{done: func(int) {}, stop: func() {}}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is a / b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return 0
	}
	return a / b
}
