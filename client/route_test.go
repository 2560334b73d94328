package client

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/topology"
)

func TestChoose(t *testing.T) {
	reps := []topology.NodeID{1, 2, 3}
	all := map[topology.NodeID]bool{1: true, 2: true, 3: true}
	without := func(ids ...topology.NodeID) map[topology.NodeID]bool {
		m := map[topology.NodeID]bool{1: true, 2: true, 3: true}
		for _, id := range ids {
			delete(m, id)
		}
		return m
	}
	set := func(ids ...topology.NodeID) map[topology.NodeID]bool {
		m := map[topology.NodeID]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	for _, tc := range []struct {
		name                     string
		leader                   bool
		cached, preferred, stick topology.NodeID
		usable, avoid            map[topology.NodeID]bool
		rr                       uint64
		want                     topology.NodeID
	}{
		{"leader: the cached leader", true, 2, 3, 0, all, nil, 0, 2},
		{"leader: unknown, the preferred node", true, 0, 3, 0, all, nil, 0, 3},
		{"leader: cached one failing, the preferred node", true, 2, 3, 0, without(2), nil, 0, 3},
		{"leader: cached one said not leader, the first other", true, 2, 0, 0, all, set(2), 0, 1},
		{"leader: skip avoided and failing", true, 0, 0, 0, without(2), set(1), 0, 3},
		{"leader: only a failing one is left", true, 0, 0, 0, without(2), set(1, 3), 0, 2},
		{"leader: a cached node that holds no replica is ignored", true, 9, 0, 0, all, nil, 0, 1},
		{"leader: every one avoided", true, 2, 0, 0, all, set(1, 2, 3), 0, 2},
		{"read: round robin 0", false, 2, 3, 0, all, nil, 0, 1},
		{"read: round robin 1", false, 2, 3, 0, all, nil, 1, 2},
		{"read: round robin 5", false, 2, 3, 0, all, nil, 5, 3},
		{"read: skip a failing replica", false, 0, 0, 0, without(1), nil, 0, 2},
		{"read: skip an avoided replica", false, 0, 0, 0, all, set(2), 1, 3},
		{"read: stick to the replica of the last page", false, 0, 0, 3, all, nil, 0, 3},
		{"read: leave a failing sticky replica", false, 0, 0, 3, without(3), nil, 0, 1},
		{"read: every one failing", false, 0, 0, 0, map[topology.NodeID]bool{}, nil, 1, 2},
	} {
		got := choose(reps, tc.leader, tc.cached, tc.preferred, tc.stick, tc.usable, tc.avoid, readOrder{spread: true, rr: tc.rr})
		if got != tc.want {
			t.Errorf("%s: choose = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestChooseHome: without SpreadReads a read goes to the client's home
// replica, the first in its ranking, and down the ranking past replicas that
// fail or were avoided; leader routes ignore the ranking. Clients with other
// seeds rank the nodes differently.
func TestChooseHome(t *testing.T) {
	reps := []topology.NodeID{1, 2, 3}
	all := map[topology.NodeID]bool{1: true, 2: true, 3: true}
	homes := map[topology.NodeID]int{}
	for range 60 {
		o := readOrder{seed: maphash.MakeSeed()}
		rank := o.append(nil, reps)
		if len(rank) != 3 || !slices.Contains(rank, 1) || !slices.Contains(rank, 2) || !slices.Contains(rank, 3) {
			t.Fatalf("ranking %v is not a permutation of %v", rank, reps)
		}
		for range 5 {
			if got := choose(reps, false, 0, 0, 0, all, nil, o); got != rank[0] {
				t.Fatalf("read: choose = %d, want the home %d (ranking %v)", got, rank[0], rank)
			}
		}
		homes[rank[0]]++
		if got := choose(reps, false, 0, 0, 0, map[topology.NodeID]bool{rank[1]: true, rank[2]: true}, nil, o); got != rank[1] {
			t.Errorf("read, home failing: choose = %d, want the second ranked %d (ranking %v)", got, rank[1], rank)
		}
		if got := choose(reps, false, 0, 0, 0, all, map[topology.NodeID]bool{rank[0]: true, rank[1]: true}, o); got != rank[2] {
			t.Errorf("read, two avoided: choose = %d, want the third ranked %d (ranking %v)", got, rank[2], rank)
		}
		if got := choose(reps, false, 0, 0, rank[2], all, nil, o); got != rank[2] {
			t.Errorf("read with a sticky replica: choose = %d, want it (%d)", got, rank[2])
		}
		if got := choose(reps, true, 0, 3, 0, all, nil, o); got != 3 {
			t.Errorf("leader route: choose = %d, want the preferred node 3", got)
		}
	}
	// 60 clients all at home on one node: odds 3^-59.
	if len(homes) < 2 {
		t.Errorf("homes of 60 clients: %v; want them spread over the nodes", homes)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		e     Error
		write bool
		want  next
	}{
		{"not leader", Error{Code: codes.FailedPrecondition, Kind: KindNotLeader, Action: ActionRefresh}, true, followLeader},
		{"wrong shard", Error{Code: codes.FailedPrecondition, Kind: KindWrongShard, Action: ActionRefresh}, false, refreshTopo},
		{"dropped write", Error{Code: codes.Unavailable, Kind: KindDropped, Action: ActionRetry}, true, retryLater},
		{"outcome unknown", Error{Code: codes.Unknown, Kind: KindOutcomeUnknown, Action: ActionNone, MaybeApplied: true}, true, giveUp},
		{"ack timeout", Error{Code: codes.DeadlineExceeded, Kind: KindAckTimeout, Action: ActionNone, MaybeApplied: true}, true, giveUp},
		{"refused write", Error{Code: codes.Unavailable, Action: ActionRetry}, true, tryElsewhere},
		{"broken write", Error{Code: codes.Unavailable, Action: ActionRetry, MaybeApplied: true}, true, giveUp},
		{"broken read", Error{Code: codes.Unavailable, Action: ActionRetry}, false, tryElsewhere},
		{"node shutting down", Error{Code: codes.Unavailable, Kind: kindShuttingDown, Action: ActionRetry}, true, tryElsewhere},
		{"replica rejoining", Error{Code: codes.Unavailable, Kind: kindRejoining, Action: ActionRetry}, false, otherReplica},
		{"write to a rejoining replica", Error{Code: codes.Unavailable, Kind: kindRejoining, Action: ActionRetry}, true, otherReplica},
		{"consistency timeout", Error{Code: codes.Unavailable, Kind: KindConsistencyTimeout, Action: ActionRetry}, false, giveUp},
		{"transient read", Error{Code: codes.Unavailable, Kind: "no_leader", Action: ActionRetry}, false, retryLater},
		{"bad input", Error{Code: codes.InvalidArgument, Kind: "invalid_key", Action: ActionFixInput}, false, giveUp},
		{"deadline", Error{Code: codes.DeadlineExceeded, Action: ActionRetry}, false, giveUp},
		{"canceled", Error{Code: codes.Canceled, Action: ActionNone}, false, giveUp},
	} {
		if got := classify(&tc.e, tc.write); got != tc.want {
			t.Errorf("%s: classify = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// fakeCluster is a replicated store of fake nodes. Every node holds a
// replica of every shard; lead names each shard's leader. A node that is
// not the leader answers writes and ABSOLUTE reads with not_leader, naming
// the leader as a real node would.
type fakeCluster struct {
	t     testing.TB
	topo  atomic.Pointer[topology.Topology]
	kvs   map[topology.NodeID]*fakeKV // the live nodes
	addrs map[topology.NodeID]string
	mu    sync.Mutex
	lead  map[topology.ShardID]topology.NodeID
	hint  map[topology.ShardID]topology.NodeID // if set: the leader non-leaders name
}

// newFakeCluster starts n fake nodes holding shards shards; the nodes in
// down get the address given there instead of a fake.
func newFakeCluster(t testing.TB, n, shards int, down map[topology.NodeID]string) *fakeCluster {
	fc := &fakeCluster{t: t, kvs: map[topology.NodeID]*fakeKV{}, addrs: map[topology.NodeID]string{},
		lead: map[topology.ShardID]topology.NodeID{}, hint: map[topology.ShardID]topology.NodeID{}}
	var nodes []topology.Node
	for i := 1; i <= n; i++ {
		id := topology.NodeID(i)
		addr, isDown := down[id]
		if !isDown {
			f := &fakeKV{store: "kvstore"}
			fc.wire(id, f)
			addr, _ = serveFake(t, f)
			fc.kvs[id] = f
		}
		fc.addrs[id] = addr
		nodes = append(nodes, topology.Node{ID: id, Addr: addr})
	}
	topo, err := topology.Build("kvstore", 8, nodes, shards, n)
	if err != nil {
		t.Fatal(err)
	}
	fc.topo.Store(topo)
	for _, s := range topo.Shards {
		fc.lead[s.ID] = s.Preferred
	}
	return fc
}

// silentAddr returns the address of a listener that never accepts: TCP
// connects (the kernel queues the connection) but gRPC's handshake never
// completes, as with a host that stopped answering.
func silentAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	return lis.Addr().String()
}

// open opens a client whose helper host is node id.
func (fc *fakeCluster) open(id topology.NodeID) *Client {
	fc.t.Helper()
	return openFake(fc.t, fc.addrs[id])
}

func (fc *fakeCluster) leader(s topology.ShardID) topology.NodeID {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.lead[s]
}

func (fc *fakeCluster) setLeader(s topology.ShardID, n topology.NodeID) {
	fc.mu.Lock()
	fc.lead[s] = n
	fc.mu.Unlock()
}

// notLeader is node id's answer when it does not lead s.
func (fc *fakeCluster) notLeader(s topology.ShardID) error {
	fc.mu.Lock()
	l, ok := fc.hint[s]
	if !ok {
		l = fc.lead[s]
	}
	fc.mu.Unlock()
	st, _ := status.New(codes.FailedPrecondition, "not the leader").WithDetails(&cairnpb.ErrorDetail{
		Kind: KindNotLeader, Action: cairnpb.ErrorDetail_ACTION_REFRESH, LeaderNode: uint64(l), LeaderAddr: fc.addrs[l]})
	return st.Err()
}

// wire makes f behave as node id.
func (fc *fakeCluster) wire(id topology.NodeID, f *fakeKV) {
	f.info = func() *cairnpb.StoreInfoResponse {
		t := fc.topo.Load()
		resp := &cairnpb.StoreInfoResponse{Store: "kvstore", Partitions: t.Partitions, TopologySeq: t.Seq,
			Topology: t.ToPB(), Node: uint64(id)}
		for _, s := range t.ShardsOn(id) {
			l := fc.leader(s.ID)
			resp.LocalShards = append(resp.LocalShards, &cairnpb.ShardStatus{Shard: uint64(s.ID), Leader: uint64(l), IsLeader: l == id})
		}
		return resp
	}
	f.put = func(_ context.Context, r *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
		s := fc.topo.Load().ShardForKey(r.GetOp().GetKey().GetMajor())
		if fc.leader(s) != id {
			return nil, fc.notLeader(s)
		}
		return &cairnpb.WriteResponse{Result: &cairnpb.OperationResult{Success: true, NewVersion: []byte{byte(id)}}}, nil
	}
	f.get = func(_ context.Context, r *cairnpb.GetRequest) (*cairnpb.GetResponse, error) {
		s := fc.topo.Load().ShardForKey(r.GetKey().GetMajor())
		if r.GetConsistency().GetKind() == cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE && fc.leader(s) != id {
			return nil, fc.notLeader(s)
		}
		return &cairnpb.GetResponse{Found: true, Record: &cairnpb.Record{Key: r.GetKey(), Value: []byte(strconv.Itoa(int(id)))}}, nil
	}
}

// calls returns how many requests (other than StoreInfo) each live node saw.
func (fc *fakeCluster) calls() map[topology.NodeID]int64 {
	out := map[topology.NodeID]int64{}
	for id, f := range fc.kvs {
		out[id] = f.calls.Load()
	}
	return out
}

func (fc *fakeCluster) wantCalls(what string, want map[topology.NodeID]int64) {
	fc.t.Helper()
	got := fc.calls()
	for id := range fc.kvs {
		if got[id] != want[id] {
			fc.t.Errorf("%s: requests per node %v, want %v", what, got, want)
			return
		}
	}
}

func TestRouteOpenToCachedLeader(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, nil)
	fc.setLeader(1, 3) // not the preferred node: the helper's StoreInfo says so
	c := fc.open(1)
	if c.cl == nil {
		t.Fatal("a StoreInfo answer with a topology did not make a cluster client")
	}
	ctx := context.Background()
	for range 3 {
		if _, err := c.Put(ctx, MustParseKey("/a"), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	fc.wantCalls("puts", map[topology.NodeID]int64{3: 3})
	if h := fc.kvs[3].headers[0]; h.GetTopologySeq() != 1 || h.GetStore() != "kvstore" {
		t.Errorf("header %v, want topology_seq 1", h)
	}
}

func TestRouteNotLeaderFollowsHint(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, nil)
	fc.setLeader(1, 1)
	c := fc.open(1)
	fc.setLeader(1, 3) // leadership moves after the client cached node 1
	ctx := context.Background()
	v, err := c.Put(ctx, MustParseKey("/a"), []byte("v"))
	if err != nil || v.String() != "03" {
		t.Fatalf("Put = %v, %v; want node 3's version", v, err)
	}
	fc.wantCalls("first put", map[topology.NodeID]int64{1: 1, 3: 1})
	if l := c.cl.leader(1); l != 3 {
		t.Errorf("cached leader %d, want 3", l)
	}
	// ABSOLUTE reads follow the same cache.
	if _, _, err := c.Get(ctx, MustParseKey("/a"), WithConsistency(Absolute)); err != nil {
		t.Fatal(err)
	}
	fc.wantCalls("then an ABSOLUTE read", map[topology.NodeID]int64{1: 1, 3: 2})
}

func TestRouteNoLeaderKnown(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, nil)
	c := fc.open(1)
	fc.setLeader(1, 0) // an election is under way
	go func() {
		time.Sleep(100 * time.Millisecond)
		fc.setLeader(1, 2)
	}()
	start := time.Now()
	v, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"))
	if err != nil || v.String() != "02" {
		t.Fatalf("Put = %v, %v; want node 2's version", v, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Put took %v; want it soon after the election (100ms)", d)
	}
	total := int64(0)
	for _, n := range fc.calls() {
		total += n
	}
	// Pauses between rounds keep the search from spinning.
	if total > 30 {
		t.Errorf("%d attempts during a 100ms election; want the client to back off between rounds", total)
	}
}

func TestRouteDeadLeader(t *testing.T) {
	// Node 1 is the shard's preferred node and, in the helper's view, its
	// leader, but nothing listens there. The replicas elect node 3, and node
	// 2 still names node 1 for a while.
	fc := newFakeCluster(t, 3, 1, map[topology.NodeID]string{1: deadAddr(t)})
	fc.setLeader(1, 1)
	c := fc.open(2)
	fc.setLeader(1, 3)
	fc.mu.Lock()
	fc.hint[1] = 1
	fc.mu.Unlock()
	ctx := context.Background()
	v, err := c.Put(ctx, MustParseKey("/a"), []byte("v"))
	if err != nil || v.String() != "03" {
		t.Fatalf("Put = %v, %v; want node 3's version", v, err)
	}
	if _, err := c.Put(ctx, MustParseKey("/a"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	fc.wantCalls("two puts", map[topology.NodeID]int64{2: 1, 3: 2})

	// NONE_REQUIRED reads skip the dead replica once it failed.
	before := AttemptsByAddr(c)[fc.addrs[1]]
	for range 30 {
		if _, _, err := c.Get(ctx, MustParseKey("/a")); err != nil {
			t.Fatal(err)
		}
	}
	if n := AttemptsByAddr(c)[fc.addrs[1]] - before; n > 0 {
		t.Errorf("%d reads went to the dead node while it was marked failing", n)
	}
}

func TestRouteUnansweringNode(t *testing.T) {
	// Node 1 leads in the helper's view, but its host stopped answering:
	// connecting to it hangs. The client must give up on it after
	// ConnectTimeout, not at the operation's deadline.
	fc := newFakeCluster(t, 3, 1, map[topology.NodeID]string{1: silentAddr(t)})
	fc.setLeader(1, 1)
	c, err := Open(context.Background(), Config{Hosts: []string{fc.addrs[2]}, Store: "kvstore",
		Timeout: 10 * time.Second, ConnectTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fc.setLeader(1, 3)
	start := time.Now()
	v, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"))
	if err != nil || v.String() != "03" {
		t.Fatalf("Put = %v, %v; want node 3's version", v, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Put took %v; want about ConnectTimeout (200ms)", d)
	}
	start = time.Now()
	for range 10 {
		if _, _, err := c.Get(context.Background(), MustParseKey("/a")); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("10 reads took %v; want the unanswering replica passed over", d)
	}
}

// TestRouteReadsHome: a client's NONE_REQUIRED reads of a shard all go to
// one replica; another client's may go to another.
func TestRouteReadsHome(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, nil)
	ctx := context.Background()
	homes := map[topology.NodeID]bool{}
	for i := range 20 {
		c := fc.open(1)
		before := fc.calls()
		for range 10 {
			if _, _, err := c.Get(ctx, MustParseKey("/a"), WithConsistency(NoneRequired)); err != nil {
				t.Fatal(err)
			}
		}
		after := fc.calls()
		var served []topology.NodeID
		for id := range fc.kvs {
			if n := after[id] - before[id]; n == 10 {
				homes[id] = true
				served = append(served, id)
			} else if n != 0 {
				served = append(served, id)
			}
		}
		if len(served) != 1 {
			t.Fatalf("client %d: reads went to nodes %v (before %v, after %v); want one home", i, served, before, after)
		}
	}
	if len(homes) < 2 { // odds 3^-19
		t.Errorf("20 clients' homes: %v; want them spread over the nodes", homes)
	}
}

// TestRouteReadSpread: with SpreadReads, NONE_REQUIRED reads go round robin.
func TestRouteReadSpread(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, nil)
	c, err := Open(context.Background(), Config{Hosts: []string{fc.addrs[1]}, Store: "kvstore", SpreadReads: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	for range 30 {
		if _, _, err := c.Get(ctx, MustParseKey("/a"), WithConsistency(NoneRequired)); err != nil {
			t.Fatal(err)
		}
	}
	fc.wantCalls("NONE_REQUIRED reads", map[topology.NodeID]int64{1: 10, 2: 10, 3: 10})
	lead := fc.leader(1)
	for range 10 {
		if _, _, err := c.Get(ctx, MustParseKey("/a"), WithConsistency(Absolute)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[topology.NodeID]int64{1: 10, 2: 10, 3: 10}
	want[lead] += 10
	fc.wantCalls("then ABSOLUTE reads", want)
}

func TestRouteWrongShardRefreshesTopology(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, nil)
	c := fc.open(1)
	// The store moves the shard to nodes 2 and 3 (topology seq 2); node 1
	// no longer holds it.
	old := fc.topo.Load()
	moved := *old
	moved.Seq = 2
	moved.Shards = []topology.Shard{{ID: 1, Replicas: []topology.NodeID{2, 3}, Preferred: 2, Origin: 1}}
	fc.topo.Store(&moved)
	fc.setLeader(1, 2)
	fc.kvs[1].put = func(context.Context, *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
		return nil, serverError(codes.FailedPrecondition, KindWrongShard, cairnpb.ErrorDetail_ACTION_REFRESH, false)
	}
	infos := fc.kvs[1].infos.Load() + fc.kvs[2].infos.Load() + fc.kvs[3].infos.Load()
	v, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"))
	if err != nil || v.String() != "02" {
		t.Fatalf("Put = %v, %v; want node 2's version", v, err)
	}
	if n := fc.kvs[1].infos.Load() + fc.kvs[2].infos.Load() + fc.kvs[3].infos.Load() - infos; n != 1 {
		t.Errorf("%d StoreInfo calls, want 1 topology refresh", n)
	}
	if seq := c.cl.topology().Seq; seq != 2 {
		t.Errorf("topology seq %d after the refresh, want 2", seq)
	}
	f := fc.kvs[2]
	if h := f.headers[len(f.headers)-1]; h.GetTopologySeq() != 2 {
		t.Errorf("retried put carried topology_seq %d, want 2", h.GetTopologySeq())
	}
}

func TestRouteWriteOutcomes(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		code     codes.Code
		action   cairnpb.ErrorDetail_Action
		maybe    bool
		attempts int64 // at the leader
		wantErr  error
	}{
		{KindOutcomeUnknown, codes.Unknown, cairnpb.ErrorDetail_ACTION_NONE, true, 1, ErrOutcomeUnknown},
		{KindAckTimeout, codes.DeadlineExceeded, cairnpb.ErrorDetail_ACTION_NONE, true, 1, ErrOutcomeUnknown},
		{KindDropped, codes.Unavailable, cairnpb.ErrorDetail_ACTION_RETRY, false, 2, nil},
		{kindShuttingDown, codes.Unavailable, cairnpb.ErrorDetail_ACTION_RETRY, false, 1, nil},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			fc := newFakeCluster(t, 3, 1, nil)
			lead := fc.leader(1)
			c := fc.open(lead)
			f := fc.kvs[lead]
			var answered atomic.Bool
			f.put = func(context.Context, *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
				if !answered.Swap(true) {
					if tc.kind == kindShuttingDown {
						fc.setLeader(1, lead%3+1) // a stopping leader hands over
					}
					return nil, serverError(tc.code, tc.kind, tc.action, tc.maybe)
				}
				return &cairnpb.WriteResponse{Result: &cairnpb.OperationResult{Success: true}}, nil
			}
			_, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"))
			if tc.wantErr == nil && err != nil {
				t.Fatalf("Put = %v; want it retried to success", err)
			}
			if tc.wantErr != nil {
				var e *Error
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &e) || !e.MaybeApplied || e.Kind != tc.kind {
					t.Fatalf("Put = %v; want %v of kind %s with MaybeApplied", err, tc.wantErr, tc.kind)
				}
			}
			if n := f.calls.Load(); n != tc.attempts {
				t.Errorf("%d attempts at the leader, want %d", n, tc.attempts)
			}
		})
	}
}

func TestRouteStoreIteratorByShard(t *testing.T) {
	fc := newFakeCluster(t, 3, 2, nil)
	var mu sync.Mutex
	served := map[topology.ShardID]map[topology.NodeID]int{}
	for id, f := range fc.kvs {
		f.storeScan = func(_ context.Context, r *cairnpb.StoreScanRequest) (*cairnpb.StoreScanResponse, error) {
			s := topology.ShardID(r.GetShard())
			if s == 0 {
				return nil, status.Error(codes.InvalidArgument, "a cluster scan must name its shard")
			}
			mu.Lock()
			if served[s] == nil {
				served[s] = map[topology.NodeID]int{}
			}
			served[s][id]++
			mu.Unlock()
			var recs []*cairnpb.Record
			for i := range 5 {
				recs = append(recs, &cairnpb.Record{Key: &cairnpb.Key{Major: []string{fmt.Sprintf("s%d", s), strconv.Itoa(i)}}})
			}
			page, next := pager(recs, r.GetBatchSize(), r.GetResume())
			return &cairnpb.StoreScanResponse{Records: page, Resume: next}, nil
		}
	}
	c := fc.open(1)
	var got []string
	for k, err := range c.StoreKeysIterator(context.Background(), 2, nil, nil, 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k.String())
	}
	if len(got) != 10 || got[0] != "/s1/0" || got[9] != "/s2/4" {
		t.Errorf("keys %v, want shard 1's five then shard 2's five", got)
	}
	for s, by := range served {
		if len(by) != 1 {
			t.Errorf("shard %d's pages came from nodes %v; want one replica", s, by)
		}
		for _, n := range by {
			if n != 3 {
				t.Errorf("shard %d: %d pages, want 3", s, n)
			}
		}
	}
}

func TestRouteCloseWhileBusy(t *testing.T) {
	fc := newFakeCluster(t, 3, 2, nil)
	c := fc.open(1)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				key := Key{Major: []string{strconv.Itoa(g), strconv.Itoa(i)}}
				_, _, err := c.Get(context.Background(), key)
				if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrUnavailable) {
					t.Errorf("Get after Close = %v; want a cancellation or unavailable error", err)
					return
				}
			}
		})
	}
	time.Sleep(5 * time.Millisecond) // let some requests start
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	wg.Wait()
}

func BenchmarkChoose(b *testing.B) {
	reps := []topology.NodeID{1, 2, 3}
	usable := map[topology.NodeID]bool{1: true, 2: true, 3: true}
	avoid := map[topology.NodeID]bool{}
	seed := maphash.MakeSeed()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		choose(reps, i%2 == 0, 2, 1, 0, usable, avoid, readOrder{seed: seed})
	}
}

func TestRouteHungNode(t *testing.T) {
	// The client's home replica is stopped: its connection stays open but
	// it never answers.
	fc := newFakeCluster(t, 3, 1, nil)
	c := fc.open(2)
	home := c.readOrder().append(nil, []topology.NodeID{1, 2, 3})[0]
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	hang := func(ctx context.Context, _ *cairnpb.GetRequest) (*cairnpb.GetResponse, error) {
		select {
		case <-ctx.Done():
		case <-hung:
		}
		return nil, status.Error(codes.Unavailable, "stopped")
	}
	fc.kvs[home].get = hang
	ctx := context.Background()
	start := time.Now()
	for i := range 6 {
		if _, _, err := c.Get(ctx, MustParseKey("/a"), WithTimeout(time.Second)); err != nil {
			t.Fatalf("NONE_REQUIRED read %d with node %d (the client's home) hung: %v", i, home, err)
		}
	}
	if d := time.Since(start); d > 800*time.Millisecond {
		t.Errorf("6 NONE_REQUIRED reads took %v; want one attempt's share (1s/3) lost to the hung node, then it passed over", d)
	}
	if n := fc.kvs[home].calls.Load(); n != 1 {
		t.Errorf("%d reads went to the hung node, want 1 (then it is marked failing)", n)
	}

	// The leader hangs: ABSOLUTE reads and writes must wait for the
	// replicas to elect another, and the reads are served by it. (The write
	// sent to the hung leader, if any, is MaybeApplied: not tested here.)
	fc2 := newFakeCluster(t, 3, 1, nil)
	lead := fc2.leader(1)
	c2 := fc2.open(lead%3 + 1)
	fc2.kvs[lead].get = hang
	go func() {
		time.Sleep(300 * time.Millisecond) // the election
		fc2.setLeader(1, lead%3+1)
	}()
	start = time.Now()
	rec, _, err := c2.Get(ctx, MustParseKey("/a"), WithConsistency(Absolute), WithTimeout(3*time.Second))
	if err != nil || string(rec.Value) != strconv.Itoa(int(lead%3+1)) {
		t.Fatalf("ABSOLUTE read with the leader hung = %q, %v; want the new leader's answer", rec.Value, err)
	}
	t.Logf("ABSOLUTE read with the leader hung: %v", time.Since(start))
}

// TestRouteStoppedReplicaTriesAnother: the cached leader's replica is
// stopped (plan stop-service) while the topology still lists it; its
// wrong_shard answer sends the client to another replica.
func TestRouteStoppedReplicaTriesAnother(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, nil)
	fc.setLeader(1, 1)
	c := fc.open(1)
	fc.setLeader(1, 2) // node 1 handed over before its replica stopped
	fc.kvs[1].put = func(context.Context, *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
		return nil, serverError(codes.FailedPrecondition, KindWrongShard, cairnpb.ErrorDetail_ACTION_REFRESH, false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := c.Put(ctx, MustParseKey("/a"), []byte("v"))
	if err != nil || v.String() != "02" {
		t.Fatalf("Put = %v, %v; want node 2's version", v, err)
	}
	if n := fc.kvs[1].calls.Load(); n != 1 {
		t.Errorf("%d requests to the stopped replica, want 1", n)
	}
}

// BenchmarkCallCluster measures callCluster's own work on the success path
// (routing, pool lookup, header): the attempt answers at once, with no RPC.
func BenchmarkCallCluster(b *testing.B) {
	fc := newFakeCluster(b, 3, 1, nil)
	c := fc.open(1)
	ctx := context.Background()
	o := c.cfg.resolve(nil)
	rt := writeRoute([]string{"a"})
	ok := func(context.Context, cairnpb.KVClient, *cairnpb.RequestHeader) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := c.callCluster(ctx, o, rt, ok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetCluster is a Get against a three-node fake cluster over
// loopback gRPC.
func BenchmarkGetCluster(b *testing.B) {
	fc := newFakeCluster(b, 3, 1, nil)
	c := fc.open(1)
	ctx := context.Background()
	k := MustParseKey("/a")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Get(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
}

// A wrong_shard answer that names the shard a partition moved to sends the
// write there at once, without a topology refresh, and later requests for
// that partition go straight to the new shard.
func TestRouteWrongShardFollowsMove(t *testing.T) {
	fc := newFakeCluster(t, 2, 2, nil)
	fc.setLeader(1, 1)
	fc.setLeader(2, 2)
	c := fc.open(1)
	key := MustParseKey("/a")
	from := fc.topo.Load().ShardForKey(key.Major)
	to := 3 - from
	src, dst := fc.kvs[topology.NodeID(from)], fc.kvs[topology.NodeID(to)]
	src.put = func(context.Context, *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
		st, _ := status.New(codes.FailedPrecondition, "moved").WithDetails(&cairnpb.ErrorDetail{
			Kind: KindWrongShard, Action: cairnpb.ErrorDetail_ACTION_REFRESH, MovedToShard: uint64(to), Partitions: 8, TopologySeq: 1})
		return nil, st.Err()
	}
	dst.put = func(context.Context, *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
		return &cairnpb.WriteResponse{Result: &cairnpb.OperationResult{Success: true, NewVersion: []byte{byte(to)}}}, nil
	}
	infos := src.infos.Load() + dst.infos.Load()
	for i := range 3 {
		v, err := c.Put(context.Background(), key, []byte("v"))
		if err != nil || v.String() != fmt.Sprintf("%02x", to) {
			t.Fatalf("Put %d = %v, %v; want the version of node %d, the new shard's leader", i, v, err, to)
		}
	}
	if n := src.infos.Load() + dst.infos.Load() - infos; n != 0 {
		t.Errorf("%d StoreInfo calls, want none: the answer named the new shard", n)
	}
	if got := src.calls.Load(); got != 1 {
		t.Errorf("the old shard's leader saw %d puts, want 1 (later puts go to the new shard)", got)
	}
	if tp := c.cl.topology(); tp.Seq != 1 || tp.ShardForKey(key.Major) != to {
		t.Errorf("client topology seq %d routes the key to shard %d; want seq 1 and shard %d", tp.Seq, tp.ShardForKey(key.Major), to)
	}
	// A partition count that differs from the client's (a split): refresh.
	if c.cl.moved(c.cl.topology(), []string{"b"}, from, 16) {
		t.Error("moved accepted a wrong_shard numbered with another partition count")
	}
}
