package transport

import (
	"errors"
	"io"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// service is the server side of the Raft service: gRPC runs one of its
// methods per inbound stream, each on its own goroutine.
type service struct {
	transportpb.UnimplementedRaftServer
	t *Transport
}

var errClosed = status.Error(codes.Unavailable, "transport: closed")

// Messages reads batches until the stream ends and delivers each envelope.
// It returns as soon as the transport closes, even while the peer keeps its
// end open, so a node's graceful shutdown does not wait on its peers.
func (s *service) Messages(stream transportpb.Raft_MessagesServer) error {
	t := s.t
	errc := make(chan error, 1)
	go func() { errc <- s.receive(stream) }()
	select {
	case err := <-errc:
		return err
	case <-t.ctx.Done():
		return errClosed // gRPC then ends the stream, which ends receive
	}
}

func (s *service) receive(stream transportpb.Raft_MessagesServer) error {
	t := s.t
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&transportpb.Ack{})
		}
		if err != nil {
			return err
		}
		t.batchesRecv.Add(1)
		if !t.gate.enter() {
			return errClosed
		}
		t.deliver(b)
		t.gate.exit()
	}
}

// deliver hands every envelope of b to the Handler, in order. An envelope
// that cannot be decoded or is not addressed to this node is skipped and
// counted; the others are still delivered.
func (t *Transport) deliver(b *transportpb.Batch) {
	from := NodeID(b.GetFromNode())
	for _, e := range b.GetEnvelopes() {
		shard := ShardID(e.GetShard())
		if n := e.GetNotice(); n != nil {
			t.h.HandleNotice(shard, from, n)
			continue
		}
		m := new(raftpb.Message)
		if err := proto.Unmarshal(e.GetRaft(), m); err != nil {
			t.dropInbound("undecodable raft message", from, shard, err)
			continue
		}
		if m.GetTo() != uint64(t.cfg.NodeID) {
			t.dropInbound("raft message for another node", from, shard, nil, "to", m.GetTo())
			continue
		}
		if m.GetType() == raftpb.MsgSnap { // its data travels on a snapshot stream
			t.dropInbound("snapshot outside a snapshot stream", from, shard, nil)
			continue
		}
		t.h.HandleRaft(shard, m)
	}
}

// dropInbound counts a skipped inbound envelope and logs at most once a
// second.
func (t *Transport) dropInbound(why string, from NodeID, shard ShardID, err error, attrs ...any) {
	total := t.inboundDropped.Add(1)
	if t.dropLog.allow(time.Second) {
		attrs = append(attrs, "from", uint64(from), "shard", uint64(shard), "dropped_total", total)
		if err != nil {
			attrs = append(attrs, "err", err)
		}
		t.log.Warn("skipping inbound envelope: "+why, attrs...)
	}
}

// Snapshot hands one inbound snapshot, its data read as it arrives, to
// the Handler and acknowledges it once the Handler returns nil. The
// Handler runs on a goroutine of its own: when the transport closes, the
// method returns at once, which ends the stream, so the Handler's next read
// fails and it returns (Close waits for it).
func (s *service) Snapshot(stream transportpb.Raft_SnapshotServer) error {
	t := s.t
	if !t.gate.enter() {
		return errClosed
	}
	errc := make(chan error, 1)
	go func() {
		defer t.gate.exit()
		errc <- t.receiveSnapshot(stream)
	}()
	select {
	case err := <-errc:
		if err != nil {
			return err
		}
		return stream.SendAndClose(&transportpb.Ack{})
	case <-t.ctx.Done():
		return errClosed
	}
}

// receiveSnapshot reads the stream's first chunk and calls the Handler,
// which reads the rest. It returns the status to answer with.
func (t *Transport) receiveSnapshot(stream transportpb.Raft_SnapshotServer) error {
	shard, m, data, err := t.openSnapshot(stream)
	if err == nil {
		err = t.h.HandleSnapshot(shard, m, data)
		if err == nil && !data.done() {
			err = errors.New("transport: the handler returned before reading the snapshot's data to its end")
		}
	}
	if err == nil {
		return nil
	}
	if stream.Context().Err() != nil {
		return err // the sender is gone, or the transport closed
	}
	t.log.Warn("refusing inbound snapshot", "shard", uint64(shard), "err", err)
	if errors.Is(err, ErrMalformedSnapshot) {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return err // the stream's own failure
	}
	return status.Error(codes.ResourceExhausted, err.Error())
}
