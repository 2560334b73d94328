package latency

import (
	"sync"
	"testing"
	"time"
)

func TestBuckets(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 0},
		{0, 0},
		{20 * time.Microsecond, 0},
		{20*time.Microsecond + 1, 1},
		{999 * time.Microsecond, 5},
		{time.Millisecond, 5},
		{10 * time.Second, len(Bounds) - 1},
		{10*time.Second + 1, len(Bounds)},
		{time.Hour, len(Bounds)},
	} {
		var h Histogram
		h.Record(c.d)
		s := h.Snapshot()
		for i, n := range s.Counts {
			if want := uint64(0); i == c.want {
				if n != 1 {
					t.Errorf("Record(%v): bucket %d holds %d, want 1", c.d, i, n)
				}
			} else if n != want {
				t.Errorf("Record(%v): bucket %d holds %d, want 0 (its bucket is %d)", c.d, i, n, c.want)
			}
		}
		if wantSum := max(c.d, 0); s.Sum != wantSum {
			t.Errorf("Record(%v): sum %v, want %v", c.d, s.Sum, wantSum)
		}
	}
}

func TestBoundsAscend(t *testing.T) {
	for i := 1; i < len(Bounds); i++ {
		if Bounds[i] <= Bounds[i-1] {
			t.Fatalf("Bounds[%d] = %v is not above Bounds[%d] = %v", i, Bounds[i], i-1, Bounds[i-1])
		}
	}
}

func TestQuantileAndMean(t *testing.T) {
	var h Histogram
	if q := h.Snapshot().Quantile(0.99); q != 0 {
		t.Fatalf("empty: p99 %v, want 0", q)
	}
	// 98 calls of 30µs, one of 3ms, one of 30s.
	for range 98 {
		h.Record(30 * time.Microsecond)
	}
	h.Record(3 * time.Millisecond)
	h.Record(30 * time.Second)
	s := h.Snapshot()
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 50 * time.Microsecond},
		{0.98, 50 * time.Microsecond},
		{0.99, 5 * time.Millisecond},
		{1, -1},
	} {
		if got := s.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	want := (98*30*time.Microsecond + 3*time.Millisecond + 30*time.Second) / 100
	if got := s.Mean(); got != want {
		t.Errorf("Mean = %v, want %v", got, want)
	}
	if s.Count() != 100 {
		t.Errorf("Count = %d, want 100", s.Count())
	}
}

func TestAddSub(t *testing.T) {
	var h Histogram
	h.Record(time.Millisecond)
	before := h.Snapshot()
	h.Record(time.Second)
	h.Record(time.Second)
	after := h.Snapshot()
	d, ok := after.Sub(before)
	if !ok || d.Count() != 2 || d.Sum != 2*time.Second || d.Quantile(1) != time.Second {
		t.Fatalf("after.Sub(before) = %+v: want two calls of 1s", d)
	}
	if back := d.Add(before); back != after {
		t.Fatalf("d.Add(before) = %+v, want %+v", back, after)
	}
	if r, ok := before.Sub(after); ok || r.Count() != 0 || r.Sum != 0 {
		t.Fatalf("a snapshot minus a later one = %+v, want empty (the histogram started over)", r)
	}
}

// TestConcurrentRecords checks that no Record is lost when many run at once.
func TestConcurrentRecords(t *testing.T) {
	var h Histogram
	var wg sync.WaitGroup
	const workers, each = 8, 10000
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				h.Record(time.Duration(w*each+i) * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	if n := h.Snapshot().Count(); n != workers*each {
		t.Fatalf("Count = %d, want %d", n, workers*each)
	}
}

func BenchmarkRecord(b *testing.B) {
	var h Histogram
	for b.Loop() {
		h.Record(40 * time.Microsecond)
	}
}

func BenchmarkSinceNow(b *testing.B) {
	var h Histogram
	for b.Loop() {
		h.Since(time.Now())
	}
}
