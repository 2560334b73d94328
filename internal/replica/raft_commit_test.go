package replica

import (
	"slices"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func msg(t raftpb.MessageType, to, commit uint64, entries int) *raftpb.Message {
	m := &raftpb.Message{Type: t.Enum(), To: proto.Uint64(to), Commit: proto.Uint64(commit)}
	for range entries {
		m.Entries = append(m.Entries, &raftpb.Entry{})
	}
	return m
}

// kinds names msgs as "type/to/commit/entries", for comparing.
func kinds(msgs []*raftpb.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.GetType().String()+"/"+string(rune('0'+m.GetTo()))+"/"+string(rune('0'+m.GetCommit()))+"/"+string(rune('0'+len(m.GetEntries()))))
	}
	slices.Sort(out)
	return out
}

// TestHeldCommits: commit-only appends are held, one per follower; a later
// append or heartbeat with a commit index at least as high replaces it;
// take returns the rest.
func TestHeldCommits(t *testing.T) {
	var h heldCommits
	sent := h.hold([]*raftpb.Message{
		msg(raftpb.MsgApp, 2, 3, 2),       // entries: sent
		msg(raftpb.MsgApp, 2, 4, 0),       // commit-only: held
		msg(raftpb.MsgApp, 3, 4, 0),       // commit-only: held
		msg(raftpb.MsgHeartbeat, 3, 2, 0), // commit 2 < 4: the held one stays
	})
	if got, want := kinds(sent), kinds([]*raftpb.Message{msg(raftpb.MsgApp, 2, 3, 2), msg(raftpb.MsgHeartbeat, 3, 2, 0)}); !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	h.arm(time.Hour)
	if h.c == nil {
		t.Fatal("something is held but the linger is not armed")
	}
	sent = h.hold([]*raftpb.Message{
		msg(raftpb.MsgApp, 2, 5, 0), // replaces follower 2's held commit 4
		msg(raftpb.MsgApp, 3, 4, 1), // carries commit 4: follower 3's held one is dropped
	})
	if got, want := kinds(sent), kinds([]*raftpb.Message{msg(raftpb.MsgApp, 3, 4, 1)}); !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	if got, want := kinds(h.take()), kinds([]*raftpb.Message{msg(raftpb.MsgApp, 2, 5, 0)}); !slices.Equal(got, want) {
		t.Fatalf("take = %v, want %v", got, want)
	}
	if h.c != nil || len(h.msgs) != 0 || len(h.take()) != 0 {
		t.Fatal("take left something held or the linger armed")
	}
	h.arm(time.Hour)
	if h.c != nil {
		t.Fatal("nothing is held but the linger is armed")
	}
}

// TestCommitLingerSendsFewerAppends: under concurrent writers, a leader
// that holds commit-only appends sends fewer of them than one that does
// not, and its followers still apply every write.
func TestCommitLingerSendsFewerAppends(t *testing.T) {
	run := func(linger time.Duration) int {
		g := newGroupLinger(t, 0, 10*time.Millisecond, nil, linger)
		lead := g.leader()
		before := g.net.commitOnlySent(lead.cfg.Node)
		last := g.writeConcurrently(lead, 8, 40)
		sent := g.net.commitOnlySent(lead.cfg.Node) - before
		for id := uint64(1); id <= 3; id++ {
			waitApplied(t, g.net.get(id), last)
		}
		t.Logf("CommitLinger %v: the leader sent %d commit-only appends for 320 writes", linger, sent)
		return sent
	}
	without, with := run(-1), run(50*time.Millisecond)
	if with*2 > without {
		t.Errorf("the leader sent %d commit-only appends with a 50ms linger and %d without; want at most half", with, without)
	}
}
