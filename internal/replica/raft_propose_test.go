package replica

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// hold blocks r's loop until the returned release is called.
func hold(t *testing.T, r *Raft) (release func()) {
	t.Helper()
	held, free := make(chan struct{}), make(chan struct{})
	r.reports <- func(*raft.RawNode) { close(held); <-free }
	<-held
	var once sync.Once
	release = func() { once.Do(func() { close(free) }) }
	t.Cleanup(release)
	return release
}

// TestProposalsShareAnAppend queues proposals while the leader's loop is
// busy and checks that they leave in one append per follower.
func TestProposalsShareAnAppend(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	if _, err := g.write(l, "/warm/-/0", "v"); err != nil {
		t.Fatal(err)
	}
	lid, _ := l.Leader()
	waitFor(t, func() bool { // every follower replicating, none behind
		for _, r := range g.net.nodes {
			if r.AppliedIndex() != l.AppliedIndex() {
				return false
			}
		}
		return true
	}, "followers to catch up")
	appends0, entries0, _ := g.net.sent(lid)

	const n = 6
	release := hold(t, l)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := l.Propose(ctx, put(fmt.Sprintf("/p/-/%d", i), "v", 0), storage.NoSync)
			errs <- err
		}()
	}
	waitFor(t, func() bool { return len(l.proposals) == n }, "the proposals to queue")
	release()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	appends, entries, _ := g.net.sent(lid)
	if got := entries - entries0; got != 2*n {
		t.Fatalf("the leader sent %d entries to its 2 followers, want %d", got, 2*n)
	}
	if got := appends - appends0; got != 2 {
		t.Fatalf("the leader sent %d appends for %d proposals queued together, want 1 per follower", got, n)
	}
}

// TestFollowerAcksOncePerReady has a follower step several appends in one
// Ready and checks that it answers them with one acknowledgement. A
// heartbeat's answer may still prompt the leader to send one more append,
// answered in a later Ready, so it allows up to 2 in all: without the
// coalescing there would be at least 2n. The leader sends its commit-only
// appends at once (no linger), so they too are queued before the release,
// and its 100ms ticks leave few heartbeats in the window.
func TestFollowerAcksOncePerReady(t *testing.T) {
	g := newGroupLinger(t, 0, 100*time.Millisecond, nil, -1)
	l := g.leader()
	if _, err := g.write(l, "/warm/-/0", "v"); err != nil {
		t.Fatal(err)
	}
	fid := follower(l)
	f := g.net.get(fid)
	waitFor(t, func() bool { return f.AppliedIndex() == l.AppliedIndex() }, "the follower to catch up")
	release := hold(t, f)
	const n = 6
	for i := range n { // each commits with the other follower's ack
		if _, err := g.write(l, fmt.Sprintf("/a/-/%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return len(f.inbox) >= 2*n }, "the appends and commits to reach the held follower")
	_, _, acks0 := g.net.sent(fid)
	release()
	waitFor(t, func() bool { return f.AppliedIndex() == l.AppliedIndex() }, "the follower to catch up")
	// The leader learns the follower's progress from the one ack.
	waitFor(t, func() bool {
		match := make(chan uint64, 1)
		l.reports <- func(rn *raft.RawNode) { match <- rn.Status().Progress[fid].Match }
		return <-match == l.AppliedIndex()
	}, "the leader to see the follower's ack")
	if _, _, acks := g.net.sent(fid); acks-acks0 > 2 {
		t.Fatalf("the follower stepped %d appends in one Ready and sent %d acks, want 1 (2 at most)", 2*n, acks-acks0)
	}
}

func TestCoalesceAcks(t *testing.T) {
	ack := func(to, term, index uint64) *raftpb.Message {
		return &raftpb.Message{Type: raftpb.MsgAppResp.Enum(), To: &to, Term: &term, Index: &index}
	}
	reject := ack(1, 5, 3)
	rej := true
	reject.Reject = &rej
	hb := &raftpb.Message{Type: raftpb.MsgHeartbeatResp.Enum()}
	for _, tc := range []struct {
		name     string
		in, want []*raftpb.Message
	}{
		{"one", []*raftpb.Message{ack(1, 5, 7)}, []*raftpb.Message{ack(1, 5, 7)}},
		{"later higher", []*raftpb.Message{ack(1, 5, 7), hb, ack(1, 5, 9)}, []*raftpb.Message{hb, ack(1, 5, 9)}},
		{"later equal", []*raftpb.Message{ack(1, 5, 9), ack(1, 5, 9)}, []*raftpb.Message{ack(1, 5, 9)}},
		{"later lower", []*raftpb.Message{ack(1, 5, 9), ack(1, 5, 4)}, []*raftpb.Message{ack(1, 5, 9), ack(1, 5, 4)}},
		{"other term", []*raftpb.Message{ack(1, 5, 7), ack(1, 6, 9)}, []*raftpb.Message{ack(1, 5, 7), ack(1, 6, 9)}},
		{"other leader", []*raftpb.Message{ack(1, 5, 7), ack(2, 5, 9)}, []*raftpb.Message{ack(1, 5, 7), ack(2, 5, 9)}},
		{"reject kept", []*raftpb.Message{ack(1, 5, 2), reject, ack(1, 5, 9)}, []*raftpb.Message{reject, ack(1, 5, 9)}},
	} {
		got := coalesceAcks(tc.in)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: got %d messages, want %d", tc.name, len(got), len(tc.want))
		}
		for i := range got {
			g, w := got[i], tc.want[i]
			if g.GetType() != w.GetType() || g.GetTo() != w.GetTo() || g.GetTerm() != w.GetTerm() || g.GetIndex() != w.GetIndex() || g.GetReject() != w.GetReject() {
				t.Fatalf("%s: message %d is %v, want %v", tc.name, i, g, w)
			}
		}
	}
}
