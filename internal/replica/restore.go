package replica

import (
	"errors"
	"fmt"
	"io"

	"github.com/cairndb/cairn/internal/storage"
	"go.etcd.io/raft/v3/raftpb"
)

// A store-wide backup holds, per shard, the shard's data as of a known
// applied index I (ShardSnapshot, on the leader, after a linearizable read).
// Restore is offline: every node is stopped, and on each node RestoreShard
// rewrites every shard the node hosts from that shard's file. All replicas of
// a shard then hold the same data and the same fresh Raft state, as if the
// group had just been created at R:
//
//	truncated state  index R, term restoreTerm   (the log is empty)
//	hard state       term restoreTerm, commit R, no vote
//	conf state       the voters given
//	applied index    R
//
// where R, the restart index, is above I: a record's version embeds the
// index of the write that made it, so new writes must get indexes above
// every version the restored data holds and every version handed out
// before the restore (restartIndex), or two different writes could carry
// the same version and a stale compare-and-set could succeed.

// restoreGap is the unit by which a restored group's log position jumps
// past the snapshot's index, so that versions handed out after the snapshot
// and before the restore are never handed out again (see restartIndex).
const restoreGap = 1 << 40

// restartIndex is where a restored group restarts, given the snapshot's
// index and the highest index this node's replica had reached before the
// restore (0 if it held none):
//
//	restart = index + k*restoreGap,  k = (max(prior', index) - index)/restoreGap + 1
//	prior'  = prior - 1 if prior = index + j*restoreGap (j >= 1), else prior
//
// Writes between the snapshot and the restore got versions in
// (index, prior]; every version after the restore is above restart > prior,
// so a client holding one of the former can never match a record with it.
// A replica sitting exactly at a restart index of this snapshot was
// restored from it and has written nothing since (its restart position is
// no write's version): restored again, it keeps that position, so that it
// agrees with the replicas restored once (prior').
//
// The replicas of a shard are restored one by one, each from its own prior;
// they agree on k unless their priors straddle a multiple of restoreGap
// above index: about 10^12 writes after the snapshot, or a replica that
// stayed at its restart index from an earlier restore while the others
// wrote past it and then all were restored again. If they do disagree and
// the replicas restarting lower elect a leader, it ignores the one above
// (impossibleAck), and verify configuration reports it with the way out
// (restart it on an empty root with --rejoin-as).
func restartIndex(index, prior uint64) uint64 {
	if prior > index && (prior-index)%restoreGap == 0 {
		prior--
	}
	k := (max(prior, index)-index)/restoreGap + 1
	return index + k*restoreGap
}

// priorIndex returns the highest index the node's replica of shard has
// applied or logged (0 if it has no state for the shard).
func priorIndex(e *storage.Engine, shard uint64) (uint64, error) {
	applied, err := e.ShardApplied(shard)
	if err != nil {
		return 0, err
	}
	last, _, err := e.LastLogIndex(shard)
	if err != nil {
		return 0, err
	}
	return max(applied, last), nil
}

// restoreTerm is the term of the log position a restored group restarts at.
// Any fixed value works: every replica is restored with the same one, so
// their logs match at I, and the first election moves to a later term.
const restoreTerm = 1

// ShardSnapshot returns an export of the shard's data and the applied
// index it is exactly the state of (storage.Export: one consistent view of
// the engine, streamed in chunks), while the replica keeps running. Close
// it when done. For a backup that holds every acknowledged write, call it
// on the leader after ReadReady with Absolute consistency has returned
// nil. It returns ErrRejoining on a replica that holds no data yet.
func ShardSnapshot(r *Raft) (*storage.Export, error) {
	x, err := r.e.NewExport(r.cfg.Shard, storage.ShardDataSpans(r.cfg.Shard))
	if err != nil {
		return nil, fmt.Errorf("replica: shard %d snapshot: %w", r.cfg.Shard, err)
	}
	if x.Applied() == 0 {
		x.Close()
		return nil, fmt.Errorf("replica: shard %d snapshot: %w", r.cfg.Shard, ErrRejoining)
	}
	return x, nil
}

// RestoreShard replaces, on an engine where no replica of the shard is
// running, the shard's data with the snapshot data read from data (as a
// ShardSnapshot export wrote it) and its Raft log and state with those of
// a group that restarts at index with the given voters (see the table
// above). Everything in spans is deleted first, so records written after
// the snapshot are gone. The data streams into a storage.Import, so no
// more than a chunk of it is ever in memory.
//
// The group restarts above the highest of index, bootstrapIndex and the
// highest version index in data, and above everything this node's replica
// had reached before (restartIndex).
//
// The data, applied index, log and states change in one ingestion, so
// after a crash the engine holds either the old state or the restored one,
// never a mix; on error it is unchanged. The error wraps storage.ErrCorrupt
// when data cannot be decoded or holds keys outside spans.
func RestoreShard(e *storage.Engine, shard uint64, voters []uint64, spans []storage.Span, data io.Reader, index uint64) error {
	if err := checkVoters(voters); err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	prior, err := priorIndex(e, shard)
	if err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	imp, err := e.NewImport(shard, spans)
	if err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	defer imp.Close()
	if _, err := io.CopyBuffer(imp, data, make([]byte, storage.ChunkBytes)); err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	if err := imp.Finish(); err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	index = restartIndex(max(index, bootstrapIndex, imp.MaxIndex()), prior)
	s := &logStore{e: e, shard: shard, terms: map[uint64]uint64{}, recent: map[uint64]*raftpb.Entry{}} // only to encode its state
	states, err := s.resetStates(index, restoreTerm, voters)
	if err != nil {
		return fmt.Errorf("replica: restore shard %d: %w", shard, err)
	}
	if err := imp.Install(storage.InstallState{Applied: index, States: states, Reset: true}); err != nil {
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
