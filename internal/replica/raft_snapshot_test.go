package replica

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// onLoop runs fn on r's loop goroutine and waits for it.
func onLoop(t *testing.T, r *Raft, fn func()) {
	t.Helper()
	done := make(chan struct{})
	r.report(func(*raft.RawNode) { fn(); close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not run a report within 10s")
	}
}

// TestRaftSnapshotExportsReleased: once a follower caught up, the leader
// keeps at most the latest export, and closes it when idle; a send that
// asks for an export that is gone fails.
func TestRaftSnapshotExportsReleased(t *testing.T) {
	g := newGroup(t, 20)
	l := g.leader()
	lid, _ := l.Leader()
	victim := lid%3 + 1
	g.stop(victim)
	var last []byte
	for i := range 100 {
		v, err := g.write(l, fmt.Sprintf("/e/-/%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = v
	}
	g.start(victim)
	_, idx, _ := storage.ParseVersion(last)
	waitApplied(t, g.net.get(victim), idx)
	g.net.snaps.Wait()
	if n := l.out.open(); n > 1 {
		t.Fatalf("%d exports open after the send", n)
	}
	var m *raftpb.Message
	onLoop(t, l, func() {
		if l.snapCache != nil {
			m = &raftpb.Message{Type: raftpb.MsgSnap.Enum(), Snapshot: proto.Clone(l.snapCache).(*raftpb.Snapshot)}
		}
		l.out.expire(l.snapID, 0)
		l.snapCache = nil
	})
	if n := l.out.open(); n != 0 {
		t.Fatalf("%d exports open after expiry", n)
	}
	if m == nil {
		t.Fatal("the leader kept no snapshot after sending one")
	}
	if _, err := l.SnapshotData(m); err == nil {
		t.Fatal("SnapshotData of an expired export succeeded")
	}
}

// FuzzSnapHeader: a header from the network decodes or fails with
// ErrBadSnapshot, and what decodes encodes back to the same bytes.
func FuzzSnapHeader(f *testing.F) {
	f.Add(snapHeader{1, 2, 3}.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeSnapHeader(b)
		if err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error %v is not ErrBadSnapshot", err)
			}
			return
		}
		if got := h.encode(); string(got) != string(b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, h, got)
		}
	})
}
