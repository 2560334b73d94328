package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A shard's replica set changes one node at a time, driven by the admin's
// deploy plan (docs/design/20261127_replica_moves.md):
//
//	joining node   open      an empty, uninitialized replica taking Raft traffic
//	leader         add-learner, then (once the learner caught up) add-voter
//	leader         transfer-leader (if the leaving node leads), remove
//	every node     the next topology places the shard on its new replicas;
//	               the leaving node drops its replica when it gets it
//
// A joining replica is not in this node's topology until the admin
// publishes it as a voter, so open keeps it in n.replicas only; if the node
// restarts meanwhile, the admin's next open reopens it from its state.

// ChangeReplica runs one step of a replica-set change (controlpb).
func (c controlRPC) ChangeReplica(ctx context.Context, r *controlpb.ChangeReplicaRequest) (*controlpb.ChangeReplicaReply, error) {
	n := c.n
	n.ctlMu.Lock()
	err := n.checkStore(r.GetStore())
	if err == nil && r.GetOp() == "open" {
		err = n.openJoining(r)
	}
	n.ctlMu.Unlock()
	if err != nil {
		return nil, err
	}
	rep := n.replica(r.GetShard())
	if rep == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "%s hosts no running replica of %s", topology.NodeName(n.id()), topology.ShardName(topology.ShardID(r.GetShard())))
	}
	switch r.GetOp() {
	case "open", "status":
		return changeReply(rep, true), nil
	case "add-learner", "add-voter", "remove", "transfer-leader":
	default:
		return nil, status.Errorf(codes.InvalidArgument, "change replica: unknown op %q", r.GetOp())
	}
	if !rep.IsLeader() {
		return changeReply(rep, false), nil
	}
	if err := leaderChange(ctx, rep, r.GetOp(), r.GetNode()); err != nil {
		var nl *replica.NotLeaderError
		if errors.As(err, &nl) {
			return changeReply(rep, false), nil
		}
		return nil, status.Errorf(codes.Unavailable, "%s: %s sn%d: %v", topology.ShardName(topology.ShardID(r.GetShard())), r.GetOp(), r.GetNode(), err)
	}
	n.log.Info("replica set changed", "shard", r.GetShard(), "op", r.GetOp(), "replica", r.GetNode(), "voters", rep.Voters(), "learners", rep.Learners())
	return changeReply(rep, r.GetOp() != "transfer-leader" || !rep.IsLeader()), nil
}

// leaderChange runs a leader op on rep.
func leaderChange(ctx context.Context, rep *replica.Raft, op string, node uint64) error {
	switch op {
	case "add-learner":
		return rep.AddLearner(ctx, node)
	case "add-voter":
		return rep.AddVoter(ctx, node)
	case "remove":
		return rep.RemoveVoter(ctx, node)
	}
	rep.TransferLeadership(node)
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for rep.IsLeader() && wctx.Err() == nil {
		select {
		case <-wctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func changeReply(rep *replica.Raft, done bool) *controlpb.ChangeReplicaReply {
	lead, _ := rep.Leader()
	return &controlpb.ChangeReplicaReply{Done: done, Leader: lead, Voters: rep.Voters(), Learners: rep.Learners(),
		Applied: rep.AppliedIndex(), IsLeader: rep.IsLeader()}
}

// openJoining opens this node's replica of a shard it joins (op open): from
// its Raft state if it has one, else empty, uninitialized and admitted at
// once, so that the leader's snapshot initializes it. The caller holds ctlMu.
func (n *SN) openJoining(r *controlpb.ChangeReplicaRequest) error {
	if r.GetNode() != uint64(n.id()) {
		return status.Errorf(codes.InvalidArgument, "open is for sn%d, this is %s", r.GetNode(), topology.NodeName(n.id()))
	}
	n.mergePeers(r.GetPeers())
	if err := n.member.save(n.cfg.FS, n.cfg.Root); err != nil {
		return err
	}
	if n.replica(r.GetShard()) != nil {
		return nil
	}
	t := n.topology()
	if t == nil {
		return status.Error(codes.FailedPrecondition, "this node holds no topology yet; the plan publishes it first")
	}
	s, ok := t.Shard(topology.ShardID(r.GetShard()))
	if !ok {
		return status.Errorf(codes.FailedPrecondition, "%s is not in this node's topology %d", topology.ShardName(topology.ShardID(r.GetShard())), t.Seq)
	}
	if err := n.openJoiningShard(s); err != nil {
		return err
	}
	n.log.Info("opened a replica joining its shard; catching up from the leader", "shard", s.ID)
	return nil
}

// openJoiningShard opens a replica of an existing shard s that this node
// joins (or joined, before a restart): from its Raft state if the engine
// has one, else uninitialized and admitted. The caller holds ctlMu.
func (n *SN) openJoiningShard(s topology.Shard) error {
	meta, ok, err := n.engine().StoreMeta()
	if err != nil || !ok {
		return fmt.Errorf("shard %d: the engine has no store: %v", s.ID, err)
	}
	_, has, err := n.engine().ShardState(uint64(s.ID), storage.ShardTruncated)
	if err != nil {
		return err
	}
	if err := n.openReplicaAs(meta, s, !has); err != nil {
		return err
	}
	n.replica(uint64(s.ID)).Admit()
	return nil
}
