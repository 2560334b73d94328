package transport

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

func TestConfigValidate(t *testing.T) {
	resolve := func(NodeID) (string, bool) { return "", false }
	base := func() Config {
		c := DefaultConfig()
		c.NodeID, c.Resolve = 1, resolve
		return c
	}
	tests := []struct {
		name   string
		modify func(*Config)
		bad    string // substring of the error; "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"no node", func(c *Config) { c.NodeID = 0 }, "NodeID"},
		{"no resolve", func(c *Config) { c.Resolve = nil }, "Resolve"},
		{"queue", func(c *Config) { c.QueueLen = -1 }, "QueueLen"},
		{"batch too big", func(c *Config) { c.MaxBatchBytes = 32 << 20 }, "MaxBatchBytes"},
		{"chunk zero", func(c *Config) { c.SnapshotChunkBytes = -5 }, "SnapshotChunkBytes"},
		{"chunk too big", func(c *Config) { c.SnapshotChunkBytes = 9 << 20 }, "SnapshotChunkBytes"},
		{"dial", func(c *Config) { c.DialTimeout = -time.Second }, "DialTimeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.modify(&c)
			err := c.Validate()
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
				t.Fatalf("error %v, want one mentioning %q", err, tc.bad)
			}
		})
	}
	// New fills zero fields with the defaults.
	tr, err := New(Config{NodeID: 1, Resolve: resolve}, newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if d := DefaultConfig(); tr.cfg.QueueLen != d.QueueLen || tr.cfg.MaxBatchBytes != d.MaxBatchBytes ||
		tr.cfg.SnapshotChunkBytes != d.SnapshotChunkBytes || tr.cfg.DialTimeout != d.DialTimeout {
		t.Fatalf("defaults not applied: %+v", tr.cfg)
	}
	if _, err := New(Config{NodeID: 1, Resolve: resolve}, nil); err == nil {
		t.Fatal("New accepted a nil Handler")
	}
}

// Three nodes; node 1 sends for several shards to 2 and 3. Everything
// arrives, in the order sent across all shards of the pair.
func TestSendDeliversInOrder(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, nil)
	n2 := startNode(t, 2, b, nil)
	n3 := startNode(t, 3, b, nil)

	const shards, rounds = 5, 200
	var seq uint64
	for i := range rounds {
		for s := ShardID(1); s <= shards; s++ {
			seq++
			n1.tr.Send(s, []*raftpb.Message{
				msg(raftpb.MsgApp, 1, 2, seq),
				msg(raftpb.MsgHeartbeat, 1, 3, seq),
			})
			if i%50 == 0 {
				n1.tr.SendNotice(s, 2, &transportpb.CommitNotice{Term: 1, Commit: seq})
			}
		}
	}
	for _, n := range []*node{n2, n3} {
		n.rec.waitFor(t, "all messages", func() bool { return len(n.rec.raft) == int(seq) })
		want := raftpb.MsgApp
		if n.id == 3 {
			want = raftpb.MsgHeartbeat
		}
		n.rec.mu.Lock()
		for i, r := range n.rec.raft {
			idx := uint64(i + 1)
			m := r.m
			if m.GetIndex() != idx || m.GetType() != want || m.GetFrom() != 1 || m.GetTo() != uint64(n.id) {
				t.Fatalf("node %d: message %d is %v", n.id, i, m)
			}
			if wantShard := ShardID((idx-1)%shards + 1); r.shard != wantShard {
				t.Fatalf("node %d: message %d has shard %d, want %d", n.id, i, r.shard, wantShard)
			}
		}
		n.rec.mu.Unlock()
	}
	n2.rec.waitFor(t, "notices", func() bool { return len(n2.rec.notices) == 4*shards })
	n2.rec.mu.Lock()
	for i, nt := range n2.rec.notices {
		if nt.from != 1 || nt.n.GetTerm() != 1 || (i > 0 && nt.n.GetCommit() <= n2.rec.notices[i-1].n.GetCommit()) {
			t.Fatalf("notice %d out of order or wrong: %+v", i, nt)
		}
	}
	n2.rec.mu.Unlock()
	if len(n3.rec.notices) != 0 || len(n1.rec.raft) != 0 {
		t.Fatal("traffic went to the wrong node")
	}
	if c := n1.cb.unreachableCount(2) + n1.cb.unreachableCount(3); c != 0 {
		t.Fatalf("OnUnreachable called %d times on a healthy cluster", c)
	}
}

// Many small messages queued quickly share gRPC messages.
func TestBatching(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, nil)
	n2 := startNode(t, 2, b, nil)
	// Connect first, so the batching measured is that of a live stream and
	// not of messages piling up during the connect.
	n1.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgHeartbeat, 1, 2, 0)})
	n2.rec.waitFor(t, "first message", func() bool { return len(n2.rec.raft) == 1 })
	before := n2.tr.batchesRecv.Load()

	const count = 1000
	for i := range count {
		// One Send per shard, as the replicas of 1000 shards would in a tick.
		n1.tr.Send(ShardID(i%100+1), []*raftpb.Message{msg(raftpb.MsgHeartbeat, 1, 2, uint64(i+1))})
	}
	n2.rec.waitFor(t, "all messages", func() bool { return len(n2.rec.raft) == count+1 })
	batches := n2.tr.batchesRecv.Load() - before
	t.Logf("%d messages arrived in %d gRPC messages", count, batches)
	if batches >= count {
		t.Fatalf("no batching: %d messages in %d batches", count, batches)
	}
}

// MaxBatchBytes bounds a batch; a message larger than it travels alone.
func TestBatchBound(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, func(c *Config) { c.MaxBatchBytes = 4096 })
	n2 := startNode(t, 2, b, nil)
	payload := make([]byte, 1000)
	const count = 100
	var msgs []*raftpb.Message
	for i := range count {
		m := msg(raftpb.MsgApp, 1, 2, uint64(i+1))
		m.Entries = []*raftpb.Entry{{Data: payload}}
		msgs = append(msgs, m)
	}
	big := msg(raftpb.MsgApp, 1, 2, count+1)
	big.Entries = []*raftpb.Entry{{Data: make([]byte, 20000)}}
	msgs = append(msgs, big)
	n1.tr.Send(1, msgs)
	n2.rec.waitFor(t, "all messages", func() bool { return len(n2.rec.raft) == count+1 })
	// At most 3 messages of ~1 KiB fit in 4 KiB, and the big one is alone.
	if got, least := n2.tr.batchesRecv.Load(), uint64(count/3+1); got < least {
		t.Fatalf("%d batches, want at least %d with MaxBatchBytes 4096", got, least)
	}
	n2.rec.mu.Lock()
	defer n2.rec.mu.Unlock()
	if last := n2.rec.raft[count].m; len(last.GetEntries()[0].GetData()) != 20000 {
		t.Fatal("big message damaged")
	}
}

// Messages addressed to this node or to node 0 are dropped without
// creating a peer.
func TestSendInvalidDestination(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, nil)
	n1.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgApp, 1, 1, 1), msg(raftpb.MsgApp, 1, 0, 1)})
	n1.tr.SendNotice(1, 1, &transportpb.CommitNotice{})
	n1.tr.mu.RLock()
	defer n1.tr.mu.RUnlock()
	if len(n1.tr.peers) != 0 {
		t.Fatalf("peers created for invalid destinations: %v", n1.tr.peers)
	}
}

// A full queue drops on the caller's goroutine and reports it there.
func TestQueueFull(t *testing.T) {
	b := newBook()
	hole := blackHole(t)
	b.set(9, hole)
	n1 := startNode(t, 1, b, func(c *Config) { c.QueueLen = 1; c.DialTimeout = time.Minute })
	// The sender takes at most one message and blocks connecting to the
	// black hole; the queue holds one more; the rest must be dropped.
	var msgs []*raftpb.Message
	for i := range 10 {
		msgs = append(msgs, msg(raftpb.MsgApp, 1, 9, uint64(i)))
	}
	n1.tr.Send(7, msgs)
	if n1.cb.unreachableCount(9) == 0 {
		t.Fatal("queue overflow not reported synchronously")
	}
}

// While a peer is down messages are dropped and reported, with backoff
// between connect attempts; when it returns on the same port delivery
// resumes.
func TestPeerDownAndBack(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, nil)
	n2 := startNode(t, 2, b, nil)
	var seq uint64
	send := func() {
		seq++
		n1.tr.Send(3, []*raftpb.Message{msg(raftpb.MsgHeartbeat, 1, 2, seq)})
	}
	send()
	n2.rec.waitFor(t, "first message", func() bool { return len(n2.rec.raft) == 1 })
	goroutinesUp := runtime.NumGoroutine()

	n2.stop()
	deadline := time.Now().Add(waitTimeout)
	for n1.cb.unreachableCount(2) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no OnUnreachable while the peer is down")
		}
		send()
		n1.cb.mu.Lock()
		ch := n1.cb.changed
		n1.cb.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(20 * time.Millisecond):
		}
	}

	// Keep traffic flowing for a second: every message must be reported
	// dropped, but connect attempts are spaced by the backoff (50ms
	// doubling), not one per message.
	dials, reports := n1.tr.dials.Load(), n1.cb.unreachableCount(2)
	tick := time.NewTicker(time.Millisecond)
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		<-tick.C
		send()
	}
	tick.Stop()
	dials = n1.tr.dials.Load() - dials
	reports = n1.cb.unreachableCount(2) - reports
	t.Logf("down for 1s: %d connect attempts, %d OnUnreachable", dials, reports)
	if dials > 10 {
		t.Fatalf("%d connect attempts in 1s: no backoff", dials)
	}
	if reports < 100 {
		t.Fatalf("only %d OnUnreachable for ~1000 dropped messages", reports)
	}
	// Nothing accumulates: once the traffic stops (a connect attempt may
	// be in flight) the count falls back below what it was with the peer up.
	waitGoroutines(t, "no growth while the peer is down", func(n int) bool { return n <= goroutinesUp })
	if g := len(ourGoroutines()); g != 1 {
		t.Fatalf("%d sender goroutines, want 1", g)
	}

	n2.serve(t, n2.addr) // same port
	marker := seq
	deadline = time.Now().Add(waitTimeout)
	for !delivered(n2.rec, marker) {
		if time.Now().After(deadline) {
			t.Fatal("delivery did not resume after the peer came back")
		}
		send()
		n2.rec.waitChange(20 * time.Millisecond)
	}
}

// delivered reports whether r got a message with index > after.
func delivered(r *recorder, after uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.raft {
		if x.m.GetIndex() > after {
			return true
		}
	}
	return false
}

// A changed address applies at the next reconnect, not before.
func TestResolveChange(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, nil)
	oldNode := startNode(t, 2, b, nil)
	n1.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgApp, 1, 2, 1)})
	oldNode.rec.waitFor(t, "first message", func() bool { return len(oldNode.rec.raft) == 1 })

	// Node 2 moves: a new process on a new port (startNode publishes it).
	newNode := startNode(t, 2, b, nil)
	if oldNode.addr == newNode.addr {
		t.Fatal("same address")
	}
	// The live stream still goes to the old address.
	n1.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgApp, 1, 2, 2)})
	oldNode.rec.waitFor(t, "second message at the old address", func() bool { return len(oldNode.rec.raft) == 2 })

	// The old process dies; the reconnect asks Resolve again.
	oldNode.stop()
	var seq uint64 = 2
	deadline := time.Now().Add(waitTimeout)
	for newNode.rec.numRaft() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("messages never reached the new address")
		}
		seq++
		n1.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgApp, 1, 2, seq)})
		newNode.rec.waitChange(20 * time.Millisecond)
	}
	if n := oldNode.rec.numRaft(); n != 2 {
		t.Fatalf("old node got %d messages after it stopped", n-2)
	}
}

// Close is idempotent, safe concurrently, cancels work in progress (even a
// connect with a long DialTimeout) and leaves no goroutine behind.
func TestCloseStopsGoroutines(t *testing.T) {
	// Warm up gRPC so its process-wide goroutines exist before counting.
	{
		b := newBook()
		w1 := startNode(t, 1, b, nil)
		w2 := startNode(t, 2, b, nil)
		w1.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgApp, 1, 2, 1)})
		w2.rec.waitFor(t, "warm-up", func() bool { return len(w2.rec.raft) == 1 })
		w1.tr.Close()
		w2.tr.Close()
		w1.stop()
		w2.stop()
	}
	waitGoroutines(t, "warm-up transports gone", func(int) bool { return len(ourGoroutines()) == 0 })
	base := runtime.NumGoroutine()

	b := newBook()
	b.set(7, blackHole(t)) // accepts TCP, never speaks gRPC
	b.set(8, deadAddr(t))  // refuses connections
	n1 := startNode(t, 1, b, func(c *Config) { c.DialTimeout = time.Minute })
	n2 := startNode(t, 2, b, nil)
	n1.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgApp, 1, 2, 1), msg(raftpb.MsgApp, 1, 7, 1), msg(raftpb.MsgApp, 1, 8, 1)})
	n1.tr.Send(1, []*raftpb.Message{snapMsg(1, 7, make([]byte, 1000))}) // hangs in connect
	n2.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgApp, 2, 1, 1)})
	n2.rec.waitFor(t, "message 1->2", func() bool { return len(n2.rec.raft) == 1 })
	n1.rec.waitFor(t, "message 2->1", func() bool { return len(n1.rec.raft) == 1 })
	if g := len(ourGoroutines()); g != 5 { // 1: peers 2, 7, 8 and a snapshot; 2: peer 1
		t.Fatalf("%d transport goroutines, want 5", g)
	}

	closed := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, n := range []*node{n1, n1, n2, n2} {
			wg.Go(func() {
				if err := n.tr.Close(); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(waitTimeout):
		t.Fatalf("Close hangs\n%s", allStacks())
	}
	if err := n1.tr.Close(); err != nil {
		t.Fatal(err)
	}
	// wg.Wait in Close returns when each goroutine has run its deferred
	// Done; the runtime lists it until it has returned, a moment later.
	waitGoroutines(t, "transport goroutines gone after Close", func(int) bool { return len(ourGoroutines()) == 0 })

	// After Close: Send drops silently, no callbacks.
	n1.cb.mu.Lock()
	unreach, snaps := len(n1.cb.unreachable), len(n1.cb.snapshots)
	n1.cb.mu.Unlock()
	n1.tr.Send(1, []*raftpb.Message{msg(raftpb.MsgApp, 1, 2, 2), snapMsg(1, 2, nil)})
	n1.tr.SendNotice(1, 2, &transportpb.CommitNotice{})
	n1.cb.mu.Lock()
	if len(n1.cb.unreachable) != unreach || len(n1.cb.snapshots) != snaps {
		t.Error("callbacks after Close")
	}
	n1.cb.mu.Unlock()

	n1.stop()
	n2.stop()
	waitGoroutines(t, "back to the baseline", func(n int) bool { return n <= base })
}

// A Batch with an undecodable or misrouted envelope is delivered except
// for it, and the stream stays usable.
func TestGarbageSkipped(t *testing.T) {
	b := newBook()
	n2 := startNode(t, 2, b, nil)
	garbage := []byte{0x0a, 0xff} // field 1, length-delimited, truncated
	if err := proto.Unmarshal(garbage, new(raftpb.Message)); err == nil {
		t.Fatal("garbage decodes")
	}
	marshal := func(m *raftpb.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	conn, err := grpc.NewClient("passthrough:///"+n2.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	stream, err := transportpb.NewRaftClient(conn).Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = stream.Send(&transportpb.Batch{FromNode: 1, Envelopes: []*transportpb.Envelope{
		{Shard: 1, Raft: marshal(msg(raftpb.MsgApp, 1, 2, 1))},
		{Shard: 1, Raft: garbage},
		{Shard: 1, Raft: marshal(msg(raftpb.MsgApp, 1, 3, 99))}, // for node 3
		{Shard: 2, Notice: &transportpb.CommitNotice{Term: 4, Commit: 5}},
		{Shard: 1, Raft: marshal(msg(raftpb.MsgApp, 1, 2, 2))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	n2.rec.waitFor(t, "first batch", func() bool { return len(n2.rec.raft) == 2 && len(n2.rec.notices) == 1 })
	if err := stream.Send(&transportpb.Batch{FromNode: 1, Envelopes: []*transportpb.Envelope{
		{Shard: 1, Raft: marshal(msg(raftpb.MsgApp, 1, 2, 3))},
	}}); err != nil {
		t.Fatal(err)
	}
	n2.rec.waitFor(t, "second batch", func() bool { return len(n2.rec.raft) == 3 })
	if _, err := stream.CloseAndRecv(); err != nil {
		t.Fatalf("stream ended with %v", err)
	}
	n2.rec.mu.Lock()
	defer n2.rec.mu.Unlock()
	for i, r := range n2.rec.raft {
		if r.m.GetIndex() != uint64(i+1) {
			t.Fatalf("message %d has index %d", i, r.m.GetIndex())
		}
	}
	if nt := n2.rec.notices[0]; nt.shard != 2 || nt.from != 1 || nt.n.GetCommit() != 5 {
		t.Fatalf("notice %+v", nt)
	}
	if d := n2.tr.inboundDropped.Load(); d != 2 {
		t.Fatalf("%d envelopes dropped, want 2", d)
	}
}

// blackHole returns the address of a listener that completes TCP
// handshakes (via the kernel backlog) but never answers.
func blackHole(t testing.TB) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	return lis.Addr().String()
}

// deadAddr returns an address nothing listens on.
func deadAddr(t testing.TB) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestRejoinReachesTheHandler: a Rejoin call reaches the peer's handler and
// its answer comes back.
func TestRejoinReachesTheHandler(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, nil)
	startNode(t, 2, b, nil)
	resp, err := n1.tr.Rejoin(context.Background(), 2, 3)
	if err != nil || !resp.GetReadmitted() || resp.GetLeader() != 1 {
		t.Fatalf("rejoin: %v, %v", resp, err)
	}
}
