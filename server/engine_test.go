package server

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/rewardd/rewardd/scorers"
)

// scorerFunc adapts a function to scorers.Scorer.
type scorerFunc func(context.Context, *scorers.Rollout) scorers.Result

func (f scorerFunc) Score(ctx context.Context, r *scorers.Rollout) scorers.Result { return f(ctx, r) }

func newTask(name string, f scorerFunc) task {
	return task{Function: &scorers.Function{Name: name, Kind: "test", Scorer: f}, Label: inlineLabel}
}

func newTestEngine(t *testing.T, workers int) (*engine, *engineMetrics) {
	t.Helper()
	m := newEngineMetrics(prometheus.NewRegistry(), nil)
	return newEngine(workers, 0, m, zap.NewNop()), m
}

// score runs e.Score into new result columns and returns them.
func score(ctx context.Context, e *engine, tasks []task, rs []*scorers.Rollout) ([][]scorers.Result, error) {
	res := make([][]scorers.Result, len(tasks))
	for k := range res {
		res[k] = make([]scorers.Result, len(rs))
	}
	return res, e.Score(ctx, e.join(0), tasks, rs, res)
}

func rollouts(n int) []*scorers.Rollout {
	rs := make([]*scorers.Rollout, n)
	for i := range rs {
		rs[i] = &scorers.Rollout{ID: strconv.Itoa(i), Completion: strconv.Itoa(i)}
	}
	return rs
}

// idScore scores a rollout with its own index times mul: results out of
// place show at once.
func idScore(mul float64) scorerFunc {
	return func(_ context.Context, r *scorers.Rollout) scorers.Result {
		i, _ := strconv.Atoi(r.ID)
		return scorers.Score(float64(i) * mul)
	}
}

func TestEngineAlignsResults(t *testing.T) {
	e, m := newTestEngine(t, 3)
	for _, n := range []int{0, 1, 5, 255, 256, 257, 1000, 5003} {
		rs := rollouts(n)
		res, err := score(context.Background(), e, []task{newTask("a", idScore(1)), newTask("b", idScore(-2))}, rs)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 2 || len(res[0]) != n || len(res[1]) != n {
			t.Fatalf("n=%d: result shape %d×%d", n, len(res), len(res[0]))
		}
		for i := range n {
			if res[0][i].Value != float64(i) || res[1][i].Value != float64(-2*i) {
				t.Fatalf("n=%d rollout %d: got %v, %v", n, i, res[0][i].Value, res[1][i].Value)
			}
		}
	}
	if got := testutil.ToFloat64(m.rolloutsScored); got != 0+1+5+255+256+257+1000+5003 {
		t.Errorf("rewardd_rollouts_scored_total = %v", got)
	}
	if got := testutil.ToFloat64(m.functionOutcomes.WithLabelValues(inlineLabel, "ok")); got != 2*(1+5+255+256+257+1000+5003) {
		t.Errorf("ok outcomes = %v", got)
	}
}

func TestEnginePanicIsOneError(t *testing.T) {
	e, m := newTestEngine(t, 2)
	boom := func(_ context.Context, r *scorers.Rollout) scorers.Result {
		if r.ID == "7" || r.ID == "8" || r.ID == "300" {
			panic("boom on " + r.ID)
		}
		return scorers.Score(1)
	}
	res, err := score(context.Background(), e, []task{newTask("boom", boom)}, rollouts(400))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res[0] {
		bad := i == 7 || i == 8 || i == 300
		if bad && (r.Outcome != scorers.Error || r.Reason == "" || !math.IsNaN(r.Value)) {
			t.Errorf("rollout %d: %+v, want an Error with a reason", i, r)
		}
		if !bad && (r.Outcome != scorers.OK || r.Value != 1) {
			t.Errorf("rollout %d: %+v, want OK 1", i, r)
		}
	}
	if got := testutil.ToFloat64(m.functionOutcomes.WithLabelValues(inlineLabel, "error")); got != 3 {
		t.Errorf("error outcomes = %v, want 3", got)
	}
}

func TestEngineSanitizes(t *testing.T) {
	e, _ := newTestEngine(t, 1)
	cases := []scorers.Result{
		{Value: math.NaN(), Outcome: scorers.OK},
		{Value: math.Inf(1), Outcome: scorers.OK},
		{Value: 0}, // no outcome: never a silent 0
		{Value: 0.5, Outcome: scorers.NotApplicable}, // n/a carries NaN
	}
	for i, c := range cases {
		res, err := score(context.Background(), e, []task{newTask("x", func(context.Context, *scorers.Rollout) scorers.Result { return c })}, rollouts(1))
		if err != nil {
			t.Fatal(err)
		}
		got := res[0][0]
		if !math.IsNaN(got.Value) || got.Reason == "" || got.Outcome == scorers.OK {
			t.Errorf("case %d: %+v became %+v, want NaN, not OK, with a reason", i, c, got)
		}
	}
}

// TestEngineBoundsConcurrency runs many requests at once and checks that no
// more than the pool size of evaluations ever run together.
func TestEngineBoundsConcurrency(t *testing.T) {
	const workers = 3
	e, _ := newTestEngine(t, workers)
	var running, peak atomic.Int64
	slow := func(context.Context, *scorers.Rollout) scorers.Result {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(50 * time.Microsecond)
		running.Add(-1)
		return scorers.Score(1)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := score(context.Background(), e, []task{newTask("s", slow), newTask("t", slow)}, rollouts(40)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > workers || p < 1 {
		t.Errorf("peak concurrent evaluations = %d, want 1..%d", p, workers)
	}
}

// TestEngineCancelStopsQueuedWork cancels a request while its first chunk
// runs and checks that the queued chunks never run.
func TestEngineCancelStopsQueuedWork(t *testing.T) {
	e, _ := newTestEngine(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	f := func(ctx context.Context, r *scorers.Rollout) scorers.Result {
		if calls.Add(1) == 1 {
			cancel()
			<-ctx.Done()
		}
		return scorers.Score(1)
	}
	_, err := score(ctx, e, []task{newTask("f", f)}, rollouts(10000))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	// The chunk that was running stops at its next context check (every 16
	// rollouts); no other chunk starts.
	if n := calls.Load(); n > 16 {
		t.Errorf("%d evaluations ran after cancellation, want at most 16", n)
	}
	// The pool slot is free again.
	if _, err := score(context.Background(), e, []task{newTask("a", idScore(1))}, rollouts(3)); err != nil {
		t.Errorf("after cancel: %v", err)
	}
}

// TestEngineCutShortKeepsDecidedResults ends a request's context while
// its rollouts are scored: what was decided before stands, as does an OK
// score returned after; an Error returned after (cut short) and the
// rollouts never started are "not scored" with the context's cause, and
// the error counts the rollouts some function did not score.
func TestEngineCutShortKeepsDecidedResults(t *testing.T) {
	e, _ := newTestEngine(t, 1)
	cause := errors.New("the test's limit")
	ctx, cancel := context.WithCancelCause(context.Background())
	f := func(ctx context.Context, r *scorers.Rollout) scorers.Result {
		switch {
		case r.ID == "2": // ends ctx, and finishes after
			cancel(cause)
			return scorers.Score(2)
		case ctx.Err() != nil:
			return scorers.Errorf("cancelled: %v", ctx.Err())
		}
		return scorers.Score(1)
	}
	res, err := score(ctx, e, []task{newTask("f", f)}, rollouts(40))
	var cut *cutShortError
	if !errors.As(err, &cut) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a cutShortError wrapping context.Canceled", err)
	}
	if cut.rollouts != 37 {
		t.Errorf("the error counts %d rollouts not scored, want 37", cut.rollouts)
	}
	want := "not scored: the test's limit"
	for i, r := range res[0] {
		switch {
		case i < 2 && r.Value != 1, i == 2 && r.Value != 2:
			t.Errorf("rollout %d: %+v, want its score", i, r)
		case i > 2 && (r.Outcome != scorers.Error || r.Reason != want):
			t.Errorf("rollout %d: %+v, want an Error %q", i, r, want)
		}
	}
}

// groupSize is a GroupScorer scoring each rollout with the size of its
// group; it panics on a group holding the rollout "boom".
type groupSize struct{}

func (groupSize) Score(context.Context, *scorers.Rollout) scorers.Result {
	return scorers.Errorf("needs the group")
}

func (groupSize) ScoreGroup(_ context.Context, group []*scorers.Rollout, out []scorers.Result) {
	for i, r := range group {
		if r.ID == "boom" {
			panic("boom")
		}
		out[i] = scorers.Score(float64(len(group)))
	}
}

func TestEngineGroupScorer(t *testing.T) {
	e, _ := newTestEngine(t, 2)
	var rs []*scorers.Rollout
	want := []float64{}
	// Groups interleaved and of different sizes: by group id, by prompt, and
	// alone (neither).
	for i := range 30 {
		r := &scorers.Rollout{ID: strconv.Itoa(i)}
		switch i % 3 {
		case 0:
			r.Group = "g" + strconv.Itoa(i%2) // g0: i=0,6,12,18,24; g1: 3,9,15,21,27
		case 1:
			r.Prompt = "p" // one group of 10
		}
		rs = append(rs, r)
	}
	for i := range 30 {
		switch i % 3 {
		case 0:
			want = append(want, 5)
		case 1:
			want = append(want, 10)
		default:
			want = append(want, 1)
		}
	}
	fn := &scorers.Function{Name: "g", Kind: "test", Scorer: groupSize{}}
	res, err := score(context.Background(), e, []task{{Function: fn, Label: inlineLabel}, newTask("id", idScore(1))}, rs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		if res[0][i].Outcome != scorers.OK || res[0][i].Value != want[i] || res[1][i].Value != float64(i) {
			t.Errorf("rollout %d: group scorer %+v (want %v), plain %+v", i, res[0][i], want[i], res[1][i])
		}
	}

	// A panic fails its whole group and only that group.
	rs[6].ID = "boom"
	res, err = score(context.Background(), e, []task{{Function: fn, Label: inlineLabel}}, rs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		inG0 := i%3 == 0 && i%2 == 0
		if got := res[0][i].Outcome; inG0 != (got == scorers.Error) {
			t.Errorf("rollout %d: outcome %v after a panic in group g0", i, got)
		}
	}
}

// TestEngineSharesWorkersFairly: a slot goes to the waiting request that has
// used the workers least, not to whoever asked first. With one worker busy
// on a large request, a small request that arrives runs all of its spans
// before the large request's next one; first come, first served would
// alternate them.
func TestEngineSharesWorkersFairly(t *testing.T) {
	e, _ := newTestEngine(t, 1)
	var order recorder
	record := order.record
	first := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	heavy := func(_ context.Context, r *scorers.Rollout) scorers.Result {
		record("H")
		once.Do(func() {
			close(first)
			<-release
		})
		return scorers.Score(1)
	}
	light := func(_ context.Context, r *scorers.Rollout) scorers.Result {
		record("L")
		return scorers.Score(1)
	}
	// A rollout of spanBytes is a span of its own.
	long := func(n int) []*scorers.Rollout {
		rs := rollouts(n)
		for _, r := range rs {
			r.Completion = strings.Repeat("x", spanBytes)
		}
		return rs
	}
	// The small request waits for the one slot before the large one's
	// first span ends.
	scoreWhileBusy(t, e, newTask("h", heavy), long(6), first, newTask("l", light), long(6), release)
	if got, want := order.joined(""), "HLLLLLLHHHHH"; got != want {
		t.Errorf("spans ran in the order %s, want %s", got, want)
	}
}

// TestEngineWorkBudget: once a request has used its worker time, the spans
// it has not started give their rollouts an Error naming the limit.
func TestEngineWorkBudget(t *testing.T) {
	e, m := newTestEngine(t, 1)
	slow := func(context.Context, *scorers.Rollout) scorers.Result {
		time.Sleep(time.Millisecond)
		return scorers.Score(1)
	}
	res := make([][]scorers.Result, 1)
	res[0] = make([]scorers.Result, 50)
	if err := e.Score(context.Background(), e.join(time.Millisecond), []task{newTask("s", slow)}, rollouts(50), res); err != nil {
		t.Fatal(err)
	}
	ok, refused := 0, 0
	for _, r := range res[0] {
		switch {
		case r.Outcome == scorers.OK:
			ok++
		case r.Outcome == scorers.Error && strings.Contains(r.Reason, "limits.max_request_work"):
			refused++
		default:
			t.Errorf("unexpected result %+v", r)
		}
	}
	if ok == 0 || refused == 0 {
		t.Errorf("%d scored, %d refused: want the first span scored and the rest refused", ok, refused)
	}
	if got := testutil.ToFloat64(m.workExhausted); got != 1 {
		t.Errorf("rewardd_work_budget_exhausted_total = %v, want 1", got)
	}
}

// TestEngineYieldLetsWaitingRequestsIn: a scorer that calls scorers.Yield
// in the middle of one long rollout hands the worker to a request that has
// used less, and finishes after it; without the yield the other request
// would wait for the whole rollout.
func TestEngineYieldLetsWaitingRequestsIn(t *testing.T) {
	e, _ := newTestEngine(t, 1)
	var order recorder
	record := order.record
	started := make(chan struct{})
	waiting := make(chan struct{})
	long := func(ctx context.Context, _ *scorers.Rollout) scorers.Result {
		record("long starts")
		close(started)
		<-waiting
		if err := scorers.Yield(ctx); err != nil {
			return scorers.Errorf("%v", err)
		}
		record("long ends")
		return scorers.Score(1)
	}
	short := func(context.Context, *scorers.Rollout) scorers.Result {
		record("short")
		return scorers.Score(1)
	}
	scoreWhileBusy(t, e, newTask("long", long), rollouts(1), started, newTask("short", short), rollouts(1), waiting)
	if got, want := order.joined(", "), "long starts, short, long ends"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
}

// awaitWaiter returns once a request waits for a slot of e's gate.
func awaitWaiter(t *testing.T, e *engine) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.gate.mu.Lock()
		n := len(e.gate.waiting)
		e.gate.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no request waited for a slot within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// scoreWhileBusy scores busyRollouts with busy and, once started is
// closed, waiterRollouts with waiter; when the second request waits for a
// worker it closes release, and it returns when both requests have ended.
func scoreWhileBusy(t *testing.T, e *engine, busy task, busyRollouts []*scorers.Rollout, started <-chan struct{},
	waiter task, waiterRollouts []*scorers.Rollout, release chan struct{}) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := score(context.Background(), e, []task{busy}, busyRollouts); err != nil {
			t.Error(err)
		}
	})
	<-started
	wg.Go(func() {
		if _, err := score(context.Background(), e, []task{waiter}, waiterRollouts); err != nil {
			t.Error(err)
		}
	})
	awaitWaiter(t, e)
	close(release)
	wg.Wait()
}

// recorder records events from several goroutines, in the order they
// happen.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) record(event string) {
	r.mu.Lock()
	r.events = append(r.events, event)
	r.mu.Unlock()
}

// joined is the events so far, sep between them.
func (r *recorder) joined(sep string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, sep)
}

// TestCutterCutsByCost: a function's spans hold what its cost says fits in
// spanTarget: one rollout while the cost is unknown, then as many as the
// cost allows, never fewer than one nor more than the chunk.
func TestCutterCutsByCost(t *testing.T) {
	e, _ := newTestEngine(t, 1)
	served := task{Function: &scorers.Function{Name: "f", Kind: "test", Scorer: idScore(1)}, Label: "f"}
	rs := rollouts(64)
	for _, r := range rs {
		r.Completion = strings.Repeat("x", 1000-rolloutBytes) // 1,000 bytes a rollout
	}
	sizes := func() []int {
		c := e.cutter([]task{served}, rs)
		var got []int
		for sp, ok := c.next(); ok; sp, ok = c.next() {
			got = append(got, sp.hi-sp.lo)
		}
		return got
	}
	if got := sizes(); got[0] != 1 {
		t.Errorf("unknown cost: first span of %d rollouts, want 1", got[0])
	}
	cost := e.costs.of(served)
	for _, c := range []struct {
		perByte float64 // ns
		want    int     // rollouts a span
	}{
		{250, 4},   // 1 ms holds 4,000 bytes
		{1e6, 1},   // a rollout alone takes longer than 1 ms
		{1e-3, 32}, // the chunk: 64 rollouts over 2 spans for the one worker
	} {
		cost.perByte = c.perByte
		for i, n := range sizes() {
			if n != c.want {
				t.Errorf("%v ns a byte: span %d of %d rollouts, want %d", c.perByte, i, n, c.want)
			}
		}
	}
	// A span that ran moves the cost the next one is cut by toward its own:
	// from 4,000 bytes a span toward 1,000.
	cost.perByte = 250
	cost.observe(4000, 4*time.Millisecond)
	if got := cost.budget(); got <= 1000 || got >= 4000 {
		t.Errorf("after a span of 4,000 bytes that took 4 ms, a span may hold %d bytes, want between 1,000 and 4,000", got)
	}
}

// BenchmarkSpanBoundary: what a span boundary costs a request alone (the
// gate, the cutter, the clocks and the metrics), from the same 4,096
// rollouts of a function that does nothing, cut 256 rollouts to a span
// (short texts) or one to a span (texts of spanBytes, which the function
// does not read). The difference of ns/rollout is the cost of a boundary.
func BenchmarkSpanBoundary(b *testing.B) {
	nothing := scorerFunc(func(context.Context, *scorers.Rollout) scorers.Result { return scorers.Score(1) })
	for _, c := range []struct {
		name, text string
	}{{"256-rollout-spans", "1"}, {"1-rollout-spans", strings.Repeat("x", spanBytes)}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEngine(1, 0, newEngineMetrics(prometheus.NewRegistry(), nil), zap.NewNop())
			rs := rollouts(4096)
			for _, r := range rs {
				r.Completion = c.text
			}
			for b.Loop() {
				if _, err := score(context.Background(), e, []task{newTask("nothing", nothing)}, rs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rs)), "ns/rollout")
		})
	}
}
