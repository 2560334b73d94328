package transport

import (
	"context"
	"errors"
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
	refuse    error // HandleSnapshot's answer, if set
	mu        sync.Mutex
	raft      []received
	snapshots []received
	notices   []notice
	changed   chan struct{} // closed and replaced on every change
}

type received struct {
	shard ShardID
	m     *raftpb.Message
	data  []byte // a snapshot's data, reassembled (tests only)
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
	r.raft = append(r.raft, received{shard: shard, m: m})
	r.signal()
}

// HandleSnapshot reads the data whole (a test's snapshots are small) and
// records it; r.refuse, if set, refuses it after reading.
func (r *recorder) HandleSnapshot(shard ShardID, m *raftpb.Message, d *SnapshotData) error {
	var data []byte
	for {
		p, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		data = append(data, p...)
	}
	if int64(len(data)) != d.Size() {
		return fmt.Errorf("read %d bytes of a snapshot of %d", len(data), d.Size())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse
	}
	r.snapshots = append(r.snapshots, received{shard, m, data})
	r.signal()
	return nil
}

// bytesSource is a SnapshotSource of data in pieces of at most piece bytes.
type bytesSource struct {
	data  []byte
	piece int
	size  int64 // announced
}

func (b *bytesSource) Size() (int64, error) { return b.size, nil }

func (b *bytesSource) Next() ([]byte, error) {
	if len(b.data) == 0 {
		return nil, io.EOF
	}
	n := min(b.piece, len(b.data))
	p := b.data[:n]
	b.data = b.data[n:]
	return p, nil
}

func (b *bytesSource) Close() {}

// withData makes a transport send data[shard] with each MsgSnap of shard,
// in pieces of 3 MiB (cut again into chunks).
func withData(data map[ShardID][]byte) func(*Config) {
	return func(c *Config) {
		c.OpenSnapshot = func(shard ShardID, _ NodeID, _ *raftpb.Message) (SnapshotSource, error) {
			d, ok := data[shard]
			if !ok {
				return nil, fmt.Errorf("no data for shard %d", shard)
			}
			return &bytesSource{data: d, piece: 3 << 20, size: int64(len(d))}, nil
		}
	}
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
