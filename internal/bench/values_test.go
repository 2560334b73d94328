package bench

import (
	"testing"

	"github.com/cairndb/cairn/internal/bench/dist"
)

// The expected values were computed by a direct transcription of YCSB's
// buildDeterministicValue (Java String.hashCode recomputed over the whole
// string every round, int32 arithmetic), independent of the running hash
// used here.
func TestDeterministicValue(t *testing.T) {
	for _, tc := range []struct {
		key, field string
		size       int
		want       string
	}{
		{"user6284781860667377211", "field0", 100,
			"user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:-169193395:-1039977118:-10"},
		{"user1", "field9", 30, "user1:field9:-1268390937:70143"},
		{"user8517097267634966620", "field3", 5, "user8"},
	} {
		got := string(appendDeterministic([]byte("prefix"), []byte(tc.key), tc.field, tc.size)[len("prefix"):])
		if got != tc.want {
			t.Errorf("deterministic value of %s/%s (%d bytes):\n got %q\nwant %q", tc.key, tc.field, tc.size, got, tc.want)
		}
	}
}

func TestFillRandomPrintable(t *testing.T) {
	r := dist.NewRand(1, 1)
	b := make([]byte, 1000)
	fillRandom(r, b)
	for i, c := range b {
		if c < ' ' || c > '~' {
			t.Fatalf("byte %d = %#x, not printable ASCII", i, c)
		}
	}
}
