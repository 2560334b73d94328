package replica

import (
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/storage"
)

// A store-wide backup holds, per shard, the shard's data as of a known
// applied index I (ShardSnapshot, on the leader, after a linearizable read).
// Restore is offline: every node is stopped, and on each node RestoreShard
// rewrites every shard the node hosts from that shard's file. All replicas of
// a shard then hold the same data and the same fresh Raft state, as if the
// group had just been created at I:
//
//	truncated state  index I, term restoreTerm   (the log is empty)
//	hard state       term restoreTerm, commit I, no vote
//	conf state       the voters given
//	applied index    I
//
// The group restarts at I rather than at bootstrapIndex because a record's
// version embeds the index of the write that made it: new writes must get
// indexes above every version the restored data holds, or two different
// writes could carry the same version.

// restoreTerm is the term of the log position a restored group restarts at.
// Any fixed value works: every replica is restored with the same one, so
// their logs match at I, and the first election moves to a later term.
const restoreTerm = 1

// ShardSnapshot returns the shard's data, in the format of
// storage.Engine.ExportSpans, and the applied index it is exactly the state
// of, read from one consistent view of the engine while the replica keeps
// running. For a backup that holds every acknowledged write, call it on the
// leader after ReadReady with Absolute consistency has returned nil. It
// returns ErrRejoining on a replica that holds no data yet.
func ShardSnapshot(r *Raft) (data []byte, index uint64, err error) {
	data, index, err = r.e.ExportShard(r.cfg.Shard, r.cfg.Spans)
	if err != nil {
		return nil, 0, fmt.Errorf("replica: shard %d snapshot: %w", r.cfg.Shard, err)
	}
	if index == 0 {
		return nil, 0, fmt.Errorf("replica: shard %d snapshot: %w", r.cfg.Shard, ErrRejoining)
	}
	return data, index, nil
}

// RestoreShard replaces, on an engine where no replica of the shard is
// running, the shard's records with data (as ShardSnapshot or ExportSpans
// made it) and its Raft log and state with those of a group that restarts
// at index with the given voters (see the table above). Every record and
// expiry-index entry in spans is deleted first, so records written after the
// snapshot are gone.
//
// The group restarts at the highest of index, bootstrapIndex and the highest
// version index in data; for data exported at index that is index itself
// (or bootstrapIndex for a shard that never applied a write).
//
// Everything happens in one batch committed with an fsync, so after a crash
// the engine holds either the old state or the restored one, never a mix; on
// error it is unchanged. The error wraps storage.ErrCorrupt when data cannot
// be decoded or holds keys outside spans.
func RestoreShard(e *storage.Engine, shard uint64, voters []uint64, spans []storage.Span, data []byte, index uint64) error {
	if err := checkVoters(voters); err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	top, err := storage.SnapshotMaxIndex(data)
	if err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	index = max(index, bootstrapIndex, top)
	b := e.NewShardBatch(shard, 0)
	defer b.Close()
	if err := b.DeleteShardRaftState(shard); err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	if err := b.ImportSpans(spans, data); err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	s := &logStore{e: e, shard: shard} // only to write its state
	if err := s.reset(b, index, restoreTerm, voters); err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	if err := b.Commit(storage.Sync); err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	return nil
}

func checkVoters(voters []uint64) error {
	if len(voters) == 0 {
		return errors.New("no voters")
	}
	seen := make(map[uint64]bool, len(voters))
	for _, v := range voters {
		if v == 0 || seen[v] {
			return fmt.Errorf("voters %v: node ids must be non-zero and distinct", voters)
		}
		seen[v] = true
	}
	return nil
}
