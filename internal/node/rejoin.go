package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/internal/transport"
	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// A node remembers, outside its data directory, that it has been a member:
//
//	ROOT/node.json   a checked file with data {"node": 2, "store": "kvstore"}
//
// If the marker is there but the engine is empty, the data was lost (a
// wiped or replaced disk). Raft must not let such a replica pretend to be
// the one it was, so each replica starts silent and asks its shard's leader
// to readmit it, then catches up through a snapshot.
const markerFile = "node.json"

type marker struct {
	Node  topology.NodeID `json:"node"`
	Store string          `json:"store"`
}

// lostData reports whether this node was a member and its data is gone.
func (n *SN) lostData() (bool, error) {
	if _, ok, err := n.engine.StoreMeta(); err != nil || ok {
		return false, err
	}
	var m marker
	err := readChecked(n.cfg.FS, filepath.Join(n.cfg.Root, markerFile), &m)
	if files.IsNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if m.Node != n.id() || m.Store != n.topology().Store {
		return false, fmt.Errorf("%s says this root was node %d of store %q, but the topology makes it node %d of %q",
			markerFile, m.Node, m.Store, n.id(), n.topology().Store)
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

// rejoin asks the shard's leader to readmit r, trying each peer (and the
// leader they name) until one does, then lets r take Raft traffic.
func (n *SN) rejoin(r *replica.Raft) {
	shard := transport.ShardID(r.Shard())
	var to topology.NodeID
	for attempt := 0; ; attempt++ {
		if n.closed() {
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

func (n *SN) otherReplica(shard uint64, attempt int) topology.NodeID {
	s, _ := n.topology().Shard(topology.ShardID(shard))
	var others []topology.NodeID
	for _, id := range s.Replicas {
		if id != n.id() {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		return 0
	}
	return others[attempt%len(others)]
}

// HandleRejoin readmits node if this node leads shard.
func (h handler) HandleRejoin(ctx context.Context, s transport.ShardID, node transport.NodeID) *transportpb.RejoinResponse {
	r := h.n.replica(uint64(s))
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
