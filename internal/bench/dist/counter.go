package dist

import (
	"errors"
	"sync"
	"sync/atomic"
)

// Counter hands out consecutive integers from a start (YCSB's
// CounterGenerator). It is safe for concurrent use.
type Counter struct {
	next atomic.Int64
}

// NewCounter returns a Counter whose first Next is start.
func NewCounter(start int64) *Counter {
	c := &Counter{}
	c.next.Store(start)
	return c
}

// Next returns the next integer.
func (c *Counter) Next() int64 { return c.next.Add(1) - 1 }

// Last returns the last integer handed out (start-1 before the first).
func (c *Counter) Last() int64 { return c.next.Load() - 1 }

// ackWindow is the number of values that may be handed out but not yet
// acknowledged, 2^20 as in YCSB.
const ackWindow = 1 << 20

// ErrAckWindow is returned by Acknowledge when more than 2^20 handed-out
// values are unacknowledged (YCSB: "Too many unacknowledged insertion
// keys"). The run cannot continue correctly.
var ErrAckWindow = errors.New("dist: too many unacknowledged insertion keys (more than 2^20 in flight)")

// AcknowledgedCounter is a Counter whose Last is the highest value below
// which every value has been acknowledged, so readers never pick a key whose
// insert has not finished (YCSB's AcknowledgedCounterGenerator). It is safe
// for concurrent use.
type AcknowledgedCounter struct {
	next   atomic.Int64
	limit  atomic.Int64
	mu     sync.Mutex
	window []atomic.Bool
}

// NewAcknowledgedCounter returns a counter whose first Next is start and
// whose Last is start-1 until start is acknowledged.
func NewAcknowledgedCounter(start int64) *AcknowledgedCounter {
	c := &AcknowledgedCounter{window: make([]atomic.Bool, ackWindow)}
	c.next.Store(start)
	c.limit.Store(start - 1)
	return c
}

// Next hands out the next value.
func (c *AcknowledgedCounter) Next() int64 { return c.next.Add(1) - 1 }

// Last returns the highest value v such that every value up to v has been
// acknowledged.
func (c *AcknowledgedCounter) Last() int64 { return c.limit.Load() }

// Acknowledge marks v as done. Whoever gets the lock moves Last over the
// contiguous acknowledged run; a goroutine that does not get it leaves the
// work to the next one, exactly as YCSB does (so Last may lag until the next
// Acknowledge).
func (c *AcknowledgedCounter) Acknowledge(v int64) error {
	slot := &c.window[v&(ackWindow-1)]
	if slot.Swap(true) {
		return ErrAckWindow
	}
	if !c.mu.TryLock() {
		return nil
	}
	defer c.mu.Unlock()
	idx := c.limit.Load() + 1
	for range ackWindow {
		s := &c.window[idx&(ackWindow-1)]
		if !s.Load() {
			break
		}
		s.Store(false)
		idx++
	}
	c.limit.Store(idx - 1)
	return nil
}

// Sequential cycles through [start, end] in order, shared by all callers
// (YCSB's SequentialGenerator). It is safe for concurrent use.
type Sequential struct {
	start, n int64
	counter  atomic.Int64
}

// NewSequential returns a Sequential over [start, end].
func NewSequential(start, end int64) *Sequential {
	return &Sequential{start: start, n: end - start + 1}
}

// Next returns the next value; the Rand is unused.
func (s *Sequential) Next(*Rand) int64 { return s.start + (s.counter.Add(1)-1)%s.n }
