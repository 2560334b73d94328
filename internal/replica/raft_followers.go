package replica

import (
	"maps"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// A leader watches for followers that answer it but cannot follow its log,
// which Raft alone never reports: such a replica counts as up everywhere,
// yet takes no write and never catches up. Two kinds are known:
//
//	impossible  it acknowledges entries this leader never had (it was
//	            restored alone, or started on an old copy of its root that
//	            holds another history); the leader ignores its acks
//	            (impossibleAck)
//	stalled     it is recently active, behind the commit index, not being
//	            sent a snapshot, and its match index has not moved for
//	            stallAfter
//
// The watch runs on the loop goroutine once a second (watchFollowers) and
// publishes the stuck followers (Stuck); a replica that is not leader
// publishes none.

// stallAfter is how long a follower may answer without taking any of the
// leader's log before it counts as stuck.
const stallAfter = 30 * time.Second

// followerWatch is a leader's record of one follower's progress (loop
// goroutine only).
type followerWatch struct {
	match      uint64
	since      time.Time // when match last moved, or the follower caught up
	impossible time.Time // when it last acknowledged an index beyond the log
}

// noteImpossible records an acknowledgement of entries this leader never
// had from follower id.
func (r *Raft) noteImpossible(id uint64) {
	if r.watch == nil {
		r.watch = map[uint64]*followerWatch{}
	}
	w := r.watch[id]
	if w == nil {
		w = &followerWatch{since: time.Now()}
		r.watch[id] = w
	}
	w.impossible = time.Now()
}

// watchFollowers updates the watch from the leader's progress and
// publishes the stuck followers, each with why.
func (r *Raft) watchFollowers(now time.Time) {
	st := r.rn.Status()
	if st.RaftState != raft.StateLeader {
		clear(r.watch)
		r.stuck.Store(nil)
		return
	}
	if r.watch == nil {
		r.watch = map[uint64]*followerWatch{}
	}
	stuck := map[uint64]string{}
	for id, pr := range st.Progress {
		if id == r.cfg.Node {
			continue
		}
		w := r.watch[id]
		if w == nil {
			w = &followerWatch{match: pr.Match, since: now}
			r.watch[id] = w
		}
		if why := w.update(pr, st.HardState.GetCommit(), now); why != "" {
			stuck[id] = why
		}
	}
	for id := range r.watch {
		if _, ok := st.Progress[id]; !ok {
			delete(r.watch, id)
		}
	}
	if len(stuck) == 0 {
		r.stuck.Store(nil)
		return
	}
	r.stuck.Store(&stuck)
}

// update moves w to the follower's progress pr under a leader that has
// committed commit, and returns why the follower is stuck ("" if not).
func (w *followerWatch) update(pr tracker.Progress, commit uint64, now time.Time) string {
	if now.Sub(w.impossible) < stallAfter {
		return "it acknowledges entries its leader never had: it was restored alone, or started on an old copy of its root"
	}
	if pr.Match != w.match || pr.Match >= commit || pr.State == tracker.StateSnapshot || !pr.RecentActive {
		w.match, w.since = pr.Match, now
		return ""
	}
	if now.Sub(w.since) >= stallAfter {
		return "it answers its leader but has taken none of its log for " + now.Sub(w.since).Round(time.Second).String()
	}
	return ""
}

// Stuck returns, on a leader, the followers that answer but cannot follow
// its log, each with why; nil if none (or not leader). Safe from any
// goroutine.
func (r *Raft) Stuck() map[uint64]string {
	if p := r.stuck.Load(); p != nil {
		return maps.Clone(*p)
	}
	return nil
}
