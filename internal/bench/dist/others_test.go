package dist

import (
	"errors"
	"math"
	"sync"
	"testing"
)

func TestUniform(t *testing.T) {
	r := testRand(t)
	const lb, ub, draws = 10, 19, 200_000
	u := NewUniform(lb, ub)
	var counts [ub - lb + 1]int
	for range draws {
		v := u.Next(r)
		if v < lb || v > ub {
			t.Fatalf("Next() = %d, outside [%d, %d]", v, lb, ub)
		}
		counts[v-lb]++
	}
	// Chi-square with 9 degrees of freedom; a uniform exceeds 45 with p < 1e-6.
	exp := float64(draws) / float64(len(counts))
	var chi2 float64
	for _, c := range counts {
		chi2 += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	if chi2 > 45 {
		t.Errorf("chi-square %.1f over %v, want below 45 (p < 1e-6 for a uniform)", chi2, counts)
	}
}

func TestHotspot(t *testing.T) {
	r := testRand(t)
	const draws = 500_000
	h, err := NewHotspot(0, 999, 0.2, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if h.HotItems() != 200 {
		t.Fatalf("hot set has %d items, want 200", h.HotItems())
	}
	hot := 0
	seen := make(map[int64]bool)
	for range draws {
		v := h.Next(r)
		if v < 0 || v > 999 {
			t.Fatalf("Next() = %d, outside [0, 999]", v)
		}
		if v < 200 {
			hot++
		}
		seen[v] = true
	}
	if frac := float64(hot) / draws; math.Abs(frac-0.8) > 0.005 {
		t.Errorf("%.4f of draws in the hot set, want 0.8 (hotspotopnfraction)", frac)
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct values drawn, want all 1000", len(seen))
	}
}

func TestHotspotErrors(t *testing.T) {
	for _, tc := range []struct {
		set, opn float64
	}{{-0.1, 0.5}, {1.1, 0.5}, {0.5, 2}, {0.0001, 0.5}, {1, 0.5}} {
		if _, err := NewHotspot(0, 99, tc.set, tc.opn); err == nil {
			t.Errorf("NewHotspot(0, 99, %v, %v): no error", tc.set, tc.opn)
		}
	}
	if _, err := NewHotspot(0, 99, 1, 1); err != nil {
		t.Errorf("all-hot hotspot: %v", err)
	}
}

func TestExponential(t *testing.T) {
	r := testRand(t)
	const draws = 200_000
	e := NewExponential(95, 1000)
	below := 0
	for range draws {
		v := e.Next(r)
		if v < 0 {
			t.Fatalf("Next() = %d, negative", v)
		}
		if v < 1000 {
			below++
		}
	}
	if frac := float64(below) / draws; math.Abs(frac-0.95) > 0.005 {
		t.Errorf("%.4f of draws below the range 1000, want 0.95 (the percentile)", frac)
	}
}

func TestSkewedLatest(t *testing.T) {
	r := testRand(t)
	c := NewAcknowledgedCounter(1000) // Last() == 999: keys 0..999 loaded
	l := NewSkewedLatest(c, Zeta(c.Last(), ZipfianConstant))
	counts := make(map[int64]int)
	const draws = 200_000
	for range draws {
		v := l.Next(r)
		if v < 0 || v > 999 {
			t.Fatalf("Next() = %d, outside [0, 999]", v)
		}
		counts[v]++
	}
	if counts[999] < counts[998] || counts[998] < counts[900] || counts[999] < draws/10 {
		t.Errorf("draws of 999, 998, 900: %d, %d, %d; want the newest key most popular", counts[999], counts[998], counts[900])
	}
	// Insert 10 more keys; the newest becomes the favourite.
	for range 10 {
		if err := c.Acknowledge(c.Next()); err != nil {
			t.Fatal(err)
		}
	}
	clear(counts)
	for range draws {
		v := l.Next(r)
		if v > 1009 {
			t.Fatalf("Next() = %d beyond the newest acknowledged key 1009", v)
		}
		counts[v]++
	}
	if counts[1009] < counts[999] || counts[1009] < draws/10 {
		t.Errorf("after inserts: draws of 1009 %d, of 999 %d; want 1009 most popular", counts[1009], counts[999])
	}
}

func TestAcknowledgedCounter(t *testing.T) {
	c := NewAcknowledgedCounter(10)
	if c.Last() != 9 {
		t.Fatalf("Last() = %d before any insert, want 9", c.Last())
	}
	a, b, d := c.Next(), c.Next(), c.Next()
	if a != 10 || b != 11 || d != 12 {
		t.Fatalf("Next() gave %d, %d, %d, want 10, 11, 12", a, b, d)
	}
	mustAck := func(v int64) {
		t.Helper()
		if err := c.Acknowledge(v); err != nil {
			t.Fatal(err)
		}
	}
	mustAck(11)
	mustAck(12)
	if c.Last() != 9 {
		t.Fatalf("Last() = %d with 10 unacknowledged, want 9", c.Last())
	}
	mustAck(10)
	if c.Last() != 12 {
		t.Fatalf("Last() = %d after acknowledging 10..12, want 12", c.Last())
	}
	// 13 is outstanding; 14 and 14+2^20 share a window slot, so more than
	// 2^20 values are in flight: the overflow case.
	c.Next()
	mustAck(14)
	if err := c.Acknowledge(14 + ackWindow); !errors.Is(err, ErrAckWindow) {
		t.Fatalf("second acknowledgement of a slot: %v, want ErrAckWindow", err)
	}
}

func TestAcknowledgedCounterConcurrent(t *testing.T) {
	c := NewAcknowledgedCounter(0)
	const workers, each = 8, 5000
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				if err := c.Acknowledge(c.Next()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Last may lag behind (YCSB's try-lock); one more acknowledgement from a
	// single goroutine moves it over everything.
	if err := c.Acknowledge(c.Next()); err != nil {
		t.Fatal(err)
	}
	if got := c.Last(); got != workers*each {
		t.Fatalf("Last() = %d, want %d", got, workers*each)
	}
}

func TestSequential(t *testing.T) {
	s := NewSequential(5, 7)
	var got []int64
	for range 7 {
		got = append(got, s.Next(nil))
	}
	want := []int64{5, 6, 7, 5, 6, 7, 5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Next() sequence %v, want %v", got, want)
		}
	}
}

func TestCounter(t *testing.T) {
	c := NewCounter(3)
	if c.Last() != 2 || c.Next() != 3 || c.Next() != 4 || c.Last() != 4 {
		t.Fatal("Counter does not count 3, 4 with Last trailing")
	}
}

func TestDiscrete(t *testing.T) {
	r := testRand(t)
	d := NewDiscrete([]float64{0.5, 0, 0.3, 0.2})
	var counts [4]int
	const draws = 200_000
	for range draws {
		counts[d.Next(r)]++
	}
	if counts[1] != 0 {
		t.Errorf("outcome of weight 0 chosen %d times", counts[1])
	}
	for i, w := range []float64{0.5, 0, 0.3, 0.2} {
		if got := float64(counts[i]) / draws; math.Abs(got-w) > 0.006 {
			t.Errorf("outcome %d: frequency %.4f, want %.2f", i, got, w)
		}
	}
}

func BenchmarkUniformNext(b *testing.B) {
	r := NewRand(1, 1)
	u := NewUniform(0, 999_999)
	b.ReportAllocs()
	for range b.N {
		sink += u.Next(r)
	}
}

func BenchmarkHotspotNext(b *testing.B) {
	r := NewRand(1, 1)
	h, _ := NewHotspot(0, 999_999, 0.2, 0.8)
	b.ReportAllocs()
	for range b.N {
		sink += h.Next(r)
	}
}

func BenchmarkExponentialNext(b *testing.B) {
	r := NewRand(1, 1)
	e := NewExponential(95, 857142)
	b.ReportAllocs()
	for range b.N {
		sink += e.Next(r)
	}
}

func BenchmarkSkewedLatestNext(b *testing.B) {
	r := NewRand(1, 1)
	c := NewAcknowledgedCounter(1_000_000)
	l := NewSkewedLatest(c, Zeta(c.Last(), ZipfianConstant))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sink += l.Next(r)
	}
}

func BenchmarkSequentialNext(b *testing.B) {
	s := NewSequential(0, 999_999)
	b.ReportAllocs()
	for range b.N {
		sink += s.Next(nil)
	}
}

func BenchmarkDiscreteNext(b *testing.B) {
	r := NewRand(1, 1)
	d := NewDiscrete([]float64{0.5, 0.5})
	b.ReportAllocs()
	for range b.N {
		sink += int64(d.Next(r))
	}
}
