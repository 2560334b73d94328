package node

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Copying a shard's snapshot to the nodes of its other replicas. The admin
// asks each such node to CopySnapshot from the node that wrote the files;
// that node pulls them with FetchSnapshot:
//
//	admin --CopySnapshot{store, name, shard, from}--> receiver
//	receiver --FetchSnapshot{store, name, shard}--> holder (from)
//	holder --> receiver: header {name, shard-S.json, topology.json},
//	                     then shard-S.data in chunks of snapshotChunkBytes
//
// The header carries the "data" of the holder's two checked files, which
// the holder verifies before sending (a corrupt one is DataLoss); the
// receiver writes its own checked files.
//
// The receiver refuses a header of another name, store, shard or topology
// than its own, writes the data to a temporary file while counting and
// checksumming it, and renames it into place only if length and CRC-32C
// match the holder's shard-S.json (writeShardFiles). A copy that fails
// leaves no shard-S.json behind, so restore never takes it for complete.

// snapshotChunkBytes is the most data one SnapshotChunk carries (1 MiB).
const snapshotChunkBytes = 1 << 20

// FetchSnapshot streams this node's files of one shard's snapshot.
func (c controlRPC) FetchSnapshot(r *controlpb.FetchSnapshotRequest, stream controlpb.Control_FetchSnapshotServer) error {
	if !snapshotNameRE.MatchString(r.GetName()) {
		return status.Errorf(codes.InvalidArgument, "snapshot name %q is not valid", r.GetName())
	}
	if _, err := c.n.storeTopology(r.GetStore()); err != nil {
		return err
	}
	fs := c.n.cfg.FS
	dir := filepath.Join(c.n.cfg.Root, snapshotsDir, r.GetName())
	base := shardFileBase(dir, r.GetShard())
	var meta, topo json.RawMessage
	err := files.ReadJSON(fs, base+".json", &meta)
	if files.IsNotExist(err) {
		return status.Errorf(codes.NotFound, "%s has no snapshot %s of shard %d", topology.NodeName(c.n.id()), r.GetName(), r.GetShard())
	} else if err != nil {
		return readError(err)
	}
	if err := files.ReadJSON(fs, filepath.Join(dir, topology.FileName), &topo); err != nil {
		return readError(err)
	}
	f, err := fs.Open(base + ".data")
	if err != nil {
		return status.Errorf(codes.Internal, "%v", err)
	}
	defer f.Close()
	hdr := &controlpb.SnapshotHeader{Name: r.GetName(), ShardJson: meta, TopologyJson: topo}
	if err := stream.Send(&controlpb.SnapshotChunk{Header: hdr}); err != nil {
		return err
	}
	return sendChunks(f, stream.Send)
}

// readError is the status of a snapshot file the holder cannot read.
func readError(err error) error {
	if errors.Is(err, files.ErrCorrupt) {
		return status.Errorf(codes.DataLoss, "%v", err)
	}
	return status.Errorf(codes.Internal, "%v", err)
}

// sendChunks sends everything r holds, snapshotChunkBytes at a time. Each
// chunk gets a buffer of its own: gRPC may keep a sent message.
func sendChunks(r io.Reader, send func(*controlpb.SnapshotChunk) error) error {
	for {
		buf := make([]byte, snapshotChunkBytes)
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if err := send(&controlpb.SnapshotChunk{Data: buf[:n]}); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return status.Errorf(codes.Internal, "reading the snapshot: %v", err)
		}
	}
}

// CopySnapshot fetches one shard's snapshot from r.From into this node's
// ROOT/snapshots/NAME. It is idempotent: a repeated copy replaces the files
// with the same ones.
func (c controlRPC) CopySnapshot(ctx context.Context, r *controlpb.CopySnapshotRequest) (*controlpb.CopySnapshotReply, error) {
	n := c.n
	if !snapshotNameRE.MatchString(r.GetName()) {
		return nil, status.Errorf(codes.InvalidArgument, "snapshot name %q is not valid", r.GetName())
	}
	t, err := n.hostsReplica(r.GetStore(), r.GetShard())
	if err != nil {
		return nil, err
	}
	cc, err := n.adminConns.Get(r.GetFrom())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "from %q: %v", r.GetFrom(), err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream if the copy stops early
	stream, err := controlpb.NewControlClient(cc).FetchSnapshot(ctx, &controlpb.FetchSnapshotRequest{Store: r.GetStore(), Name: r.GetName(), Shard: r.GetShard()})
	if err != nil {
		return nil, fetchError(r.GetFrom(), err)
	}
	first, err := stream.Recv()
	if err != nil {
		return nil, fetchError(r.GetFrom(), err)
	}
	meta, topo, err := checkHeader(first.GetHeader(), r, t)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(n.cfg.Root, snapshotsDir, r.GetName())
	if err := writeShardFiles(n.cfg.FS, dir, &meta, topo, receiveChunks(stream), true); err != nil {
		return nil, copyError(r.GetFrom(), err)
	}
	n.log.Info("shard snapshot copied", "shard", r.GetShard(), "from", r.GetFrom(), "bytes", meta.Bytes, "crc32c", meta.CRC32C, "dir", dir)
	return &controlpb.CopySnapshotReply{Bytes: meta.Bytes, Crc32C: meta.CRC32C, Path: dir}, nil
}

// hostsReplica returns the node's topology if it is of store and places a
// replica of shard here (running or stopped by plan stop-service).
func (n *SN) hostsReplica(store string, shard uint64) (*topology.Topology, error) {
	t, err := n.storeTopology(store)
	if err != nil {
		return nil, err
	}
	s, ok := t.Shard(topology.ShardID(shard))
	if !ok || !slices.Contains(s.Replicas, n.id()) {
		return nil, status.Errorf(codes.FailedPrecondition, "%s hosts no replica of shard %d", topology.NodeName(n.id()), shard)
	}
	return t, nil
}

// storeTopology returns the node's topology if it is of store.
func (n *SN) storeTopology(store string) (*topology.Topology, error) {
	t := n.topology()
	if t == nil || t.Store != store {
		return nil, status.Errorf(codes.FailedPrecondition, "this node holds no topology of store %q", store)
	}
	return t, nil
}

// checkHeader parses the holder's shard-S.json and topology.json and
// refuses a snapshot that is not the one asked for, or not of this node's
// store and topology, or has no checksum to verify the data with.
func checkHeader(h *controlpb.SnapshotHeader, r *controlpb.CopySnapshotRequest, t *topology.Topology) (shardBackup, *topology.Topology, error) {
	var meta shardBackup
	if h == nil {
		return meta, nil, status.Errorf(codes.DataLoss, "%s sent data before the snapshot's header", r.GetFrom())
	}
	if err := json.Unmarshal(h.GetShardJson(), &meta); err != nil {
		return meta, nil, status.Errorf(codes.DataLoss, "%s sent a shard-%d.json that does not parse: %v", r.GetFrom(), r.GetShard(), err)
	}
	switch {
	case h.GetName() != r.GetName() || meta.Store != r.GetStore() || meta.Shard != r.GetShard():
		return meta, nil, status.Errorf(codes.FailedPrecondition, "%s sent snapshot %s of store %q shard %d, not %s of %q shard %d",
			r.GetFrom(), h.GetName(), meta.Store, meta.Shard, r.GetName(), r.GetStore(), r.GetShard())
	case meta.TopologySeq != t.Seq:
		return meta, nil, status.Errorf(codes.FailedPrecondition, "snapshot %s of shard %d was taken under topology #%d; this node runs #%d",
			r.GetName(), r.GetShard(), meta.TopologySeq, t.Seq)
	case meta.CRC32C == "":
		return meta, nil, status.Errorf(codes.FailedPrecondition, "snapshot %s of shard %d on %s has no checksum to verify a copy with", r.GetName(), r.GetShard(), r.GetFrom())
	}
	// topology.json replaces this node's copy: it must be the same topology.
	var ht topology.Topology
	if err := json.Unmarshal(h.GetTopologyJson(), &ht); err != nil {
		return meta, nil, status.Errorf(codes.DataLoss, "%s sent a topology.json that does not parse: %v", r.GetFrom(), err)
	}
	if ht.Store != t.Store || ht.Seq != t.Seq {
		return meta, nil, status.Errorf(codes.FailedPrecondition, "%s sent a topology.json of store %q topology #%d; this node runs %q #%d",
			r.GetFrom(), ht.Store, ht.Seq, t.Store, t.Seq)
	}
	if err := ht.Validate(); err != nil {
		return meta, nil, status.Errorf(codes.DataLoss, "%s sent a topology.json that is not valid: %v", r.GetFrom(), err)
	}
	return meta, &ht, nil
}

// receiveChunks returns a writer of the data chunks that follow the header.
func receiveChunks(stream controlpb.Control_FetchSnapshotClient) func(io.Writer) error {
	return func(w io.Writer) error {
		for {
			m, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if m.GetHeader() != nil {
				return errors.New("a second header in the stream")
			}
			if _, err := w.Write(m.GetData()); err != nil {
				return err
			}
		}
	}
}

// fetchError keeps the holder's status code and says where it came from.
func fetchError(from string, err error) error {
	st := status.Convert(err)
	return status.Errorf(st.Code(), "fetching from %s: %s", from, st.Message())
}

// copyError classifies a failed copy: corrupt data is DataLoss, a failed
// stream keeps its code, anything else is Internal.
func copyError(from string, err error) error {
	if errors.Is(err, ErrCorruptSnapshot) {
		return status.Errorf(codes.DataLoss, "copy from %s refused: %v", from, err)
	}
	if st, ok := status.FromError(err); ok {
		return fetchError(from, st.Err())
	}
	return status.Errorf(codes.Internal, "copy from %s: %v", from, err)
}
