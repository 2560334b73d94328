package storage

import (
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/keys"
)

// EstimatePartitionBytes estimates, for each of parts (partitions of a store
// of n partitions) of shard, the bytes its records take on disk, for an
// operator's preview of a migration. Each is Pebble's EstimateDiskUsage over
// the partition's key span (partitionSpan): the sstables inside the span in
// full, and the data blocks of those that straddle its bounds. Writes still
// in the memtable and the WAL are not counted, and a block that straddles a
// bound counts on both sides, so it is an estimate, not a sum of records.
// It fails for a partition not below n and on a closed engine.
func (e *Engine) EstimatePartitionBytes(shard uint64, parts []keys.PartitionID, n uint32) (map[keys.PartitionID]int64, error) {
	select {
	case <-e.stop:
		return nil, errors.New("storage: the engine is closed")
	default:
	}
	db, locked := e.acquire()
	defer e.release(locked)
	out := make(map[keys.PartitionID]int64, len(parts))
	for _, p := range parts {
		if uint32(p) >= n {
			return nil, fmt.Errorf("storage: partition %d of %d does not exist", p, n)
		}
		start, end := partitionSpan(shard, p, n)
		// The bounds are inclusive: end, the next partition's first key,
		// is counted here too, which an estimate can afford.
		b, err := db.EstimateDiskUsage(start, end)
		if err != nil {
			return nil, fmt.Errorf("storage: estimating partition %d: %w", p, e.readErr(err))
		}
		out[p] = int64(b)
	}
	return out, nil
}

// partitionSpan is the record key span [start, end) of partition p of n in
// shard's records.
func partitionSpan(shard uint64, p keys.PartitionID, n uint32) (start, end []byte) {
	return keys.PartitionSpan(shard, p, n)
}
