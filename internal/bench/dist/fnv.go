package dist

// FNV-1 64-bit constants, as in YCSB's Utils.
const (
	fnvOffsetBasis64 = 0xCBF29CE484222325
	fnvPrime64       = 1099511628211
)

// FNVHash64 is YCSB's Utils.fnvhash64: FNV over the eight bytes of v, low
// byte first (an arithmetic shift, as Java's >>), each byte XORed in and
// then multiplied by the prime, and finally Math.abs of the result. As in
// Java, the absolute value of math.MinInt64 stays negative.
func FNVHash64(v int64) int64 {
	h := uint64(fnvOffsetBasis64)
	for range 8 {
		h ^= uint64(v & 0xff)
		h *= fnvPrime64
		v >>= 8
	}
	s := int64(h)
	if s < 0 {
		s = -s // -math.MinInt64 == math.MinInt64, like Math.abs
	}
	return s
}
