package latency

import (
	"math"
	"sync/atomic"
	"time"
)

// Bounds are the buckets' upper bounds, inclusive (Prometheus's le).
var Bounds = [...]time.Duration{
	20 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond,
	200 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
}

// Buckets is the number of buckets: one per bound, and one above them all.
const Buckets = len(Bounds) + 1

// Histogram counts durations in the buckets of Bounds. The zero value is
// empty and ready.
type Histogram struct {
	counts [Buckets]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

// Record counts d (a negative d counts as 0).
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[bucket(d)].Add(1)
	h.sum.Add(int64(d))
}

// Since records the time since start.
func (h *Histogram) Since(start time.Time) { h.Record(time.Since(start)) }

// bucket is d's bucket: most calls end under a millisecond, so a scan from
// the smallest bound stops within a few steps.
func bucket(d time.Duration) int {
	for i, b := range Bounds {
		if d <= b {
			return i
		}
	}
	return len(Bounds)
}

// Snapshot is a histogram's counts at one time (see the package comment
// for how concurrent Records show in it).
type Snapshot struct {
	Counts [Buckets]uint64 // per bucket, not cumulative
	Sum    time.Duration   // of every duration recorded
}

// Snapshot reads h.
func (h *Histogram) Snapshot() Snapshot {
	var s Snapshot
	for i := range h.counts {
		s.Counts[i] = h.counts[i].Load()
	}
	s.Sum = time.Duration(h.sum.Load())
	return s
}

// Count is how many durations s holds.
func (s Snapshot) Count() uint64 {
	var n uint64
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// Add returns s with o's counts added.
func (s Snapshot) Add(o Snapshot) Snapshot {
	for i := range s.Counts {
		s.Counts[i] += o.Counts[i]
	}
	s.Sum += o.Sum
	return s
}

// Sub returns what was recorded between an earlier snapshot o and s. ok
// is false, and the result empty, when a bucket went down: the histogram
// started over (its node restarted) in between.
func (s Snapshot) Sub(o Snapshot) (d Snapshot, ok bool) {
	for i := range s.Counts {
		if s.Counts[i] < o.Counts[i] {
			return Snapshot{}, false
		}
		s.Counts[i] -= o.Counts[i]
	}
	s.Sum -= o.Sum
	return s, true
}

// Quantile is the upper bound of the bucket that holds the q-th quantile
// (0 < q <= 1) of s's durations: the duration that at least q of them do
// not exceed, rounded up to a bound. It is 0 for an empty s, and -1 when
// the quantile lies above the largest bound.
func (s Snapshot) Quantile(q float64) time.Duration {
	n := s.Count()
	if n == 0 {
		return 0
	}
	want := min(max(uint64(math.Ceil(q*float64(n))), 1), n)
	var seen uint64
	for i, c := range s.Counts {
		seen += c
		if seen >= want {
			if i == len(Bounds) {
				return -1
			}
			return Bounds[i]
		}
	}
	return -1
}

// Mean is the mean duration, 0 for an empty s.
func (s Snapshot) Mean() time.Duration {
	n := s.Count()
	if n == 0 {
		return 0
	}
	return s.Sum / time.Duration(n)
}
