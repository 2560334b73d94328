package bench

import "testing"

// Hashed key names are "user" + FNVHash64(keynum); the hashes were computed
// independently from YCSB's Utils.fnvhash64 (see dist/fnv_test.go).
func TestKeyName(t *testing.T) {
	for _, tc := range []struct {
		keynum  int64
		pad     int
		ordered bool
		want    string
	}{
		{0, 1, false, "user6284781860667377211"},
		{1, 1, false, "user8517097267634966620"},
		{42, 1, false, "user55488592825689361"},
		{42, 20, false, "user00055488592825689361"},
		{5, 1, true, "user5"},
		{5, 8, true, "user00000005"},
		{123456, 3, true, "user123456"},
	} {
		if got := KeyName(tc.keynum, tc.pad, tc.ordered); got != tc.want {
			t.Errorf("KeyName(%d, %d, %v) = %q, want %q", tc.keynum, tc.pad, tc.ordered, got, tc.want)
		}
	}
}

func BenchmarkKeyName(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	for i := range b.N {
		buf = AppendKeyName(buf[:0], int64(i), 1, false)
	}
}
