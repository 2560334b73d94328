package node

import (
	"fmt"
	"slices"

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
	if r := h.n.raftFor(uint64(s)); r != nil {
		r.Step(m)
	}
}

// HandleSnapshot hands a snapshot and its data, as it arrives, to the
// replica, which installs it before this returns, or refuses it (no room,
// one already arriving), so its sender learns it failed (and backs off)
// instead of sending it again.
func (h handler) HandleSnapshot(s transport.ShardID, m *raftpb.Message, data *transport.SnapshotData) error {
	r := h.n.raftFor(uint64(s))
	if r == nil {
		return fmt.Errorf("%s holds no running replica of shard %d", topology.NodeName(h.n.id()), s)
	}
	return r.ReceiveSnapshot(m, data)
}

// openSnapshot is the transport's OpenSnapshot: the data of an outbound
// MsgSnap, streamed from the export its replica made for it.
func (n *SN) openSnapshot(s transport.ShardID, _ transport.NodeID, m *raftpb.Message) (transport.SnapshotSource, error) {
	r := n.raftFor(uint64(s))
	if r == nil {
		return nil, fmt.Errorf("%s holds no running replica of shard %d", topology.NodeName(n.id()), s)
	}
	src, err := r.SnapshotData(m)
	if err != nil {
		return nil, err
	}
	return src, nil
}

func (h handler) HandleNotice(s transport.ShardID, _ transport.NodeID, c *transportpb.CommitNotice) {
	if r := h.n.raftFor(uint64(s)); r != nil {
		r.Notice(c)
	}
}

// sender adapts the node's transport to replica.Sender. Replicas only
// exist once the node has an id, and so a transport.
type sender struct{ n *SN }

func (s sender) Send(shard uint64, msgs []*raftpb.Message) {
	s.n.transport().Send(transport.ShardID(shard), msgs)
}

func (s sender) SendNotice(shard, to uint64, c *transportpb.CommitNotice) {
	s.n.transport().SendNotice(transport.ShardID(shard), transport.NodeID(to), c)
}

// router maps requests to the node's replicas.
type router struct{ n *SN }

func (r router) ShardFor(major []string) (server.Shard, error) {
	return r.ShardByID(uint64(r.n.topology().ShardForKey(major)))
}

func (r router) ShardByID(id uint64) (server.Shard, error) {
	if r.n.healing.Load() {
		return nil, errHealing(r.n.id()) // and never wait for ctlMu, which the heal holds
	}
	if rep := r.n.replica(id); rep != nil {
		return rep, nil
	}
	if id == 0 {
		return nil, fmt.Errorf("%w: a cluster is scanned shard by shard; name the shard", server.ErrWrongShard)
	}
	if r.n.stoppedByPlan(id) {
		return nil, &stoppedError{shard: topology.ShardID(id), node: r.n.id()}
	}
	return nil, fmt.Errorf("%w: node %d holds no replica of shard %d (topology seq %d)", server.ErrWrongShard, r.n.id(), id, r.n.topology().Seq)
}

// stoppedByPlan reports whether the topology places a replica of shard id
// here that plan stop-service stopped.
func (n *SN) stoppedByPlan(id uint64) bool {
	t := n.topology()
	if t == nil {
		return false
	}
	s, ok := t.Shard(topology.ShardID(id))
	if !ok || !slices.Contains(s.Replicas, n.id()) {
		return false
	}
	v := n.view.Load()
	return v != nil && slices.Contains(v.stopped, id)
}

// stoppedError is the answer of a node whose replica of a shard plan
// stop-service stopped. It is an ErrWrongShard, so clients go to another
// replica, but says what happened and how to undo it.
type stoppedError struct {
	shard topology.ShardID
	node  topology.NodeID
}

func (e *stoppedError) Error() string {
	name := fmt.Sprintf("%s-rn%d", topology.ShardName(e.shard), e.node)
	return fmt.Sprintf("replica %s (shard %s on %s) is stopped by plan stop-service; another replica must serve the request, or start it with plan start-service -service %s",
		name, topology.ShardName(e.shard), topology.NodeName(e.node), name)
}

func (e *stoppedError) Unwrap() error { return server.ErrWrongShard }

func (r router) Topology() *topology.Topology { return r.n.topology() }

func (r router) Status() (uint64, []*cairnpb.ShardStatus) {
	var out []*cairnpb.ShardStatus
	for _, s := range r.n.topology().ShardsOn(r.n.id()) {
		rep := r.n.replica(uint64(s.ID))
		if rep == nil {
			continue // stopped by plan stop-service
		}
		lead, term := rep.Leader()
		out = append(out, &cairnpb.ShardStatus{
			Shard: uint64(s.ID), Leader: lead, Term: term, Applied: rep.AppliedIndex(), IsLeader: rep.IsLeader(),
		})
	}
	return uint64(r.n.id()), out
}
