package storage

import (
	"encoding/binary"
	"fmt"
)

// maxPairLen bounds one key or value of snapshot data. Cairn's keys are at
// most 10 KiB and its values 4 MiB; a larger length is corruption, and
// refusing it keeps a damaged length from making Write buffer without end.
const maxPairLen = 64 << 20

// pairSplitter cuts snapshot data that arrives in pieces of any size into
// its pairs. It keeps one buffer, of at most a pair and a piece, for the
// pair a piece cuts.
type pairSplitter struct {
	pend []byte // a pair the last piece cut
	off  int64  // bytes taken so far
}

// write hands each whole pair of the data so far to fn, which must not
// keep k or v.
func (s *pairSplitter) write(p []byte, fn func(k, v []byte) error) error {
	start := s.off - int64(len(s.pend)) // where p (with pend) begins in the data
	s.off += int64(len(p))
	if len(s.pend) > 0 {
		s.pend = append(s.pend, p...)
		p = s.pend
	}
	total := len(p)
	for len(p) > 0 {
		k, v, rest, ok, err := cutPair(p)
		if err == nil && ok {
			err = fn(k, v)
		}
		if err != nil {
			return fmt.Errorf("at byte %d: %w", start+int64(total-len(p)), err)
		}
		if !ok {
			break
		}
		p = rest
	}
	s.pend = append(s.pend[:0], p...) // may overlap: append copies as memmove
	return nil
}

// end fails with ErrCorrupt if the data ended inside a pair.
func (s *pairSplitter) end() error {
	if len(s.pend) > 0 {
		return fmt.Errorf("%w: snapshot data ends inside a pair (%d bytes left)", ErrCorrupt, len(s.pend))
	}
	return nil
}

// cutPair reads one pair from the front of p; ok is false if p ends inside
// it.
func cutPair(p []byte) (k, v, rest []byte, ok bool, err error) {
	k, rest, ok, err = cutField(p)
	if !ok || err != nil {
		return nil, nil, nil, false, err
	}
	v, rest, ok, err = cutField(rest)
	if !ok || err != nil {
		return nil, nil, nil, false, err
	}
	return k, v, rest, true, nil
}

func cutField(p []byte) (field, rest []byte, ok bool, err error) {
	n, m := binary.Uvarint(p)
	switch {
	case m < 0 || n > maxPairLen:
		return nil, nil, false, fmt.Errorf("%w: a length of %d bytes in snapshot data", ErrCorrupt, n)
	case m == 0 || uint64(len(p)-m) < n:
		return nil, nil, false, nil
	}
	return p[m : m+int(n)], p[m+int(n):], true, nil
}

// framedLen is the length of a pair in snapshot data.
func framedLen(k, v []byte) int {
	return uvarintLen(len(k)) + len(k) + uvarintLen(len(v)) + len(v)
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// appendPair appends one pair in snapshot data framing.
func appendPair(buf, k, v []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(k)))
	buf = append(buf, k...)
	buf = binary.AppendUvarint(buf, uint64(len(v)))
	return append(buf, v...)
}
