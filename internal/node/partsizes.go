package node

import (
	"context"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PartitionSizes serves topology preview: the estimated bytes on disk of
// each partition of a shard this node hosts, in the node's partition
// numbering or, for a split to preview, a multiple of it (each owned
// partition reported as its children). It reads the engine only, under
// enter, so a heal never closes the engine under it.
func (c controlRPC) PartitionSizes(_ context.Context, req *controlpb.PartitionSizesRequest) (*controlpb.PartitionSizesReply, error) {
	n := c.n
	n.ctlMu.Lock()
	err := n.checkStore(req.GetStore())
	n.ctlMu.Unlock()
	if err != nil {
		return nil, err
	}
	t := n.topology()
	shard := topology.ShardID(req.GetShard())
	if t == nil || !hosts(t, shard, n.id()) {
		return nil, status.Errorf(codes.FailedPrecondition, "%s hosts no replica of %s", topology.NodeName(n.id()), topology.ShardName(shard))
	}
	count, f := t.Partitions, uint32(1)
	if p := req.GetPartitions(); p != 0 {
		if p < count || p%count != 0 {
			return nil, status.Errorf(codes.InvalidArgument, "partition sizes: %d partitions is not a multiple of this store's %d", p, count)
		}
		count, f = p, p/count
	}
	var parts []keys.PartitionID
	for _, p := range t.PartitionsOf(shard) {
		for i := range f {
			parts = append(parts, p*keys.PartitionID(f)+keys.PartitionID(i))
		}
	}
	release, err := n.enter()
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	defer release()
	sizes, err := n.engine().EstimatePartitionBytes(uint64(shard), parts, count)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "partition sizes of %s: %v", topology.ShardName(shard), err)
	}
	out := &controlpb.PartitionSizesReply{Partitions: count, Bytes: make(map[uint32]int64, len(sizes))}
	for p, b := range sizes {
		out.Bytes[uint32(p)] = b
	}
	return out, nil
}

func hosts(t *topology.Topology, shard topology.ShardID, id topology.NodeID) bool {
	for _, s := range t.ShardsOn(id) {
		if s.ID == shard {
			return true
		}
	}
	return false
}
