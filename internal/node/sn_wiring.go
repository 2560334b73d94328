package node

import (
	"fmt"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/internal/transport"
	"github.com/cairndb/cairn/internal/transport/transportpb"
	"go.etcd.io/raft/v3/raftpb"
)

// handler delivers inbound Raft traffic to the local replicas.
type handler struct{ n *SN }

func (h handler) HandleRaft(s transport.ShardID, m *raftpb.Message) {
	if r := h.n.replica(uint64(s)); r != nil {
		r.Step(m)
	}
}

func (h handler) HandleSnapshot(s transport.ShardID, m *raftpb.Message) { h.HandleRaft(s, m) }

func (h handler) HandleNotice(s transport.ShardID, _ transport.NodeID, c *transportpb.CommitNotice) {
	if r := h.n.replica(uint64(s)); r != nil {
		r.Notice(c)
	}
}

// sender adapts the transport to replica.Sender.
type sender struct{ t *transport.Transport }

func (s sender) Send(shard uint64, msgs []*raftpb.Message) { s.t.Send(transport.ShardID(shard), msgs) }

func (s sender) SendNotice(shard, to uint64, c *transportpb.CommitNotice) {
	s.t.SendNotice(transport.ShardID(shard), transport.NodeID(to), c)
}

// router maps requests to the node's replicas.
type router struct{ n *SN }

func (r router) ShardFor(major []string) (server.Shard, error) {
	return r.ShardByID(uint64(r.n.topo.ShardForKey(major)))
}

func (r router) ShardByID(id uint64) (server.Shard, error) {
	if rep := r.n.replica(id); rep != nil {
		return rep, nil
	}
	if id == 0 {
		return nil, fmt.Errorf("%w: a cluster is scanned shard by shard; name the shard", server.ErrWrongShard)
	}
	return nil, fmt.Errorf("%w: node %d holds no replica of shard %d (topology seq %d)", server.ErrWrongShard, r.n.self.ID, id, r.n.topo.Seq)
}

func (r router) Topology() *topology.Topology { return r.n.topo }

func (r router) Status() (uint64, []*cairnpb.ShardStatus) {
	var out []*cairnpb.ShardStatus
	for _, s := range r.n.topo.ShardsOn(r.n.self.ID) {
		rep := r.n.replica(uint64(s.ID))
		lead, term := rep.Leader()
		out = append(out, &cairnpb.ShardStatus{
			Shard: uint64(s.ID), Leader: lead, Term: term, Applied: rep.AppliedIndex(), IsLeader: rep.IsLeader(),
		})
	}
	return uint64(r.n.self.ID), out
}
