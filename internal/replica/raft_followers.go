package replica

import (
	"maps"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
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
//	lost log    it rejects entries at or below what it acknowledged before:
//	            it lost its log (started on an old copy of its root after
//	            it was readmitted); etcd raft takes such a rejection for a
//	            stale one and goes on sending what the replica lacks
//	            the base for, for ever (noteLostLog)
//	stalled     it is recently active, behind the commit index, not being
//	            sent a snapshot, and its match index has not moved for
//	            stallAfter
//
// A follower knows one more kind itself:
//
//	forgotten   its leader's heartbeats have committed beyond its log for
//	            forgottenAfter (staleCommit drops them): the leader remembers
//	            a log this replica no longer has, and since it answers none
//	            of them the leader sees it as silent
//
// The watch runs on the loop goroutine once a second (watchFollowers) and
// publishes the stuck followers (Stuck), a follower itself when it is
// forgotten, and nothing on any other replica.

// stallAfter is how long a follower may answer without taking any of the
// leader's log before it counts as stuck.
const stallAfter = 30 * time.Second

// forgottenAfter is how long a follower's leader may commit beyond its
// log before it counts as stuck: right after a readmission a heartbeat or
// two built from its old progress may still arrive (staleCommit).
const forgottenAfter = 10 * time.Second

// lostAfter is how many rejections of acknowledged entries, with no
// progress between them, mark a follower that lost its log: one may be a
// rejection sent before it caught up, arriving late.
const lostAfter = 3

// followerWatch is a leader's record of one follower's progress (loop
// goroutine only).
type followerWatch struct {
	match      uint64
	since      time.Time // when match last moved, or the follower caught up
	impossible time.Time // when it last acknowledged an index beyond the log
	lost       time.Time // when it last rejected an index it had acknowledged
	lostCount  int       // such rejections since its match index last moved
}

// noteImpossible records an acknowledgement of entries this leader never
// had from follower id.
func (r *Raft) noteImpossible(id uint64) {
	r.watchOf(id).impossible = time.Now()
}

// noteLostLog records, on a leader, an append rejection at or below what
// the follower acknowledged before: it lost entries it had persisted.
func (r *Raft) noteLostLog(m *raftpb.Message) {
	if m.GetType() != raftpb.MsgAppResp || !m.GetReject() || r.leader.Load() != r.cfg.Node {
		return
	}
	if match, ok := r.matchOf(m.GetFrom()); ok && m.GetIndex() <= match {
		w := r.watchOf(m.GetFrom())
		w.lost = time.Now()
		w.lostCount++
		if time.Since(r.impossibleLogged) >= 10*time.Second { // at most one line per 10 s
			r.impossibleLogged = time.Now()
			r.log.Error("a replica rejects entries it acknowledged before: it lost its log (started on an old copy of its root?); restart it on an empty root with --rejoin-as",
				"from", m.GetFrom(), "index", m.GetIndex(), "match", match)
		}
	}
}

// matchOf returns the leader's match index of follower id, without the
// copy of every progress that Status makes.
func (r *Raft) matchOf(id uint64) (match uint64, ok bool) {
	r.rn.WithProgress(func(pid uint64, _ raft.ProgressType, pr tracker.Progress) {
		if pid == id {
			match, ok = pr.Match, true
		}
	})
	return match, ok
}

// watchOf returns the watch of follower id, creating it.
func (r *Raft) watchOf(id uint64) *followerWatch {
	if r.watch == nil {
		r.watch = map[uint64]*followerWatch{}
	}
	w := r.watch[id]
	if w == nil {
		w = &followerWatch{since: time.Now()}
		r.watch[id] = w
	}
	return w
}

// watchFollowers updates the watch from the leader's progress and
// publishes the stuck followers, each with why.
func (r *Raft) watchFollowers(now time.Time) {
	st := r.rn.Status()
	if st.RaftState != raft.StateLeader {
		clear(r.watch)
		r.stuck.Store(nil)
		if why := r.forgotten(now); why != "" {
			r.stuck.Store(&map[uint64]string{r.cfg.Node: why})
		}
		return
	}
	if r.watch == nil {
		r.watch = map[uint64]*followerWatch{}
	}
	var stuck map[uint64]string // made for the first stuck follower
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
			if stuck == nil {
				stuck = map[uint64]string{}
			}
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
	if pr.Match != w.match {
		// It follows again (or was readmitted: its progress reset): what
		// it did before, and a rejection in flight from before it caught
		// up, say nothing now.
		w.impossible, w.lost, w.lostCount = time.Time{}, time.Time{}, 0
	}
	if now.Sub(w.impossible) < stallAfter {
		return "it acknowledges entries its leader never had: it was restored alone, or started on an old copy of its root"
	}
	if w.lostCount >= lostAfter && now.Sub(w.lost) < stallAfter {
		return "it rejects entries it acknowledged before: it lost its log (it was started on an old copy of its root?)"
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

// noteStaleCommit records a heartbeat that commits beyond this replica's
// log (staleCommit).
func (r *Raft) noteStaleCommit(now time.Time) {
	if r.staleSince.IsZero() {
		r.staleSince = now
	}
	r.staleLast = now
}

// forgotten says why this follower is stuck when its leader's heartbeats
// have committed beyond its log, with none it could take, for forgottenAfter
// up to a moment ago; "" otherwise.
func (r *Raft) forgotten(now time.Time) string {
	if r.staleSince.IsZero() || now.Sub(r.staleLast) > 5*time.Second || now.Sub(r.staleSince) < forgottenAfter {
		return ""
	}
	return "its leader remembers entries this replica no longer has, for " + now.Sub(r.staleSince).Round(time.Second).String() +
		": it lost its log (it was started on an old copy of its root, or its disk lost writes)"
}

// Stuck returns, on a leader, the followers that answer but cannot follow
// its log, and on a forgotten follower itself, each with why (by node
// id); nil if none. Safe from any goroutine.
func (r *Raft) Stuck() map[uint64]string {
	if p := r.stuck.Load(); p != nil {
		return maps.Clone(*p)
	}
	return nil
}
