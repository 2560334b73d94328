package replica

import (
	"fmt"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Proposals reach raft in batches.
//
// etcd raft answers each MsgProp it steps with an append to every
// follower, at once: stepped one by one, the five proposals a Ready
// carries went out as five MsgApps of one entry each to each follower,
// and each follower stepped five appends and answered five times. So the
// loop takes the proposals it drains into a propBatch and steps them as
// one MsgProp, whose entries raft appends together and sends in one MsgApp
// per follower:
//
//	drain:      propose(p1) propose(p2) propose(p3)   -> batch [e1 e2 e3]
//	stepBatch:  MsgProp{e1 e2 e3}                     -> MsgApp{e1 e2 e3} to each follower
//	follower:   one append, one MsgAppResp{index e3}
//
// Invariants: a proposal is in r.pending only once raft took its entry;
// the batch is empty whenever the loop leaves drain (stepBatch runs at its
// end), so a Ready never misses a proposal that drain took; entries keep
// their proposal order. The batch is stepped only while the replica still
// leads in the term its proposals were given: a drain can step a message
// that ends the leadership (or, in theory, starts a new term), and then the
// batch fails with NotLeaderError, as a proposal taken by a follower does.
// raft refuses a MsgProp whole (a leadership transfer in flight, the
// uncommitted-size limit), and then every proposal of it gets ErrDropped.
type propBatch struct {
	props []*raftProposal
	ents  []*raftpb.Entry
	term  uint64
}

// propose gives p its id and entry and adds it to the batch, or answers it
// at once: abandoned, not the leader, or an entry that does not encode.
func (r *Raft) propose(p *raftProposal) {
	if !p.state.CompareAndSwap(propQueued, propProposed) {
		return // abandoned before it reached Raft
	}
	st := r.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		p.done <- outcome{err: &NotLeaderError{Leader: st.Lead}}
		return
	}
	term := st.HardState.GetTerm()
	if len(r.batch.props) > 0 && r.batch.term != term {
		r.stepBatch()
	}
	r.nextProp++
	p.id, p.term = r.nextProp, term
	data, err := encodeEntry(entryHeader{master: p.master, replica: p.replica, proposer: r.cfg.Node, proposal: p.id}, p.cmd)
	if err != nil {
		p.done <- outcome{err: err}
		return
	}
	r.batch.term = term
	r.batch.props = append(r.batch.props, p)
	r.batch.ents = append(r.batch.ents, &raftpb.Entry{Data: data})
}

// stepBatch steps the batch into raft as one MsgProp and empties it.
func (r *Raft) stepBatch() {
	b := &r.batch
	if len(b.props) == 0 {
		return
	}
	defer b.reset()
	st := r.rn.BasicStatus()
	if st.RaftState != raft.StateLeader || st.HardState.GetTerm() != b.term {
		b.fail(func() error { return &NotLeaderError{Leader: st.Lead} })
		return
	}
	r.proposed = true
	id := r.cfg.Node
	m := &raftpb.Message{Type: raftpb.MsgProp.Enum(), From: &id, Entries: b.ents}
	if err := r.rn.Step(m); err != nil {
		b.fail(func() error { return fmt.Errorf("%w (%v)", ErrDropped, err) })
		return
	}
	for _, p := range b.props {
		r.pending[p.id] = p
		if p.ack == AckNone && blindPut(p.cmd) {
			r.noneWait = append(r.noneWait, p)
		}
	}
}

// fail answers every proposal of the batch with an error of its own.
func (b *propBatch) fail(err func() error) {
	for _, p := range b.props {
		p.done <- outcome{err: err()}
	}
}

// reset empties the batch, keeping its arrays for the next one. raft keeps
// the entries it took, so ents gets a fresh array.
func (b *propBatch) reset() {
	clear(b.props)
	b.props = b.props[:0]
	b.ents = nil
}
