package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// testCluster is a replicated store of in-process storage nodes.
type testCluster struct {
	sns  []*node.SN
	cfgs []node.SNConfig // sns[i] was started with cfgs[i]
	topo *topology.Topology
}

// startCluster starts n storage nodes on free 127.0.0.1 ports holding
// shards shards of rf replicas, with a 20ms Raft tick and a 200ms shutdown
// grace. They stop when the test ends.
func startCluster(t *testing.T, n, shards, rf int) *testCluster {
	return startClusterGrace(t, n, shards, rf, 200*time.Millisecond)
}

// startClusterGrace is startCluster with the nodes' ShutdownGrace: how long
// SN.Close lets requests in flight finish before it cuts connections.
func startClusterGrace(t *testing.T, n, shards, rf int, grace time.Duration) *testCluster {
	t.Helper()
	var nodes []topology.Node
	for i, addr := range freeAddrs(t, n) {
		nodes = append(nodes, topology.Node{ID: topology.NodeID(i + 1), Addr: addr})
	}
	topo, err := topology.Build("kvstore", 20, nodes, shards, rf)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCluster{topo: topo}
	for _, nd := range nodes {
		root := t.TempDir()
		if err := files.WriteJSON(files.Default, filepath.Join(root, topology.FileName), topo); err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(nd.Addr)
		cfg := node.DefaultSNConfig(root)
		cfg.Host = host
		cfg.Port, _ = strconv.Atoi(port)
		cfg.MinFreeBytes, cfg.CacheBytes, cfg.TickInterval = 0, 8<<20, 20*time.Millisecond
		cfg.ShutdownGrace = grace
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: logLevel}))
		tc.cfgs = append(tc.cfgs, cfg)
		tc.sns = append(tc.sns, nil)
		tc.restart(t, nd.ID)
	}
	return tc
}

// restart starts node id again, on its root and port.
func (tc *testCluster) restart(t *testing.T, id topology.NodeID) {
	t.Helper()
	i := int(id) - 1
	sn, err := node.StartSN(context.Background(), tc.cfgs[i])
	if err != nil {
		t.Fatalf("start node %d: %v", id, err)
	}
	t.Cleanup(func() { _ = sn.Close() })
	tc.sns[i] = sn
}

// freeAddrs returns n distinct free addresses on 127.0.0.1. Their
// listeners stay open until all n are chosen: a port freed at once can be
// handed out again by the next listen (a clean-clone CI run got one port
// twice, and a topology with one address twice).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out
}

var logLevel = slog.LevelError

// open opens a client with the first node as its only helper host.
func (tc *testCluster) open(t *testing.T, timeout time.Duration) *client.Client {
	t.Helper()
	return tc.openConfig(t, client.Config{Timeout: timeout})
}

// openConfig opens a client with cfg, its Hosts and Store set here.
func (tc *testCluster) openConfig(t *testing.T, cfg client.Config) *client.Client {
	t.Helper()
	cfg.Hosts, cfg.Store = []string{tc.sns[0].Addr()}, "kvstore"
	c, err := client.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sn returns the node with id.
func (tc *testCluster) sn(id topology.NodeID) *node.SN {
	for _, sn := range tc.sns {
		if sn.ID() == id {
			return sn
		}
	}
	return nil
}

// waitLeader waits until shard s has had the same leader for a second and
// returns it (see waitLeaderAt).
func (tc *testCluster) waitLeader(t *testing.T, s topology.ShardID) *node.SN {
	t.Helper()
	addrs := make(map[topology.NodeID]string)
	for _, sn := range tc.sns {
		addrs[sn.ID()] = sn.Addr()
	}
	return tc.sn(waitLeaderAt(t, addrs, s))
}

// waitLeaderAt asks the nodes at addrs until shard s has had the same
// leader for a second (the nodes may move leadership to the shard's
// preferred node once after the first election), and returns it.
func waitLeaderAt(t *testing.T, addrs map[topology.NodeID]string, s topology.ShardID) topology.NodeID {
	t.Helper()
	kvs := make(map[topology.NodeID]cairnpb.KVClient)
	for id, addr := range addrs {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		kvs[id] = cairnpb.NewKVClient(cc)
	}
	var lead topology.NodeID
	var since time.Time
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var now topology.NodeID
		for id, kv := range kvs {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			resp, err := kv.StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
			cancel()
			for _, st := range resp.GetLocalShards() {
				if err == nil && topology.ShardID(st.GetShard()) == s && st.GetIsLeader() {
					now = id
				}
			}
		}
		switch {
		case now == 0:
			lead = 0
		case now != lead:
			lead, since = now, time.Now()
		case time.Since(since) > time.Second:
			return lead
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
	}
	t.Fatalf("shard %d has no stable leader after 20s", s)
	return 0
}

// keysOnShards returns count keys /<prefix>/<i> per shard of topo.
func keysOnShards(topo *topology.Topology, prefix string, count int) map[topology.ShardID][]client.Key {
	out := make(map[topology.ShardID][]client.Key)
	for i := 0; len(out) < len(topo.Shards) || !full(out, count); i++ {
		k := client.Key{Major: []string{prefix, strconv.Itoa(i)}}
		s := topo.ShardForKey(k.Major)
		if len(out[s]) < count {
			out[s] = append(out[s], k)
		}
	}
	return out
}

func full(m map[topology.ShardID][]client.Key, count int) bool {
	for _, ks := range m {
		if len(ks) < count {
			return false
		}
	}
	return true
}

// TestClusterOperations runs every kind of operation against a store of two
// shards on three nodes, with keys on both shards.
func TestClusterOperations(t *testing.T) {
	tc := startCluster(t, 3, 2, 3)
	c := tc.open(t, 10*time.Second)
	ctx := context.Background()

	info, err := c.StoreInfo(ctx)
	if err != nil || info.Store != "kvstore" || info.TopologySeq != tc.topo.Seq {
		t.Fatalf("StoreInfo = %+v, %v", info, err)
	}
	byShard := keysOnShards(tc.topo, "k", 10)
	want := map[string]string{}
	for s, ks := range byShard {
		for _, key := range ks {
			v := fmt.Sprintf("v-%d-%s", s, key)
			ver, err := c.Put(ctx, key, []byte(v))
			if err != nil {
				t.Fatalf("Put(%v) on shard %d: %v", key, s, err)
			}
			want[key.String()] = v
			for _, cons := range []client.Consistency{client.Absolute, client.AtVersion(ver, 5*time.Second)} {
				rec, found, err := c.Get(ctx, key, client.WithConsistency(cons))
				if err != nil || !found || string(rec.Value) != v {
					t.Fatalf("Get(%v, %v) = %q, %v, %v; want %q", key, cons, rec.Value, found, err, v)
				}
			}
		}
	}

	// Multi-key operations within one major path, one per shard.
	for s, ks := range byShard {
		parent := ks[0]
		ops := []client.Op{
			client.OpPut(client.Key{Major: parent.Major, Minor: []string{"a"}}, []byte("a")),
			client.OpPut(client.Key{Major: parent.Major, Minor: []string{"b"}}, []byte("b")),
		}
		res, err := c.Execute(ctx, ops)
		if err != nil || len(res) != 2 || !res[0].Done || !res[1].Done {
			t.Fatalf("Execute on shard %d = %+v, %v", s, res, err)
		}
		recs, err := c.MultiGet(ctx, parent, nil, 0, client.WithConsistency(client.Absolute))
		if err != nil || len(recs) != 3 {
			t.Fatalf("MultiGet(%v) on shard %d = %d records, %v; want 3", parent, s, len(recs), err)
		}
		var n int
		for _, err := range c.MultiGetIterator(ctx, client.Forward, 1, parent, nil, 0, client.WithConsistency(client.Absolute)) {
			if err != nil {
				t.Fatalf("MultiGetIterator on shard %d: %v", s, err)
			}
			n++
		}
		if n != 3 {
			t.Errorf("MultiGetIterator on shard %d: %d records, want 3", s, n)
		}
		if d, err := c.MultiDelete(ctx, parent, nil, client.DescendantsOnly); err != nil || d != 2 {
			t.Fatalf("MultiDelete on shard %d = %d, %v; want 2", s, d, err)
		}
	}

	// The store iterator sees every key of both shards once, at every
	// consistency and page size. A NONE_REQUIRED scan may be served by a
	// replica that has not applied the last writes yet, so it is retried
	// until the replicas have caught up.
	scan := func(cons client.Consistency, batch int) error {
		seen := map[string]string{}
		for rec, err := range c.StoreIterator(ctx, batch, nil, nil, 0, client.WithConsistency(cons)) {
			if err != nil {
				t.Fatalf("StoreIterator(%v, batch %d): %v", cons, batch, err)
			}
			if _, dup := seen[rec.Key.String()]; dup {
				t.Errorf("StoreIterator(%v, batch %d) returned %v twice", cons, batch, rec.Key)
			}
			seen[rec.Key.String()] = string(rec.Value)
		}
		if !maps.Equal(seen, want) {
			return fmt.Errorf("StoreIterator(%v, batch %d) returned %d records %v, want %d %v", cons, batch, len(seen), seen, len(want), want)
		}
		return nil
	}
	for _, batch := range []int{3, 1000} {
		if err := scan(client.Absolute, batch); err != nil {
			t.Error(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for err := scan(client.NoneRequired, batch); err != nil; err = scan(client.NoneRequired, batch) {
			if time.Now().After(deadline) {
				t.Errorf("after 10s: %v", err)
				break
			}
			time.Sleep(10 * time.Millisecond) // waiting for followers to apply, with a deadline
		}
	}
	parent := client.MustParseKey("/k")
	n := 0
	for _, err := range c.StoreKeysIterator(ctx, 4, &parent, nil, 0, client.WithConsistency(client.Absolute)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("StoreKeysIterator under /k: %d keys, want %d", n, len(want))
	}
}

// TestClusterReadsSpread: a client's NONE_REQUIRED reads go to its home
// replica, or with SpreadReads over all of a shard's replicas; ABSOLUTE
// reads and writes go to the leader only.
func TestClusterReadsSpread(t *testing.T) {
	tc := startCluster(t, 3, 1, 3)
	leader := tc.waitLeader(t, 1)
	ctx := context.Background()
	key := client.MustParseKey("/spread/-/x")
	const reads = 300
	readAll := func(c *client.Client) map[string]int64 {
		before := client.AttemptsByAddr(c)
		for range reads {
			if _, _, err := c.Get(ctx, key, client.WithConsistency(client.NoneRequired)); err != nil {
				t.Fatal(err)
			}
		}
		after := client.AttemptsByAddr(c)
		for a := range after {
			after[a] -= before[a]
		}
		return after
	}

	home := tc.open(t, 10*time.Second)
	if _, err := home.Put(ctx, key, []byte("v")); err != nil {
		t.Fatal(err)
	}
	got := readAll(home)
	t.Logf("default client, NONE_REQUIRED reads per node: %v", got)
	if a := client.HomeAddr(home, key); got[a] != reads {
		t.Errorf("the client's home %s served %d of %d NONE_REQUIRED reads (%v); want all", a, got[a], reads, got)
	}

	c := tc.openConfig(t, client.Config{Timeout: 10 * time.Second, SpreadReads: true})
	got = readAll(c)
	for _, sn := range tc.sns {
		t.Logf("SpreadReads, node %d: %d of %d NONE_REQUIRED reads", sn.ID(), got[sn.Addr()], reads)
		if got[sn.Addr()] < reads/5 {
			t.Errorf("SpreadReads: node %d served %d of %d NONE_REQUIRED reads; want them spread over the 3 replicas", sn.ID(), got[sn.Addr()], reads)
		}
	}

	// Leadership may still move once; after that everything goes to the leader.
	for range 20 {
		if _, _, err := c.Get(ctx, key, client.WithConsistency(client.Absolute)); err != nil {
			t.Fatal(err)
		}
	}
	before := client.AttemptsByAddr(c)
	for i := range 50 {
		if _, _, err := c.Get(ctx, key, client.WithConsistency(client.Absolute)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Put(ctx, client.MustParseKey(fmt.Sprintf("/spread/-/%d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	after := client.AttemptsByAddr(c)
	if got := after[leader.Addr()] - before[leader.Addr()]; got != 100 {
		t.Errorf("the leader (node %d) saw %d of 100 ABSOLUTE reads and writes; attempts before %v after %v",
			leader.ID(), got, before, after)
	}
}

// TestClusterLeaderFailover closes a shard's leader (SN.Close, which hands
// leadership off first) in the middle of a write loop, gracefully (requests
// in flight finish) and abruptly (they are cut after no grace). See
// runFailover for what the application must see; TestProcessLeaderCrash
// kills a leader process instead.
func TestClusterLeaderFailover(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace time.Duration
	}{{"graceful", 200 * time.Millisecond}, {"abrupt", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			cl := startClusterGrace(t, 3, 2, 3, tc.grace)
			victim := cl.waitLeader(t, 1)
			c := cl.open(t, 10*time.Second)
			runFailover(t, c, func() {
				t.Logf("closing node %d, the leader of shard 1", victim.ID())
				start := time.Now()
				if err := victim.Close(); err != nil {
					t.Logf("Close: %v", err)
				}
				t.Logf("node %d closed in %v", victim.ID(), time.Since(start))
			})
		})
	}
}

// runFailover runs four writers and two ABSOLUTE readers against c, calls
// kill once 200 writes are acknowledged, and stops when each writer has done
// 100 more. The writers must see only latency, or, for writes cut in flight,
// MaybeApplied errors; every acknowledged write must be readable at
// ABSOLUTE, during the failover and after it; and no write may be applied
// twice (each is a PutIfAbsent of a fresh key, so a second application
// would report Done false).
func runFailover(t *testing.T, c *client.Client, kill func()) {
	t.Helper()
	ctx := context.Background()
	type ack struct {
		key     client.Key
		version client.Version
	}
	var (
		mu       sync.Mutex
		acked    []ack
		maybe    []client.Key
		maybeErr []error
		failures []error
		slowest  time.Duration
		reads    int
	)
	killed := make(chan struct{})
	stop := make(chan struct{})
	var writers, readers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			after := 0
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-killed:
					if after++; after > 100 {
						return
					}
				default:
				}
				key := client.Key{Major: []string{"fo", strconv.Itoa(w), strconv.Itoa(i)}}
				start := time.Now()
				res, err := c.PutIfAbsent(ctx, key, []byte("v"))
				took := time.Since(start)
				mu.Lock()
				slowest = max(slowest, took)
				switch {
				case err == nil && !res.Done:
					failures = append(failures, fmt.Errorf("PutIfAbsent(%v) was not done: applied twice?", key))
				case err == nil:
					acked = append(acked, ack{key, res.Version})
				case errors.Is(err, client.ErrOutcomeUnknown):
					maybe = append(maybe, key)
					maybeErr = append(maybeErr, err)
				default:
					failures = append(failures, fmt.Errorf("PutIfAbsent(%v) after %v: %w", key, took, err))
				}
				mu.Unlock()
			}
		})
	}
	// Readers check, all along, that an acknowledged write is visible to an
	// ABSOLUTE read.
	for r := range 2 {
		readers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				if len(acked) == 0 {
					mu.Unlock()
					time.Sleep(time.Millisecond) // nothing to read yet
					continue
				}
				a := acked[(i*7+r)%len(acked)]
				mu.Unlock()
				rec, found, err := c.Get(ctx, a.key, client.WithConsistency(client.Absolute))
				mu.Lock()
				reads++
				if err != nil || !found || string(rec.Version) != string(a.version) {
					failures = append(failures, fmt.Errorf("ABSOLUTE read of acknowledged %v: found %v, version %v (want %v), %v",
						a.key, found, rec.Version, a.version, err))
				}
				mu.Unlock()
			}
		})
	}
	waitFor(t, 20*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 200 })
	mu.Lock()
	slowest = 0
	mu.Unlock()
	kill()
	close(killed)
	done := make(chan struct{})
	go func() { writers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Error("the writers did not finish 100 writes each within 60s of the kill")
	}
	close(stop)
	writers.Wait()
	readers.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d writes acknowledged, %d MaybeApplied, %d ABSOLUTE reads, %d failures; slowest write after the kill: %v",
		len(acked), len(maybe), reads, len(failures), slowest)
	for _, err := range failures {
		t.Error(err)
	}
	if slowest > 5*time.Second {
		t.Errorf("a write took %v across the failover; want the new leader to serve within a few seconds", slowest)
	}
	for _, a := range acked {
		rec, found, err := c.Get(ctx, a.key, client.WithConsistency(client.Absolute))
		if err != nil || !found || string(rec.Version) != string(a.version) {
			t.Errorf("acknowledged write %v (version %v): Get(ABSOLUTE) = %v, found %v, %v", a.key, a.version, rec.Version, found, err)
		}
	}
	for i, key := range maybe {
		_, found, err := c.Get(ctx, key, client.WithConsistency(client.Absolute))
		t.Logf("MaybeApplied write %v (%v): found %v (%v)", key, maybeErr[i], found, err)
	}
}

// TestClusterNodeRestart: while a client's home replica is down, its reads
// go to the others; once it is back, the client reads from it again.
func TestClusterNodeRestart(t *testing.T) {
	tc := startCluster(t, 3, 1, 3)
	leader := tc.waitLeader(t, 1)
	ctx := context.Background()
	key := client.MustParseKey("/restart/-/x")
	// A client whose home is a follower, so that writes go on meanwhile.
	var c *client.Client
	for c == nil || client.HomeAddr(c, key) == leader.Addr() {
		c = tc.open(t, 10*time.Second)
	}
	if _, err := c.Put(ctx, key, []byte("v")); err != nil {
		t.Fatal(err)
	}
	var down *node.SN
	for _, sn := range tc.sns {
		if sn.Addr() == client.HomeAddr(c, key) {
			down = sn
		}
	}
	id, addr := down.ID(), down.Addr()
	if err := down.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	for i := range 100 {
		if _, _, err := c.Get(ctx, key); err != nil {
			t.Fatalf("read %d with node %d down: %v", i, id, err)
		}
		if _, err := c.Put(ctx, key, []byte("v")); err != nil {
			t.Fatalf("write %d with node %d down: %v", i, id, err)
		}
	}
	if n := client.AttemptsByAddr(c)[addr]; n > 5 {
		t.Errorf("%d requests went to node %d while it was down; want it passed over", n, id)
	}
	tc.restart(t, id)
	before := client.AttemptsByAddr(c)[addr]
	waitFor(t, 10*time.Second, func() bool {
		if _, _, err := c.Get(ctx, key); err != nil {
			t.Fatalf("read after node %d restarted: %v", id, err)
		}
		return client.AttemptsByAddr(c)[addr]-before >= 10
	})
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
}
