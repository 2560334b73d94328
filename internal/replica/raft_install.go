package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// The follower's side of a snapshot (see raft_snapshot.go for the
// header and the leader's side): receive the data into an import, hand it
// to the loop, install it with the Ready that restores it.

// installWait bounds how long ReceiveSnapshot waits for the loop to
// install a received snapshot (the loop may be waiting for disk room).
const installWait = 20 * time.Second

// SnapshotStream is the data of an inbound snapshot, as the transport
// reads it off its stream.
type SnapshotStream interface {
	// Size is the data's length, as the sender announced it.
	Size() int64
	// Next returns the next piece, io.EOF after the last.
	Next() ([]byte, error)
	// Context ends when the sender goes away or the transport closes.
	Context() context.Context
}

// inboundSnap is a received snapshot on its way to the loop.
type inboundSnap struct {
	m    *raftpb.Message
	id   uint64
	imp  *storage.Import
	done chan error // the loop's outcome: installed or declined (nil), or why not
}

// ReceiveSnapshot takes a MsgSnap from the shard's leader and its data,
// which it writes into an import as it arrives, and returns once the loop
// has installed it (or raft declined it as not newer than what the replica
// has). It refuses a snapshot the disk has no room for (AdmitSnapshot), a
// second one while one is being received, and any while the replica waits
// to be readmitted: the leader then backs off (snapshotBackoff). It runs
// on the transport's goroutine.
func (r *Raft) ReceiveSnapshot(m *raftpb.Message, data SnapshotStream) error {
	h, err := r.checkInbound(m)
	if err != nil {
		return err
	}
	if err := r.AdmitSnapshot(data.Size()); err != nil {
		return fmt.Errorf("replica: shard %d: no room for a snapshot of %d bytes: %w", r.cfg.Shard, data.Size(), err)
	}
	if !r.claimInbound() {
		return fmt.Errorf("replica: shard %d: already receiving a snapshot", r.cfg.Shard)
	}
	start := time.Now()
	imp, err := r.receiveData(m, data)
	if err != nil {
		r.releaseInbound()
		return err
	}
	in := &inboundSnap{m: m, id: h.id, imp: imp, done: make(chan error, 1)}
	select {
	case r.snapIn <- in: // the loop owns it now
	case <-r.closing:
		imp.Close()
		r.releaseInbound()
		return ErrClosed
	case <-data.Context().Done():
		imp.Close()
		r.releaseInbound()
		return data.Context().Err()
	}
	wait := time.NewTimer(installWait)
	defer wait.Stop()
	select {
	case err := <-in.done:
		if err == nil {
			r.log.Debug("snapshot received", "index", h.index, "bytes", data.Size(), "took", time.Since(start))
		}
		return err
	case <-r.stopped:
		return ErrClosed
	case <-data.Context().Done():
		return data.Context().Err()
	case <-wait.C:
		return fmt.Errorf("replica: shard %d: the snapshot at index %d was received but not installed within %v", r.cfg.Shard, h.index, installWait)
	}
}

// checkInbound refuses a MsgSnap this replica cannot take.
func (r *Raft) checkInbound(m *raftpb.Message) (snapHeader, error) {
	if !r.admitted.Load() {
		return snapHeader{}, fmt.Errorf("replica: shard %d: %w", r.cfg.Shard, ErrRejoining)
	}
	h, err := decodeSnapHeader(m.GetSnapshot().GetData())
	if err != nil {
		return h, fmt.Errorf("replica: shard %d: %w", r.cfg.Shard, err)
	}
	if h.shard != r.cfg.Shard || h.index != m.GetSnapshot().GetMetadata().GetIndex() {
		return h, fmt.Errorf("replica: shard %d: %w: the header names shard %d at index %d, the message index %d",
			r.cfg.Shard, ErrBadSnapshot, h.shard, h.index, m.GetSnapshot().GetMetadata().GetIndex())
	}
	return h, r.checkTerm(m)
}

// errStaleSnapshot is returned for a snapshot whose leader was superseded:
// raft would drop its message, so its data is not worth receiving.
var errStaleSnapshot = errors.New("replica: a snapshot from a superseded leader")

// checkTerm refuses a snapshot sent in a term older than the replica's.
func (r *Raft) checkTerm(m *raftpb.Message) error {
	if t := r.term.Load(); m.GetTerm() < t {
		return fmt.Errorf("%w: shard %d: sent in term %d, this replica is in term %d", errStaleSnapshot, r.cfg.Shard, m.GetTerm(), t)
	}
	return nil
}

// receiveData writes the data of m into a new import and finishes it. It
// stops early if a newer leader appears meanwhile.
func (r *Raft) receiveData(m *raftpb.Message, data SnapshotStream) (*storage.Import, error) {
	imp, err := r.e.NewImport(r.cfg.Shard, storage.ShardDataSpans(r.cfg.Shard))
	if err != nil {
		return nil, err
	}
	for {
		p, err := data.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = r.checkTerm(m)
		}
		if err == nil {
			_, err = imp.Write(p)
		}
		if err != nil {
			imp.Close()
			return nil, fmt.Errorf("replica: shard %d: receiving a snapshot: %w", r.cfg.Shard, err)
		}
	}
	if err := imp.Finish(); err != nil {
		imp.Close()
		return nil, err
	}
	return imp, nil
}

func (r *Raft) claimInbound() bool {
	r.inMu.Lock()
	defer r.inMu.Unlock()
	if r.inBusy {
		return false
	}
	r.inBusy = true
	return true
}

func (r *Raft) releaseInbound() {
	r.inMu.Lock()
	r.inBusy = false
	r.inMu.Unlock()
}

// takeSnapshot steps a received snapshot (loop goroutine). The next Ready
// installs it or, not carrying it, tells that raft declined it.
func (r *Raft) takeSnapshot(in *inboundSnap) {
	r.log.Info("received snapshot", "index", in.m.GetSnapshot().GetMetadata().GetIndex(), "bytes", in.imp.Bytes(), "keys", in.imp.Pairs())
	r.inSnap = in
	if !r.step(in.m) {
		r.finishInbound(errors.New("replica: the snapshot was refused (the engine is read-only)"))
	}
}

// finishInbound ends the received snapshot with its outcome (loop
// goroutine).
func (r *Raft) finishInbound(err error) {
	in := r.inSnap
	if in == nil {
		return
	}
	r.inSnap = nil
	in.imp.Close() // nothing left after an install
	in.done <- err
	r.releaseInbound()
}

// AdmitSnapshot refuses an inbound snapshot of size bytes that the engine
// has no room for (its data is filed once and may be rewritten by a
// compaction: two copies). The transport sends the refusal back, so the
// leader backs off (snapshotBackoff).
func (r *Raft) AdmitSnapshot(size int64) error {
	return r.e.Admit(2*size, storage.AddsData)
}

// commitSnapshot installs the snapshot raft restored, from the import
// received with it, with hs (the Ready's hard state, which already commits
// the snapshot) in the same ingestion.
func (r *Raft) commitSnapshot(s *raftpb.Snapshot, hs *raftpb.HardState) error {
	md := s.GetMetadata()
	h, err := decodeSnapHeader(s.GetData())
	if err != nil {
		return err
	}
	in := r.inSnap
	if in == nil || in.id != h.id {
		return fmt.Errorf("raft restored snapshot %x at index %d, whose data this replica did not receive", h.id, md.GetIndex())
	}
	if raft.IsEmptyHardState(hs) {
		hs = r.ls.hard
	}
	hs = proto.Clone(hs).(*raftpb.HardState)
	hs.Commit = proto.Uint64(max(hs.GetCommit(), md.GetIndex()))
	r.log.Info("installing snapshot", "index", md.GetIndex(), "bytes", in.imp.Bytes())
	states, conf, err := r.ls.snapshotStates(md, hs)
	if err != nil {
		return err
	}
	if err := in.imp.Install(storage.InstallState{Applied: md.GetIndex(), States: states}); err != nil {
		return err
	}
	r.ls.restored(md, conf, hs)
	t, err := r.e.LoadTable(r.cfg.Shard) // the snapshot carried the shard's partition table
	if err != nil {
		return err
	}
	r.table.Store(t)
	r.voters.Store(&r.ls.conf.Voters)
	r.learners.Store(&r.ls.conf.Learners)
	r.lastTerm = md.GetTerm()
	r.applied.Store(md.GetIndex())
	r.finishInbound(nil)
	r.signal()
	return nil
}
