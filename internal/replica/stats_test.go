package replica

import (
	"context"
	"sync"
	"testing"

	"github.com/cairndb/cairn/internal/storage"
)

// TestRaftStats: after 100 writes every replica reports having written
// and applied each entry, in no more Readies than entries plus elections'
// and heartbeats' few; only the leader says it leads; all agree on the
// term; and the leader has sent messages.
func TestRaftStats(t *testing.T) {
	g := newGroup(t, 1000)
	l := g.leader()
	before := l.Stats()
	last := g.writeConcurrently(l, 4, 25)
	for id := uint64(1); id <= 3; id++ {
		r := g.net.get(id)
		waitApplied(t, r, last)
		s := r.Stats()
		if s.Shard != r.cfg.Shard || s.Applied < last || s.Commit < s.Applied {
			t.Fatalf("replica %d: %+v, want applied and commit at least %d", id, s, last)
		}
		if s.Leader != (r == l) {
			t.Fatalf("replica %d says leader=%v; the leader is %d", id, s.Leader, l.cfg.Node)
		}
		if s.Term != before.Term {
			t.Fatalf("replica %d in term %d, the leader in %d", id, s.Term, before.Term)
		}
		if s.Appended < 100 || s.ApplyEntries < 100 {
			t.Fatalf("replica %d appended %d and applied %d entries for 100 writes", id, s.Appended, s.ApplyEntries)
		}
		if s.Readies == 0 || s.Readies > s.Appended+s.ApplyEntries+50 {
			t.Fatalf("replica %d handled %d Readies for %d entries", id, s.Readies, s.Appended)
		}
	}
	if s := l.Stats(); s.Sent <= before.Sent {
		t.Fatalf("the leader sent %d messages before the writes and %d after", before.Sent, s.Sent)
	}
}

// TestLocalStats: 16 writers of 10 SYNC writes each are 160 commands in at
// least one and at most 160 group commits, and the applied index is 160.
func TestLocalStats(t *testing.T) {
	l := openTest(t, DefaultConfig())
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := range 10 {
				r, err := l.Propose(context.Background(), put("/s/-/"+string(rune('a'+w))+string(rune('a'+i)), "v", 0), storage.Sync)
				if err != nil || r.Err != nil {
					t.Errorf("propose: %v %v", err, r.Err)
					return
				}
			}
		})
	}
	wg.Wait()
	s := l.Stats()
	if s.Commands != 160 || s.Applied != 160 || s.Groups == 0 || s.Groups > 160 {
		t.Fatalf("%+v, want 160 commands and applied index 160 in 1 to 160 groups", s)
	}
	t.Logf("160 SYNC writes from 16 writers: %d group commits", s.Groups)
}
