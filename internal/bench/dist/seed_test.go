package dist

import (
	"flag"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized distribution tests (0: from the clock)")

// testRand returns a Rand for a randomized test, logging its seed so that a
// failure can be repeated with -seed.
func testRand(t testing.TB) *Rand {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (repeat with -seed %d)", seed, seed)
	return NewRand(seed, 1)
}
