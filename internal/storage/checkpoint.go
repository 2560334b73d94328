package storage

import (
	"maps"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// checkpointLoop records a checkpoint every CheckpointInterval.
func (e *Engine) checkpointLoop() {
	defer e.bg.Done()
	if e.cfg.CheckpointInterval < 0 {
		<-e.stop
		return
	}
	t := time.NewTicker(e.cfg.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			if e.ro.Load() || e.corrupt.Load() != nil {
				continue
			}
			if err := e.checkpoint(false); err != nil {
				e.log.Warn("checkpoint failed", "err", err)
			}
		}
	}
}

// Checkpoint records the engine's applied indexes as durable now (tests
// and tools; the engine does it on its own every CheckpointInterval).
func (e *Engine) Checkpoint() error { return e.checkpoint(false) }

// checkpoint records the applied indexes in the state file once they are
// durable. clean is for Close, after a flush: the indexes are in sstables,
// and the file records a clean stop. Otherwise a synced WAL record makes
// every earlier commit durable first. dropMu is held throughout, so a
// shard dropped meanwhile (DropShard) is never put back; stateMu only
// around the file (a fatal error during the sync records itself under it).
func (e *Engine) checkpoint(clean bool) error {
	defer e.fatalOnPanic()
	e.dropMu.Lock()
	defer e.dropMu.Unlock()
	db := e.db.Load()
	snap := db.NewSnapshot()
	applied, err := appliedIndexes(snap)
	snap.Close()
	if err != nil {
		return err
	}
	e.stateMu.Lock()
	cp := e.state.Checkpoint
	e.stateMu.Unlock()
	if !clean {
		if cp != nil && maps.Equal(cp.Applied, applied) {
			return nil // nothing new
		}
		e.fs.needSync.Add(1)
		err := db.LogData([]byte("checkpoint"), pebble.Sync)
		e.fs.needSync.Add(-1)
		if err != nil {
			return err
		}
	}
	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	e.state.Checkpoint = &checkpoint{Time: time.Now().UTC(), Applied: applied}
	e.state.Clean = clean
	return e.writeStateLocked()
}
