package report

import (
	"math"
	"slices"
	"testing"
)

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct {
		span float64
		n    int
		want float64
	}{
		{100, 5, 20}, {100, 10, 10}, {97, 5, 20}, {1, 5, 0.2}, {0.07, 7, 0.01},
		{42_000, 6, 10_000}, {130, 5, 50}, {7, 8, 1}, {0, 5, 1}, {10, 0, 1},
	} {
		if got := niceStep(tc.span, tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("niceStep(%v, %d) = %v, want %v", tc.span, tc.n, got, tc.want)
		}
	}
}

func TestNiceMax(t *testing.T) {
	for _, tc := range []struct {
		hi   float64
		n    int
		want float64
	}{
		{42_000, 5, 50_000}, {97_300 * 1.12, 6, 120_000}, {97_300 * 1.12, 5, 150_000},
		{100, 5, 100}, {101, 5, 150}, {0.3, 5, 0.3}, {0, 5, 1}, {-5, 5, 1},
	} {
		if got := niceMax(tc.hi, tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("niceMax(%v, %d) = %v, want %v", tc.hi, tc.n, got, tc.want)
		}
	}
}

func labels(ts []tick) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.label)
	}
	return out
}

func TestLinearTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		n      int
		want   []string
	}{
		{0, 50_000, 5, []string{"0", "10k", "20k", "30k", "40k", "50k"}},
		{0, 1, 5, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}},
		{0, 120, 8, []string{"0", "20", "40", "60", "80", "100", "120"}},
		{3, 17, 3, []string{"5", "10", "15"}},
		{0, 2_500_000, 5, []string{"0", "500k", "1M", "1.5M", "2M", "2.5M"}},
	} {
		if got := labels(linearTicks(tc.lo, tc.hi, tc.n)); !slices.Equal(got, tc.want) {
			t.Errorf("linearTicks(%v, %v, %d) = %q, want %q", tc.lo, tc.hi, tc.n, got, tc.want)
		}
	}
}

func TestLogDomainAndTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi     float64
		dlo, dhi   float64
		wantLabels []string
	}{
		{23, 17_151, 10, 100_000, []string{"10", "100", "1k", "10k", "100k"}},
		{0, 5_000, 1, 10_000, []string{"1", "10", "100", "1k", "10k"}},
		{120, 4_000, 100, 10_000, []string{"100", "200", "500", "1k", "2k", "5k", "10k"}},
		{100, 100, 100, 1000, []string{"100", "200", "500", "1k"}},
	} {
		dlo, dhi := logDomain(tc.lo, tc.hi)
		if dlo != tc.dlo || dhi != tc.dhi {
			t.Errorf("logDomain(%v, %v) = %v, %v; want %v, %v", tc.lo, tc.hi, dlo, dhi, tc.dlo, tc.dhi)
			continue
		}
		if got := labels(logTicks(dlo, dhi)); !slices.Equal(got, tc.wantLabels) {
			t.Errorf("logTicks(%v, %v) = %q, want %q", dlo, dhi, got, tc.wantLabels)
		}
	}
}

func TestUseLog(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   bool
	}{
		{100, 1999, false}, {100, 2000, true}, {0, 19, false}, {0, 20, true}, {0.5, 30, true},
	} {
		if got := useLog(tc.lo, tc.hi); got != tc.want {
			t.Errorf("useLog(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestScales(t *testing.T) {
	lin := linearScale{0, 200}
	log := logScale{10, 100_000}
	for _, tc := range []struct {
		name string
		s    scale
		v    float64
		want float64
	}{
		{"linear low", lin, 0, 0}, {"linear mid", lin, 50, 0.25}, {"linear high", lin, 200, 1},
		{"linear clamps below", lin, -10, 0}, {"linear clamps above", lin, 500, 1},
		{"linear empty domain", linearScale{3, 3}, 3, 0.5},
		{"log low", log, 10, 0}, {"log decade", log, 100, 0.25}, {"log mid", log, 1000, 0.5},
		{"log high", log, 100_000, 1}, {"log zero", log, 0, 0}, {"log clamps above", log, 1e9, 1},
	} {
		if got := tc.s.frac(tc.v); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: frac(%v) = %v, want %v", tc.name, tc.v, got, tc.want)
		}
	}
}

func TestPercentileAxis(t *testing.T) {
	for _, tc := range []struct{ q, x float64 }{
		{0, 0}, {0.5, math.Log10(2)}, {0.9, 1}, {0.99, 2}, {0.999, 3}, {0.9999, 4},
	} {
		if got := percentileX(tc.q); math.Abs(got-tc.x) > 1e-9 {
			t.Errorf("percentileX(%v) = %v, want %v", tc.q, got, tc.x)
		}
	}
	if !math.IsInf(percentileX(1), 1) {
		t.Error("percentileX(1) is not +Inf")
	}
	for _, tc := range []struct {
		xmax float64
		want []string
	}{
		{2, []string{"50%", "90%", "99%"}},
		{4.3, []string{"50%", "90%", "99%", "99.9%", "99.99%"}},
		{6, []string{"50%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"}},
	} {
		ts := percentileTicks(tc.xmax)
		if got := labels(ts); !slices.Equal(got, tc.want) {
			t.Errorf("percentileTicks(%v) = %q, want %q", tc.xmax, got, tc.want)
		}
		for i, tk := range ts[1:] {
			if tk.v != float64(i+1) {
				t.Errorf("percentileTicks(%v): %s at %v, want %d", tc.xmax, tk.label, tk.v, i+1)
			}
		}
	}
}

func TestCompactNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {950, "950"}, {1000, "1k"}, {1500, "1.5k"}, {20_000, "20k"}, {3e6, "3M"},
		{2.5e9, "2.5G"}, {0.25, "0.25"}, {-2000, "-2k"}, {1234.5678, "1.23k"},
	} {
		if got := compactNum(tc.v); got != tc.want {
			t.Errorf("compactNum(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
