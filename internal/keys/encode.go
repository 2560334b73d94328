package keys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// RecordSpace is the first byte of every record's storage key.
const RecordSpace byte = 'r'

// ErrCorrupt is returned (wrapped) when stored key bytes cannot be decoded.
// It marks corruption, never a client mistake, and is never retried.
var ErrCorrupt = errors.New("keys: corrupt storage key")

// PartitionID names a partition, 0 <= id < the store's partition count.
type PartitionID uint32

// Hash returns the 64-bit hash of a major path: xxhash64 of the components'
// storage encoding (each esc(c) 00 01), which is unambiguous, so distinct
// paths such as ["a\x00b"] and ["a","b"] hash independently.
func Hash(major []string) uint64 {
	var buf [128]byte
	b := buf[:0]
	for _, c := range major {
		b = appendComponent(b, c)
	}
	return xxhash.Sum64(b)
}

// PartitionOf returns the partition that owns hash h in a store of n
// partitions (n > 0).
func PartitionOf(h uint64, n uint32) PartitionID {
	hi, _ := bits.Mul64(h, uint64(n))
	return PartitionID(hi)
}

// PartitionStart returns the first hash owned by partition p of n. For p == n
// it returns 0 and ok=false: the range ends at the end of hash space.
func PartitionStart(p PartitionID, n uint32) (h uint64, ok bool) {
	if uint32(p) >= n {
		return 0, false
	}
	// ceil(p * 2^64 / n) computed as a 128-bit division.
	q, r := bits.Div64(uint64(p), 0, uint64(n))
	if r != 0 {
		q++
	}
	return q, true
}

// PartitionSpan returns the storage key span [start, end) of partition p of
// n in shard's records. The last partition ends where the shard's records
// end.
func PartitionSpan(shard uint64, p PartitionID, n uint32) (start, end []byte) {
	s, _ := PartitionStart(p, n)
	start = hashPrefix(shard, s)
	if e, ok := PartitionStart(p+1, n); ok {
		return start, hashPrefix(shard, e)
	}
	_, end = ShardSpan(shard)
	return start, end
}

// ShardSpan returns the storage key span [start, end) of all of shard's
// records.
func ShardSpan(shard uint64) (start, end []byte) {
	start = binary.BigEndian.AppendUint64([]byte{RecordSpace}, shard)
	if shard == ^uint64(0) {
		return start, []byte{RecordSpace + 1}
	}
	return start, binary.BigEndian.AppendUint64([]byte{RecordSpace}, shard+1)
}

// ShardOf returns the shard whose records hold storage key sk (which must
// be at least HeaderLen bytes long).
func ShardOf(sk []byte) uint64 { return binary.BigEndian.Uint64(sk[1:9]) }

// HashOf returns the hash of the major path under which storage key sk is
// filed (sk must be at least HeaderLen bytes long).
func HashOf(sk []byte) uint64 { return binary.BigEndian.Uint64(sk[9:17]) }

// HeaderLen is the length of a storage key's header: 'r' shard(8) hash(8).
const HeaderLen = 17

func hashPrefix(shard, h uint64) []byte {
	b := make([]byte, HeaderLen)
	b[0] = RecordSpace
	binary.BigEndian.PutUint64(b[1:], shard)
	binary.BigEndian.PutUint64(b[9:], h)
	return b
}

// appendComponent appends esc(c) 00 01.
func appendComponent(b []byte, c string) []byte {
	b = appendEscaped(b, c)
	return append(b, 0x00, 0x01)
}

// appendEscaped appends c with every 0x00 written as 00 FF (no terminator).
func appendEscaped(b []byte, c string) []byte {
	for {
		i := indexZero(c)
		if i < 0 {
			return append(b, c...)
		}
		b = append(b, c[:i]...)
		b = append(b, 0x00, 0xFF)
		c = c[i+1:]
	}
}

func indexZero(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return i
		}
	}
	return -1
}

// MajorPrefix returns the storage key prefix shared by exactly the records
// of shard whose major path is major: 'r' shard hash major-components 00 02.
func MajorPrefix(shard uint64, major []string) []byte {
	return AppendMajorPrefix(make([]byte, 0, HeaderLen+2+encodedLen(major)), shard, major)
}

// AppendMajorPrefix appends MajorPrefix(shard, major) to b.
func AppendMajorPrefix(b []byte, shard uint64, major []string) []byte {
	b = append(b, RecordSpace)
	b = binary.BigEndian.AppendUint64(b, shard)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	start := len(b)
	for _, c := range major {
		b = appendComponent(b, c)
	}
	binary.BigEndian.PutUint64(b[start-8:start], xxhash.Sum64(b[start:]))
	return append(b, 0x00, 0x02)
}

// AppendMinor appends the encoded minor components to b.
func AppendMinor(b []byte, minor []string) []byte {
	for _, c := range minor {
		b = appendComponent(b, c)
	}
	return b
}

// AppendComponentBound appends a component's escaped bytes without its
// terminator: every encoded component that has c as a prefix starts with it.
func AppendComponentBound(b []byte, c string) []byte { return appendEscaped(b, c) }

// Encode returns k's storage key in shard's records.
func Encode(shard uint64, k Key) []byte {
	b := make([]byte, 0, HeaderLen+2+encodedLen(k.Major)+encodedLen(k.Minor))
	b = AppendMajorPrefix(b, shard, k.Major)
	return AppendMinor(b, k.Minor)
}

func encodedLen(p []string) int {
	n := 0
	for _, c := range p {
		n += len(c) + 2
	}
	return n
}

// Decode parses a storage key back into a Key. It does not check the hash
// bytes against the decoded major path.
func Decode(sk []byte) (Key, error) {
	if len(sk) < HeaderLen || sk[0] != RecordSpace {
		return Key{}, fmt.Errorf("%w: %x: no record-space header", ErrCorrupt, sk)
	}
	rest := sk[HeaderLen:]
	var k Key
	inMinor := false
	for len(rest) > 0 {
		if !inMinor && len(rest) >= 2 && rest[0] == 0x00 && rest[1] == 0x02 {
			inMinor = true
			rest = rest[2:]
			continue
		}
		c, n, err := decodeComponent(rest)
		if err != nil {
			return Key{}, fmt.Errorf("%w: %x: %v", ErrCorrupt, sk, err)
		}
		rest = rest[n:]
		if inMinor {
			k.Minor = append(k.Minor, c)
		} else {
			k.Major = append(k.Major, c)
		}
	}
	if !inMinor || len(k.Major) == 0 {
		return Key{}, fmt.Errorf("%w: %x: no major path or no major-end marker", ErrCorrupt, sk)
	}
	return k, nil
}

// DecodeMinor decodes a storage key whose first prefixLen bytes are the
// major prefix of major (as MajorPrefix writes it, ending in 00 02): the
// key's Major is major itself, shared and not copied, and only the minor
// components are decoded. The records of a multi-get all share one major
// path, so this saves decoding and allocating it for each of them.
func DecodeMinor(sk []byte, prefixLen int, major []string) (Key, error) {
	if prefixLen < HeaderLen+2 || len(sk) < prefixLen || sk[0] != RecordSpace || sk[prefixLen-2] != 0x00 || sk[prefixLen-1] != 0x02 {
		return Key{}, fmt.Errorf("%w: %x: no major prefix of %d bytes", ErrCorrupt, sk, prefixLen)
	}
	k := Key{Major: major}
	for rest := sk[prefixLen:]; len(rest) > 0; {
		c, n, err := decodeComponent(rest)
		if err != nil {
			return Key{}, fmt.Errorf("%w: %x: %v", ErrCorrupt, sk, err)
		}
		rest = rest[n:]
		k.Minor = append(k.Minor, c)
	}
	return k, nil
}

// decodeComponent reads one esc(c) 00 01 and returns c and the bytes read.
func decodeComponent(b []byte) (string, int, error) {
	i := bytes.IndexByte(b, 0x00)
	if i < 0 || i+1 >= len(b) {
		return "", 0, errors.New("unterminated component")
	}
	if b[i+1] == 0x01 {
		return string(b[:i]), i + 2, nil
	}
	var out []byte
	for {
		if i < 0 || i+1 >= len(b) {
			return "", 0, errors.New("unterminated component")
		}
		switch b[i+1] {
		case 0x01:
			out = append(out, b[:i]...)
			return string(out), len(out) + countEscapes(out) + 2, nil
		case 0xFF:
			out = append(out, b[:i]...)
			out = append(out, 0x00)
			b = b[i+2:]
		default:
			return "", 0, fmt.Errorf("bad escape 00 %02x", b[i+1])
		}
		i = bytes.IndexByte(b, 0x00)
	}
}

func countEscapes(c []byte) int {
	return bytes.Count(c, []byte{0})
}
