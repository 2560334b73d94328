package node

import (
	"context"
	"errors"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/replica"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The control RPCs of plan verify-data's replica checksums (see
// replica/checksum.go): the admin asks a shard's leader to propose a
// checksum (ShardChecksum), then asks each replica's node for its result
// (ChecksumResult) and compares them.

// shardReplica returns this node's running replica of shard, for a
// request about store.
func (n *SN) shardReplica(store string, shard uint64) (*replica.Raft, error) {
	n.ctlMu.Lock()
	err := n.checkStore(store)
	n.ctlMu.Unlock()
	if err != nil {
		return nil, err
	}
	r := n.replica(shard)
	if r == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "sn%d runs no replica of shard %d (stopped, not placed here, or being rebuilt)", n.id(), shard)
	}
	return r, nil
}

func (c controlRPC) ShardChecksum(ctx context.Context, req *controlpb.ShardChecksumRequest) (*controlpb.ShardChecksumReply, error) {
	r, err := c.n.shardReplica(req.GetStore(), req.GetShard())
	if err != nil {
		return nil, err
	}
	if req.GetId() == 0 {
		return nil, status.Error(codes.InvalidArgument, "shard checksum: id is required")
	}
	index, err := r.Checksum(ctx, req.GetId(), req.GetBytesPerSec())
	var nl *replica.NotLeaderError
	switch {
	case errors.As(err, &nl):
		return &controlpb.ShardChecksumReply{Leader: nl.Leader}, nil
	case err != nil:
		return nil, status.Errorf(codes.Unavailable, "shard %d checksum: %v", req.GetShard(), err)
	}
	lead, _ := r.Leader()
	return &controlpb.ShardChecksumReply{Proposed: true, Index: index, Leader: lead}, nil
}

func (c controlRPC) ChecksumResult(_ context.Context, req *controlpb.ChecksumResultRequest) (*controlpb.ChecksumResultReply, error) {
	r, err := c.n.shardReplica(req.GetStore(), req.GetShard())
	if err != nil {
		return nil, err
	}
	res, ok := r.ChecksumResult(req.GetId())
	out := &controlpb.ChecksumResultReply{Known: ok, Applied: r.AppliedIndex()}
	if k := c.n.engine().Corrupt(); !ok && k != nil {
		// A corrupt engine admits no appends: the replica will not reach
		// the checksum's index until the node heals.
		return nil, status.Errorf(codes.FailedPrecondition, "sn%d's engine is marked corrupt (%s: %s), so its replica of shard %d applies nothing until the node heals",
			c.n.id(), k.File, k.Detail, req.GetShard())
	}
	if !ok {
		return out, nil
	}
	out.Index, out.Done = res.Index, res.Done
	out.PartitionsTotal, out.PartitionsDone = uint32(res.Progress.Partitions), uint32(res.Progress.PartitionsDone)
	out.BytesDone = res.Progress.BytesDone
	if res.Err != nil {
		out.Error = res.Err.Error()
	}
	for _, s := range res.Sums {
		out.Partitions = append(out.Partitions, &controlpb.PartitionChecksum{
			Partition: uint32(s.Partition), Sum: s.Sum, Records: s.Records, Bytes: s.Bytes})
	}
	return out, nil
}
