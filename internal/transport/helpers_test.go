package transport

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// waitTimeout bounds every condition wait in these tests.
const waitTimeout = 15 * time.Second

// recorder is the Handler used by the tests: it records everything and
// signals every change on a channel.
type recorder struct {
	mu        sync.Mutex
	raft      []received
	snapshots []received
	notices   []notice
	changed   chan struct{} // closed and replaced on every change
}

type received struct {
	shard ShardID
	m     *raftpb.Message
}

type notice struct {
	shard ShardID
	from  NodeID
	n     *transportpb.CommitNotice
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) signal() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) HandleRaft(shard ShardID, m *raftpb.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.raft = append(r.raft, received{shard, m})
	r.signal()
}

func (r *recorder) HandleSnapshot(shard ShardID, m *raftpb.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snapshots = append(r.snapshots, received{shard, m})
	r.signal()
	return nil
}

// HandleRejoin readmits every request, recording it as a notice-less event.
func (r *recorder) HandleRejoin(_ context.Context, shard ShardID, node NodeID) *transportpb.RejoinResponse {
	return &transportpb.RejoinResponse{Readmitted: true, Leader: uint64(node)}
}

func (r *recorder) HandleNotice(shard ShardID, from NodeID, n *transportpb.CommitNotice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notices = append(r.notices, notice{shard, from, n})
	r.signal()
}

// waitFor waits until cond (called with r.mu held) holds, or fails the test
// after waitTimeout.
func (r *recorder) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		r.mu.Lock()
		ok, ch := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitChange waits up to d for anything new to be recorded.
func (r *recorder) waitChange(d time.Duration) {
	r.mu.Lock()
	ch := r.changed
	r.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(d):
	}
}

func (r *recorder) numRaft() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.raft)
}

// callbacks records OnUnreachable and OnSnapshotStatus calls.
type callbacks struct {
	mu          sync.Mutex
	unreachable map[NodeID]int
	snapshots   []snapStatus
	changed     chan struct{}
}

type snapStatus struct {
	shard ShardID
	to    NodeID
	ok    bool
}

func newCallbacks() *callbacks {
	return &callbacks{unreachable: make(map[NodeID]int), changed: make(chan struct{})}
}

func (c *callbacks) onUnreachable(_ ShardID, to NodeID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unreachable[to]++
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *callbacks) onSnapshotStatus(shard ShardID, to NodeID, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snapshots = append(c.snapshots, snapStatus{shard, to, ok})
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *callbacks) unreachableCount(to NodeID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unreachable[to]
}

func (c *callbacks) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		c.mu.Lock()
		ok, ch := cond(), c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// book is an address book usable as Config.Resolve.
type book struct {
	mu    sync.Mutex
	addrs map[NodeID]string
}

func newBook() *book { return &book{addrs: make(map[NodeID]string)} }

func (b *book) set(id NodeID, addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addrs[id] = addr
}

func (b *book) resolve(id NodeID) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.addrs[id]
	return a, ok
}

// node is one transport with a gRPC server on a 127.0.0.1 port.
type node struct {
	id   NodeID
	tr   *Transport
	rec  *recorder
	cb   *callbacks
	addr string
	srv  *grpc.Server
	done chan struct{} // closed when Serve returned
}

// startNode starts a transport for id, serving on a fresh port, and
// publishes its address in b. Cleanup closes everything.
func startNode(t testing.TB, id NodeID, b *book, tweak func(*Config)) *node {
	t.Helper()
	n := &node{id: id, rec: newRecorder(), cb: newCallbacks()}
	cfg := Config{
		NodeID:           id,
		Resolve:          b.resolve,
		OnUnreachable:    n.cb.onUnreachable,
		OnSnapshotStatus: n.cb.onSnapshotStatus,
		Logger:           testLogger(t),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	tr, err := New(cfg, n.rec)
	if err != nil {
		t.Fatal(err)
	}
	n.tr = tr
	n.serve(t, "127.0.0.1:0")
	b.set(id, n.addr)
	t.Cleanup(func() {
		n.tr.Close()
		n.stop()
	})
	return n
}

// serve starts a gRPC server for n's transport on addr.
func (n *node) serve(t testing.TB, addr string) {
	t.Helper()
	var lis net.Listener
	var err error
	// Rebinding a just-closed port normally succeeds at once on Linux; retry
	// briefly in case the kernel has not released it yet.
	deadline := time.Now().Add(waitTimeout)
	for {
		lis, err = net.Listen("tcp", addr)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // backoff of a retry, not synchronisation
	}
	if err != nil {
		t.Fatal(err)
	}
	n.addr = lis.Addr().String()
	n.srv = grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	n.tr.Register(n.srv)
	n.done = make(chan struct{})
	go func(srv *grpc.Server, done chan struct{}) {
		defer close(done)
		srv.Serve(lis)
	}(n.srv, n.done)
}

// stop stops n's server, breaking every stream to it, and waits for it.
func (n *node) stop() {
	if n.srv == nil {
		return
	}
	n.srv.Stop()
	<-n.done
	n.srv = nil
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// msg returns a small Raft message of the given type from -> to.
func msg(typ raftpb.MessageType, from, to NodeID, index uint64) *raftpb.Message {
	return &raftpb.Message{
		Type:  typ.Enum(),
		From:  proto.Uint64(uint64(from)),
		To:    proto.Uint64(uint64(to)),
		Term:  proto.Uint64(1),
		Index: proto.Uint64(index),
	}
}

// ourGoroutines lists the goroutines running this package's sender or
// snapshot code.
func ourGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "transport.(*peer).run") || strings.Contains(g, "transport.(*Transport).startSnapshot") {
			out = append(out, g)
		}
	}
	return out
}

// waitGoroutines waits until cond holds for the goroutine count, polling:
// goroutine exits cannot be waited on any other way.
func waitGoroutines(t testing.TB, what string, cond func(n int) bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond(runtime.NumGoroutine()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for goroutines: %s (now %d)\n%s", what, runtime.NumGoroutine(), allStacks())
		}
		<-tick.C
	}
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

func (s snapStatus) String() string {
	return fmt.Sprintf("{shard %d to %d ok %v}", s.shard, s.to, s.ok)
}
