package report

import (
	"math"
	"strconv"
)

// scale maps a data value to a fraction of an axis: 0 at the axis start, 1
// at its end. Values outside the domain are clamped, so a drawing never
// leaves its plot area.
type scale interface {
	frac(v float64) float64
}

// linearScale is a linear scale over [lo, hi].
type linearScale struct{ lo, hi float64 }

func (s linearScale) frac(v float64) float64 {
	if s.hi == s.lo {
		return 0.5
	}
	return clamp01((v - s.lo) / (s.hi - s.lo))
}

// logScale is a base-10 logarithmic scale over [lo, hi]; lo must be > 0.
// Values at or below lo (including zero) map to 0.
type logScale struct{ lo, hi float64 }

func (s logScale) frac(v float64) float64 {
	if v <= s.lo {
		return 0
	}
	l0, l1 := math.Log10(s.lo), math.Log10(s.hi)
	if l1 == l0 {
		return 0.5
	}
	return clamp01((math.Log10(v) - l0) / (l1 - l0))
}

func clamp01(f float64) float64 {
	return math.Max(0, math.Min(1, f))
}

// tick is one labelled position on an axis, in data units.
type tick struct {
	v     float64
	label string
}

// niceStep returns the 1, 2 or 5 times a power of ten that divides span
// into about n steps (at most n).
func niceStep(span float64, n int) float64 {
	if span <= 0 || n < 1 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// niceMax rounds hi up to a multiple of the nice step for [0, hi] in about
// n steps, so the top tick sits at the axis end. niceMax(0) is 1.
func niceMax(hi float64, n int) float64 {
	if hi <= 0 {
		return 1
	}
	step := niceStep(hi, n)
	return math.Ceil(hi/step-1e-9) * step
}

// linearTicks returns the multiples of the nice step in [lo, hi], labelled
// with compactNum.
func linearTicks(lo, hi float64, n int) []tick {
	step := niceStep(hi-lo, n)
	var ts []tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi*(1+1e-9)+1e-12; i++ {
		v := i * step
		ts = append(ts, tick{v, compactNum(v)})
	}
	return ts
}

// logDomain widens [lo, hi] to whole decades; lo below 1 is taken as 1
// (latencies are whole microseconds, and a log axis cannot show 0).
func logDomain(lo, hi float64) (float64, float64) {
	lo = math.Max(lo, 1)
	hi = math.Max(hi, lo)
	dlo := math.Pow(10, math.Floor(math.Log10(lo)))
	dhi := math.Pow(10, math.Ceil(math.Log10(hi)))
	if dhi <= dlo {
		dhi = dlo * 10
	}
	return dlo, dhi
}

// logTicks returns ticks at each power of ten in [lo, hi], adding the 2 and
// 5 multiples when the domain spans two decades or fewer.
func logTicks(lo, hi float64) []tick {
	decades := math.Log10(hi) - math.Log10(lo)
	mults := []float64{1}
	if decades <= 2+1e-9 {
		mults = []float64{1, 2, 5}
	}
	var ts []tick
	for d := math.Floor(math.Log10(lo)); d <= math.Ceil(math.Log10(hi)); d++ {
		for _, m := range mults {
			v := m * math.Pow(10, d)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ts = append(ts, tick{v, compactNum(v)})
			}
		}
	}
	return ts
}

// useLog reports whether values from lo to hi are better on a log axis: the
// range is wide (hi is at least 20 times lo, lo taken as at least 1).
func useLog(lo, hi float64) bool {
	return hi/math.Max(lo, 1) >= 20
}

// percentileX places quantile q (0 <= q < 1) on the percentile axis used
// for latency distributions: x = log10(1/(1-q)), so 0% is at 0, 90% at 1,
// 99% at 2, 99.9% at 3 and so on.
func percentileX(q float64) float64 {
	if q >= 1 {
		return math.Inf(1)
	}
	return -math.Log10(1 - q)
}

// percentileTicks returns the ticks of a percentile axis that ends at xmax:
// 50%, then 90%, 99%, 99.9%... up to xmax.
func percentileTicks(xmax float64) []tick {
	ts := []tick{{percentileX(0.5), "50%"}}
	for i := 1; float64(i) <= xmax+1e-9; i++ {
		var label string
		switch i {
		case 1:
			label = "90%"
		case 2:
			label = "99%"
		default:
			label = "99." + nines(i-2) + "%"
		}
		ts = append(ts, tick{float64(i), label})
	}
	return ts
}

func nines(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '9'
	}
	return string(b)
}

// compactNum formats an axis value briefly: 950, 1.5k, 20k, 3M.
func compactNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimFloat(v/1e9) + "G"
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

// trimFloat formats v with up to two decimals, or three significant digits
// below 1, and no trailing zeros.
func trimFloat(v float64) string {
	digits := 2
	if a := math.Abs(v); a > 0 && a < 1 {
		digits = max(2, 2-int(math.Floor(math.Log10(a))))
	}
	p := math.Pow(10, float64(digits))
	s := strconv.FormatFloat(math.Round(v*p)/p, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}
