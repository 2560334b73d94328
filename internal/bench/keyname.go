package bench

import (
	"strconv"

	"github.com/cairndb/cairn/internal/bench/dist"
)

// AppendKeyName appends YCSB's name for record keynum to dst: "user", then
// zeros up to zeropadding characters, then the decimal key number, which is
// FNVHash64(keynum) unless inserts are ordered (CoreWorkload.buildKeyName).
func AppendKeyName(dst []byte, keynum int64, zeropadding int, ordered bool) []byte {
	if !ordered {
		keynum = dist.FNVHash64(keynum)
	}
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], keynum, 10)
	dst = append(dst, "user"...)
	for range zeropadding - len(digits) {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

// KeyName is AppendKeyName returning a string.
func KeyName(keynum int64, zeropadding int, ordered bool) string {
	return string(AppendKeyName(nil, keynum, zeropadding, ordered))
}
