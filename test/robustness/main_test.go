package robustness

import (
	"flag"
	"testing"

	"github.com/cairndb/cairn/test/clustertest"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized robustness tests (0: from the clock)")

func TestMain(m *testing.M) { clustertest.Main(m) }

// seed returns the test's seed and logs it with the command that reruns
// the test with it.
func seed(t *testing.T) uint64 {
	t.Helper()
	return clustertest.Seed(t, "seed", *seedFlag)
}
