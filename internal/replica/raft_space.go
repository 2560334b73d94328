package replica

import (
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// A replica on a full disk keeps its shard's state safe by taking no entry
// it cannot store: its engine admits an append before the replica steps it
// (a refused MsgApp is dropped, and the leader sends it again later, so the
// replica only lags), and a leader on a full disk hands leadership to a
// caught-up follower, whose disk may have room. Nothing here changes what
// Raft decided; it only declines work.

// admitAppend reports whether the engine has room for the entries of m
// (each is filed in the log and applied: two copies). Entries that only
// delete or carry Raft's own state may use part of the margin.
func (r *Raft) admitAppend(m *raftpb.Message) bool {
	if m.GetType() != raftpb.MsgApp || len(m.GetEntries()) == 0 {
		return true
	}
	var n int64
	for _, e := range m.GetEntries() {
		n += int64(len(e.GetData()))
	}
	err := r.e.Admit(2*n, storage.AddsData)
	if err != nil && reclaimsOnly(m.GetEntries()) {
		err = r.e.Admit(2*n, storage.Reclaims)
	}
	if err == nil {
		return true
	}
	if time.Since(r.spaceLogged) >= 10*time.Second {
		r.spaceLogged = time.Now()
		r.log.Warn("not taking entries from the leader: this node's disk has no room; the replica lags until space is freed",
			"from", m.GetFrom(), "entries", len(m.GetEntries()), "err", err)
	}
	return false
}

// reclaimsOnly reports whether every entry only deletes or carries no
// command.
func reclaimsOnly(es []*raftpb.Entry) bool {
	for _, e := range es {
		if e.GetType() != raftpb.EntryNormal || len(e.GetData()) == 0 {
			continue
		}
		_, cmd, err := decodeEntry(e.GetData())
		if err != nil || addsData(cmd) { // MultiDelete, Expire and deletes pass
			return false
		}
	}
	return true
}

// leaveFullDisk hands leadership to the most caught-up follower that is
// active and close behind, if this leader's disk refuses puts.
func (r *Raft) leaveFullDisk() {
	st := r.rn.Status()
	var best, match uint64
	for id, pr := range st.Progress {
		if id != r.cfg.Node && pr.RecentActive && pr.Match+100 >= r.ls.lastIndex && pr.Match >= match {
			best, match = id, pr.Match
		}
	}
	if best == 0 || st.RaftState != raft.StateLeader {
		return
	}
	r.log.Warn("this node's disk refuses puts: handing leadership to a follower", "to", best)
	r.rn.TransferLeader(best)
}
