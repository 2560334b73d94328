package dist

import (
	"math/bits"
	"math/rand/v2"
)

// Rand is a per-goroutine PCG random source with the few draws the
// generators need. It is a value type with no locking: one per goroutine.
type Rand struct {
	pcg rand.PCG
}

// NewRand returns a Rand seeded with (seed, stream). Give each goroutine its
// own stream so that runs with the same seed repeat.
func NewRand(seed, stream uint64) *Rand {
	r := &Rand{}
	r.pcg.Seed(seed, stream^0x9e3779b97f4a7c15)
	return r
}

// Uint64 returns 64 uniformly random bits.
func (r *Rand) Uint64() uint64 { return r.pcg.Uint64() }

// Float64 returns a uniform float64 in [0, 1), like java.util.Random's
// nextDouble (53 random bits).
func (r *Rand) Float64() float64 { return float64(r.pcg.Uint64()>>11) * 0x1p-53 }

// Int64N returns a uniform int64 in [0, n). n must be positive. It uses the
// multiply-shift reduction (bias below n/2^64, far under what any benchmark
// can see) instead of YCSB's Math.abs(nextLong()) % n, which is biased the
// same way.
func (r *Rand) Int64N(n int64) int64 {
	hi, _ := bits.Mul64(r.pcg.Uint64(), uint64(n))
	return int64(hi)
}
