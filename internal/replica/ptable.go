package replica

import (
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
)

// A replicated shard's partition table (storage/ptable.go) is loaded when
// the replica opens and after a snapshot installs, and republished after
// every commit of the apply loop, before the applied index: a reader that
// sees applied index I sees the table as of I or later.

// Table returns the shard's partition table as of the last commit (nil: the
// shard has none and serves what the node routes to it).
func (r *Raft) Table() *storage.PartitionTable { return r.table.Load() }

// Serves returns nil if the replica's shard serves major's partition, else
// a *storage.PartitionError. Call it after ReadReady: an ABSOLUTE read then
// sees every handoff committed before it began.
func (r *Raft) Serves(major []string) error {
	return r.table.Load().Serves(r.cfg.Shard, keys.Hash(major))
}

// logHold returns the lowest log index a partition moving out still needs
// (its MigrateOut's), if any: entries from there on are replayed to the
// target, so the log is not truncated past it.
func logHold(t *storage.PartitionTable) (uint64, bool) {
	if t == nil {
		return 0, false
	}
	var hold uint64
	for _, e := range t.Parts {
		if (e.State == storage.PartOutgoing || e.State == storage.PartGone) && (hold == 0 || e.Held < hold) {
			hold = e.Held
		}
	}
	return hold, hold != 0
}
