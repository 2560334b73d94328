package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// startSnapshot sends m (a MsgSnap) on its own goroutine. Called inside the
// gate (from Send), so wg.Add never races with Close.
func (t *Transport) startSnapshot(shard ShardID, to NodeID, m *raftpb.Message) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		start := time.Now()
		err := t.sendSnapshot(shard, to, m)
		if t.closing() {
			return
		}
		log := t.log.With("shard", uint64(shard), "peer", uint64(to),
			"index", m.GetSnapshot().GetMetadata().GetIndex(), "bytes", len(m.GetSnapshot().GetData()))
		if err != nil {
			log.Warn("snapshot send failed", "err", err)
		} else {
			log.Info("snapshot sent", "took", time.Since(start))
		}
		t.reportSnapshot(shard, to, err == nil)
	}()
}

// sendSnapshot streams m to `to` on a connection of its own, so a large
// snapshot never delays the Messages stream, and waits for the Ack.
func (t *Transport) sendSnapshot(shard ShardID, to NodeID, m *raftpb.Message) error {
	header, err := snapshotHeader(m)
	if err != nil {
		return fmt.Errorf("transport: marshal snapshot header: %w", err)
	}
	addr, ok := t.cfg.Resolve(to)
	if !ok {
		return errNoAddress
	}
	ctx, cancel := context.WithCancel(t.ctx)
	defer cancel()
	stall := time.AfterFunc(snapshotStallTimeout, cancel)
	defer stall.Stop()

	conn, err := t.dial(ctx, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stream, err := transportpb.NewRaftClient(conn).Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("transport: open snapshot stream to %s: %w", addr, err)
	}
	data := m.GetSnapshot().GetData()
	chunk := &transportpb.SnapshotChunk{FromNode: uint64(t.cfg.NodeID), Shard: uint64(shard), Header: header}
	for off := 0; ; {
		end := min(off+t.cfg.SnapshotChunkBytes, len(data))
		chunk.Data, chunk.Last = data[off:end], end == len(data)
		if err := stream.Send(chunk); err != nil {
			if errors.Is(err, io.EOF) { // the server ended the stream; ask why
				if _, rerr := stream.CloseAndRecv(); rerr != nil {
					err = rerr
				}
			}
			return fmt.Errorf("transport: send snapshot chunk: %w", err)
		}
		stall.Reset(snapshotStallTimeout)
		if chunk.Last {
			break
		}
		chunk.Header, off = nil, end
	}
	if _, err := stream.CloseAndRecv(); err != nil {
		return fmt.Errorf("transport: snapshot not acknowledged: %w", err)
	}
	return nil
}

// snapshotHeader marshals m with Snapshot.Data left out, without modifying
// or deep-copying m: the copy shares every field value with m.
func snapshotHeader(m *raftpb.Message) ([]byte, error) {
	h := shallowCopyExcept(m, "snapshot")
	if s := m.GetSnapshot(); s != nil {
		h.Snapshot = shallowCopyExcept(s, "data")
	}
	return proto.Marshal(h)
}

// shallowCopyExcept returns a new message sharing every populated field of
// src (and its unknown fields) except the named one.
func shallowCopyExcept[M proto.Message](src M, field protoreflect.Name) M {
	s := src.ProtoReflect()
	d := s.New()
	s.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() != field {
			d.Set(fd, v)
		}
		return true
	})
	d.SetUnknown(s.GetUnknown())
	return d.Interface().(M)
}

// receiveSnapshot reassembles one inbound snapshot stream into a MsgSnap.
func (t *Transport) receiveSnapshot(stream transportpb.Raft_SnapshotServer) (ShardID, *raftpb.Message, error) {
	var (
		m     *raftpb.Message
		shard ShardID
		data  []byte
	)
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return 0, nil, errBadSnapshot("stream ended before the last chunk")
		}
		if err != nil {
			return 0, nil, err
		}
		t.snapshotChunksRecv.Add(1)
		if m == nil {
			if len(c.GetHeader()) == 0 {
				return 0, nil, errBadSnapshot("first chunk has no header")
			}
			m = new(raftpb.Message)
			if err := proto.Unmarshal(c.GetHeader(), m); err != nil {
				return 0, nil, errBadSnapshot(fmt.Sprintf("undecodable header: %v", err))
			}
			if m.GetType() != raftpb.MsgSnap {
				return 0, nil, errBadSnapshot(fmt.Sprintf("header is a %v, not MsgSnap", m.GetType()))
			}
			if m.GetTo() != uint64(t.cfg.NodeID) {
				return 0, nil, errBadSnapshot(fmt.Sprintf("snapshot is for node %d, this is node %d", m.GetTo(), t.cfg.NodeID))
			}
			shard = ShardID(c.GetShard())
		} else if ShardID(c.GetShard()) != shard {
			return 0, nil, errBadSnapshot("chunks name different shards")
		}
		if len(data)+len(c.GetData()) > t.maxSnapshotBytes {
			return 0, nil, fmt.Errorf("%w: more than %d bytes", errSnapshotTooLarge, t.maxSnapshotBytes)
		}
		data = append(data, c.GetData()...)
		if c.GetLast() {
			break
		}
	}
	if m.Snapshot == nil {
		m.Snapshot = new(raftpb.Snapshot)
	}
	m.Snapshot.Data = data
	return shard, m, nil
}

// Errors of the receiving side, returned to the sender as gRPC statuses
// (ResourceExhausted and InvalidArgument).
var (
	errSnapshotTooLarge = errors.New("transport: snapshot too large")
	errMalformed        = errors.New("transport: malformed snapshot stream")
)

func errBadSnapshot(why string) error { return fmt.Errorf("%w: %s", errMalformed, why) }
