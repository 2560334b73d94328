package storage

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// The row cache's memory is on the Go heap (freecache's pointer-free ring
// buffers), live for as long as its engine is open. The collector's goal is
// the live heap times 1 + GOGC/100, and the nodes run at GOGC 800 (their
// own heap is small: Pebble's block cache and memtables live outside it),
// so a 128 MiB cache alone would let the heap grow past 1.1 GiB between
// collections. While any engine with a row cache is open, the process's
// soft memory limit (debug.SetMemoryLimit) is therefore the row caches'
// total plus gcHeadroom: the collector runs by GOGC until the heap nears
// that, and then earlier, so the heap beyond the caches stays about what it
// was without them. GOMEMLIMIT in the environment wins: then nothing is
// set.
const gcHeadroom = 192 << 20

var memLimit struct {
	sync.Mutex
	caches int64 // the open row caches' bytes
}

// reserveHeap adds n bytes of row cache to the process's memory limit and
// returns the function that takes them back (at the engine's Close).
func reserveHeap(n int64) (release func()) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || n <= 0 {
		return func() {}
	}
	adjust := func(d int64) {
		memLimit.Lock()
		defer memLimit.Unlock()
		memLimit.caches += d
		if memLimit.caches > 0 {
			debug.SetMemoryLimit(memLimit.caches + gcHeadroom)
		} else {
			debug.SetMemoryLimit(math.MaxInt64) // Go's default: no limit
		}
	}
	adjust(n)
	var once sync.Once
	return func() { once.Do(func() { adjust(-n) }) }
}
