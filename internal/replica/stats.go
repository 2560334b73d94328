package replica

import (
	"sync/atomic"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// RaftStats is a snapshot of a Raft replica's state and counters, for the
// metrics endpoint (internal/metrics). The counters grow from the
// replica's start; Commit starts at the index the replica restarted at.
type RaftStats struct {
	Shard  uint64
	Leader bool   // this replica leads its group
	Term   uint64 // the current term, as this replica knows it
	Commit uint64 // the highest index known committed
	// Applied is the highest index applied to the engine.
	Applied uint64
	// Readies counts the Readies handled: each is usually one commit of
	// the engine (a Checksum entry or a log truncation adds one). Appended and ApplyEntries count the log entries they
	// wrote and applied, so Appended / Readies is how many entries a
	// Ready carries. Sent counts the Raft messages handed to the transport
	// (appends, acknowledgements, votes, heartbeats and their answers; not
	// the leader's commit notices).
	Readies, Appended, ApplyEntries, Sent uint64
}

// readyCounts are RaftStats' counters, written by the loop goroutine and
// read by Stats from any goroutine.
type readyCounts struct {
	readies, appended, applied, sent, commit atomic.Uint64
}

func (c *readyCounts) note(rd raft.Ready) {
	c.readies.Add(1)
	c.appended.Add(uint64(len(rd.Entries)))
	c.applied.Add(uint64(len(rd.CommittedEntries)))
	if !raft.IsEmptyHardState(rd.HardState) {
		c.commit.Store(rd.HardState.GetCommit())
	}
}

// Stats returns the replica's state and counters. Safe from any goroutine.
func (r *Raft) Stats() RaftStats {
	return RaftStats{
		Shard:        r.cfg.Shard,
		Leader:       r.IsLeader(),
		Term:         r.term.Load(),
		Commit:       r.counts.commit.Load(),
		Applied:      r.applied.Load(),
		Readies:      r.counts.readies.Load(),
		Appended:     r.counts.appended.Load(),
		ApplyEntries: r.counts.applied.Load(),
		Sent:         r.counts.sent.Load(),
	}
}

// LocalStats is a snapshot of a lite replica's group commit: Groups
// counts the engine commits, Commands the commands applied in them, so
// Commands / Groups is how many writers share one commit (and, for SYNC
// writes, one fsync).
type LocalStats struct {
	Applied, Groups, Commands uint64
}

// Stats returns the replica's counters. Safe from any goroutine.
func (l *Local) Stats() LocalStats {
	return LocalStats{Applied: l.applied.Load(), Groups: l.groups.Load(), Commands: l.commands.Load()}
}

// send hands msgs to the transport and counts them.
func (r *Raft) send(msgs []*raftpb.Message) {
	r.counts.sent.Add(uint64(len(msgs)))
	r.cfg.Sender.Send(r.cfg.Shard, msgs)
}
