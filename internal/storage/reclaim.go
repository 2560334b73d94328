package storage

import (
	"context"
	"time"
)

// Reclaiming the space of dropped partitions. A partition dropped from a
// shard (DropPartition after a move, or a cancelled copy) is deleted with
// one range tombstone: cheap to apply, but its bytes stay on disk until a
// compaction crosses the range. The engine compacts each dropped span in
// the background, one at a time, so the space comes back within seconds
// rather than whenever the LSM next reaches those files:
//
//	Batch.clearPartition ──span──► Batch.dropped ──Commit──► reclaim (buffered)
//	                                                            │
//	                                 reclaimLoop: db.Compact(span) one by one
//
// A span that does not fit in the queue is left to Pebble's own
// compactions; nothing depends on the reclaim but free space.

// reclaimQueue bounds the spans waiting to be compacted.
const reclaimQueue = 256

// reclaimLater queues spans for compaction, dropping those that do not fit.
func (e *Engine) reclaimLater(spans []Span) {
	for _, s := range spans {
		select {
		case e.reclaim <- s:
		default:
		}
	}
}

// reclaimLoop compacts queued spans until the engine stops.
func (e *Engine) reclaimLoop() {
	defer e.bg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.stop
		cancel()
	}()
	for {
		select {
		case <-e.stop:
			return
		case s := <-e.reclaim:
			e.compactSpan(ctx, s)
		}
	}
}

func (e *Engine) compactSpan(ctx context.Context, s Span) {
	if e.ro.Load() {
		return // a read-only engine writes nothing; Pebble compacts later
	}
	start := time.Now()
	if err := e.db.Load().Compact(ctx, s.Start, s.End, false); err != nil && ctx.Err() == nil {
		e.log.Warn("compacting a dropped partition's range failed; Pebble's own compactions will reclaim it", "err", err)
		return
	}
	e.reclaimed.Add(1)
	e.log.Debug("compacted a dropped partition's range", "took", time.Since(start))
}
