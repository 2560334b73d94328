package fieldrec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// Version is the format's first byte.
const Version = 0x01

// ErrMalformed is returned (wrapped) for bytes that are not a field record.
var ErrMalformed = errors.New("not a field record")

// Field is one named value of a record.
type Field struct {
	Name  string
	Value []byte
}

// Append encodes fields as a record and appends it to dst.
func Append(dst []byte, fields []Field) []byte {
	dst = append(dst, Version)
	dst = binary.AppendUvarint(dst, uint64(len(fields)))
	for _, f := range fields {
		dst = appendChunk(dst, f.Name)
		dst = appendChunk(dst, f.Value)
	}
	return dst
}

func appendChunk[T string | []byte](dst []byte, b T) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// Decode appends the fields of record b to out. Values alias b. A name equal
// to one of names is returned as that string, so decoding records of known
// fields does not allocate.
func Decode(b []byte, names []string, out []Field) ([]Field, error) {
	err := each(b, func(name, val []byte) {
		out = append(out, Field{Name: intern(name, names), Value: val})
	})
	return out, err
}

// Check reports whether b is a well-formed record with no repeated name.
func Check(b []byte) error {
	var seen map[string]struct{}
	var dup error
	err := each(b, func(name, _ []byte) {
		if seen == nil {
			seen = make(map[string]struct{})
		}
		if _, ok := seen[string(name)]; ok && dup == nil {
			dup = fmt.Errorf("%w: field %q appears twice", ErrMalformed, name)
		}
		seen[string(name)] = struct{}{}
	})
	if err != nil {
		return err
	}
	return dup
}

// Merge appends to dst the record stored with update's fields merged in:
// stored's fields in their order, each replaced by update's field of the
// same name, then update's fields that stored lacks, in update's order.
// Both must be records; update should pass Check.
func Merge(dst, stored, update []byte) ([]byte, error) {
	// Apply runs this for every field update on every replica, so it sizes
	// the output first and copies each field once, without building
	// strings or a []Field (16 update fields fit on the stack).
	var ubuf [16]raw
	upd := ubuf[:0]
	if err := each(update, func(name, val []byte) { upd = append(upd, raw{name, val}) }); err != nil {
		return dst, fmt.Errorf("the update: %w", err)
	}
	var usedBuf [16]bool
	var used []bool
	if len(upd) <= len(usedBuf) {
		used = usedBuf[:len(upd)]
	} else {
		used = make([]bool, len(upd))
	}
	n, size := 0, 0
	if err := each(stored, func(name, val []byte) {
		if i := find(upd, name); i >= 0 {
			val, used[i] = upd[i].val, true
		}
		n++
		size += chunkLen(name) + chunkLen(val)
	}); err != nil {
		return dst, fmt.Errorf("the stored value: %w", err)
	}
	for i, u := range upd {
		if !used[i] {
			n++
			size += chunkLen(u.name) + chunkLen(u.val)
		}
	}
	dst = slices.Grow(dst, 1+binary.MaxVarintLen64+size)
	dst = append(dst, Version)
	dst = binary.AppendUvarint(dst, uint64(n))
	_ = each(stored, func(name, val []byte) { // read once already: no error
		if i := find(upd, name); i >= 0 {
			val = upd[i].val
		}
		dst = appendChunk(appendChunk(dst, name), val)
	})
	for i, u := range upd {
		if !used[i] {
			dst = appendChunk(appendChunk(dst, u.name), u.val)
		}
	}
	return dst, nil
}

// raw is a field as it lies in a record's bytes.
type raw struct{ name, val []byte }

// find returns the index of the first field of fields named name, or -1.
func find(fields []raw, name []byte) int {
	for i, f := range fields {
		if string(f.name) == string(name) {
			return i
		}
	}
	return -1
}

// chunkLen is the encoded size of b as a chunk: its length, then b.
func chunkLen(b []byte) int { return uvarintLen(uint64(len(b))) + len(b) }

// uvarintLen is the size of n's minimal uvarint encoding.
func uvarintLen(n uint64) int { return (bits.Len64(n|1) + 6) / 7 }

// each calls fn with every field of record b, or returns why b is not one.
func each(b []byte, fn func(name, val []byte)) error {
	if len(b) == 0 {
		return fmt.Errorf("%w: empty", ErrMalformed)
	}
	if b[0] != Version {
		return fmt.Errorf("%w: format byte 0x%02x, want 0x%02x", ErrMalformed, b[0], Version)
	}
	b = b[1:]
	n, k := uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return fmt.Errorf("%w: bad field count", ErrMalformed)
	}
	b = b[k:]
	for i := range n {
		name, rest, err := chunk(b)
		if err != nil {
			return fmt.Errorf("%w: field %d's name", err, i)
		}
		val, rest, err := chunk(rest)
		if err != nil {
			return fmt.Errorf("%w: field %d's value", err, i)
		}
		b = rest
		fn(name, val)
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b))
	}
	return nil
}

func chunk(b []byte) ([]byte, []byte, error) {
	n, k := uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, fmt.Errorf("%w: truncated", ErrMalformed)
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

// uvarint is binary.Uvarint accepting only the minimal encoding; k <= 0
// means malformed.
func uvarint(b []byte) (uint64, int) {
	n, k := binary.Uvarint(b)
	if k > 0 && k != uvarintLen(n) {
		return 0, -1
	}
	return n, k
}
