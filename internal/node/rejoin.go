package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/internal/transport"
	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// A node remembers, outside its data directory, that it has been a member:
//
//	ROOT/node.json   a checked file with data {"node": 2, "store": "kvstore"}
//
// If the marker is there but the engine holds no Raft state of a shard the
// node hosts, that replica's data was lost (a wiped or replaced disk, or a
// heal that set a corrupt store aside, heal.go). Raft must not let such a
// replica pretend to be the one it was, so it starts silent and asks its
// shard's leader to readmit it, then catches up through a snapshot. The
// rule is per shard, so a node stopped half-way through rebuilding rejoins
// only the shards it had not rebuilt yet.
const markerFile = "node.json"

type marker struct {
	Node  topology.NodeID `json:"node"`
	Store string          `json:"store"`
}

// mustRejoin reports whether this node's replica of shard must rejoin
// through its leader: the node was a member (its marker, or a heal that set
// its data aside this run) and its engine holds no Raft state of the shard.
func (n *SN) mustRejoin(shard uint64) (bool, error) {
	_, has, err := n.engine().ShardState(shard, storage.ShardTruncated)
	if err != nil || has {
		return false, err
	}
	if n.forceRejoin.Load() {
		return true, nil
	}
	return n.marked(n.topology())
}

// marked reports whether ROOT/node.json says this root was this node of
// t's store before (nil t: of any store).
func (n *SN) marked(t *topology.Topology) (bool, error) {
	var m marker
	err := readChecked(n.cfg.FS, filepath.Join(n.cfg.Root, markerFile), &m)
	if files.IsNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if t != nil && (m.Node != n.id() || m.Store != t.Store) {
		return false, fmt.Errorf("%s says this root was node %d of store %q, but the topology makes it node %d of %q",
			markerFile, m.Node, m.Store, n.id(), t.Store)
	}
	return true, nil
}

func (n *SN) writeMarker() error {
	path := filepath.Join(n.cfg.Root, markerFile)
	if _, err := n.cfg.FS.Stat(path); err == nil {
		return nil
	}
	return files.WriteJSON(n.cfg.FS, path, marker{Node: n.id(), Store: n.topology().Store})
}

// rejoinAll starts the rejoin of every replica that waits to be
// readmitted (mustRejoin), the admin's included.
func (n *SN) rejoinAll() {
	var waiting []*replica.Raft
	n.mu.RLock()
	for _, r := range n.replicas {
		if r.Rejoining() {
			waiting = append(waiting, r)
		}
	}
	n.mu.RUnlock()
	if h := n.admin.Load(); h != nil && h.rep.Rejoining() {
		waiting = append(waiting, h.rep)
	}
	if len(waiting) > 0 && !n.forceRejoin.Load() {
		n.log.Warn("this node's data is gone but it was a member before: rejoining every shard through its leader")
	}
	for _, r := range waiting {
		go n.rejoin(r)
	}
}

// failpointRejoinDelay delays each rejoin by a Go duration, so a fault
// test can watch a node that rebuilds from its peers (testing only).
const failpointRejoinDelay = "CAIRN_FAILPOINT_REJOIN_DELAY"

// rejoin asks the shard's leader to readmit r, trying each peer (and the
// leader they name) until one does, then lets r take Raft traffic. It
// gives up when the node closes or r is replaced (a heal closed it).
func (n *SN) rejoin(r *replica.Raft) {
	shard := transport.ShardID(r.Shard())
	if d, _ := time.ParseDuration(os.Getenv(failpointRejoinDelay)); d > 0 {
		select {
		case <-n.closing:
			return
		case <-time.After(d):
		}
	}
	var to topology.NodeID
	for attempt := 0; ; attempt++ {
		if n.closed() || n.raftFor(r.Shard()) != r {
			return
		}
		if to == 0 || to == n.id() {
			to = n.otherReplica(r.Shard(), attempt)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := n.transport().Rejoin(ctx, transport.NodeID(to), shard)
		cancel()
		switch {
		case err == nil && resp.GetReadmitted():
			r.Admit()
			n.log.Info("readmitted; catching up", "shard", shard, "by", to)
			return
		case err == nil && resp.GetLeader() != 0:
			to = topology.NodeID(resp.GetLeader())
		default:
			n.log.Debug("rejoin attempt failed", "shard", shard, "to", to, "err", err, "resp", resp)
			to = 0
			select {
			case <-n.closing:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// otherReplica picks the attempt-th other node that may hold a replica of
// shard: the topology's replicas, or for the admin group every peer.
func (n *SN) otherReplica(shard uint64, attempt int) topology.NodeID {
	var others []topology.NodeID
	if shard == admin.Shard {
		n.ctlMu.Lock()
		for id := range n.member.Peers {
			if id != n.id() {
				others = append(others, id)
			}
		}
		n.ctlMu.Unlock()
		slices.Sort(others)
	} else {
		s, _ := n.topology().Shard(topology.ShardID(shard))
		for _, id := range s.Replicas {
			if id != n.id() {
				others = append(others, id)
			}
		}
	}
	if len(others) == 0 {
		return 0
	}
	return others[attempt%len(others)]
}

// HandleRejoin readmits node if this node leads shard.
func (h handler) HandleRejoin(ctx context.Context, s transport.ShardID, node transport.NodeID) *transportpb.RejoinResponse {
	r := h.n.raftFor(uint64(s))
	if r == nil {
		return &transportpb.RejoinResponse{Error: fmt.Sprintf("node %d holds no replica of shard %d", h.n.id(), s)}
	}
	err := r.Readmit(ctx, uint64(node))
	var nl *replica.NotLeaderError
	switch {
	case err == nil:
		h.n.log.Info("readmitted a replica that lost its data", "shard", s, "replica", node)
		return &transportpb.RejoinResponse{Readmitted: true}
	case errors.As(err, &nl):
		return &transportpb.RejoinResponse{Leader: nl.Leader}
	default:
		return &transportpb.RejoinResponse{Error: err.Error()}
	}
}
