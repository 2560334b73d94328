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
		if m.GetType() == raftpb.MsgSnap { // not sent by this package, but whole
			t.h.HandleSnapshot(shard, m)
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

// Snapshot reassembles one snapshot, delivers it and acknowledges it.
func (s *service) Snapshot(stream transportpb.Raft_SnapshotServer) error {
	t := s.t
	shard, m, err := t.receiveSnapshot(stream)
	if err != nil && stream.Context().Err() == nil {
		t.log.Warn("refusing inbound snapshot", "err", err)
	}
	switch {
	case errors.Is(err, errSnapshotTooLarge):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, errMalformed):
		return status.Error(codes.InvalidArgument, err.Error())
	case err != nil:
		return err
	}
	if !t.gate.enter() {
		return errClosed
	}
	err = t.h.HandleSnapshot(shard, m)
	t.gate.exit()
	if err != nil {
		t.log.Warn("refusing inbound snapshot", "shard", uint64(shard), "err", err)
		return status.Error(codes.ResourceExhausted, err.Error())
	}
	return stream.SendAndClose(&transportpb.Ack{})
}
