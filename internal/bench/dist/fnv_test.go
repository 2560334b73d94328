package dist

import "testing"

// The expected hashes were computed independently (Python, following
// YCSB's Utils.fnvhash64 line by line); "user6284781860667377211" is the
// familiar first key of every hashed YCSB load.
func TestFNVHash64(t *testing.T) {
	for _, tc := range []struct{ in, want int64 }{
		{0, 6284781860667377211},
		{1, 8517097267634966620},
		{2, 1820151046732198393},
		{3, 4052466453699787802},
		{42, 55488592825689361},
		{999, 2071219101098386137},
		{1000000, 1011632231655643464},
		{1 << 40, 6908947124047430886},
	} {
		if got := FNVHash64(tc.in); got != tc.want {
			t.Errorf("FNVHash64(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func BenchmarkFNVHash64(b *testing.B) {
	b.ReportAllocs()
	var s int64
	for i := range b.N {
		s += FNVHash64(int64(i))
	}
	sink = s
}

var sink int64
