package replica

import (
	"errors"
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

// admitAppend reports whether the engine has room for what m brings: the
// entries of a MsgApp (each is filed in the log and applied: two copies;
// entries that only delete or carry Raft's own state may use part of the
// margin). A snapshot is admitted by ReceiveSnapshot (AdmitSnapshot), which
// can tell its sender. A replica whose disk is at or near its margin
// (Engine.Roomy) also refuses to become leader (MsgTimeoutNow): it would
// soon refuse the writes.
func (r *Raft) admitAppend(m *raftpb.Message) bool {
	var err error
	switch {
	case m.GetType() == raftpb.MsgTimeoutNow && !r.e.Roomy():
		err = errors.New("asked to take leadership, on a disk at or near its free-space margin")
	case m.GetType() != raftpb.MsgApp || len(m.GetEntries()) == 0:
		return true
	default:
		var n int64
		for _, e := range m.GetEntries() {
			n += int64(len(e.GetData()))
		}
		err = r.e.Admit(2*n, storage.AddsData)
		if err != nil && reclaimsOnly(m.GetEntries()) {
			err = r.e.Admit(2*n, storage.Reclaims)
		}
	}
	if err == nil {
		return true
	}
	if time.Since(r.spaceLogged) >= 10*time.Second {
		r.spaceLogged = time.Now()
		r.log.Warn("not taking this from the leader: this node's disk has no room; the replica lags until space is freed",
			"from", m.GetFrom(), "type", m.GetType(), "entries", len(m.GetEntries()), "err", err)
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
// live and close behind (successor), if this leader's disk refuses puts.
func (r *Raft) leaveFullDisk() {
	st := r.rn.Status()
	if st.RaftState != raft.StateLeader {
		return
	}
	best := r.successor(&st, 0, 100)
	if best == 0 {
		return
	}
	r.log.Warn("this node's disk refuses puts: handing leadership to a follower", "to", best)
	r.rn.TransferLeader(best)
}

// snapshotBackoff is how long a leader builds or sends no snapshot after
// one failed to reach a peer: the peer is down, or refused it (no room, or
// another one arriving), and raft would otherwise ask again at every
// heartbeat.
const snapshotBackoff = 5 * time.Second

// readyRoom is the room a Ready needs: its committed entries are bounded
// by MaxCommittedSizePerReady (raft's default, MaxSizePerMsg: 1 MiB), and
// applying them writes them again beside their log entries and state.
const readyRoom = 4 << 20

// canWrite reports whether the replica may take a Ready now. A read-only
// engine takes no batch; an engine without room for one waits, frozen
// (it sends nothing, so its leader sees it lag, and a leader is replaced),
// until space is freed. Raft lets a replica apply late, never wrongly.
func (r *Raft) canWrite() bool {
	if r.e.ReadOnly() {
		return false
	}
	if r.e.HasRoom(readyRoom) {
		return true
	}
	if time.Since(r.spaceLogged) >= 10*time.Second {
		r.spaceLogged = time.Now()
		r.log.Warn("this node's disk has no room to apply entries: the replica waits until space is freed")
	}
	return false
}

// transferPatience is how long a leadership transfer may stay pending
// before the leader aborts it, and transferBackoff how long the leader then
// leaves that target alone. etcd raft drops every proposal while a transfer
// is pending, so a target that never takes over (its disk refuses puts, or
// it is stuck) must not be asked again every few seconds.
const (
	transferPatience = 5 // ticks
	transferBackoff  = time.Minute
)

// watchTransfer aborts a transfer pending for more than transferPatience
// ticks (a transfer to oneself aborts it) and backs off from its target.
func (r *Raft) watchTransfer(st raft.BasicStatus) {
	if st.RaftState != raft.StateLeader || st.LeadTransferee == 0 {
		r.transferTo = 0
		return
	}
	if r.transferTo != st.LeadTransferee {
		r.transferTo, r.transferTicks = st.LeadTransferee, 0
		return
	}
	if r.transferTicks++; r.transferTicks < transferPatience {
		return
	}
	r.log.Warn("a leadership transfer did not happen; aborting it and leaving that node alone for a while",
		"to", r.transferTo, "backoff", transferBackoff)
	if r.avoid == nil {
		r.avoid = make(map[uint64]time.Time)
	}
	r.avoid[r.transferTo] = time.Now().Add(transferBackoff)
	r.rn.TransferLeader(r.cfg.Node)
	r.transferTo = 0
}

// avoided reports whether leadership should not go to node now.
func (r *Raft) avoided(node uint64) bool { return time.Now().Before(r.avoid[node]) }
