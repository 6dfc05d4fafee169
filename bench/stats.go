package bench

import (
	"io"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// latencyOf returns the percentiles of lat (nearest rank).
func latencyOf(lat []time.Duration) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Latency{
		P50: ms(rank(s, 0.50)), P90: ms(rank(s, 0.90)), P99: ms(rank(s, 0.99)),
		Max: ms(s[len(s)-1]), Mean: ms(sum / time.Duration(len(s))),
	}
}

// rank returns the q-quantile of sorted s by nearest rank: the smallest
// value with at least q of the values at or below it.
func rank(s []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// histogram bins lat in n bins of equal width on a log scale.
func histogram(lat []time.Duration, n int) []Bin {
	if len(lat) == 0 {
		return nil
	}
	lo, hi := slices.Min(lat), slices.Max(lat)
	if lo <= 0 {
		lo = time.Microsecond
	}
	if hi <= lo {
		return []Bin{{LoMs: ms(lo), HiMs: ms(hi), Count: len(lat)}}
	}
	llo, lhi := math.Log(float64(lo)), math.Log(float64(hi))
	bins := make([]Bin, n)
	for i := range bins {
		bins[i].LoMs = math.Exp(llo+(lhi-llo)*float64(i)/float64(n)) / 1e6
		bins[i].HiMs = math.Exp(llo+(lhi-llo)*float64(i+1)/float64(n)) / 1e6
	}
	for _, d := range lat {
		i := int(float64(n) * (math.Log(float64(max(d, lo))) - llo) / (lhi - llo))
		bins[min(max(i, 0), n-1)].Count++
	}
	return bins
}

// cdf returns n+1 points of the distribution of lat: the q-quantile for q
// = 0, 1/n, …, 1.
func cdf(lat []time.Duration, n int) []Quantile {
	if len(lat) == 0 {
		return nil
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	out := make([]Quantile, n+1)
	for i := range out {
		q := float64(i) / float64(n)
		out[i] = Quantile{Q: q, Ms: ms(rank(s, q))}
	}
	out[0].Ms = ms(s[0])
	return out
}

// newProgress returns a progress bar on w for a phase of total requests, or
// of d when total is 0; nil w means no bar.
func newProgress(w io.Writer, what string, total int, d time.Duration) *progress {
	if w == nil {
		return noProgress
	}
	if total > 0 {
		bar := progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("req"),
			progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		return &progress{done: func(n int) { bar.Add(n) }, stop: func() { bar.Finish() }}
	}
	// A bar over the duration, in tenths of a second; the count of
	// requests done goes in the description.
	bar := progressbar.NewOptions(int(d/(100*time.Millisecond)),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	start := time.Now()
	var n atomic.Int64
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				bar.Describe(what + " " + strconv.FormatInt(n.Load(), 10) + " req")
				bar.Set(int(time.Since(start) / (100 * time.Millisecond)))
			}
		}
	}()
	return &progress{
		done: func(k int) { n.Add(int64(k)) },
		stop: func() { close(stop); <-stopped; bar.Finish() },
	}
}

// histogramLatency estimates p50, p90 and p99 in milliseconds from the
// cumulative counts of a histogram's buckets (upper bounds in seconds) over
// a run (after − before), interpolating within a bucket as Prometheus's
// histogram_quantile does; nil when the run added nothing.
func histogramLatency(bounds []float64, before, after []uint64) *Latency {
	if len(bounds) == 0 || len(after) != len(bounds) {
		return nil
	}
	delta := make([]float64, len(bounds))
	for i := range bounds {
		delta[i] = float64(after[i])
		if i < len(before) {
			delta[i] -= float64(before[i])
		}
	}
	total := delta[len(delta)-1]
	if total <= 0 {
		return nil
	}
	q := func(q float64) float64 {
		rank := q * total
		lo, below := 0.0, 0.0
		for i, c := range delta {
			if c >= rank {
				hi := bounds[i]
				if math.IsInf(hi, 1) {
					return lo * 1e3
				}
				return (lo + (hi-lo)*(rank-below)/max(c-below, 1)) * 1e3
			}
			lo, below = bounds[i], c
		}
		return lo * 1e3
	}
	return &Latency{P50: q(0.5), P90: q(0.9), P99: q(0.99)}
}
