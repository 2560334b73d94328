package server

import "sync/atomic"

// op is a KV method, for Stats.
type op int

const (
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

// opCounts counts each method's calls and the calls that failed. Unary
// calls and the call stream's (serveCall) both run the methods, so both
// count; a call the node refuses before it reaches them (a bad token, a
// stream call of no known op) does not.
type opCounts [numOps]struct{ calls, errs atomic.Uint64 }

// done counts a call of o that ended with *err.
func (c *opCounts) done(o op, err *error) {
	c[o].calls.Add(1)
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
	Calls, Errors uint64
}

// Stats returns every method's counts. Safe from any goroutine.
func (s *Server) Stats() []OpStats {
	out := make([]OpStats, numOps)
	for i := range numOps {
		out[i] = OpStats{Op: opNames[i], Calls: s.calls[i].calls.Load(), Errors: s.calls[i].errs.Load()}
	}
	return out
}
