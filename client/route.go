package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/topology"
)

// routeKind says how a request finds its shard.
type routeKind int

const (
	routeAny   routeKind = iota // any node of the store (StoreInfo)
	routeKey                    // the shard owning route.major's partition
	routeShard                  // the shard route.shard (store scans)
)

// route says which nodes may serve a request. In cairn lite there is one
// shard on every host and the route is ignored.
type route struct {
	kind  routeKind
	major []string
	shard topology.ShardID
	// write marks a write: it is retried only while certainly not applied.
	write bool
	// leader asks for the shard's leader (writes, ABSOLUTE reads); other
	// reads go to any replica, round robin.
	leader bool
	// stick, when set, names the node to try first and receives the node
	// that answered, so an iterator's pages come from one replica.
	stick *topology.NodeID
	// bounded marks a read that no server waits on (NONE_REQUIRED,
	// ABSOLUTE, StoreInfo): each attempt gets 1/attemptShare of the time
	// left, so a node that hangs (it is stopped, or partitioned with its
	// connection open) costs a share, not the whole timeout.
	bounded bool
}

// attemptShare: a bounded read's attempt gets 1/attemptShare of the time
// left in the operation.
const attemptShare = 3

// boundedRead reports whether reads at consistency c are bounded (see
// route.bounded). TIME_LAG and VERSION reads may wait on the replica for
// their consistency, so their attempts get the whole time left.
func boundedRead(c Consistency) bool {
	return c.kind == cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED || c.kind == cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE
}

// writeRoute routes a write about major path major.
func writeRoute(major []string) route {
	return route{kind: routeKey, major: major, write: true, leader: true}
}

// readRoute routes a read about major path major under consistency c.
func readRoute(major []string, c Consistency) route {
	return route{kind: routeKey, major: major, leader: c.kind == cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE, bounded: boundedRead(c)}
}

// shardRoute routes a read of shard s (a store scan page).
func shardRoute(s topology.ShardID, c Consistency, stick *topology.NodeID) route {
	return route{kind: routeShard, shard: s, leader: c.kind == cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE,
		bounded: boundedRead(c), stick: stick}
}

// infoRoute routes StoreInfo: any node.
var infoRoute = route{kind: routeAny, bounded: true}

// targets returns the shard a request is about (0 for routeAny) and the
// nodes that may serve it, in topology order.
func (rt route) targets(t *topology.Topology) (topology.ShardID, []topology.NodeID, *Error) {
	switch rt.kind {
	case routeKey:
		s := t.ShardForKey(rt.major)
		sh, _ := t.Shard(s) // Validate guarantees every partition's shard exists
		return s, sh.Replicas, nil
	case routeShard:
		sh, ok := t.Shard(rt.shard)
		if !ok {
			return 0, nil, &Error{Code: codes.FailedPrecondition, Kind: KindWrongShard, Action: ActionNone,
				Msg: fmt.Sprintf("shard %d is not in the store's topology (seq %d) any more", rt.shard, t.Seq)}
		}
		return rt.shard, sh.Replicas, nil
	}
	ids := make([]topology.NodeID, len(t.Nodes))
	for i, n := range t.Nodes {
		ids[i] = n.ID
	}
	return 0, ids, nil
}

// choose picks the node for one attempt. A leader route tries the cached
// leader, then the shard's preferred node, then the replicas in order; other
// routes try stick, then the replicas in the read order (home.go). The first
// candidate that is usable (not marked failing) and not avoided (it failed
// earlier in this operation) wins; failing ones come after, so a request
// still goes somewhere when every replica is marked.
func choose(replicas []topology.NodeID, leader bool, cached, preferred, stick topology.NodeID,
	usable map[topology.NodeID]bool, avoid map[topology.NodeID]bool, reads readOrder) topology.NodeID {
	var order []topology.NodeID
	if leader {
		order = append(order, cached, preferred)
		order = append(order, replicas...)
	} else {
		order = reads.append(append(order, stick), replicas)
	}
	order = slices.DeleteFunc(order, func(n topology.NodeID) bool {
		return n == 0 || !slices.Contains(replicas, n)
	})
	for _, n := range order {
		if usable[n] && !avoid[n] {
			return n
		}
	}
	for _, n := range order {
		if !avoid[n] {
			return n
		}
	}
	return order[0]
}

// next is what the client does after a failed attempt.
type next int

const (
	giveUp       next = iota // return the error
	followLeader             // not_leader: go to the named leader, or another replica
	tryElsewhere             // the node could not be reached: mark it, try another replica
	otherReplica             // this replica cannot serve now (rejoining): try another at once
	refreshTopo              // the topology is stale: refresh it, then retry
	retryLater               // transient: back off, then retry
)

// classify decides what follows a failed attempt. A write that may have
// been applied is never retried; every other outcome named here was
// certainly not applied.
func classify(e *Error, write bool) next {
	switch {
	case e.Code == codes.Canceled || e.Code == codes.DeadlineExceeded:
		return giveUp
	case write && e.MaybeApplied:
		return giveUp
	case e.Kind == KindNotLeader:
		return followLeader
	case e.Kind == KindWrongShard || e.Kind == KindStaleTopology:
		return refreshTopo
	case e.Kind == kindShuttingDown || (e.Kind == "" && e.Code == codes.Unavailable):
		return tryElsewhere
	case e.Kind == kindRejoining:
		return otherReplica
	case retryable(e, write):
		return retryLater
	}
	return giveUp
}

// callCluster is call for a replicated store: each attempt goes to a node
// chosen by the route, and the failure decides the next one (see classify).
// Attempts that follow a leader hint or move to another replica go at once;
// after a round in which every reachable replica failed, or a transient
// error, the client backs off as in cairn lite.
func (c *Client) callCluster(parent context.Context, o options, rt route, fn attempt) error {
	ctx, cancel := context.WithTimeout(parent, o.timeout)
	defer cancel()
	avoid := make(map[topology.NodeID]bool)
	var seen tried // made on the first failure: success allocates nothing for it
	backoff := initialBackoff
	var last *Error
	pause, quick := false, 0
	for {
		t := c.cl.topology()
		shard, reps, rerr := rt.targets(t)
		if rerr != nil {
			return rerr
		}
		now := time.Now()
		usable := make(map[topology.NodeID]bool, len(reps))
		for _, id := range reps {
			n, _ := t.Node(id)
			p, err := c.pool(n.Addr)
			if err != nil {
				return err
			}
			usable[id] = !p.failing(now)
		}
		if !slices.ContainsFunc(reps, func(n topology.NodeID) bool { return usable[n] && !avoid[n] }) {
			clear(avoid) // every reachable replica failed this round
			pause = true
		}
		if quick > 2*len(reps) {
			pause = true // hints lead in circles (an election is under way)
		}
		if pause && last != nil {
			if !sleep(ctx, &backoff) {
				return shardFailure(last, shard, reps, rt.leader, seen)
			}
			quick = 0
		}
		pause = false

		var stick topology.NodeID
		if rt.stick != nil {
			stick = *rt.stick
		}
		var preferred topology.NodeID
		if sh, ok := t.Shard(shard); ok {
			preferred = sh.Preferred
		}
		id := choose(reps, rt.leader, c.cl.leader(shard), preferred, stick, usable, avoid, c.readOrder())
		n, _ := t.Node(id)
		p, err := c.pool(n.Addr)
		if err != nil {
			return err
		}
		var sent atomic.Bool
		h := c.header(ctx)
		h.TopologySeq = t.Seq
		kv, err := p.readyKV(ctx, c.cfg.ConnectTimeout)
		if err == nil {
			err = c.attempt(parent, ctx, rt, &sent, kv, h, fn, n)
		}
		if err == nil {
			p.markOK()
			if rt.leader && shard != 0 {
				c.cl.setLeader(shard, id)
			}
			if rt.stick != nil {
				*rt.stick = id
			}
			return nil
		}
		e := convertError(err, rt.write, sent.Load())
		last = e
		if seen == nil {
			seen = make(tried, len(reps))
		}
		seen[id] = e
		quick++
		switch classify(e, rt.write) {
		case giveUp:
			if e.Code == codes.DeadlineExceeded {
				return shardFailure(e, shard, reps, rt.leader, seen)
			}
			return e
		case followLeader:
			avoid[id] = true
			c.cl.forgetLeader(shard, id)
			switch hint := topology.NodeID(e.leaderNode); {
			case hint == 0 || hint == id:
				// No leader known yet: the other replicas are tried, then
				// the client pauses once every one has said so.
			case !slices.Contains(reps, hint):
				c.refreshTopology(ctx, t.Seq) // a leader we do not know of
			case usable[hint]:
				c.cl.setLeader(shard, hint)
				delete(avoid, hint)
			}
		case tryElsewhere:
			p.markFailing(time.Now())
			avoid[id] = true
			c.cl.forgetLeader(shard, id)
		case otherReplica:
			// The node serves, but its replica of this shard rebuilds from
			// its peers: the others serve meanwhile.
			avoid[id] = true
			c.cl.forgetLeader(shard, id)
		case refreshTopo:
			if e.Kind == KindWrongShard && rt.kind == routeKey && c.cl.moved(t, rt.major, topology.ShardID(e.movedTo), e.partitions) {
				continue // the partition moved: its new shard, at once
			}
			c.refreshTopology(ctx, t.Seq)
			if e.Kind == KindWrongShard {
				// The node runs no replica of the shard: it moved, or plan
				// stop-service stopped it (the topology still lists it).
				avoid[id] = true
				c.cl.forgetLeader(shard, id)
			}
			pause = true
		case retryLater:
			pause = true
		}
	}
}

// attempt runs fn once against node n, within the operation's ctx (made
// from parent). The header keeps the operation's deadline, so a server's
// consistency wait is not cut short; a bounded read's attempt is cut by
// the client after its share of the time left, and fails as Unavailable
// (the node did not answer: try another). That attempt's context is made
// from parent, with a deadline before ctx's: it ends when ctx would, and
// costs no registration among ctx's children.
func (c *Client) attempt(parent, ctx context.Context, rt route, sent *atomic.Bool, kv cairnpb.KVClient,
	h *cairnpb.RequestHeader, fn attempt, n topology.Node) error {
	actx, cancel := ctx, context.CancelFunc(func() {})
	var share time.Duration
	if dl, ok := ctx.Deadline(); ok && rt.bounded {
		share = time.Until(dl) / attemptShare
		actx, cancel = context.WithTimeout(parent, share)
	}
	defer cancel()
	err := fn(callContext(actx, sent), kv, h)
	// A bounded attempt (a read) that ends in a deadline or cancellation
	// while the request's own context is alive ran out of its share; gRPC
	// may report that before actx.Err() is visible here.
	cut := actx.Err() != nil || (rt.bounded && (status.Code(err) == codes.DeadlineExceeded || status.Code(err) == codes.Canceled))
	if err != nil && cut && ctx.Err() == nil {
		return &Error{Code: codes.Unavailable, Action: ActionRetry, noAnswer: true,
			Msg: fmt.Sprintf("node %d (%s) did not answer within %v", n.ID, n.Addr, share.Round(time.Millisecond))}
	}
	return err
}

// sleep waits a jittered *backoff, then doubles it up to maxBackoff. It
// returns false, without waiting, if ctx ends first or its deadline leaves
// no room for the wait.
func sleep(ctx context.Context, backoff *time.Duration) bool {
	wait := *backoff/2 + rand.N(*backoff/2+1)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	}
	*backoff = min(2**backoff, maxBackoff)
	return true
}
