package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The value layout stores a record, all its fields, as one value under the
// key /<table>/<key>:
//
//	+------+-----------------+-------------------------------------------------+
//	| 0x01 | uvarint nfields | nfields times:                                  |
//	|      |                 | uvarint len(name) | name | uvarint len(v) | v    |
//	+------+-----------------+-------------------------------------------------+
//
// 0x01 is the format version. Fields appear in the order written. With
// YCSB's defaults (10 fields "field0".."field9" of 100 bytes) a record is
// 1 + 1 + 10*(1+6+1+100) = 1082 bytes.
const layoutVersion = 0x01

// errBadRecord is returned when a stored value is not a record in the value
// layout (written by something else, or corrupted).
var errBadRecord = errors.New("bench: value is not a record in the value layout")

// appendRecord encodes fields in the value layout.
func appendRecord(dst []byte, fields []Field) []byte {
	dst = append(dst, layoutVersion)
	dst = binary.AppendUvarint(dst, uint64(len(fields)))
	for _, f := range fields {
		dst = binary.AppendUvarint(dst, uint64(len(f.Name)))
		dst = append(dst, f.Name...)
		dst = binary.AppendUvarint(dst, uint64(len(f.Value)))
		dst = append(dst, f.Value...)
	}
	return dst
}

// decodeRecord appends the fields of an encoded record to out. Values alias
// b. Names equal to one of names are returned as that string, so decoding a
// record of known fields does not allocate.
func decodeRecord(b []byte, names []string, out []Field) ([]Field, error) {
	if len(b) == 0 || b[0] != layoutVersion {
		return out, errBadRecord
	}
	b = b[1:]
	n, k := uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return out, errBadRecord
	}
	b = b[k:]
	for range n {
		name, rest, err := chunk(b)
		if err != nil {
			return out, err
		}
		val, rest, err := chunk(rest)
		if err != nil {
			return out, err
		}
		b = rest
		out = append(out, Field{Name: intern(name, names), Value: val})
	}
	if len(b) != 0 {
		return out, fmt.Errorf("%w: %d trailing bytes", errBadRecord, len(b))
	}
	return out, nil
}

func chunk(b []byte) ([]byte, []byte, error) {
	n, k := uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, errBadRecord
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// intern returns the element of names equal to b, or string(b).
func intern(b []byte, names []string) string {
	for _, n := range names {
		if n == string(b) {
			return n
		}
	}
	return string(b)
}

// uvarint is binary.Uvarint accepting only the minimal encoding, so that
// each record has exactly one encoding; k <= 0 means malformed.
func uvarint(b []byte) (uint64, int) {
	n, k := binary.Uvarint(b)
	if k > 0 && k != len(binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64), n)) {
		return 0, -1
	}
	return n, k
}
