package server

import (
	"sync"
	"time"

	"github.com/rewardd/rewardd/scorers"
)

// A request's work is cut into spans, each held on one pool slot from start
// to end (but for scorers.Yield), and fairness between requests is decided
// between spans: a request that waits for a slot waits for the span running
// on it. So a span is cut to take about spanTarget of worker time, by what
// its function has cost per byte so far; it holds at least one rollout (a
// rollout that alone takes long is the scorer's to cut, with
// scorers.Yield), and at most maxChunk rollouts and spanBytes of text.
const (
	spanTarget = time.Millisecond
	maxChunk   = 256
	spanBytes  = 256 << 10
)

// rolloutBytes is what a rollout counts in a span's size beside its text,
// so that a function's cost per rollout is learned with its cost per byte.
const rolloutBytes = 64

// cost is what one function has cost per byte of the spans it ran: a moving
// average, so that it follows a function whose cost changes with its input
// or with the machine's load.
type cost struct {
	mu      sync.Mutex
	perByte float64 // nanoseconds; 0 until the first span is observed
}

// budget is the bytes of a span expected to take spanTarget, or 0 when the
// function has not run yet.
func (c *cost) budget() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perByte == 0 {
		return 0
	}
	return int(min(float64(spanTarget)/c.perByte, spanBytes))
}

// observe records a span of size bytes that took d of worker time.
func (c *cost) observe(size int, d time.Duration) {
	if size <= 0 || d <= 0 {
		return
	}
	perByte := float64(d) / float64(size)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perByte == 0 {
		c.perByte = perByte
		return
	}
	c.perByte += (perByte - c.perByte) / 4
}

// costs are the served functions' costs, by label, kept across requests so
// that a request's first spans are cut as well as its later ones. A
// function a request defines starts unknown in each request.
type costs struct {
	mu      sync.Mutex
	byLabel map[string]*cost
}

// of returns the cost that t's spans are cut by and observed into.
func (cs *costs) of(t task) *cost {
	if t.Label == inlineLabel {
		return new(cost)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.byLabel[t.Label]
	if !ok {
		if cs.byLabel == nil {
			cs.byLabel = make(map[string]*cost)
		}
		c = new(cost)
		cs.byLabel[t.Label] = c
	}
	return c
}

// span is one unit of pool work: rollouts lo..hi of one task, size bytes
// (rolloutSize), or, for a GroupScorer, the rollouts of one group (their
// indices).
type span struct {
	task, lo, hi int
	size         int
	group        []int
}

// cutter cuts one request's work into spans as its workers ask for them,
// task after task: a GroupScorer's work one group per span, any other
// function's from where its last span ended, as many rollouts as its cost
// says fit in spanTarget (at least one; one while its cost is unknown), and
// at most chunk rollouts, so that
// a request of many cheap rollouts still spreads over every worker.
type cutter struct {
	tasks    []task
	rollouts []*scorers.Rollout
	costs    []*cost // of each task
	chunk    int
	groups   [][]int // when a task is a GroupScorer's

	mu    sync.Mutex
	k, lo int // the next span is task k's from rollout (or group) lo
}

func (e *engine) cutter(tasks []task, rollouts []*scorers.Rollout) *cutter {
	c := &cutter{
		tasks:    tasks,
		rollouts: rollouts,
		costs:    make([]*cost, len(tasks)),
		chunk:    min(maxChunk, max(1, (len(rollouts)+2*e.workers-1)/(2*e.workers))),
	}
	for k, t := range tasks {
		c.costs[k] = e.costs.of(t)
		if _, ok := t.Function.Scorer.(scorers.GroupScorer); ok && c.groups == nil {
			c.groups = groupIndices(rollouts)
		}
	}
	return c
}

// isGroup says whether task k is scored a group at a time.
func (c *cutter) isGroup(k int) bool {
	_, ok := c.tasks[k].Function.Scorer.(scorers.GroupScorer)
	return ok
}

// fewest is the number of spans the work is cut into at least: the workers
// worth starting for it.
func (c *cutter) fewest() int {
	n := 0
	for k := range c.tasks {
		if c.isGroup(k) {
			n += len(c.groups)
		} else {
			n += (len(c.rollouts) + c.chunk - 1) / c.chunk
		}
	}
	return n
}

// more says whether spans are left to cut. A worker asks before it waits
// for a slot, so that a request's last worker does not wait a turn only to
// find nothing left.
func (c *cutter) more() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.skipDone()
}

// skipDone moves past the tasks cut whole and says whether one is left;
// under c.mu.
func (c *cutter) skipDone() bool {
	for ; c.k < len(c.tasks); c.k, c.lo = c.k+1, 0 {
		left := len(c.rollouts)
		if c.isGroup(c.k) {
			left = len(c.groups)
		}
		if c.lo < left {
			return true
		}
	}
	return false
}

// next cuts the next span, or says there is none left.
func (c *cutter) next() (span, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.skipDone() {
		return span{}, false
	}
	if c.isGroup(c.k) {
		c.lo++
		return span{task: c.k, group: c.groups[c.lo-1]}, true
	}
	budget := c.costs[c.k].budget()
	sp := span{task: c.k, lo: c.lo, hi: c.lo}
	for sp.hi < len(c.rollouts) && sp.hi-sp.lo < c.chunk {
		b := rolloutSize(c.rollouts[sp.hi])
		if sp.hi > sp.lo && sp.size+b > budget {
			break
		}
		sp.size += b
		sp.hi++
	}
	c.lo = sp.hi
	return sp, true
}

// observe records that sp took d of worker time, for the spans cut after it.
func (c *cutter) observe(sp span, d time.Duration) {
	if sp.group == nil {
		c.costs[sp.task].observe(sp.size, d)
	}
}

func rolloutSize(r *scorers.Rollout) int {
	return len(r.Prompt) + len(r.Completion) + rolloutBytes
}
