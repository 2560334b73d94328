package dist

import "math"

// Exponential draws non-negative values with an exponential distribution,
// skewed towards 0 (YCSB's ExponentialGenerator). The core workload
// subtracts a draw from the newest key, so small draws mean recent keys.
type Exponential struct {
	gamma float64
}

// NewExponential returns an Exponential such that percentile percent of the
// draws fall below rangeSize (YCSB: exponential.percentile and
// recordcount*exponential.frac).
func NewExponential(percentile, rangeSize float64) *Exponential {
	return &Exponential{gamma: -math.Log(1-percentile/100) / rangeSize}
}

// Mean returns 1/gamma.
func (e *Exponential) Mean() float64 { return 1 / e.gamma }

// NextFloat returns the next draw, -ln(U)/gamma with U in [0, 1) (+Inf when
// U is 0, as in Java).
func (e *Exponential) NextFloat(r *Rand) float64 { return -math.Log(r.Float64()) / e.gamma }

// Next returns the next draw truncated towards zero, saturating at
// math.MaxInt64 (YCSB truncates to a Java int; this keeps large key spaces
// working).
func (e *Exponential) Next(r *Rand) int64 {
	f := e.NextFloat(r)
	if !(f < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(f)
}
