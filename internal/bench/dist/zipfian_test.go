package dist

import (
	"math"
	"testing"
)

// TestZipfianFrequencies checks the zipfian skew against the theoretical
// frequencies 1/i^0.99 / zeta(n). Gray's algorithm is exact for the two most
// popular items and approximates the rest (it over-samples ranks 3..10 by up
// to ~20% for n = 1000, in YCSB too), so the per-rank bounds are tight for
// ranks 1 and 2 and loose after; the log-log slope over the top 100 ranks
// and the mass of the top 100 pin the overall skew. A uniform generator, or
// a zipfian with theta 0.5 or 1.5, fails every one of these.
func TestZipfianFrequencies(t *testing.T) {
	r := testRand(t)
	const n, draws = 1000, 1_000_000
	z := NewZipfian(0, n-1)
	counts := make([]int, n)
	for range draws {
		v := z.Next(r)
		if v < 0 || v >= n {
			t.Fatalf("Next() = %d, outside [0, %d]", v, n-1)
		}
		counts[v]++
	}
	zeta := Zeta(n, ZipfianConstant)
	theory := func(i int) float64 { return 1 / math.Pow(float64(i+1), ZipfianConstant) / zeta }
	for i := range 10 {
		got := float64(counts[i]) / draws
		tol := 0.25
		if i < 2 {
			tol = 0.02
		}
		if rel := got/theory(i) - 1; math.Abs(rel) > tol {
			t.Errorf("rank %d: frequency %.5f, theory %.5f (relative error %.3f > %.2f)", i+1, got, theory(i), rel, tol)
		}
	}
	var sx, sy, sxx, sxy, mass, massTheory float64
	const top = 100
	for i := range top {
		x, y := math.Log(float64(i+1)), math.Log(float64(counts[i])/draws)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		mass += float64(counts[i]) / draws
		massTheory += theory(i)
	}
	slope := (top*sxy - sx*sy) / (top*sxx - sx*sx)
	if slope < -1.06 || slope > -0.93 {
		t.Errorf("log-log slope of the top %d ranks = %.3f, want about -0.99", top, slope)
	}
	if rel := mass/massTheory - 1; math.Abs(rel) > 0.05 {
		t.Errorf("mass of the top %d ranks = %.4f, theory %.4f", top, mass, massTheory)
	}
}

func TestZipfianRangeWithBase(t *testing.T) {
	r := testRand(t)
	z := NewZipfian(50, 59)
	for range 100000 {
		if v := z.Next(r); v < 50 || v > 59 {
			t.Fatalf("Next() = %d, outside [50, 59]", v)
		}
	}
}

// TestZipfianGrowIncrementally checks that NextN with a larger count
// extends zeta to exactly what a fresh computation gives.
func TestZipfianGrowIncrementally(t *testing.T) {
	r := testRand(t)
	z := NewZipfian(0, 99)
	for range 10 {
		z.NextN(r, 250)
	}
	if want := Zeta(250, ZipfianConstant); math.Abs(z.zetan-want) > 1e-9 {
		t.Fatalf("zetan after growing to 250 = %v, want %v", z.zetan, want)
	}
	for range 100000 {
		if v := z.NextN(r, 250); v < 0 || v > 250 {
			t.Fatalf("NextN(250) = %d, outside [0, 250]", v)
		}
	}
}

func TestScrambledZipfian(t *testing.T) {
	r := testRand(t)
	const min, max, draws = 1000, 1999, 1_000_000
	n := int64(max - min + 1)
	s := NewScrambledZipfian(min, max)
	counts := make(map[int64]int)
	for range draws {
		v := s.Next(r)
		if v < min || v > max {
			t.Fatalf("Next() = %d, outside [%d, %d]", v, min, max)
		}
		counts[v]++
	}
	// The most popular items of the underlying zipfian are 0 and 1; YCSB
	// puts them at min + fnv(0) % n and min + fnv(1) % n.
	hot0, hot1 := min+FNVHash64(0)%n, min+FNVHash64(1)%n
	best, bestCount := int64(-1), 0
	for k, c := range counts {
		if c > bestCount {
			best, bestCount = k, c
		}
	}
	if best != hot0 {
		t.Errorf("most popular key %d (%d draws), want %d = min + fnv(0) %% n", best, bestCount, hot0)
	}
	// Item 0 of a zipfian over 10^16 items has probability 1/zetan.
	if got, want := float64(counts[hot0])/draws, 1/ScrambledZetan; math.Abs(got/want-1) > 0.05 {
		t.Errorf("frequency of the hottest key %.4f, want about %.4f", got, want)
	}
	if counts[hot1] < 10*draws/int(n) {
		t.Errorf("second hottest key %d drawn %d times, want well above the uniform %d", hot1, counts[hot1], draws/int(n))
	}
}

func BenchmarkZipfianNext(b *testing.B) {
	r := NewRand(1, 1)
	z := NewZipfian(0, 999_999)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sink += z.Next(r)
	}
}

func BenchmarkScrambledZipfianNext(b *testing.B) {
	r := NewRand(1, 1)
	z := NewScrambledZipfian(0, 999_999)
	b.ReportAllocs()
	for range b.N {
		sink += z.Next(r)
	}
}
