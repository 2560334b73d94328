package node

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// updateTopology moves a running node from topology cur to t, a later
// one that the admin's deploy plan installs step by step: it records t,
// opens the replicas of shards new on this node (a new shard's created
// empty: its partitions arrive by moves; an existing shard this node joins
// is opened from its state, or empty and catching up from the leader, see
// replica_change.go), and closes and drops the replicas of shards t no
// longer places here (their partitions moved out, or the plan removed this
// node from the shard's Raft group first). Runs under ctlMu (change).
func (n *SN) updateTopology(cur, t *topology.Topology) error {
	me := n.id()
	if err := files.WriteJSON(n.cfg.FS, filepath.Join(n.cfg.Root, topology.FileName), t); err != nil {
		return err
	}
	n.topo.Store(t)
	meta, ok, err := n.engine().StoreMeta()
	if err != nil || !ok {
		return fmt.Errorf("topology %d: the engine has no store: %v", t.Seq, err)
	}
	for _, s := range t.ShardsOn(me) {
		if r := n.replica(uint64(s.ID)); r != nil {
			r.SetPreferred(uint64(s.Preferred)) // a replica change may have moved it
		}
		if n.replica(uint64(s.ID)) != nil || hosts(cur, s.ID, me) || stoppedHere(n.member.Stopped, s.ID) {
			continue // running, or left as it was (stopped by plan stop-service)
		}
		if _, had := cur.Shard(s.ID); had {
			if err := n.openJoiningShard(s); err != nil {
				return err
			}
			n.log.Info("opened the replica of a shard this node joined", "shard", s.ID, "seq", t.Seq)
			continue
		}
		if err := n.openNewReplica(meta, s); err != nil {
			return err
		}
		n.log.Info("created a replica of a new shard", "shard", s.ID, "seq", t.Seq)
	}
	for _, s := range cur.ShardsOn(me) {
		if hosts(t, s.ID, me) {
			continue
		}
		if err := n.dropReplica(uint64(s.ID)); err != nil {
			return err
		}
		n.log.Info("dropped the replica of a shard this node no longer hosts", "shard", s.ID, "seq", t.Seq)
	}
	n.log.Info("topology updated", "seq", t.Seq, "shards_here", len(t.ShardsOn(me)))
	return nil
}

// stoppedHere reports whether plan stop-service stopped shard's replica.
func stoppedHere(stopped []uint64, shard topology.ShardID) bool {
	return slices.Contains(stopped, uint64(shard))
}

// openNewReplica opens a replica of a shard created by this topology: it
// starts with the shard's first configuration, never as a rejoin.
func (n *SN) openNewReplica(meta storage.StoreMeta, s topology.Shard) error {
	if _, has, err := n.engine().ShardState(uint64(s.ID), storage.ShardTruncated); err != nil || has {
		return fmt.Errorf("shard %d is new in this topology but the engine has its state already (%v)", s.ID, err)
	}
	return n.openReplicaAs(meta, s, false)
}

// dropReplica closes the local replica of shard and deletes its data.
func (n *SN) dropReplica(shard uint64) error {
	n.mu.Lock()
	r := n.replicas[shard]
	delete(n.replicas, shard)
	n.mu.Unlock()
	if r != nil {
		r.Close()
	}
	return n.engine().DropShard(shard, storage.ShardDataSpans(shard))
}
