package dist

import "math"

// ZipfianConstant is YCSB's default zipfian constant (theta).
const ZipfianConstant = 0.99

// Zipfian draws integers in [min, max] with a Zipf distribution: min is the
// most popular, min+1 the next, and so on. It is YCSB's ZipfianGenerator,
// after Gray et al., "Quickly Generating Billion-Record Synthetic
// Databases" (SIGMOD 1994).
type Zipfian struct {
	items        int64 // max-min+1 at construction; eta keeps using it (YCSB)
	base         int64
	theta        float64
	alpha        float64
	zeta2        float64
	zetan        float64
	eta          float64
	half         float64 // 1 + 0.5^theta
	countForZeta int64
}

// NewZipfian returns a Zipfian over [min, max] with ZipfianConstant. It
// computes zeta(max-min+1) in O(max-min) time; share the result through
// NewZipfianZeta when many generators need the same one.
func NewZipfian(min, max int64) *Zipfian {
	return NewZipfianZeta(min, max, ZipfianConstant, Zeta(max-min+1, ZipfianConstant))
}

// NewZipfianZeta returns a Zipfian over [min, max] with constant theta and a
// precomputed zetan = Zeta(max-min+1, theta).
func NewZipfianZeta(min, max int64, theta, zetan float64) *Zipfian {
	z := &Zipfian{items: max - min + 1, base: min, theta: theta, zetan: zetan}
	z.zeta2 = Zeta(2, theta)
	z.alpha = 1 / (1 - theta)
	z.countForZeta = z.items
	z.half = 1 + math.Pow(0.5, theta)
	z.eta = z.etaFor()
	return z
}

func (z *Zipfian) etaFor() float64 {
	return (1 - math.Pow(2/float64(z.items), 1-z.theta)) / (1 - z.zeta2/z.zetan)
}

// Zeta returns the sum over i in [1, n] of 1/i^theta.
func Zeta(n int64, theta float64) float64 { return ZetaFrom(0, n, theta, 0) }

// ZetaFrom extends a zeta sum over st items, initial, to n items.
func ZetaFrom(st, n int64, theta, initial float64) float64 {
	sum := initial
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// Items returns max-min+1 of the constructor.
func (z *Zipfian) Items() int64 { return z.items }

// Next returns the next value in [min, max].
func (z *Zipfian) Next(r *Rand) int64 { return z.NextN(r, z.items) }

// NextN returns the next value for a distribution over itemcount items
// starting at min. A count above the last one extends zeta incrementally (so
// the Zipfian is then no longer safe to share); a smaller one is used with
// the larger zeta, as YCSB does when it does not allow the count to
// decrease.
func (z *Zipfian) NextN(r *Rand, itemcount int64) int64 {
	if itemcount > z.countForZeta {
		z.zetan = ZetaFrom(z.countForZeta, itemcount, z.theta, z.zetan)
		z.countForZeta = itemcount
		z.eta = z.etaFor()
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < z.half {
		return z.base + 1
	}
	return z.base + int64(float64(itemcount)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// Scrambled zipfian constants from YCSB: the item count of the underlying
// Zipfian and its precomputed zeta for ZipfianConstant.
const (
	ScrambledItemCount = 10000000000000000
	ScrambledZetan     = 26.46902820178302
)

// ScrambledZipfian draws integers in [min, max] with a Zipfian popularity
// whose popular items are scattered over the range: it hashes a draw from a
// Zipfian over ScrambledItemCount+1 items with FNVHash64 and reduces it
// modulo max-min+1. It is YCSB's ScrambledZipfianGenerator, which is what
// requestdistribution=zipfian uses.
type ScrambledZipfian struct {
	min, itemcount int64
	gen            *Zipfian
}

// NewScrambledZipfian returns a ScrambledZipfian over [min, max]. It is
// O(1): zeta is YCSB's precomputed constant.
func NewScrambledZipfian(min, max int64) *ScrambledZipfian {
	return &ScrambledZipfian{
		min: min, itemcount: max - min + 1,
		gen: NewZipfianZeta(0, ScrambledItemCount, ZipfianConstant, ScrambledZetan),
	}
}

// Next returns the next value in [min, max].
func (s *ScrambledZipfian) Next(r *Rand) int64 {
	return s.min + FNVHash64(s.gen.Next(r))%s.itemcount
}
