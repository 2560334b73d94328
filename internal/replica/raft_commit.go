package replica

import (
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// A leader's commit-only appends, held back briefly.
//
// When an entry commits, etcd raft sends each follower an append without
// entries, only to carry the new commit index, and the follower answers
// it. Under load the leader's next append to that follower, a moment
// later, carries the commit index too. So a leader holds each commit-only
// append for up to RaftConfig.CommitLinger: an append or heartbeat to the
// same follower that carries a commit index at least as high replaces it,
// and what is still held when the linger ends goes out then.
//
//	leader Ready k:    MsgApp{entries 5-6, commit 4} -> sent
//	leader Ready k+1:  MsgApp{no entries, commit 6}  -> held, timer armed
//	leader Ready k+2:  MsgApp{entries 7, commit 6}   -> sent; the held one is dropped
//	the timer fires:   anything still held           -> sent
//
// A follower learns of a commit at most CommitLinger later than before, and
// nothing else changes: the held message carries no entries, the leader's
// flow control does not count it, and one is sent late only if no later
// append to its follower went out meanwhile. Under load this halves the
// Raft messages per write and spares each follower a Ready (and a Pebble
// commit) per write. Loop goroutine only.
type heldCommits struct {
	msgs  map[uint64]*raftpb.Message // by follower: the latest commit-only append
	timer *time.Timer
	c     <-chan time.Time // timer.C while armed, else nil (a select skips it)
}

// commitOnly reports whether m is an append that carries no entries.
func commitOnly(m *raftpb.Message) bool {
	return m.GetType() == raftpb.MsgApp && len(m.GetEntries()) == 0
}

// hold returns the messages of a leader's Ready to send now. It keeps a
// copy of each commit-only append, replacing the one held for the same
// follower, and drops a held one when another append or a heartbeat to
// its follower carries a commit index at least as high.
func (h *heldCommits) hold(msgs []*raftpb.Message) []*raftpb.Message {
	out := make([]*raftpb.Message, 0, len(msgs))
	for _, m := range msgs {
		if commitOnly(m) {
			if h.msgs == nil {
				h.msgs = make(map[uint64]*raftpb.Message)
			}
			h.msgs[m.GetTo()] = proto.Clone(m).(*raftpb.Message)
			continue
		}
		t := m.GetType()
		if held, ok := h.msgs[m.GetTo()]; ok && (t == raftpb.MsgApp || t == raftpb.MsgHeartbeat) && m.GetCommit() >= held.GetCommit() {
			delete(h.msgs, m.GetTo())
		}
		out = append(out, m)
	}
	return out
}

// arm starts the linger if something is held and it is not running.
func (h *heldCommits) arm(linger time.Duration) {
	if len(h.msgs) == 0 || h.c != nil {
		return
	}
	if h.timer == nil {
		h.timer = time.NewTimer(linger)
	} else {
		h.timer.Reset(linger)
	}
	h.c = h.timer.C
}

// take returns what is held, forgets it and stops the linger.
func (h *heldCommits) take() []*raftpb.Message {
	if h.timer != nil {
		h.timer.Stop()
	}
	h.c = nil
	out := make([]*raftpb.Message, 0, len(h.msgs))
	for id, m := range h.msgs {
		out = append(out, m)
		delete(h.msgs, id)
	}
	return out
}

// leaderSend sends a leader Ready's messages, holding its commit-only
// appends (see heldCommits); CommitLinger < 0 sends them at once.
func (r *Raft) leaderSend(msgs []*raftpb.Message) {
	if r.cfg.CommitLinger > 0 {
		msgs = r.held.hold(msgs)
		r.held.arm(r.cfg.CommitLinger)
	}
	r.send(msgs)
}

// sendHeld sends the commit-only appends still held when the linger ends.
func (r *Raft) sendHeld() {
	if msgs := r.held.take(); len(msgs) > 0 && r.IsLeader() {
		r.send(msgs)
	}
}
