package storage

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairndb/cairn/internal/latency"
)

// Stats is a snapshot of an engine's counters and gauges, for the metrics
// endpoint (internal/metrics). Counters only grow while the engine is open;
// a node that swaps its engine (a heal) starts the new one's from zero.
type Stats struct {
	// Commits counts the batches committed, CommitKeys and CommitBytes the
	// keys (sets, deletions, range deletions) and bytes in them. Keys per
	// commit is how well a replica's group commit batches its writers.
	Commits, CommitKeys, CommitBytes uint64
	// WALSyncs counts the WAL fsyncs that reached the disk: those a SYNC
	// write asked for, and the one before each WAL file closes (walFS).
	WALSyncs uint64
	// WALSyncTime holds those fsyncs' durations.
	WALSyncTime latency.Snapshot

	Flushes, Compactions uint64 // Pebble's memtable flushes and compactions, so far
	MemtableBytes        uint64 // the memtables' size now
	L0Files              uint64 // files in level 0 now (a read amplification)
	DiskBytes            uint64 // the engine's files on disk now

	// The row cache (zero when it is off): lookups it answered and missed,
	// and the records it holds.
	RowHits, RowMisses, RowEntries uint64
}

// writeCounts are the commit counters of Stats.
type writeCounts struct {
	commits, keys, bytes atomic.Uint64
}

func (w *writeCounts) note(b *pebble.Batch) {
	w.commits.Add(1)
	w.keys.Add(uint64(b.Count()))
	w.bytes.Add(uint64(b.Len()))
}

// Stats returns the engine's counters and gauges. It is safe from any
// goroutine, and cheap: Pebble's metrics are a copy under its lock.
func (e *Engine) Stats() Stats {
	m := e.Metrics()
	s := Stats{
		Commits:       e.wrote.commits.Load(),
		CommitKeys:    e.wrote.keys.Load(),
		CommitBytes:   e.wrote.bytes.Load(),
		WALSyncTime:   e.fs.syncTime.Snapshot(),
		Flushes:       uint64(m.Flush.Count),
		Compactions:   uint64(m.Compact.Count),
		MemtableBytes: m.MemTable.Size,
		L0Files:       uint64(m.Levels[0].TablesCount),
		DiskBytes:     m.DiskSpaceUsage(),
	}
	s.WALSyncs = s.WALSyncTime.Count()
	if e.rows != nil {
		rs := e.rows.stats()
		s.RowHits, s.RowMisses, s.RowEntries = uint64(rs.Hits), uint64(rs.Misses), uint64(rs.Entries)
	}
	return s
}
