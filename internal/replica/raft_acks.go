package replica

import "go.etcd.io/raft/v3/raftpb"

// A follower's acknowledgements, one per Ready.
//
// A follower steps every append that reached it since its last Ready, and
// raft answers each with its own MsgAppResp. An accepting MsgAppResp
// promises that the follower's log matches the leader's up to its Index,
// so a later accepting one to the same leader, in the same term, with an
// Index at least as high, says all that an earlier one says. coalesceAcks
// keeps only such later ones:
//
//	Ready's messages:  AppResp{to 1, index 7}  AppResp{to 1, index 9}  AppResp{to 1, reject}
//	sent:                                      AppResp{to 1, index 9}  AppResp{to 1, reject}
//
// Rejections, and every other message, go as they are and in their order.
// The leader's progress only moves forward on an ack, so the one it gets
// moves it as far as all of them would have.
func coalesceAcks(msgs []*raftpb.Message) []*raftpb.Message {
	n := 0
	for _, m := range msgs {
		if accepting(m) {
			n++
		}
	}
	if n < 2 {
		return msgs
	}
	// Walk back from the end, remembering the highest accepted index seen
	// so far per leader and term; an ack at or below it is dropped. What is
	// kept fills out from its end, so it keeps its order.
	var seen []ackSeen
	out := make([]*raftpb.Message, len(msgs))
	j := len(out)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if accepting(m) && !noteAck(&seen, m) {
			continue
		}
		j--
		out[j] = m
	}
	return out[j:]
}

// ackSeen is the highest index a later ack to a leader, in a term, accepted.
type ackSeen struct{ to, term, index uint64 }

// noteAck reports whether ack says more than the later acks in seen, and
// records it.
func noteAck(seen *[]ackSeen, ack *raftpb.Message) bool {
	for i := range *seen {
		s := &(*seen)[i]
		if s.to == ack.GetTo() && s.term == ack.GetTerm() {
			if ack.GetIndex() <= s.index {
				return false
			}
			s.index = ack.GetIndex()
			return true
		}
	}
	*seen = append(*seen, ackSeen{ack.GetTo(), ack.GetTerm(), ack.GetIndex()})
	return true
}

// accepting reports whether m is an MsgAppResp that accepts an append.
func accepting(m *raftpb.Message) bool {
	return m.GetType() == raftpb.MsgAppResp && !m.GetReject()
}
