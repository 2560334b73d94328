package dist

// SkewedLatest favours the most recently acknowledged values of a counter:
// it returns last - Zipfian(last), where last is the counter's highest
// acknowledged value (YCSB's SkewedLatestGenerator). It keeps its own
// Zipfian whose zeta grows with the counter, so use one per goroutine.
type SkewedLatest struct {
	basis *AcknowledgedCounter
	zipf  *Zipfian
}

// NewSkewedLatest returns a SkewedLatest over basis. zetan must be
// Zeta(basis.Last(), ZipfianConstant) at the time of the call; pass it so
// that many goroutines share one O(n) computation.
func NewSkewedLatest(basis *AcknowledgedCounter, zetan float64) *SkewedLatest {
	n := basis.Last()
	return &SkewedLatest{basis: basis, zipf: NewZipfianZeta(0, n-1, ZipfianConstant, zetan)}
}

// Next returns a value in [1, last] (or last itself when last is below 2).
func (s *SkewedLatest) Next(r *Rand) int64 {
	max := s.basis.Last()
	return max - s.zipf.NextN(r, max)
}
