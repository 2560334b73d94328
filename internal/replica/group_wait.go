package replica

import (
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// groupWait holds a durable group open for the writers on their way, so
// that one fsync carries them all (commit_delay in PostgreSQL,
// binlog_group_commit_sync_delay in MySQL; docs/design/20261129_group_wait.md).
//
// Closed-loop writers come back together: the writers an fsync answered
// send their next writes at once. Without a wait the loop takes what
// queued during the last fsync, and the writers just answered arrive
// during the next one and wait for the one after: they split into two
// cohorts that take turns (8 writers: 3.7 per fsync), and every write
// waits for about two fsyncs.
//
// The rule, for a group that asks for Sync and holds fewer proposals than
// expect:
//
//	wait for the next proposal, at most gap (Config.GroupWait / 4) since
//	the last one arrived, and at most limit since the wait began (limit =
//	the recent durable commit's duration, capped by Config.GroupWait);
//	stop as soon as the group holds expect proposals
//
//	after a durable commit, with seen = len(group) + the proposals queued
//	during it (the writers in flight):
//	                   expect = seen                if the wait ran out
//	                   expect = max(expect, seen)   otherwise
//
// Counting the queued proposals merges two cohorts of writers that take
// turns, each arriving during the other's fsync, into one group. A lone
// writer (expect 1) never waits, and a writer that left costs one wait at
// most. A wait costs a group at most one commit's duration, which is what
// its late writers would otherwise wait for in full, after the commit
// under way. Only the apply loop's goroutine uses a groupWait.
type groupWait struct {
	max    time.Duration // Config.GroupWait; 0 turns the wait off
	gap    time.Duration // the longest pause between arrivals to wait out
	expect int
	commit time.Duration // moving average of a durable commit (WAL write and fsync)
	timer  *time.Timer
}

func newGroupWait(max time.Duration) *groupWait {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &groupWait{max: max, gap: max / 4, timer: t}
}

// wants reports whether a group of size proposals, committed with mode,
// should wait for more.
func (w *groupWait) wants(size int, mode storage.SyncMode) bool {
	return w.max > 0 && mode == storage.Sync && size < w.expect && w.commit > 0
}

// limit is how long a group may wait in all.
func (w *groupWait) limit() time.Duration { return min(w.commit, w.max) }

// committed records the writers in flight at a durable commit's end (its
// group's and those queued during it), the commit's duration, and whether
// the group's wait ran out.
func (w *groupWait) committed(seen int, took time.Duration, ranOut bool) {
	if w.commit == 0 {
		w.commit = took
	} else {
		w.commit += (took - w.commit) / 8
	}
	if ranOut {
		w.expect = seen
	} else {
		w.expect = max(w.expect, seen)
	}
}

// waitMore adds proposals to g as they arrive, by the rule above, and
// reports whether the wait ran out before expect arrived. It returns early
// when the replica closes; the loop then commits what it took and drains
// the rest.
func (l *Local) waitMore(g *group) (ranOut bool) {
	w := l.wait
	end := time.Now().Add(w.limit())
	for len(g.members) < w.expect && len(g.members) < l.cfg.MaxGroup {
		left := time.Until(end)
		if left <= 0 {
			return true
		}
		w.timer.Reset(min(left, w.gap))
		select {
		case p := <-l.proposals:
			w.timer.Stop()
			g.add(p)
			l.fill(g)
		case <-w.timer.C:
			return true
		case <-l.closing:
			w.timer.Stop()
			return false
		}
	}
	return false
}
