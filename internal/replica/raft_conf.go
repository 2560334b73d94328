package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Membership changes happen for two reasons: the admin changes a shard's
// replica set (a new replica joins as a learner, catches up by snapshot,
// is promoted, and a leaving one is removed; node ChangeReplica), and a
// replica whose data was wiped rejoins. Raft forbids a replica from forgetting what it
// acknowledged, and etcd raft panics when a follower's log is shorter than
// the leader remembers. So a wiped replica comes back uninitialized and
// silent, and asks the leader to Readmit it: the leader removes its old
// membership (dropping what Raft remembers of it) and adds it back, after
// which it catches up through a snapshot like a new replica.

// ErrRejoining is returned by replicas that are waiting to be readmitted.
var ErrRejoining = errors.New("replica: rejoining after a data loss; not serving yet")

// ErrNotVoter is returned by ReadReady on a replica that is not a voter of
// its group's applied configuration: a learner catching up (plan
// deploy-topology adds a replica as a learner first), or a replica that was
// removed. Such a replica serves no read of any consistency; the client
// retries (another replica, or after a topology refresh).
var ErrNotVoter = errors.New("replica: not a voter of its group (catching up, or removed); not serving")

// Votes reports whether this replica is a voter of its group's applied
// configuration.
func (r *Raft) Votes() bool { return slices.Contains(r.Voters(), r.cfg.Node) }

// Readmit removes node from the shard's voters and adds it back, on the
// leader. It returns once both changes are applied here.
func (r *Raft) Readmit(ctx context.Context, node uint64) error {
	if node == r.cfg.Node {
		return fmt.Errorf("replica: a leader cannot readmit itself")
	}
	for _, t := range []raftpb.ConfChangeType{raftpb.ConfChangeRemoveNode, raftpb.ConfChangeAddNode} {
		if err := r.changeConf(ctx, t, node); err != nil {
			return err
		}
	}
	return nil
}

type confWaiter struct {
	id   uint64
	done chan error
}

func (r *Raft) changeConf(ctx context.Context, t raftpb.ConfChangeType, node uint64) error {
	w := &confWaiter{done: make(chan error, 1)}
	r.report(func(rn *raft.RawNode) {
		if rn.BasicStatus().RaftState != raft.StateLeader {
			w.done <- &NotLeaderError{Leader: rn.BasicStatus().Lead}
			return
		}
		r.nextProp++
		w.id = r.nextProp
		cc := &raftpb.ConfChange{Type: t.Enum(), NodeId: proto.Uint64(node), Context: binary.BigEndian.AppendUint64(nil, w.id)}
		if err := rn.ProposeConfChange(cc); err != nil {
			w.done <- fmt.Errorf("%w (%v)", ErrDropped, err)
			return
		}
		r.confWait = append(r.confWait, w)
	})
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %v", ErrUnknownOutcome, ctx.Err())
	case <-r.stopped:
		return ErrClosed
	}
}

// applyConf applies a committed configuration change and records the new
// configuration with the batch.
func (r *Raft) applyConf(b *storage.Batch, e *raftpb.Entry) error {
	var cc raftpb.ConfChange
	if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
		r.log.Error("skipping an undecodable configuration change", "index", e.GetIndex(), "err", err)
		return nil
	}
	cs := r.rn.ApplyConfChange(&cc)
	r.ls.conf = proto.Clone(cs).(*raftpb.ConfState)
	r.voters.Store(&r.ls.conf.Voters)
	r.learners.Store(&r.ls.conf.Learners)
	r.log.Info("configuration changed", "change", cc.GetType().String(), "node", cc.GetNodeId(), "voters", r.ls.conf.GetVoters())
	if len(cc.GetContext()) == 8 {
		id := binary.BigEndian.Uint64(cc.GetContext())
		r.confWait = slices.DeleteFunc(r.confWait, func(w *confWaiter) bool {
			if w.id == id {
				w.done <- nil
				return true
			}
			return false
		})
	}
	cb, _ := proto.Marshal(r.ls.conf)
	return b.PutShardState(r.cfg.Shard, storage.ShardConfState, cb)
}

// Voters returns the shard's current voters.
func (r *Raft) Voters() []uint64 {
	if v := r.voters.Load(); v != nil {
		return *v
	}
	return nil
}

// Admit ends the silence of a rejoining replica once the leader has
// readmitted it: from now on it takes Raft messages.
func (r *Raft) Admit() { r.admitted.Store(true) }

// Rejoining reports whether the replica still waits to be readmitted.
func (r *Raft) Rejoining() bool { return !r.admitted.Load() }

// Learners returns the group's current learners: replicas that receive the
// log but do not vote, so a new replica can catch up without counting
// towards the quorum.
func (r *Raft) Learners() []uint64 {
	if v := r.learners.Load(); v != nil {
		return *v
	}
	return nil
}

// AddLearner adds node as a learner, on the leader; idempotent (a node that
// is already a learner or a voter is left alone). The new replica should
// be running (started with Rejoin and admitted) so it can take the
// snapshot the leader sends it. Promote it with AddVoter once it caught up.
func (r *Raft) AddLearner(ctx context.Context, node uint64) error {
	if slices.Contains(r.Voters(), node) || slices.Contains(r.Learners(), node) {
		return nil
	}
	return r.changeConf(ctx, raftpb.ConfChangeAddLearnerNode, node)
}

// AddVoter makes node a voter of the group (promoting a learner), on the
// leader. It is idempotent: a node that already votes is left alone. It
// returns once the change is applied here.
func (r *Raft) AddVoter(ctx context.Context, node uint64) error {
	if slices.Contains(r.Voters(), node) {
		return nil
	}
	return r.changeConf(ctx, raftpb.ConfChangeAddNode, node)
}

// RemoveVoter removes node from the group, on the leader, whether it votes
// or is a learner; idempotent like AddVoter. The leader cannot remove
// itself: hand the leadership over first (TransferLeadership).
func (r *Raft) RemoveVoter(ctx context.Context, node uint64) error {
	if !slices.Contains(r.Voters(), node) && !slices.Contains(r.Learners(), node) {
		return nil
	}
	if node == r.cfg.Node {
		return fmt.Errorf("replica: a leader cannot remove itself; transfer leadership first")
	}
	return r.changeConf(ctx, raftpb.ConfChangeRemoveNode, node)
}

// SetPreferred makes node the one this replica, when it leads, hands the
// leadership to once it is caught up (0: none): the topology's preferred
// leader changes when a replica change replaces it.
func (r *Raft) SetPreferred(node uint64) { r.preferred.Store(node) }
