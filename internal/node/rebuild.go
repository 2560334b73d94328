package node

import (
	"context"
	"github.com/cairndb/cairn/internal/storage"
	"slices"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// handoffWait bounds how long RebuildReplica waits for leadership to move
// off the replica it rebuilds.
const handoffWait = 10 * time.Second

// RebuildReplica replaces this node's replica of a shard with a copy from
// its peers (see controlpb). The admin checks, before it asks, that the
// shard keeps a majority of running replicas while this one rebuilds
// (admin/quorum.go); the node refuses only a shard with no other replica.
func (c controlRPC) RebuildReplica(ctx context.Context, req *controlpb.RebuildReplicaRequest) (*controlpb.RebuildReplicaReply, error) {
	n := c.n
	n.ctlMu.Lock()
	defer n.ctlMu.Unlock()
	if err := n.checkStore(req.GetStore()); err != nil {
		return nil, err
	}
	shard := req.GetShard()
	s, err := n.placedHere(shard)
	if err != nil {
		return nil, err
	}
	if len(s.Replicas) < 2 {
		return nil, status.Errorf(codes.FailedPrecondition, "shard %s has no other replica to rebuild sn%d's from", topology.ShardName(s.ID), n.id())
	}
	r := n.replica(shard)
	if r == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "the replica of %s on sn%d is stopped; start it with plan start-service first", topology.ShardName(s.ID), n.id())
	}
	if req.GetId() != 0 && n.rebuildIDs[shard] == req.GetId() {
		return &controlpb.RebuildReplicaReply{Rejoining: r.Rejoining(), Applied: r.AppliedIndex()}, nil
	}
	if r.IsLeader() {
		hctx, cancel := context.WithTimeout(ctx, handoffWait)
		r.Handoff(hctx)
		cancel()
		if r.IsLeader() {
			return nil, status.Errorf(codes.Unavailable, "sn%d still leads %s after %v: no follower took over; retry", n.id(), topology.ShardName(s.ID), handoffWait)
		}
	}
	meta, _, err := n.engine().StoreMeta()
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	delete(n.replicas, shard)
	n.mu.Unlock()
	r.Close()
	if err := n.engine().DropShard(shard, storage.ShardDataSpans(shard)); err != nil {
		if rerr := n.openReplica(meta, s); rerr != nil {
			n.log.Error("reopening a replica after a failed rebuild failed", "shard", shard, "err", rerr)
		}
		return nil, status.Errorf(codes.Internal, "dropping %s's data on sn%d: %v", topology.ShardName(s.ID), n.id(), err)
	}
	if err := n.openReplica(meta, s); err != nil {
		return nil, status.Errorf(codes.Internal, "reopening %s on sn%d to rejoin: %v", topology.ShardName(s.ID), n.id(), err)
	}
	if n.rebuildIDs == nil {
		n.rebuildIDs = make(map[uint64]uint64)
	}
	n.rebuildIDs[shard] = req.GetId()
	nr := n.replica(shard)
	n.log.Warn("replica rebuilt at the admin's request: its data is deleted, and it rejoins through the shard's leader", "shard", shard)
	go n.rejoin(nr)
	return &controlpb.RebuildReplicaReply{Rejoining: true}, nil
}

// placedHere returns shard if the topology places a replica of it on this
// node; the caller holds ctlMu.
func (n *SN) placedHere(shard uint64) (topology.Shard, error) {
	t := n.topology()
	if t == nil {
		return topology.Shard{}, status.Error(codes.FailedPrecondition, "this node holds no topology")
	}
	s, ok := t.Shard(topology.ShardID(shard))
	if !ok || !slices.Contains(s.Replicas, n.id()) {
		return topology.Shard{}, status.Errorf(codes.FailedPrecondition, "sn%d hosts no replica of shard %d", n.id(), shard)
	}
	return s, nil
}
