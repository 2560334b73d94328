package node

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/latency"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// controlRPC is the admin's handle on this node. Every change is
// idempotent (see controlpb) and serialized by ctlMu.
type controlRPC struct {
	controlpb.UnimplementedControlServer
	n *SN
}

// describe reports what the node is and runs.
func (n *SN) describe() *controlpb.NodeInfo {
	info := &controlpb.NodeInfo{Host: n.cfg.Host, Port: uint32(n.cfg.Port), Version: n.cfg.Version, SnId: uint64(n.id())}
	if c := n.cfg.Init; c != nil {
		info.Uid, info.Capacity, info.StorageDirs = c.UID, uint32(c.Capacity), c.StorageDirs
	}
	if v := n.view.Load(); v != nil {
		info.Store = v.store // not under ctlMu: a heal holds it for seconds
	}
	if h := n.admin.Load(); h != nil {
		info.Admin, info.AdminApplied = true, h.rep.AppliedIndex()
	}
	t := n.topology()
	if t != nil {
		if info.Store == "" {
			info.Store = t.Store
		}
		info.TopologySeq = t.Seq
		for _, s := range t.ShardsOn(n.id()) {
			st := &controlpb.ShardState{Shard: uint64(s.ID)}
			if r := n.replica(uint64(s.ID)); r != nil {
				lead, term := r.Leader()
				st.Running, st.Leader, st.Term, st.Applied, st.IsLeader = true, lead, term, r.AppliedIndex(), r.IsLeader()
				st.Rebuilding, st.Rejoining = rebuilding(r), r.Rejoining()
				st.Stuck = r.Stuck()
			} else if n.healing.Load() {
				st.Running, st.Rebuilding = true, true // closed for a moment: the heal reopens it
			}
			info.Shards = append(info.Shards, st)
		}
	}
	info.Storage = n.storageInfo(info.Shards)
	if kv := n.kv.Load(); kv != nil {
		var reads, writes latency.Snapshot
		for _, o := range kv.Stats() {
			info.Requests += o.Calls
			info.RequestErrors += o.Errors
			if o.Read {
				reads = reads.Add(o.Time)
			} else {
				writes = writes.Add(o.Time)
			}
		}
		info.ReadLatency, info.WriteLatency = controlpb.LatencyOf(reads), controlpb.LatencyOf(writes)
	}
	return info
}

func (c controlRPC) Describe(context.Context, *controlpb.DescribeRequest) (*controlpb.NodeInfo, error) {
	return c.n.describe(), nil
}

// noteStore publishes the membership's store and stopped shards for
// readers that must not take ctlMu (describe, the request path); the
// caller holds ctlMu.
func (n *SN) noteStore() {
	n.view.Store(&memberView{store: n.member.Store, stopped: slices.Clone(n.member.Stopped)})
}

// memberView is what readers outside ctlMu need of the membership: a
// request path must never wait for ctlMu, which a heal holds while it
// waits for requests to drain (serveMu).
type memberView struct {
	store   string
	stopped []uint64
}

// checkStore checks that a request is for this node's store; the caller
// holds ctlMu.
func (n *SN) checkStore(store string) error {
	if n.member.Store == "" {
		return status.Error(codes.FailedPrecondition, "this node has not joined a store; run plan deploy-sn first")
	}
	if store != n.member.Store {
		return status.Errorf(codes.FailedPrecondition, "this node belongs to store %q, not %q", n.member.Store, store)
	}
	return nil
}

// mergePeers records peer addresses; the caller holds ctlMu and saves.
func (n *SN) mergePeers(peers map[uint64]string) {
	if n.member.Peers == nil {
		n.member.Peers = map[topology.NodeID]string{}
	}
	for id, a := range peers {
		n.member.Peers[topology.NodeID(id)] = a
	}
}

func (c controlRPC) Join(_ context.Context, r *controlpb.JoinRequest) (*controlpb.NodeInfo, error) {
	n := c.n
	if n.cfg.Init == nil {
		return nil, status.Error(codes.FailedPrecondition, "this node was started from a topology file (cairn cluster), not from cairn sn init; it cannot be deployed by an admin")
	}
	if r.GetUid() != n.cfg.Init.UID {
		return nil, status.Errorf(codes.FailedPrecondition, "this node's uid is %s, not %s: another node now answers at this address", n.cfg.Init.UID, r.GetUid())
	}
	if r.GetStore() == "" || r.GetSnId() == 0 {
		return nil, status.Error(codes.InvalidArgument, "join: store and sn id are required")
	}
	return n.change(func() error {
		if n.member.Store != "" && (n.member.Store != r.GetStore() || uint64(n.member.SN) != r.GetSnId()) {
			return status.Errorf(codes.FailedPrecondition, "this node is already sn%d of store %q", n.member.SN, n.member.Store)
		}
		if id := n.id(); id != 0 && uint64(id) != r.GetSnId() {
			// It left the store (Leave) but its process still runs as the
			// old id: its transport and logs carry that id. A restart
			// starts it afresh, with no id.
			return status.Errorf(codes.FailedPrecondition, "this node left the store as sn%d and still runs under that id: "+
				"restart it (stop its cairn sn process, start it again with the same --root) before deploying it as sn%d", id, r.GetSnId())
		}
		prev := n.member.clone()
		n.member.Store, n.member.SN = r.GetStore(), topology.NodeID(r.GetSnId())
		n.mergePeers(r.GetPeers())
		if err := n.member.save(n.cfg.FS, n.cfg.Root); err != nil {
			n.member = prev
			return err
		}
		if n.id() == 0 {
			n.selfID.Store(r.GetSnId())
			n.log = n.cfg.Logger.With("node", r.GetSnId())
			n.log.Info("joined store", "store", r.GetStore())
		}
		if err := n.ensureTransport(n.id()); err != nil {
			return err
		}
		return nil
	})
}

// change runs fn under ctlMu and then describes the node.
func (n *SN) change(fn func() error) (*controlpb.NodeInfo, error) {
	n.ctlMu.Lock()
	err := fn()
	n.noteStore()
	n.ctlMu.Unlock()
	if err != nil {
		return nil, err
	}
	return n.describe(), nil
}

func (c controlRPC) HostAdmin(_ context.Context, r *controlpb.HostAdminRequest) (*controlpb.NodeInfo, error) {
	n := c.n
	return n.change(func() error {
		if err := n.checkStore(r.GetStore()); err != nil {
			return err
		}
		n.mergePeers(r.GetPeers())
		n.member.Admin = true
		if err := n.member.save(n.cfg.FS, n.cfg.Root); err != nil {
			return err
		}
		if n.admin.Load() == nil {
			if err := n.openAdmin(n.member.AdminFounder, false); err != nil {
				return err
			}
		}
		return nil
	})
}

func (c controlRPC) InstallTopology(_ context.Context, r *controlpb.InstallTopologyRequest) (*controlpb.NodeInfo, error) {
	n := c.n
	t, err := topology.Decode(r.GetTopology())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	return n.change(func() error {
		if err := n.checkStore(r.GetStore()); err != nil {
			return err
		}
		if t.Store != n.member.Store {
			return status.Errorf(codes.InvalidArgument, "the topology is of store %q, this node of %q", t.Store, n.member.Store)
		}
		if _, ok := t.Node(n.id()); !ok {
			return status.Errorf(codes.InvalidArgument, "the topology does not list this node (sn%d)", n.id())
		}
		n.mergePeers(r.GetPeers())
		if err := n.member.save(n.cfg.FS, n.cfg.Root); err != nil {
			return err
		}
		if cur := n.topology(); cur != nil {
			if cur.Seq >= t.Seq {
				return nil
			}
			return n.updateTopology(cur, t)
		}
		if err := files.WriteJSON(n.cfg.FS, filepath.Join(n.cfg.Root, topology.FileName), t); err != nil {
			return err
		}
		if err := n.openTopology(t); err != nil {
			return err
		}
		if err := n.writeMarker(); err != nil {
			return err
		}
		n.log.Info("topology installed", "seq", t.Seq, "shards_here", len(t.ShardsOn(n.id())))
		return nil
	})
}

func (c controlRPC) SetService(_ context.Context, r *controlpb.SetServiceRequest) (*controlpb.NodeInfo, error) {
	n := c.n
	return n.change(func() error {
		if err := n.checkStore(r.GetStore()); err != nil {
			return err
		}
		t := n.topology()
		if t == nil {
			return status.Error(codes.FailedPrecondition, "this node holds no topology")
		}
		s, ok := t.Shard(topology.ShardID(r.GetShard()))
		if !ok || !slices.Contains(s.Replicas, n.id()) {
			return status.Errorf(codes.FailedPrecondition, "this node hosts no replica of shard %d", r.GetShard())
		}
		prev := slices.Clone(n.member.Stopped)
		if r.GetRun() {
			n.member.Stopped = slices.DeleteFunc(n.member.Stopped, func(x uint64) bool { return x == r.GetShard() })
		} else if !slices.Contains(n.member.Stopped, r.GetShard()) {
			n.member.Stopped = append(n.member.Stopped, r.GetShard())
		}
		if err := n.member.save(n.cfg.FS, n.cfg.Root); err != nil {
			n.member.Stopped = prev
			return err
		}
		if r.GetRun() {
			if n.replica(r.GetShard()) == nil {
				meta, _, err := n.engine().StoreMeta()
				if err != nil {
					return err
				}
				if err := n.openReplica(meta, s); err != nil {
					return err
				}
				n.log.Info("replica started by the admin", "shard", r.GetShard())
				if rep := n.replica(r.GetShard()); rep.Rejoining() {
					go n.rejoin(rep) // its data was set aside while it was stopped
				}
			}
		} else if rep := n.replica(r.GetShard()); rep != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			rep.Handoff(ctx)
			cancel()
			n.mu.Lock()
			delete(n.replicas, r.GetShard())
			n.mu.Unlock()
			rep.Close()
			n.log.Info("replica stopped by the admin", "shard", r.GetShard())
		}
		return nil
	})
}

func (c controlRPC) Leave(_ context.Context, r *controlpb.LeaveRequest) (*controlpb.NodeInfo, error) {
	n := c.n
	return n.change(func() error {
		if n.member.Store == "" {
			return nil
		}
		if err := n.checkStore(r.GetStore()); err != nil {
			return err
		}
		if n.admin.Load() != nil || (n.topology() != nil && len(n.topology().ShardsOn(n.id())) > 0) {
			return status.Error(codes.FailedPrecondition, "this node hosts replicas or an admin and cannot leave")
		}
		prev := n.member.clone()
		n.member = membership{}
		if err := n.member.save(n.cfg.FS, n.cfg.Root); err != nil {
			n.member = prev
			return err
		}
		n.log.Info("left the store; restart this node before deploying it again", "store", prev.Store)
		return nil
	})
}
