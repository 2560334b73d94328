package replica

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// A Raft snapshot carries no data in raftpb.Snapshot.Data, only a header
// naming the data, which travels beside the MsgSnap on the transport's
// snapshot stream:
//
//	0      1                9                   17                25
//	+------+----------------+-------------------+-----------------+
//	| 0x01 | shard (8 BE)   | index (8 BE)      | id (8 BE)       |
//	+------+----------------+-------------------+-----------------+
//	format                   = Metadata.Index     the sender's export
//
// The leader (buildSnapshot) opens a storage.Export of the shard at its
// applied index, files it under a random id and puts the header in the
// snapshot raft hands out. The transport asks SnapshotData for the data of
// each MsgSnap it sends and streams it from the export, which stays open
// while any send reads it and is closed once it is neither read nor the
// latest (or has been idle for snapshotIdle): a Pebble snapshot pins the
// files it reads, so none is kept longer than a send needs.
//
// The follower (ReceiveSnapshot, on the transport's goroutine) admits the
// announced size, writes the data into a storage.Import as it arrives,
// then hands the MsgSnap and the import to the loop and waits. The loop
// steps the message; if raft restores the snapshot, the Ready that carries
// it installs the import (Import.Install: data, applied index, truncated,
// configuration and hard state, and the log's deletion, in one atomic
// ingestion) before anything else of that Ready is persisted or sent, so
// raft is told the snapshot is applied only once it is. If raft declines
// it (it is not newer than what the replica has), the import is dropped.
// A replica receives one snapshot at a time.

const snapHeaderLen = 25

// snapHeader is raftpb.Snapshot.Data.
type snapHeader struct{ shard, index, id uint64 }

func (h snapHeader) encode() []byte {
	b := make([]byte, 1, snapHeaderLen)
	b[0] = 1
	b = binary.BigEndian.AppendUint64(b, h.shard)
	b = binary.BigEndian.AppendUint64(b, h.index)
	return binary.BigEndian.AppendUint64(b, h.id)
}

// ErrBadSnapshot is returned (wrapped) for a snapshot whose header does not
// decode or does not match its message or this replica.
var ErrBadSnapshot = errors.New("replica: bad snapshot")

func decodeSnapHeader(b []byte) (snapHeader, error) {
	if len(b) != snapHeaderLen || b[0] != 1 {
		return snapHeader{}, fmt.Errorf("%w: a header of %d bytes, format %d (want %d bytes, format 1)", ErrBadSnapshot, len(b), firstByte(b), snapHeaderLen)
	}
	return snapHeader{binary.BigEndian.Uint64(b[1:]), binary.BigEndian.Uint64(b[9:]), binary.BigEndian.Uint64(b[17:])}, nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// snapshotIdle is how long the latest export stays open with no send
// reading it, for raft to hand the same snapshot to another follower.
const snapshotIdle = 30 * time.Second

// buildSnapshot is raft.Storage.Snapshot: a header naming an export of the
// shard at the applied index. It runs on the loop goroutine, so nothing is
// applied meanwhile, and reads nothing but the applied index.
func (r *Raft) buildSnapshot() (*raftpb.Snapshot, error) {
	idx := r.applied.Load()
	if time.Since(r.snapFailed) < snapshotBackoff {
		return nil, raft.ErrSnapshotTemporarilyUnavailable // raft asks again later
	}
	if c := r.snapCache; c != nil && c.GetMetadata().GetIndex() == idx && r.out.latestIs(r.snapID) {
		return c, nil
	}
	term, err := r.ls.Term(idx)
	if err != nil {
		return nil, err
	}
	x, err := r.e.NewExport(r.cfg.Shard, storage.ShardDataSpans(r.cfg.Shard))
	if err != nil {
		return nil, err
	}
	if x.Applied() != idx {
		x.Close()
		return nil, fmt.Errorf("replica: shard %d: the engine's applied index is %d, the replica's %d", r.cfg.Shard, x.Applied(), idx)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	r.snapID = binary.BigEndian.Uint64(id[:])
	if !r.out.add(r.snapID, x) {
		return nil, ErrClosed
	}
	r.log.Info("built snapshot", "index", idx, "id", r.snapID)
	r.snapCache = &raftpb.Snapshot{Data: snapHeader{r.cfg.Shard, idx, r.snapID}.encode(), Metadata: &raftpb.SnapshotMetadata{
		Index: proto.Uint64(idx), Term: proto.Uint64(term), ConfState: proto.Clone(r.ls.conf).(*raftpb.ConfState),
	}}
	return r.snapCache, nil
}

// expireSnapshot closes the latest export once it has been idle for
// snapshotIdle (loop goroutine).
func (r *Raft) expireSnapshot() {
	if r.snapCache != nil && r.out.expire(r.snapID, snapshotIdle) {
		r.snapCache = nil
	}
}

// SnapshotSource is the data of one outbound snapshot, read from the
// export its header names (the transport's SnapshotSource).
type SnapshotSource struct {
	r   *Raft
	id  uint64
	x   *storage.Export
	rd  *storage.ExportReader
	end bool
}

// SnapshotData returns the data of m, an outbound MsgSnap of this replica:
// a reader of the export its header names. It fails if the export is gone
// (the replica closed, or the snapshot expired): raft then sends a newer
// one. Close the source when done.
func (r *Raft) SnapshotData(m *raftpb.Message) (*SnapshotSource, error) {
	h, err := decodeSnapHeader(m.GetSnapshot().GetData())
	if err != nil {
		return nil, fmt.Errorf("replica: shard %d: %w", r.cfg.Shard, err)
	}
	x := r.out.acquire(h.id)
	if x == nil {
		return nil, fmt.Errorf("replica: shard %d: snapshot %x at index %d is gone (expired, or the replica closed)", r.cfg.Shard, h.id, h.index)
	}
	rd, err := x.NewReader()
	if err != nil {
		r.out.release(h.id)
		return nil, err
	}
	return &SnapshotSource{r: r, id: h.id, x: x, rd: rd}, nil
}

// Size returns the data's length (the first call reads it all once).
func (s *SnapshotSource) Size() (int64, error) { return s.x.Size() }

// Next returns the next chunk of the data, io.EOF after the last.
func (s *SnapshotSource) Next() ([]byte, error) { return s.rd.Next() }

// Close releases the reader and, unless another send or raft may use it,
// the export.
func (s *SnapshotSource) Close() {
	if s.end {
		return
	}
	s.end = true
	s.rd.Close()
	s.r.out.release(s.id)
}
