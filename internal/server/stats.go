package server

import (
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/latency"
)

// op is a KV method, for Stats.
type op int

const (
	// The reads come first (Stats's Read).
	opGet op = iota
	opMultiGet
	opStoreScan
	opPut
	opDelete
	opExecute
	opMultiDelete
	opPutMany
	numOps
)

var opNames = [numOps]string{"get", "multi_get", "store_scan", "put", "delete", "execute", "multi_delete", "put_many"}

// opCounts keeps each method's calls' durations (their count is the
// calls') and counts the calls that failed. Unary calls and the call
// stream's (serveCall) both run the methods, so both count; a call the
// node refuses before it reaches them (a bad token, a stream call of no
// known op) does not.
type opCounts [numOps]struct {
	time latency.Histogram
	errs atomic.Uint64
}

// done counts a call of o that started at start and ended with *err. The
// methods defer it with time.Now() as start, so the duration runs from the
// method's first line to its return: the node's own time on the call,
// waits for Raft and fsyncs included, the network's not.
func (c *opCounts) done(o op, start time.Time, err *error) {
	c[o].time.Since(start)
	if *err != nil {
		c[o].errs.Add(1)
	}
}

// OpStats is one KV method's calls since the server started, and how many
// of them failed (any error: invalid input, not the leader, a timeout).
// A conditional write whose condition did not hold, or an execute that
// aborted, did not fail.
type OpStats struct {
	Op            string // get, multi_get, store_scan, put, delete, execute, multi_delete, put_many
	Read          bool   // get, multi_get, store_scan
	Calls, Errors uint64
	Time          latency.Snapshot // the calls' durations, failed ones included
}

// Stats returns every method's counts. Safe from any goroutine.
func (s *Server) Stats() []OpStats {
	out := make([]OpStats, numOps)
	for i := range numOps {
		c := &s.calls[i]
		t := c.time.Snapshot()
		out[i] = OpStats{Op: opNames[i], Read: i <= opStoreScan, Calls: t.Count(), Errors: c.errs.Load(), Time: t}
	}
	return out
}
