package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"math/rand/v2"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// snapMsg returns a MsgSnap from -> to carrying data.
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

func TestSnapshot(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, nil)
	n2 := startNode(t, 2, b, nil)
	const seed = 42
	t.Logf("seed %d", seed)
	data := randomBytes(seed, 5<<20+12345)
	sum := sha256.Sum256(data)
	m := snapMsg(1, 2, data)
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
		len(got.GetMetadata().GetConfState().GetVoters()) != 3 {
		t.Fatalf("header damaged: shard %d %v", r.shard, r.m)
	}
	if sha256.Sum256(got.GetData()) != sum {
		t.Fatalf("snapshot data damaged: %d bytes, want %d", len(got.GetData()), len(data))
	}
	if chunks, want := n2.tr.snapshotChunksRecv.Load(), uint64(6); chunks != want { // 5 MiB + 12345 in 1 MiB chunks
		t.Fatalf("%d chunks, want %d", chunks, want)
	}
	// The sender's message is untouched.
	if !bytes.Equal(m.GetSnapshot().GetData(), data) || m.GetSnapshot().GetMetadata().GetIndex() != 1234 {
		t.Fatal("Send modified the caller's MsgSnap")
	}
}

func TestSnapshotEmptyData(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, nil)
	n2 := startNode(t, 2, b, nil)
	n1.tr.Send(1, []*raftpb.Message{snapMsg(1, 2, nil)})
	n1.cb.waitFor(t, "snapshot status", func() bool { return len(n1.cb.snapshots) == 1 })
	if !n1.cb.snapshots[0].ok {
		t.Fatal("empty snapshot failed")
	}
	n2.rec.mu.Lock()
	defer n2.rec.mu.Unlock()
	if len(n2.rec.snapshots) != 1 || len(n2.rec.snapshots[0].m.GetSnapshot().GetData()) != 0 {
		t.Fatal("empty snapshot not delivered")
	}
}

func TestSnapshotDeadPeer(t *testing.T) {
	b := newBook()
	b.set(2, deadAddr(t))
	n1 := startNode(t, 1, b, nil)
	n1.tr.Send(4, []*raftpb.Message{snapMsg(1, 2, make([]byte, 100))})
	// Unresolvable peer.
	n1.tr.Send(5, []*raftpb.Message{snapMsg(1, 3, make([]byte, 100))})
	n1.cb.waitFor(t, "snapshot statuses", func() bool { return len(n1.cb.snapshots) == 2 })
	for _, s := range n1.cb.snapshots {
		if s.ok || (s != snapStatus{4, 2, false} && s != snapStatus{5, 3, false}) {
			t.Fatalf("unexpected status %v", s)
		}
	}
}

func TestSnapshotTooLarge(t *testing.T) {
	b := newBook()
	n1 := startNode(t, 1, b, func(c *Config) { c.SnapshotChunkBytes = 64 << 10 })
	n2 := startNode(t, 2, b, nil)
	n2.tr.maxSnapshotBytes = 1 << 20 // stands in for 1 GiB
	n1.tr.Send(1, []*raftpb.Message{snapMsg(1, 2, make([]byte, 2<<20))})
	n1.cb.waitFor(t, "snapshot status", func() bool { return len(n1.cb.snapshots) == 1 })
	if n1.cb.snapshots[0].ok {
		t.Fatal("oversized snapshot reported ok")
	}
	n2.rec.mu.Lock()
	defer n2.rec.mu.Unlock()
	if len(n2.rec.snapshots) != 0 {
		t.Fatal("oversized snapshot delivered")
	}
	if c := n2.tr.snapshotChunksRecv.Load(); c > 17 {
		t.Fatalf("receiver read %d chunks of 64 KiB past a 1 MiB limit", c)
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
		b, err := snapshotHeader(m)
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
			{Shard: 1, Header: header(snapMsg(1, 2, nil)), Data: []byte("a")},
			{Shard: 2, Data: []byte("b"), Last: true},
		}, codes.InvalidArgument},
		{"no last chunk", []*transportpb.SnapshotChunk{{Shard: 1, Header: header(snapMsg(1, 2, nil)), Data: []byte("a")}}, codes.InvalidArgument},
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
