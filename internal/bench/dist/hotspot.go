package dist

import "fmt"

// Hotspot draws integers from [lb, ub] such that a fraction opnFraction of
// draws fall, uniformly, in the hot set, the first int((ub-lb+1)*setFraction)
// values, and the rest uniformly in the cold remainder (YCSB's
// HotspotIntegerGenerator).
type Hotspot struct {
	lb, hot, cold int64
	opnFraction   float64
}

// NewHotspot returns a Hotspot over [lb, ub]. Unlike YCSB, which replaces an
// out-of-range fraction by 0 and later divides by zero on an empty set, it
// reports fractions outside [0, 1] and a hot or cold set that would be
// drawn from while empty.
func NewHotspot(lb, ub int64, setFraction, opnFraction float64) (*Hotspot, error) {
	if !(setFraction >= 0 && setFraction <= 1) {
		return nil, fmt.Errorf("hotspot data fraction %v is not in [0, 1]", setFraction)
	}
	if !(opnFraction >= 0 && opnFraction <= 1) {
		return nil, fmt.Errorf("hotspot operation fraction %v is not in [0, 1]", opnFraction)
	}
	if ub < lb {
		return nil, fmt.Errorf("hotspot range [%d, %d] is empty", lb, ub)
	}
	n := ub - lb + 1
	hot := int64(float64(n) * setFraction)
	h := &Hotspot{lb: lb, hot: hot, cold: n - hot, opnFraction: opnFraction}
	if h.hot == 0 && opnFraction > 0 {
		return nil, fmt.Errorf("hotspot data fraction %v of %d items leaves the hot set empty, but operation fraction %v would read it", setFraction, n, opnFraction)
	}
	if h.cold == 0 && opnFraction < 1 {
		return nil, fmt.Errorf("hotspot data fraction %v of %d items leaves the cold set empty, but operation fraction %v would read it", setFraction, n, opnFraction)
	}
	return h, nil
}

// HotItems returns the size of the hot set.
func (h *Hotspot) HotItems() int64 { return h.hot }

// Next returns the next value in [lb, ub].
func (h *Hotspot) Next(r *Rand) int64 {
	if r.Float64() < h.opnFraction {
		return h.lb + r.Int64N(h.hot)
	}
	return h.lb + h.hot + r.Int64N(h.cold)
}
