package replica

import (
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"

	"github.com/cairndb/cairn/internal/storage"
)

// How much applied log a replica keeps.
//
// An entry every replica has applied is needed again only by a replica
// that falls behind later, and most of a log's cost is in keeping it: the
// entries sit in the engine's memtable beside the records they carry, and
// those still live at a flush are written to L0 and compacted until a
// truncation's range deletion meets them. So a log keeps LogSlack applied
// entries, and a leader keeps more only while a replica still needs them:
//
//	follower:  truncate to  applied - slack
//	leader:    truncate to  min(applied - slack, floor),  but never keep
//	           more than LogKeep:  at least applied - keep
//	           floor: the lowest match of the other replicas (learners too)
//
//	log:  [ truncated ... | floor ........ applied - slack ... applied ... last ]
//	                        ^ a lagging replica's next entries are still here
//
// A replica more than LogKeep behind its leader gets a snapshot, as
// before. A follower keeps only the slack: its log is read again only if
// it becomes leader, and then a replica that lagged by more than the
// slack behind it catches up through a snapshot. Moves hold the log from
// their MigrateOut on (logHold), whatever the retention. A truncation
// runs only once it drops at least slack entries, so it is one small
// engine write per slack entries applied.
func (r *Raft) maybeTruncate(applied uint64) error {
	slack, keep := r.cfg.LogSlack, r.cfg.LogKeep
	if applied < r.ls.truncIndex+2*slack {
		return nil
	}
	upto := applied - slack
	if r.rn.BasicStatus().RaftState == raft.StateLeader {
		upto = min(upto, r.floor())
		if applied > keep {
			upto = max(upto, applied-keep)
		}
	}
	if hold, ok := logHold(r.table.Load()); ok && hold <= upto {
		upto = hold - 1 // a partition moving out is replayed from its log
	}
	if upto < r.ls.truncIndex+slack {
		return nil
	}
	b := r.e.NewShardBatch(r.cfg.Shard, r.cfg.Origin)
	defer b.Close()
	if err := r.ls.truncate(b, upto); err != nil {
		return err
	}
	return b.Commit(storage.NoSync)
}

// floor is the lowest match index of the other replicas of a leader's
// group (0 if one has not answered since the election).
func (r *Raft) floor() uint64 {
	floor := r.ls.lastIndex
	r.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if id != r.cfg.Node {
			floor = min(floor, pr.Match)
		}
	})
	return floor
}
