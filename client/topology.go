package client

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/topology"
)

// Topology refresh pacing: a refresh asks each node for at most
// refreshAttempt, and refreshes run at most once per minRefreshInterval
// (callers that saw the same stale topology share one refresh).
const (
	refreshAttempt     = time.Second
	minRefreshInterval = 50 * time.Millisecond
)

// cluster is what a smart client knows about a replicated store: its
// topology and, per shard, the node it believes leads. Both are hints that
// the servers correct (not_leader, wrong_shard); nothing depends on them
// being right. It is safe for concurrent use.
type cluster struct {
	mu      sync.RWMutex
	topo    *topology.Topology
	leaders map[topology.ShardID]topology.NodeID

	refreshMu   sync.Mutex // one refresh at a time; guards lastRefresh
	lastRefresh time.Time  // when refreshTopology last asked the nodes
}

// newCluster returns the cluster described by a StoreInfo answer that
// carries a topology.
func newCluster(resp *cairnpb.StoreInfoResponse) (*cluster, error) {
	cl := &cluster{leaders: make(map[topology.ShardID]topology.NodeID)}
	if _, err := cl.install(resp); err != nil {
		return nil, err
	}
	return cl, nil
}

// install adopts the topology of a StoreInfo answer if it is newer than the
// one held, and takes the answering node's view of its shards' leaders for
// the shards whose leader is not cached. It reports whether the topology
// changed.
func (cl *cluster) install(resp *cairnpb.StoreInfoResponse) (bool, error) {
	pt := resp.GetTopology()
	if pt == nil {
		return false, nil
	}
	t, err := topology.FromPB(pt)
	if err != nil {
		return false, &Error{Code: codes.Internal, Action: ActionNone,
			Msg: fmt.Sprintf("node %d sent a topology that is not valid: %v", resp.GetNode(), err)}
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	changed := cl.topo == nil || t.Seq > cl.topo.Seq
	if changed {
		cl.topo = t
		// Keep a cached leader only while it still holds a replica.
		for s, n := range cl.leaders {
			if sh, ok := t.Shard(s); !ok || !slices.Contains(sh.Replicas, n) {
				delete(cl.leaders, s)
			}
		}
	}
	for _, st := range resp.GetLocalShards() {
		s, lead := topology.ShardID(st.GetShard()), topology.NodeID(st.GetLeader())
		if _, cached := cl.leaders[s]; cached || lead == 0 {
			continue
		}
		if sh, ok := cl.topo.Shard(s); ok && slices.Contains(sh.Replicas, lead) {
			cl.leaders[s] = lead
		}
	}
	return changed, nil
}

// topology returns the current topology. It is never modified.
func (cl *cluster) topology() *topology.Topology {
	cl.mu.RLock()
	defer cl.mu.RUnlock()
	return cl.topo
}

// leader returns the node believed to lead shard s (0: unknown).
func (cl *cluster) leader(s topology.ShardID) topology.NodeID {
	cl.mu.RLock()
	defer cl.mu.RUnlock()
	return cl.leaders[s]
}

// setLeader records that n leads shard s.
func (cl *cluster) setLeader(s topology.ShardID, n topology.NodeID) {
	cl.mu.Lock()
	cl.leaders[s] = n
	cl.mu.Unlock()
}

// forgetLeader drops the cached leader of s if it is n.
func (cl *cluster) forgetLeader(s topology.ShardID, n topology.NodeID) {
	cl.mu.Lock()
	if cl.leaders[s] == n {
		delete(cl.leaders, s)
	}
	cl.mu.Unlock()
}

// refreshTopology asks the store's nodes, then the helper hosts, for
// StoreInfo and installs the first answer. seen is the topology seq the
// caller found stale: if a newer one was installed meanwhile, or a refresh
// ran very recently, it returns at once.
func (c *Client) refreshTopology(ctx context.Context, seen uint64) {
	cl := c.cl
	cl.refreshMu.Lock()
	defer cl.refreshMu.Unlock()
	t := cl.topology()
	if t.Seq > seen || time.Since(cl.lastRefresh) < minRefreshInterval {
		return
	}
	cl.lastRefresh = time.Now()
	var addrs []string
	now := time.Now()
	for _, n := range t.Nodes {
		if p, err := c.pool(n.Addr); err == nil && !p.failing(now) {
			addrs = append(addrs, n.Addr)
		}
	}
	addrs = append(addrs, c.cfg.Hosts...)
	for _, a := range addrs {
		p, err := c.pool(a)
		if err != nil {
			return // closed
		}
		actx, cancel := context.WithTimeout(ctx, refreshAttempt)
		resp, err := p.kv().StoreInfo(actx, &cairnpb.StoreInfoRequest{})
		cancel()
		if err != nil || resp.GetStore() != c.cfg.Store {
			continue
		}
		if _, err := cl.install(resp); err == nil {
			return
		}
	}
}

// pool returns the connection pool to addr, creating it on first use.
func (c *Client) pool(addr string) (*pool, error) {
	c.mu.RLock()
	p, closed := c.pools[addr], c.closed
	c.mu.RUnlock()
	if p != nil && !closed {
		return p, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed()
	}
	if p := c.pools[addr]; p != nil {
		return p, nil
	}
	p, err := dialPool(addr, c.cfg.NodeConns, c.cfg, c.session)
	if err != nil {
		return nil, &Error{Code: codes.Unavailable, Action: ActionRetry, Msg: err.Error()}
	}
	c.pools[addr] = p
	return p, nil
}

// errClosed is returned for requests on a closed client.
func errClosed() *Error {
	return &Error{Code: codes.Canceled, Action: ActionNone, Msg: "the client is closed"}
}

// moved records what a wrong_shard answer says: major's partition went to
// shard to. If t is still the client's topology, numbers its partitions as
// the server does (partitions) and knows shard to, the client adopts a copy
// of t (same seq) in which the partition belongs to to, and reports true:
// requests go there at once instead of waiting for the admin to publish
// the move. The next topology the store publishes replaces the copy; a
// wrong guess is corrected by the servers like any stale topology.
func (cl *cluster) moved(t *topology.Topology, major []string, to topology.ShardID, partitions uint32) bool {
	if to == 0 || partitions != t.Partitions {
		return false
	}
	if _, ok := t.Shard(to); !ok {
		return false
	}
	p := keys.PartitionOf(keys.Hash(major), t.Partitions)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.topo != t || t.PartitionShard[p] == to {
		return cl.topo != t // another request patched or refreshed it: retry with that
	}
	c := *t
	c.PartitionShard = slices.Clone(t.PartitionShard)
	c.PartitionShard[p] = to
	cl.topo = &c
	return true
}
