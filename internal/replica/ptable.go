package replica

import (
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
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

// ErrLogCompacted is returned by CommandsIn when the log no longer holds
// the first index asked for.
var ErrLogCompacted = errors.New("replica: the log was truncated past the index asked for")

// CommandsIn calls fn with each command in the log at lo <= index <= hi, in
// order; hi is capped at the applied index, so every entry is committed and
// final. Entries without a command (a new leader's empty entry, a
// configuration change) are passed with a nil command, so that fn sees
// every index. It returns ErrLogCompacted if lo is no longer in the log.
// Safe from any goroutine: it reads the engine, not the Raft loop's state.
func (r *Raft) CommandsIn(lo, hi uint64, fn func(index uint64, cmd *commandpb.Command) error) error {
	hi = min(hi, r.applied.Load())
	if lo > hi {
		return nil
	}
	next := lo
	var ferr error
	err := r.e.LogEntries(r.cfg.Shard, lo, hi+1, func(index uint64, data []byte) bool {
		if index != next {
			ferr = fmt.Errorf("%w: entry %d missing (found %d)", ErrLogCompacted, next, index)
			return false
		}
		next++
		var cmd *commandpb.Command
		var e raftpb.Entry
		if ferr = proto.Unmarshal(data, &e); ferr != nil {
			return false
		}
		if e.GetType() == raftpb.EntryNormal && len(e.GetData()) > 0 {
			if _, cmd, ferr = decodeEntry(e.GetData()); ferr != nil {
				return false
			}
		}
		ferr = fn(index, cmd)
		return ferr == nil
	})
	if err == nil {
		err = ferr
	}
	if err == nil && next <= hi {
		err = fmt.Errorf("%w: entries %d..%d missing", ErrLogCompacted, next, hi)
	}
	return err
}

// Origin returns the shard's version origin.
func (r *Raft) Origin() uint64 { return r.cfg.Origin }
