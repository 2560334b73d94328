package replica

import (
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3/tracker"
)

// TestFollowerWatch: a follower is stuck while it sends impossible
// acknowledgements, or once it has answered for stallAfter without its
// match index moving while behind; catching up, moving, a snapshot under
// way or silence clear the stall.
func TestFollowerWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	behind := tracker.Progress{Match: 5, State: tracker.StateProbe, RecentActive: true}
	w := &followerWatch{match: 5, since: t0}
	if why := w.update(behind, 9, t0.Add(stallAfter-time.Second)); why != "" {
		t.Fatalf("stuck before stallAfter: %q", why)
	}
	if why := w.update(behind, 9, t0.Add(stallAfter)); !strings.Contains(why, "has taken none of its log for 30s") {
		t.Fatalf("after stallAfter behind and answering: %q, want stuck", why)
	}
	for name, pr := range map[string]tracker.Progress{
		"moved":     {Match: 6, State: tracker.StateProbe, RecentActive: true},
		"caught up": {Match: 9, State: tracker.StateReplicate, RecentActive: true},
		"snapshot":  {Match: 5, State: tracker.StateSnapshot, RecentActive: true},
		"silent":    {Match: 5, State: tracker.StateProbe},
	} {
		w := &followerWatch{match: 5, since: t0}
		if why := w.update(pr, 9, t0.Add(time.Hour)); why != "" {
			t.Errorf("%s: stuck (%q), want not", name, why)
		}
		if w.since != t0.Add(time.Hour) {
			t.Errorf("%s: the stall's start did not move", name)
		}
	}
	w = &followerWatch{match: 9, since: t0, lost: t0, lostCount: 1}
	if why := w.update(tracker.Progress{Match: 9, RecentActive: true}, 9, t0.Add(time.Second)); why != "" {
		t.Fatalf("after one rejection of acknowledged entries: %q, want none (it may be a late one)", why)
	}
	w.lostCount = lostAfter
	if why := w.update(tracker.Progress{Match: 9, RecentActive: true}, 9, t0.Add(time.Second)); !strings.Contains(why, "lost its log") {
		t.Fatalf("after %d rejections of acknowledged entries: %q, want stuck", lostAfter, why)
	}
	if why := w.update(tracker.Progress{Match: 10, RecentActive: true}, 10, t0.Add(2*time.Second)); why != "" {
		t.Fatalf("after its match index moved: %q, want clear", why)
	}
	w = &followerWatch{match: 9, since: t0, impossible: t0}
	if why := w.update(tracker.Progress{Match: 0, RecentActive: true}, 9, t0.Add(time.Second)); why != "" {
		t.Fatalf("readmitted (its match index reset): %q, want clear", why)
	}
	w = &followerWatch{match: 9, since: t0, impossible: t0}
	if why := w.update(tracker.Progress{Match: 9, RecentActive: true}, 9, t0.Add(time.Second)); !strings.Contains(why, "never had") {
		t.Fatalf("after an impossible acknowledgement: %q, want stuck", why)
	}
	if why := w.update(tracker.Progress{Match: 9, RecentActive: true}, 9, t0.Add(stallAfter)); why != "" {
		t.Fatalf("stallAfter after the last impossible acknowledgement: %q, want clear", why)
	}
}

// TestForgotten: a follower whose leader commits beyond its log counts
// itself stuck once that has lasted forgottenAfter up to a moment ago; a
// heartbeat it can take ends the streak.
func TestForgotten(t *testing.T) {
	r := &Raft{}
	t0 := time.Unix(1000, 0)
	r.noteStaleCommit(t0)
	r.noteStaleCommit(t0.Add(forgottenAfter - time.Second))
	if why := r.forgotten(t0.Add(forgottenAfter - time.Second)); why != "" {
		t.Fatalf("before forgottenAfter: %q", why)
	}
	r.noteStaleCommit(t0.Add(forgottenAfter))
	if why := r.forgotten(t0.Add(forgottenAfter)); !strings.Contains(why, "lost its log") {
		t.Fatalf("after forgottenAfter: %q, want stuck", why)
	}
	if why := r.forgotten(t0.Add(forgottenAfter + time.Minute)); why != "" {
		t.Fatalf("a minute after the last dropped heartbeat: %q, want clear", why)
	}
	r.staleSince = time.Time{} // what staleCommit does for a heartbeat it can take
	r.noteStaleCommit(t0.Add(2 * forgottenAfter))
	if why := r.forgotten(t0.Add(2 * forgottenAfter)); why != "" {
		t.Fatalf("a new streak: %q, want clear", why)
	}
}
