package controlpb

import (
	"time"

	"github.com/cairndb/cairn/internal/latency"
)

// LatencyOf is s as NodeInfo carries it (written by hand, beside the
// generated code: the one place a histogram crosses the control RPC).
func LatencyOf(s latency.Snapshot) *Latency {
	return &Latency{Counts: s.Counts[:], SumMicros: uint64(s.Sum.Microseconds())}
}

// Snapshot is l as a histogram; ok is false for nil (a node that sent
// none) or counts of other buckets than internal/latency's.
func (l *Latency) Snapshot() (s latency.Snapshot, ok bool) {
	if l == nil || len(l.GetCounts()) != latency.Buckets {
		return s, false
	}
	copy(s.Counts[:], l.GetCounts())
	s.Sum = time.Duration(l.GetSumMicros()) * time.Microsecond
	return s, true
}
