package transport

import (
	"log/slog"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// FuzzDeliver feeds arbitrary bytes, as a Batch off the wire, to the
// inbound decoder: it must never panic, and whatever it delivers must be
// addressed to this node.
func FuzzDeliver(f *testing.F) {
	good, _ := proto.Marshal(msg(raftpb.MsgApp, 1, 2, 5))
	seed, _ := proto.Marshal(&transportpb.Batch{FromNode: 1, Envelopes: []*transportpb.Envelope{
		{Shard: 1, Raft: good},
		{Shard: 1, Raft: []byte{0x0a, 0xff}},
		{Shard: 2, Notice: &transportpb.CommitNotice{Term: 1, Commit: 2}},
	}})
	f.Add(seed)
	f.Add([]byte{})
	f.Add(good)
	rec := newRecorder()
	tr, err := New(Config{NodeID: 2, Resolve: func(NodeID) (string, bool) { return "", false }, Logger: slog.New(slog.DiscardHandler)}, rec)
	if err != nil {
		f.Fatal(err)
	}
	defer tr.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		var b transportpb.Batch
		if proto.Unmarshal(data, &b) != nil {
			return // gRPC would have failed the stream
		}
		rec.mu.Lock()
		rec.raft, rec.snapshots = rec.raft[:0], rec.snapshots[:0]
		rec.mu.Unlock()
		tr.deliver(&b)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, r := range append(rec.raft, rec.snapshots...) {
			if r.m.GetTo() != 2 {
				t.Fatalf("delivered a message for node %d", r.m.GetTo())
			}
		}
	})
}
