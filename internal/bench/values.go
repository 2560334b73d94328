package bench

import (
	"strconv"

	"github.com/cairndb/cairn/internal/bench/dist"
)

// fillRandom fills b with random printable ASCII (' ' to '_'), ten
// characters per 64 random bits. YCSB's RandomByteIterator also draws
// printable characters; only the exact alphabet differs.
func fillRandom(r *dist.Rand, b []byte) {
	for i := 0; i < len(b); {
		x := r.Uint64()
		for j := 0; j < 10 && i < len(b); j++ {
			b[i] = ' ' + byte(x&63)
			x >>= 6
			i++
		}
	}
}

// appendDeterministic appends YCSB's buildDeterministicValue(key, field) of
// the given size to dst: "key:field", then, while shorter than size, ':'
// followed by the decimal Java String.hashCode of everything so far,
// finally cut to size. The hash is kept running (h = 31*h + c over the
// bytes, in int32), which is what Java recomputes from scratch each round.
func appendDeterministic(dst, key []byte, field string, size int) []byte {
	start := len(dst)
	var h int32
	for _, c := range key {
		h = 31*h + int32(c)
	}
	dst = append(dst, key...)
	dst = append(dst, ':')
	h = 31*h + ':'
	for i := 0; i < len(field); i++ {
		h = 31*h + int32(field[i])
	}
	dst = append(dst, field...)
	var buf [12]byte
	for len(dst)-start < size {
		dst = append(dst, ':')
		h = 31*h + ':'
		digits := strconv.AppendInt(buf[:0], int64(h), 10)
		for _, c := range digits {
			h = 31*h + int32(c)
		}
		dst = append(dst, digits...)
	}
	return dst[:start+size]
}
