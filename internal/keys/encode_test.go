package keys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

var seed = flag.Int64("seed", 0, "seed for randomized tests (0: time-based)")

// testRand returns a generator seeded from -seed and logs the seed.
func testRand(t *testing.T) *rand.Rand {
	t.Helper()
	s := *seed
	if s == 0 {
		s = time.Now().UnixNano()
	}
	t.Logf("seed %d (rerun with -seed=%d)", s, s)
	return rand.New(rand.NewPCG(uint64(s), 0))
}

// randComponent draws short components over bytes that stress the escaping:
// 00, 01, 02 and FF next to ordinary letters, often empty, often a prefix of
// another.
func randComponent(r *rand.Rand) string {
	const alphabet = "\x00\x01\x02\xffab"
	b := make([]byte, r.IntN(4))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func randPath(r *rand.Rand, min, max int) []string {
	p := make([]string, min+r.IntN(max-min+1))
	for i := range p {
		p[i] = randComponent(r)
	}
	return p
}

func sign(x int) int { return min(max(x, -1), 1) }

// TestHashStable pins Hash, which is part of the storage key format: it is
// xxhash64 of the components' storage encoding, esc(c) 00 01 each.
func TestHashStable(t *testing.T) {
	for _, tc := range []struct {
		major []string
		input string
	}{
		{[]string{"a"}, "a\x00\x01"},
		{[]string{""}, "\x00\x01"},
		{[]string{"a", "b"}, "a\x00\x01b\x00\x01"},
		{[]string{"user", "42"}, "user\x00\x0142\x00\x01"},
		{[]string{"a\x00b"}, "a\x00\xffb\x00\x01"},
	} {
		if got, want := Hash(tc.major), xxhash.Sum64String(tc.input); got != want {
			t.Errorf("Hash(%q) = %x, want xxhash64(%q) = %x", tc.major, got, tc.input, want)
		}
	}
}

func TestEncodeLayout(t *testing.T) {
	major := []string{"a", "\x00"}
	got := Encode(7, New(major, "", "b"))
	want := []byte{'r', 0, 0, 0, 0, 0, 0, 0, 7}
	want = binary.BigEndian.AppendUint64(want, Hash(major))
	want = append(want,
		'a', 0x00, 0x01, // major "a"
		0x00, 0xFF, 0x00, 0x01, // major "\x00"
		0x00, 0x02, // end of major path
		0x00, 0x01, // minor ""
		'b', 0x00, 0x01, // minor "b"
	)
	if !bytes.Equal(got, want) {
		t.Errorf("Encode = % x\nwant     % x", got, want)
	}
	if p := MajorPrefix(7, major); !bytes.Equal(p, want[:26]) {
		t.Errorf("MajorPrefix = % x, want % x", p, want[:26])
	}
	if ShardOf(got) != 7 || HashOf(got) != Hash(major) {
		t.Errorf("ShardOf, HashOf = %d, %x; want 7, %x", ShardOf(got), HashOf(got), Hash(major))
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	keys := []Key{
		New([]string{"a"}),
		New([]string{""}),
		New([]string{""}, ""),
		New([]string{"a", "b"}, "c", "d"),
		New([]string{"\x00"}, "\x00\x00", "\x00\x01", "\x00\x02", "\xff\x00"),
		New([]string{"\x00\x02"}, "\x00\xff"),
		New([]string{"héllo", "-", "/"}, "%", ""),
	}
	r := testRand(t)
	for range 2000 {
		keys = append(keys, New(randPath(r, 1, 3), randPath(r, 0, 4)...))
	}
	for _, k := range keys {
		enc := Encode(1, k)
		got, err := Decode(enc)
		if err != nil {
			t.Errorf("Decode(Encode(%q)) = %v", k, err)
			continue
		}
		if !got.Equal(k) {
			t.Errorf("Decode(Encode(%#v)) = %#v", k, got)
		}
		if h := HashOf(enc); h != Hash(k.Major) {
			t.Errorf("Encode(%q) is filed under hash %x, want %x", k, h, Hash(k.Major))
		}
	}
}

// TestEncodeOrder checks that, within one major path, storage keys sort as
// their minor paths do component by component.
func TestEncodeOrder(t *testing.T) {
	r := testRand(t)
	for range 20000 {
		major := randPath(r, 1, 2)
		a := New(major, randPath(r, 0, 4)...)
		b := New(major, randPath(r, 0, 4)...)
		if r.IntN(4) == 0 { // make b extend a often
			b = New(major, append(slices.Clone(a.Minor), randPath(r, 1, 2)...)...)
		}
		got := sign(bytes.Compare(Encode(1, a), Encode(1, b)))
		if want := slices.Compare(a.Minor, b.Minor); got != want {
			t.Fatalf("compare(Encode(%q), Encode(%q)) = %d, want %d", a.Minor, b.Minor, got, want)
		}
	}
}

// TestComponentBound checks that every encoded component starting with c
// starts with AppendComponentBound(c), and that others sort outside it.
func TestComponentBound(t *testing.T) {
	r := testRand(t)
	for range 20000 {
		c, d := randComponent(r), randComponent(r)
		if r.IntN(2) == 0 {
			d = c + d
		}
		bound := AppendComponentBound(nil, c)
		enc := AppendMinor(nil, []string{d})
		if got, want := bytes.HasPrefix(enc, bound), len(d) >= len(c) && d[:len(c)] == c; got != want {
			t.Fatalf("bound(%q) prefix of enc(%q) = %v, want %v", c, d, got, want)
		}
	}
}

func TestMajorPrefix(t *testing.T) {
	r := testRand(t)
	majors := [][]string{
		{"a"}, {"a", "b"}, {"ab"}, {"a", ""}, {""}, {"", ""},
		{"a\x00\x02"}, {"a", "\x00\x02"}, {"a\x00"}, {"a\x00b"}, {"\x00\x02"},
	}
	for range 200 {
		majors = append(majors, randPath(r, 1, 3))
	}
	for _, mi := range majors {
		prefix := MajorPrefix(3, mi)
		if got := AppendMajorPrefix([]byte("x"), 3, mi); !bytes.Equal(got[1:], prefix) {
			t.Errorf("AppendMajorPrefix(%q) = % x, want % x", mi, got[1:], prefix)
		}
		for _, mj := range majors {
			same := slices.Equal(mi, mj)
			for _, minor := range [][]string{nil, {""}, {"\x00\x02"}, mi, randPath(r, 1, 3)} {
				enc := Encode(3, New(mj, minor...))
				if other := Encode(4, New(mj, minor...)); bytes.HasPrefix(other, prefix) {
					t.Errorf("Encode(shard 4, %q) has shard 3's prefix", mj)
				}
				if got := bytes.HasPrefix(enc, prefix); got != same {
					t.Errorf("Encode(%q, %q) has prefix MajorPrefix(%q) = %v, want %v", mj, minor, mi, got, same)
				}
				// The components alone must tell major paths apart, whatever
				// their hashes.
				if got := bytes.HasPrefix(enc[HeaderLen:], prefix[HeaderLen:]); got != same {
					t.Errorf("components of Encode(%q, %q) have prefix of MajorPrefix(%q) = %v, want %v",
						mj, minor, mi, got, same)
				}
			}
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	hdr := string(hashPrefix(5, 0x0102030405060708))
	for _, in := range []string{
		"",
		"r",
		hdr[:8],
		"s" + hdr[1:] + "a\x00\x01\x00\x02",
		hdr,                                    // no major path
		hdr + "\x00\x02",                       // empty major path
		hdr + "\x00\x02a\x00\x01",              // empty major path, a minor one
		hdr + "a",                              // unterminated
		hdr + "a\x00",                          // unterminated
		hdr + "a\x00\x01",                      // no end-of-major marker
		hdr + "a\x00\x03\x00\x02",              // bad escape
		hdr + "a\x00\x02",                      // marker without a terminator
		hdr + "a\x00\xff",                      // unterminated after an escape
		hdr + "a\x00\xff\x00",                  // unterminated after an escape
		hdr + "a\x00\xffb\x00\x05\x00\x02",     // bad escape after an escape
		hdr + "a\x00\x01\x00\x02b",             // unterminated minor
		hdr + "a\x00\x01\x00\x02\x00\x02",      // second marker
		hdr + "a\x00\x01\x00\x02b\x00\x01\x00", // trailing byte
	} {
		k, err := Decode([]byte(in))
		if err == nil {
			t.Errorf("Decode(% x) = %#v, want an error", in, k)
			continue
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(% x) error %v does not wrap ErrCorrupt", in, err)
		}
	}
}

// TestDecodeDamaged truncates and flips bytes of valid storage keys: Decode
// must not panic, and any error must wrap ErrCorrupt.
func TestDecodeDamaged(t *testing.T) {
	r := testRand(t)
	for range 500 {
		enc := Encode(1, New(randPath(r, 1, 3), randPath(r, 0, 3)...))
		for n := range len(enc) {
			if _, err := Decode(enc[:n]); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode(% x) error %v does not wrap ErrCorrupt", enc[:n], err)
			}
		}
		bad := slices.Clone(enc)
		bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
		if _, err := Decode(bad); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode(% x) error %v does not wrap ErrCorrupt", bad, err)
		}
	}
}

var partitionCounts = []uint32{1, 2, 3, 7, 10, 100, 1000, math.MaxUint32}

// ceilStart is ceil(p * 2^64 / n), the documented first hash of partition p.
func ceilStart(p, n uint32) uint64 {
	num := new(big.Int).Lsh(big.NewInt(int64(p)), 64)
	den := big.NewInt(int64(n))
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Uint64()
}

func TestPartitionBoundaries(t *testing.T) {
	for _, n := range partitionCounts {
		if s, ok := PartitionStart(PartitionID(n), n); ok || s != 0 {
			t.Errorf("PartitionStart(%d, %d) = %d, %v, want 0, false", n, n, s, ok)
		}
		if got := PartitionOf(math.MaxUint64, n); got != PartitionID(n-1) {
			t.Errorf("PartitionOf(MaxUint64, %d) = %d, want %d", n, got, n-1)
		}
		for _, p := range []uint32{0, 1, 2, n / 3, n / 2, n - 2, n - 1} {
			if p >= n {
				continue
			}
			start, ok := PartitionStart(PartitionID(p), n)
			if want := ceilStart(p, n); !ok || start != want {
				t.Errorf("PartitionStart(%d, %d) = %d, %v, want %d, true", p, n, start, ok, want)
			}
			if got := PartitionOf(start, n); got != PartitionID(p) {
				t.Errorf("n=%d: PartitionOf(start of %d = %d) = %d", n, p, start, got)
			}
			if p > 0 {
				if got := PartitionOf(start-1, n); got != PartitionID(p-1) {
					t.Errorf("n=%d: PartitionOf(start of %d - 1) = %d, want %d", n, p, got, p-1)
				}
			}
		}
	}
}

// TestPartitionOfInRange checks PartitionOf(h, n) == p iff
// PartitionStart(p, n) <= h < PartitionStart(p+1, n), for random h and n.
func TestPartitionOfInRange(t *testing.T) {
	r := testRand(t)
	for i := range 100000 {
		n := partitionCounts[i%len(partitionCounts)]
		if i%2 == 0 {
			n = 1 + r.Uint32N(math.MaxUint32)
		}
		h := r.Uint64()
		p := PartitionOf(h, n)
		if uint32(p) >= n {
			t.Fatalf("PartitionOf(%d, %d) = %d, out of range", h, n, p)
		}
		lo, _ := PartitionStart(p, n)
		hi, ok := PartitionStart(p+1, n)
		if h < lo || (ok && h >= hi) || (!ok && uint32(p) != n-1) {
			t.Fatalf("PartitionOf(%d, %d) = %d, but its range is [%d, %d) (ok=%v)", h, n, p, lo, hi, ok)
		}
	}
}

func TestPartitionSpansTile(t *testing.T) {
	const n = 10
	var starts, ends [][]byte
	for p := range PartitionID(n) {
		s, e := PartitionSpan(2, p, n)
		starts, ends = append(starts, s), append(ends, e)
	}
	if want := []byte{'r', 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0}; !bytes.Equal(starts[0], want) {
		t.Errorf("partition 0 starts at % x, want % x", starts[0], want)
	}
	if want := []byte{'r', 0, 0, 0, 0, 0, 0, 0, 3}; !bytes.Equal(ends[n-1], want) {
		t.Errorf("partition %d ends at % x, want % x", n-1, ends[n-1], want)
	}
	for p := range n - 1 {
		if !bytes.Equal(ends[p], starts[p+1]) {
			t.Errorf("partition %d ends at % x, partition %d starts at % x", p, ends[p], p+1, starts[p+1])
		}
		if bytes.Compare(starts[p], ends[p]) >= 0 {
			t.Errorf("partition %d is empty: [% x, % x)", p, starts[p], ends[p])
		}
	}
	in := func(p int, k []byte) bool {
		return bytes.Compare(starts[p], k) <= 0 && bytes.Compare(k, ends[p]) < 0
	}
	// Storage keys filed exactly at and just below each boundary.
	for p := range n {
		h, _ := PartitionStart(PartitionID(p), n)
		at := append(hashPrefix(2, h), "a\x00\x01\x00\x02"...)
		if !in(p, at) {
			t.Errorf("key with hash %d (start of %d) is outside its span", h, p)
		}
		if p > 0 {
			below := append(hashPrefix(2, h-1), "\xff\xff\x00\x01\x00\x02"...)
			if !in(p-1, below) || in(p, below) {
				t.Errorf("key with hash %d (start of %d, minus 1) is not in span %d only", h, p, p-1)
			}
		}
	}
	r := testRand(t)
	for range 10000 {
		k := New(randPath(r, 1, 3), randPath(r, 0, 2)...)
		enc, owner := Encode(2, k), int(PartitionOf(Hash(k.Major), n))
		for p := range n {
			if in(p, enc) != (p == owner) {
				t.Fatalf("key %q of partition %d: in span %d = %v", k, owner, p, in(p, enc))
			}
		}
	}
}

func TestHashDistribution(t *testing.T) {
	const keys, n = 100000, 10
	var count [n]int
	for i := range keys {
		count[PartitionOf(Hash([]string{"user", strconv.Itoa(i)}), n)]++
	}
	const mean = keys / n
	for p, c := range count {
		if c < mean*9/10 || c > mean*11/10 {
			t.Errorf("partition %d got %d of %d keys, want %d ± 10%%: %v", p, c, keys, mean, count)
		}
	}
}

func TestHashSeparatesEmbeddedZero(t *testing.T) {
	if Hash([]string{"a\x00b"}) == Hash([]string{"a", "b"}) {
		t.Fatal(`Hash(["a\x00b"]) == Hash(["a","b"]): the hash input is ambiguous`)
	}
}

// DecodeMinor decodes what Decode does for keys under a major prefix, and
// shares the given major path.
func TestDecodeMinor(t *testing.T) {
	for _, k := range []Key{
		New([]string{"a"}),
		New([]string{"users", "alice"}, "email"),
		New([]string{"x\x00y", "-"}, "m\x00", "n", "\xff"),
	} {
		sk := Encode(3, k)
		n := len(MajorPrefix(3, k.Major))
		got, err := DecodeMinor(sk, n, k.Major)
		want, _ := Decode(sk)
		if err != nil || !got.Equal(want) {
			t.Errorf("DecodeMinor(%x) = %#v, %v; Decode gives %#v", sk, got, err, want)
		}
		if len(k.Major) > 0 && &got.Major[0] != &k.Major[0] {
			t.Errorf("DecodeMinor copied the major path")
		}
		for _, bad := range []int{n - 1, n + 1, HeaderLen, len(sk) + 1} {
			if bad == len(sk) && n == len(sk) {
				continue
			}
			if _, err := DecodeMinor(sk, bad, k.Major); err == nil && bad != n {
				t.Errorf("DecodeMinor(%x, %d) of a %d-byte prefix succeeded", sk, bad, n)
			}
		}
	}
}
