package replica

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// truncatedAt returns the index up to which r's log was truncated, from
// its engine (safe beside the Raft loop).
func truncatedAt(t *testing.T, r *Raft) uint64 {
	t.Helper()
	b, ok, err := r.Engine().ShardState(1, storage.ShardTruncated)
	if err != nil || !ok || len(b) < 8 {
		t.Fatalf("node %d's truncated state: %x, %v, %v", r.cfg.Node, b, ok, err)
	}
	return binary.BigEndian.Uint64(b[:8])
}

// waitTruncated waits until r's log was truncated to at least index.
func waitTruncated(t *testing.T, r *Raft, index uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for truncatedAt(t, r) < index {
		if time.Now().After(deadline) {
			t.Fatalf("node %d's log is truncated at %d, want at least %d (applied %d)", r.cfg.Node, truncatedAt(t, r), index, r.AppliedIndex())
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
}

// TestRaftLogFollowsProgress: with every replica up, each log keeps about
// LogSlack applied entries, not LogKeep; with a follower down, the
// leader keeps every entry that follower still needs (up to LogKeep), so
// it catches up from the log without a snapshot, and once it has, the
// leader's log shrinks back.
func TestRaftLogFollowsProgress(t *testing.T) {
	const slack = 20
	g := newGroup(t, 10000)
	g.logSlack = slack
	g.stop(1)
	g.stop(2)
	g.stop(3)
	for id := uint64(1); id <= 3; id++ {
		g.start(id)
	}
	l := g.leader()
	write := func(n int, tag string) uint64 {
		var last []byte
		for i := range n {
			v, err := g.write(l, fmt.Sprintf("/r/-/%s%03d", tag, i), "v")
			if err != nil {
				t.Fatal(err)
			}
			last = v
		}
		_, idx, _ := storage.ParseVersion(last)
		return idx
	}
	idx := write(150, "a")
	for id := uint64(1); id <= 3; id++ {
		r := g.net.get(id)
		waitApplied(t, r, idx)
		waitTruncated(t, r, idx-3*slack)
	}
	down := follower(l)
	g.stop(down)
	idx = write(150, "b")
	if tr := truncatedAt(t, l); tr >= idx-150 {
		t.Fatalf("the leader truncated its log to %d with node %d down since about index %d: it dropped entries that node needs", tr, down, idx-150)
	}
	snaps := g.net.snapsSent.Load()
	g.start(down)
	waitApplied(t, g.net.get(down), idx)
	if n := g.net.snapsSent.Load() - snaps; n != 0 {
		t.Fatalf("node %d caught up through %d snapshots: the leader's log no longer held the entries it missed", down, n)
	}
	idx = write(3*slack, "c")
	waitTruncated(t, l, idx-3*slack)
}
