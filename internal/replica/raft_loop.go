package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cairndb/cairn/internal/transport/transportpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// loop is the replica's only goroutine that touches the RawNode. It follows
// etcd raft's Ready contract: persist entries, hard state and snapshot (with
// an fsync where a write's durability or a vote asks for it), then send
// messages, then apply committed entries, then Advance.
func (r *Raft) loop() {
	defer r.wg.Done()
	defer close(r.stopped)
	t := time.NewTicker(r.cfg.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-r.closing:
			r.shutdown()
			return
		case <-t.C:
			if r.e.ReadOnly() {
				continue // started on a full disk: silent until writable
			}
			r.tick()
		case m := <-r.inbox:
			r.step(m)
		case p := <-r.proposals:
			r.propose(p)
		case q := <-r.reads:
			r.startReads(q)
		case fn := <-r.reports:
			fn(r.rn)
		case in := <-r.snapIn:
			r.takeSnapshot(in)
		case <-r.held.c:
			r.sendHeld()
		}
		r.drain()
		if r.proposed && r.rn.HasReady() {
			// A leader's new proposal: let goroutines already runnable (the
			// server's workers with the next requests) propose theirs first,
			// so that one Ready and one commit carry them all. Nothing waits
			// when nobody is runnable.
			r.proposed = false
			runtime.Gosched()
			r.drain()
		}
		if r.rn.HasReady() && r.canWrite() {
			if err := r.handleReady(); err != nil {
				r.failed.Store(true)
				r.shutdown()
				if r.healing(err) {
					return
				}
				r.cfg.Fatal(fmt.Errorf("shard %d: %w", r.cfg.Shard, err))
				return
			}
		}
	}
}

// healing reports, and logs, whether err is a write the engine refused
// because corruption was found while it ran (by a read, say, racing this
// Ready): the engine's OnCorruption handler then sets the files aside and
// rebuilds this replica, so the replica stops without a fatal error. The
// Ready was not persisted, so nothing of it was acknowledged.
func (r *Raft) healing(err error) bool {
	if !errors.Is(err, storage.ErrCorrupt) || r.e.Corrupt() == nil || !r.e.Heals() {
		return false
	}
	r.log.Warn("replica stopped: its engine found corruption and refuses writes; the node rebuilds it from its peers",
		"err", err)
	return true
}

// drain takes everything already queued, so one Ready covers many requests.
func (r *Raft) drain() {
	var reads []*readRequest
	for {
		select {
		case m := <-r.inbox:
			r.step(m)
			continue
		case p := <-r.proposals:
			r.propose(p)
			continue
		case q := <-r.reads:
			reads = append(reads, q)
			continue
		default:
		}
		break
	}
	r.stepBatch()
	if len(reads) > 0 {
		r.startReads(reads...)
	}
}

// step hands m to raft, unless the replica declines it, and reports which.
func (r *Raft) step(m *raftpb.Message) bool {
	if r.e.ReadOnly() || r.impossibleAck(m) || r.staleCommit(m) || !r.admitAppend(m) {
		return false // a read-only engine cannot even record a vote
	}
	r.noteLostLog(m)
	if err := r.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
		r.log.Debug("step", "type", m.GetType(), "err", err)
	}
	return true
}

// impossibleAck reports, and logs, an append acknowledgement for an index
// beyond this leader's log. A correct follower never sends one: it only
// holds what a leader sent, and a leader holds every committed entry. A
// replica restored from a snapshot on its own while the rest of the group
// ran on (see RestoreShard) does, since it restarts above everything; were
// the leader to count it, entries held only by the leader could commit.
// Dropped, the replica stays behind and harmless.
func (r *Raft) impossibleAck(m *raftpb.Message) bool {
	if m.GetType() != raftpb.MsgAppResp || m.GetReject() || m.GetIndex() <= r.ls.lastIndex {
		return false
	}
	if r.leader.Load() != r.cfg.Node {
		return false
	}
	r.noteImpossible(m.GetFrom())
	if time.Since(r.impossibleLogged) >= 10*time.Second { // at most one line per 10 s
		r.impossibleLogged = time.Now()
		r.log.Error("ignoring a replica that acknowledges entries this leader never had: was it restored alone? restore every replica of the shard from the same snapshot",
			"from", m.GetFrom(), "index", m.GetIndex(), "last", r.ls.lastIndex)
	}
	return true
}

// staleCommit reports, and logs, a heartbeat that commits beyond this
// replica's log. A leader commits on a follower at most what the follower
// acknowledged, which it persisted first, except when the follower has
// lost its log since: a replica readmitted after a data loss (or a heal)
// may still get a heartbeat the leader built from its old progress, on its
// way while the readmission ran (the rejoin RPC and the Raft stream keep
// no common order). etcd raft panics on it ("tocommit(N) is out of range
// [lastIndex(M)]"); dropped, it is a lost heartbeat, and the next one,
// built from the readmitted replica's new progress, commits nothing it
// lacks.
func (r *Raft) staleCommit(m *raftpb.Message) bool {
	if m.GetType() != raftpb.MsgHeartbeat {
		return false
	}
	if m.GetCommit() <= r.ls.lastIndex {
		r.staleSince = time.Time{} // a heartbeat it can take: the streak ends
		return false
	}
	r.noteStaleCommit(time.Now())
	if time.Since(r.staleLogged) >= 10*time.Second { // at most one line per 10 s
		r.staleLogged = time.Now()
		r.log.Warn("ignoring a heartbeat that commits beyond this replica's log: the leader still remembers the log this replica lost",
			"from", m.GetFrom(), "commit", m.GetCommit(), "last", r.ls.lastIndex)
	}
	return true
}

func (r *Raft) tick() {
	r.ticks++
	bs := r.rn.BasicStatus()
	r.watchTransfer(bs)
	if bs.RaftState != raft.StateLeader && r.ticks%3 != 0 && !r.e.Roomy() {
		// A replica whose disk is at or near its margin runs its election
		// timer at a third of the pace, so a replica with room wins.
		return
	}
	// Before Tick: Tick's quorum check clears RecentActive. A leader whose
	// disk refuses puts looks for a successor every 5 ticks.
	if (r.ticks%5 == 0 || r.ticks%20 == 0) && r.rn.BasicStatus().RaftState == raft.StateLeader {
		switch {
		case r.ticks%5 == 0 && r.e.LowDisk():
			r.leaveFullDisk()
		case r.ticks%20 == 0:
			r.preferLeader()
		}
	}
	r.rn.Tick()
	r.expireSnapshot()
	if r.ticks%max(1, int(time.Second/r.cfg.TickInterval)) == 0 { // once a second
		r.watchFollowers(time.Now())
	}
	st := r.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		return
	}
	n := &transportpb.CommitNotice{Term: st.HardState.GetTerm(), Commit: st.HardState.GetCommit()}
	for _, v := range r.Voters() {
		if v != r.cfg.Node {
			r.cfg.Sender.SendNotice(r.cfg.Shard, v, n)
		}
	}
	if len(r.ackWait) > 0 {
		r.checkAckAll()
	}
}

// preferLeader hands leadership to the preferred node once it is caught up,
// so that leaders spread evenly over the nodes.
func (r *Raft) preferLeader() {
	want := r.preferred.Load()
	if want == 0 || want == r.cfg.Node {
		return
	}
	st := r.rn.Status()
	// Raft's transfer catches the target up first; only skip a target that
	// is far behind (or down), which would stall writes during the transfer.
	if pr, ok := st.Progress[want]; ok && !pr.IsLearner && !r.avoided(want) && pr.RecentActive && pr.Match+1000 >= r.ls.lastIndex {
		r.log.Info("transferring leadership to the preferred node", "to", want)
		r.rn.TransferLeader(want)
	}
}

// handleReady persists what the Ready asks and applies its committed
// entries in one Pebble batch, committed once with the strongest sync mode
// the new entries (or a vote) ask for; only then are messages sent and
// requests answered. One commit per Ready halves the engine's commits on
// leaders and followers alike. A Ready with a snapshot installs it first, on
// its own, with the Ready's hard state (raft_snapshot.go); a received
// snapshot that the Ready does not carry was declined by raft.
func (r *Raft) handleReady() error {
	rd := r.rn.Ready()
	r.counts.note(rd)
	if rd.SoftState != nil {
		r.setLeader(rd.SoftState.Lead)
	}
	rb := &readyBatch{b: r.e.NewShardBatch(r.cfg.Shard, r.cfg.Origin)}
	defer func() { rb.b.Close() }() // rb.b changes when a checksum cuts the batch
	rb.b.SetTable(r.table.Load())
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := r.commitSnapshot(rd.Snapshot, rd.HardState); err != nil {
			return err
		}
	}
	r.finishInbound(nil) // stepped before this Ready, and not in it: declined
	// A leader sends before it writes (Raft thesis §10.2.1), so its
	// followers persist the entries while it does. Raft counts the
	// leader's own copy at once, but no follower's ack is stepped before
	// this Ready is written (this loop does both), so nothing commits
	// before the leader holds it as durably as the Ready asks. A follower
	// or candidate sends only after: its acks and votes promise what it
	// wrote.
	leader := r.IsLeader()
	if leader {
		r.leaderSend(rd.Messages)
	}
	var wrote bool
	var err error
	rb.mode, wrote, err = r.persistInto(rb.b, rd)
	if err != nil {
		return err
	}
	done, err := r.applyInto(rb, rd.CommittedEntries)
	if err != nil {
		return err
	}
	if wrote || len(rd.CommittedEntries) > 0 {
		if err := rb.b.Commit(rb.mode); err != nil {
			return err
		}
		r.table.Store(rb.b.Table()) // published once durable, before the applied index
	}
	r.ackLocal()
	if !leader {
		r.send(coalesceAcks(rd.Messages))
	}
	if len(rd.CommittedEntries) > 0 {
		r.afterApply(done, rd.CommittedEntries[len(rd.CommittedEntries)-1].GetIndex())
		if err := r.maybeTruncate(r.applied.Load()); err != nil {
			return err
		}
	}
	for _, rs := range rd.ReadStates {
		for _, q := range r.readWait[string(rs.RequestCtx)] {
			q.index = rs.Index
			r.readIndex = append(r.readIndex, q)
		}
		delete(r.readWait, string(rs.RequestCtx))
	}
	r.rn.Advance(rd)
	r.releaseReads()
	return nil
}

// readyBatch is the batch a Ready is written into and the sync mode its
// commit needs. A Checksum entry cuts it: what precedes the entry is
// committed (with mode, so the Ready's log entries and hard state are as
// durable as they ask), and b is replaced by a fresh batch for the rest.
type readyBatch struct {
	b    *storage.Batch
	mode storage.SyncMode
}

func (r *Raft) setLeader(lead uint64) {
	was := r.leader.Swap(lead)
	if was != lead {
		r.log.Info("leader changed", "leader", lead)
		r.signal()
	}
	if was == r.cfg.Node && lead != r.cfg.Node {
		r.held.take() // a former leader's appends: followers would refuse them
		r.failReads(&NotLeaderError{Leader: lead})
	}
}

// persistInto adds to b what Ready asks to be durable before a follower's
// messages go out (a leader's went out first: see handleReady), and returns the sync mode that needs. Without entries or a new hard
// state it writes nothing (wrote=false) and the mode is NoSync: applying
// alone needs no log durability, the log already has it.
func (r *Raft) persistInto(b *storage.Batch, rd raft.Ready) (mode storage.SyncMode, wrote bool, err error) {
	mode = storage.NoSync
	if len(rd.Entries) > 0 {
		mode = storage.WriteNoSync // Raft's log never stays in the process: see docs/guarantees.md
		if err := r.ls.append(b, rd.Entries); err != nil {
			return 0, false, err
		}
		leader := r.leader.Load() == r.cfg.Node
		for _, e := range rd.Entries {
			if m := r.entryMode(e, leader); m == storage.Sync {
				mode = storage.Sync
			}
		}
		wrote = true
	}
	if hs := rd.HardState; !raft.IsEmptyHardState(hs) {
		// A new commit index alone needs no durability: after a crash Raft
		// learns it again from the leader. A new term or vote must be fsynced.
		if hs.GetTerm() != r.ls.hard.GetTerm() || hs.GetVote() != r.ls.hard.GetVote() {
			mode = storage.Sync // a vote must never be forgotten
		}
		r.ls.hard = proto.Clone(hs).(*raftpb.HardState)
		r.term.Store(hs.GetTerm())
		if err := r.ls.writeState(b); err != nil {
			return 0, false, err
		}
		wrote = true
	}
	return mode, wrote, nil
}

// entryMode returns how an entry asks to be persisted here, and notes the
// index of this node's own proposals.
func (r *Raft) entryMode(e *raftpb.Entry, leader bool) storage.SyncMode {
	if e.GetType() != raftpb.EntryNormal || len(e.GetData()) == 0 {
		return storage.WriteNoSync
	}
	h, err := decodeHeader(e.GetData())
	if err != nil {
		return storage.Sync
	}
	if h.proposer == r.cfg.Node {
		if p := r.pending[h.proposal]; p != nil {
			p.index = e.GetIndex()
		}
	}
	if leader {
		return h.master
	}
	return h.replica
}

// ackLocal answers AckNone writes whose result does not depend on reading
// the store (unconditional puts returning nothing) once the leader has
// persisted them.
func (r *Raft) ackLocal() {
	keep := r.noneWait[:0]
	for _, p := range r.noneWait {
		if r.pending[p.id] != p {
			continue // already answered (applied in this Ready, or dropped)
		}
		if p.index == 0 {
			keep = append(keep, p) // not yet persisted
			continue
		}
		delete(r.pending, p.id)
		ops := make([]*cairnpb.OperationResult, len(p.cmd.GetBatch().GetOps()))
		for i := range ops {
			ops[i] = &cairnpb.OperationResult{Success: true, NewVersion: storage.MakeVersion(r.cfg.Origin, p.index)}
		}
		p.done <- outcome{res: storage.Result{Ops: ops}}
	}
	clear(r.noneWait[len(keep):])
	r.noneWait = keep
}

func blindPut(cmd *commandpb.Command) bool {
	b := cmd.GetBatch()
	if b == nil {
		return false
	}
	for _, op := range b.GetOps() {
		put := op.GetPut()
		if put == nil || put.GetCondition() != cairnpb.Condition_CONDITION_UNSPECIFIED ||
			(put.GetReturn() != cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_UNSPECIFIED && put.GetReturn() != cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_NONE) {
			return false
		}
	}
	return true
}

type resolved struct {
	p   *raftProposal
	res storage.Result
}

// applyInto applies committed entries into rb's batch and returns the
// proposals of this node they answer; nothing is answered before the batch
// commits. A Checksum entry cuts the batch right after itself
// (cutForChecksum).
func (r *Raft) applyInto(rb *readyBatch, entries []*raftpb.Entry) ([]resolved, error) {
	var done []resolved
	for _, e := range entries {
		r.lastTerm = e.GetTerm()
		if e.GetType() == raftpb.EntryConfChange {
			if err := r.applyConf(rb.b, e); err != nil {
				return nil, err
			}
			rb.b.Skip(e.GetIndex())
			continue
		}
		if e.GetType() != raftpb.EntryNormal || len(e.GetData()) == 0 {
			rb.b.Skip(e.GetIndex())
			continue
		}
		h, cmd, err := decodeEntry(e.GetData())
		if err != nil {
			r.log.Error("skipping an undecodable log entry", "index", e.GetIndex(), "err", err)
			rb.b.Skip(e.GetIndex())
			continue
		}
		res := rb.b.Apply(e.GetIndex(), cmd)
		if c := cmd.GetChecksum(); c != nil {
			if err := r.cutForChecksum(rb, e.GetIndex(), c); err != nil {
				return nil, err
			}
		}
		if h.proposer == r.cfg.Node {
			if p := r.pending[h.proposal]; p != nil {
				delete(r.pending, h.proposal)
				p.index = e.GetIndex()
				done = append(done, resolved{p, res})
			}
		}
	}
	return done, nil
}

// afterApply publishes the applied index and answers the proposals.
func (r *Raft) afterApply(done []resolved, last uint64) {
	r.applied.Store(last)
	r.signal()
	for _, d := range done {
		if d.p.ack == AckAll {
			d.p.result = d.res
			d.p.applied.Store(true)
			r.ackWait = append(r.ackWait, d.p)
			continue
		}
		d.p.done <- outcome{res: d.res}
	}
	for id, p := range r.pending {
		if p.term < r.lastTerm { // a later term's entry is applied: p never will be
			delete(r.pending, id)
			p.done <- outcome{err: ErrDropped}
		}
	}
	r.checkAckAll()
}

// checkAckAll answers ALL-ack writes once every voter holds them.
func (r *Raft) checkAckAll() {
	if len(r.ackWait) == 0 {
		return
	}
	st := r.rn.Status()
	keep := r.ackWait[:0]
	for _, p := range r.ackWait {
		all := st.RaftState == raft.StateLeader
		for _, v := range r.Voters() {
			if pr, ok := st.Progress[v]; !ok || pr.Match < p.index {
				all = false
			}
		}
		if all {
			p.done <- outcome{res: p.result}
		} else if p.ctx.Err() == nil {
			keep = append(keep, p)
		}
	}
	r.ackWait = keep
}

func (r *Raft) shutdown() {
	r.held.take()
	r.finishInbound(ErrClosed)
	r.batch.fail(func() error { return ErrClosed }) // never reached raft
	r.batch.reset()
	for id, p := range r.pending {
		delete(r.pending, id)
		p.done <- outcome{err: ErrUnknownOutcome}
	}
	for _, p := range r.ackWait {
		p.done <- outcome{err: ErrAckTimeout}
	}
	r.ackWait = nil
	r.failReads(ErrClosed)
	for _, w := range r.confWait {
		w.done <- ErrClosed
	}
	r.confWait = nil
	for {
		select {
		case p := <-r.proposals:
			p.done <- outcome{err: ErrClosed}
		case q := <-r.reads:
			q.done <- ErrClosed
		default:
			return
		}
	}
}

func readCtx(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }
