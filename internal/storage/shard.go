package storage

import "fmt"

// DropShard deletes a replicated shard from the engine: the records and
// expiry-index entries in its spans, its Raft log and every one of its
// states. The shard leaves the checkpoint first, in the same critical
// section, so a crash midway never reads as lost data. No replica of the
// shard may be running.
func (e *Engine) DropShard(shard uint64, spans []Span) error {
	e.dropMu.Lock()
	defer e.dropMu.Unlock()
	if err := e.forget(shard); err != nil {
		return fmt.Errorf("storage: dropping shard %d: %w", shard, err)
	}
	b := e.NewShardBatch(shard, 0)
	defer b.Close()
	if err := b.ImportSpans(spans, nil); err != nil {
		return err
	}
	if err := b.DeleteShardRaftState(shard); err != nil {
		return err
	}
	b.dropped = append(b.dropped, spans...) // its space is reclaimed (reclaim.go)
	return b.Commit(Sync)
}

func (e *Engine) forget(shard uint64) error {
	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	cp := e.state.Checkpoint
	if cp == nil {
		return nil
	}
	if _, ok := cp.Applied[appliedName(shard)]; !ok {
		return nil
	}
	delete(cp.Applied, appliedName(shard))
	return e.writeStateLocked()
}
