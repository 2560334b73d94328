package transport

import (
	"context"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// snapMsg returns a MsgSnap from -> to whose Snapshot.Data (a replica's
// header) is data.
func snapMsg(from, to NodeID, data []byte) *raftpb.Message {
	m := msg(raftpb.MsgSnap, from, to, 0)
	m.Snapshot = &raftpb.Snapshot{
		Data: data,
		Metadata: &raftpb.SnapshotMetadata{
			Index:     proto.Uint64(1234),
			Term:      proto.Uint64(7),
			ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}},
		},
	}
	return m
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestSnapshot: a MsgSnap travels whole, and the source's data after it in
// chunks of at most SnapshotChunkBytes, read by the receiver as they come.
func TestSnapshot(t *testing.T) {
	b := newBook()
	const seed = 42
	t.Logf("seed %d", seed)
	data := randomBytes(seed, 5<<20+12345)
	sum := sha256.Sum256(data)
	n1 := startNode(t, 1, b, withData(map[ShardID][]byte{9: data}))
	n2 := startNode(t, 2, b, nil)
	m := snapMsg(1, 2, []byte("header"))
	// A heartbeat in the same Ready takes the Messages path.
	n1.tr.Send(9, []*raftpb.Message{m, msg(raftpb.MsgHeartbeat, 1, 2, 1)})

	n1.cb.waitFor(t, "snapshot status", func() bool { return len(n1.cb.snapshots) == 1 })
	if got := n1.cb.snapshots[0]; got != (snapStatus{9, 2, true}) {
		t.Fatalf("OnSnapshotStatus %v, want {9 2 true}", got)
	}
	// The Ack follows HandleSnapshot, so it has been recorded already.
	n2.rec.mu.Lock()
	defer n2.rec.mu.Unlock()
	if len(n2.rec.snapshots) != 1 {
		t.Fatalf("%d snapshots delivered", len(n2.rec.snapshots))
	}
	r := n2.rec.snapshots[0]
	got := r.m.GetSnapshot()
	if r.shard != 9 || r.m.GetType() != raftpb.MsgSnap || r.m.GetFrom() != 1 || r.m.GetTo() != 2 ||
		got.GetMetadata().GetIndex() != 1234 || got.GetMetadata().GetTerm() != 7 ||
		len(got.GetMetadata().GetConfState().GetVoters()) != 3 || string(got.GetData()) != "header" {
		t.Fatalf("header damaged: shard %d %v", r.shard, r.m)
	}
	if sha256.Sum256(r.data) != sum {
		t.Fatalf("snapshot data damaged: %d bytes, want %d", len(r.data), len(data))
	}
	// The header alone, then 5 MiB + 12345 in 1 MiB chunks.
	if chunks, want := n2.tr.snapshotChunksRecv.Load(), uint64(7); chunks != want {
		t.Fatalf("%d chunks, want %d", chunks, want)
	}
}

// TestSnapshotNoData: a snapshot without data is its message alone.
func TestSnapshotNoData(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, withData(map[ShardID][]byte{1: nil}))
	n2 := startNode(t, 2, b, nil)
	n3 := startNode(t, 3, b, nil) // and without OpenSnapshot
	n1.tr.Send(1, []*raftpb.Message{snapMsg(1, 2, nil)})
	n3.tr.Send(1, []*raftpb.Message{snapMsg(3, 2, []byte("h"))})
	n1.cb.waitFor(t, "snapshot status", func() bool { return len(n1.cb.snapshots) == 1 })
	n3.cb.waitFor(t, "snapshot status", func() bool { return len(n3.cb.snapshots) == 1 })
	if !n1.cb.snapshots[0].ok || !n3.cb.snapshots[0].ok {
		t.Fatal("a snapshot without data failed")
	}
	n2.rec.mu.Lock()
	defer n2.rec.mu.Unlock()
	if len(n2.rec.snapshots) != 2 || len(n2.rec.snapshots[0].data) != 0 || len(n2.rec.snapshots[1].data) != 0 {
		t.Fatal("snapshots without data not delivered")
	}
}

func TestSnapshotDeadPeer(t *testing.T) {
	b := newBook()
	b.set(2, deadAddr(t))
	n1 := startNode(t, 1, b, withData(map[ShardID][]byte{4: make([]byte, 100), 5: make([]byte, 100)}))
	n1.tr.Send(4, []*raftpb.Message{snapMsg(1, 2, nil)})
	// Unresolvable peer.
	n1.tr.Send(5, []*raftpb.Message{snapMsg(1, 3, nil)})
	// No data to send.
	n1.tr.Send(6, []*raftpb.Message{snapMsg(1, 2, nil)})
	n1.cb.waitFor(t, "snapshot statuses", func() bool { return len(n1.cb.snapshots) == 3 })
	for _, s := range n1.cb.snapshots {
		if s.ok || (s != snapStatus{4, 2, false} && s != snapStatus{5, 3, false} && s != snapStatus{6, 2, false}) {
			t.Fatalf("unexpected status %v", s)
		}
	}
}

// TestSnapshotRefused: the receiver's refusal fails the send.
func TestSnapshotRefused(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, withData(map[ShardID][]byte{1: make([]byte, 3<<20)}))
	n2 := startNode(t, 2, b, nil)
	n2.rec.mu.Lock()
	n2.rec.refuse = errors.New("no room")
	n2.rec.mu.Unlock()
	n1.tr.Send(1, []*raftpb.Message{snapMsg(1, 2, nil)})
	n1.cb.waitFor(t, "snapshot status", func() bool { return len(n1.cb.snapshots) == 1 })
	if n1.cb.snapshots[0].ok {
		t.Fatal("a refused snapshot reported ok")
	}
}

// TestSnapshotSourceLies: a source producing more or less than it
// announced fails the send; the receiver delivers nothing.
func TestSnapshotSourceLies(t *testing.T) {
	b := newBook()
	n2 := startNode(t, 2, b, nil)
	for i, size := range []int64{100, 1 << 20} {
		src := &bytesSource{data: make([]byte, 1000), piece: 64, size: size}
		n1 := startNode(t, NodeID(10+i), b, func(c *Config) {
			c.OpenSnapshot = func(ShardID, NodeID, *raftpb.Message) (SnapshotSource, error) { return src, nil }
		})
		n1.tr.Send(1, []*raftpb.Message{snapMsg(NodeID(10+i), 2, nil)})
		n1.cb.waitFor(t, "snapshot status", func() bool { return len(n1.cb.snapshots) == 1 })
		if n1.cb.snapshots[0].ok {
			t.Fatalf("1000 bytes announced as %d reported ok", size)
		}
	}
	n2.rec.mu.Lock()
	defer n2.rec.mu.Unlock()
	if len(n2.rec.snapshots) != 0 {
		t.Fatal("a snapshot of the wrong size was delivered")
	}
}

// TestSnapshotCloseWhileReceiving: Close does not wait for a sender that
// stalls mid-stream; the Handler's read fails and it returns first.
func TestSnapshotCloseWhileReceiving(t *testing.T) {
	b := newBook()
	n2 := startNode(t, 2, b, nil)
	conn, err := grpc.NewClient("passthrough:///"+n2.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	stream, err := transportpb.NewRaftClient(conn).Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	header, _ := proto.Marshal(snapMsg(1, 2, nil))
	if err := stream.Send(&transportpb.SnapshotChunk{Shard: 1, Header: header, Size: 10, Data: []byte("abc")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitTimeout)
	for n2.tr.snapshotChunksRecv.Load() == 0 { // the Handler is reading
		if time.Now().After(deadline) {
			t.Fatal("the first chunk never arrived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { n2.tr.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for a stalled inbound snapshot")
	}
	if _, err := stream.CloseAndRecv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("the stalled stream ended with %v, want Unavailable", err)
	}
}

// Malformed snapshot streams are refused with InvalidArgument.
func TestSnapshotMalformed(t *testing.T) {
	b := newBook()
	n2 := startNode(t, 2, b, nil)
	conn, err := grpc.NewClient("passthrough:///"+n2.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	header := func(m *raftpb.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name   string
		chunks []*transportpb.SnapshotChunk
		code   codes.Code
	}{
		{"no header", []*transportpb.SnapshotChunk{{Shard: 1, Data: []byte("x"), Last: true}}, codes.InvalidArgument},
		{"garbage header", []*transportpb.SnapshotChunk{{Shard: 1, Header: []byte{0x0a, 0xff}, Last: true}}, codes.InvalidArgument},
		{"not MsgSnap", []*transportpb.SnapshotChunk{{Shard: 1, Header: header(msg(raftpb.MsgApp, 1, 2, 1)), Last: true}}, codes.InvalidArgument},
		{"other node", []*transportpb.SnapshotChunk{{Shard: 1, Header: header(snapMsg(1, 3, nil)), Last: true}}, codes.InvalidArgument},
		{"shard changes", []*transportpb.SnapshotChunk{
			{Shard: 1, Header: header(snapMsg(1, 2, nil)), Size: 2, Data: []byte("a")},
			{Shard: 2, Data: []byte("b"), Last: true},
		}, codes.InvalidArgument},
		{"no last chunk", []*transportpb.SnapshotChunk{{Shard: 1, Header: header(snapMsg(1, 2, nil)), Size: 1, Data: []byte("a")}}, codes.InvalidArgument},
		{"longer than announced", []*transportpb.SnapshotChunk{
			{Shard: 1, Header: header(snapMsg(1, 2, nil)), Size: 2, Data: []byte("a")},
			{Shard: 1, Data: []byte("bc"), Last: true},
		}, codes.InvalidArgument},
		{"shorter than announced", []*transportpb.SnapshotChunk{
			{Shard: 1, Header: header(snapMsg(1, 2, nil)), Size: 5, Data: []byte("a")},
			{Shard: 1, Data: []byte("b"), Last: true},
		}, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			stream, err := transportpb.NewRaftClient(conn).Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.chunks {
				if err := stream.Send(c); err != nil {
					break // the server gave up early; CloseAndRecv says why
				}
			}
			_, err = stream.CloseAndRecv()
			if status.Code(err) != tc.code {
				t.Fatalf("got %v, want code %v", err, tc.code)
			}
		})
	}
	n2.rec.mu.Lock()
	defer n2.rec.mu.Unlock()
	if len(n2.rec.snapshots) != 0 {
		t.Fatal("malformed snapshot delivered")
	}
}
