package topology

import "github.com/cairndb/cairn/api/cairnpb"

// ToPB converts t for the wire.
func (t *Topology) ToPB() *cairnpb.Topology {
	out := &cairnpb.Topology{Store: t.Store, Partitions: t.Partitions, Seq: t.Seq}
	for _, n := range t.Nodes {
		out.Nodes = append(out.Nodes, &cairnpb.TopologyNode{Id: uint64(n.ID), Addr: n.Addr})
	}
	for _, s := range t.Shards {
		ps := &cairnpb.TopologyShard{Id: uint64(s.ID), Preferred: uint64(s.Preferred), Origin: s.Origin}
		for _, r := range s.Replicas {
			ps.Replicas = append(ps.Replicas, uint64(r))
		}
		out.Shards = append(out.Shards, ps)
	}
	out.PartitionShard = make([]uint64, len(t.PartitionShard))
	for i, s := range t.PartitionShard {
		out.PartitionShard[i] = uint64(s)
	}
	return out
}

// FromPB converts and validates a wire topology.
func FromPB(p *cairnpb.Topology) (*Topology, error) {
	t := &Topology{Store: p.GetStore(), Partitions: p.GetPartitions(), Seq: p.GetSeq()}
	for _, n := range p.GetNodes() {
		t.Nodes = append(t.Nodes, Node{ID: NodeID(n.GetId()), Addr: n.GetAddr()})
	}
	for _, s := range p.GetShards() {
		sh := Shard{ID: ShardID(s.GetId()), Preferred: NodeID(s.GetPreferred()), Origin: s.GetOrigin()}
		for _, r := range s.GetReplicas() {
			sh.Replicas = append(sh.Replicas, NodeID(r))
		}
		t.Shards = append(t.Shards, sh)
	}
	for _, s := range p.GetPartitionShard() {
		t.PartitionShard = append(t.PartitionShard, ShardID(s))
	}
	return t, t.Validate()
}
