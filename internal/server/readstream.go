package server

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// ReadStream serves cairnpb.KVStream: gets and multi-gets multiplexed on
// one long-lived stream per client connection, each answered by the KV
// service's own Get or MultiGet (docs/design/20261127_read_stream.md).
//
//	client -> server: ReadsRequest{reads: [StreamRead{id, get | multi_get}, ...]}
//	server -> client: ReadsResponse{answers: [StreamAnswer{id, code, message,
//	                  details, get | multi_get}, ...]}, in any order
//
// Each read runs on a goroutine of its own, under the stream's context (its
// header's timeout bounds it, as for the unary call), and its answer is
// sent as soon as it is ready. An answer's code, message and details are
// the status the unary call would have ended with (code 0: its response).
//
// Close ends every stream: a stream stops taking reads, lets those it
// took finish and send their answers, then ends with UNAVAILABLE, so the
// client retries the rest elsewhere or after reconnecting. Call it before
// the gRPC server's GracefulStop, which would otherwise wait for the
// streams until its grace ran out.
type ReadStream struct {
	cairnpb.UnimplementedKVStreamServer
	kv      cairnpb.KVServer
	closing chan struct{}
	once    sync.Once
}

// NewReadStream returns a KVStream service whose reads kv answers.
func NewReadStream(kv cairnpb.KVServer) *ReadStream {
	return &ReadStream{kv: kv, closing: make(chan struct{})}
}

// Close ends the open streams and refuses new ones; safe to call twice.
func (rs *ReadStream) Close() { rs.once.Do(func() { close(rs.closing) }) }

// errStreamClosing ends a stream at shutdown.
var errStreamClosing = status.Error(codes.Unavailable, "the node is shutting down: retry the reads on another connection")

// Reads implements cairnpb.KVStreamServer.
func (rs *ReadStream) Reads(stream cairnpb.KVStream_ReadsServer) error {
	s := &readSession{rs: rs, stream: stream}
	recvErr := make(chan error, 1)
	go func() { recvErr <- s.receive() }()
	var err error
	select {
	case err = <-recvErr:
	case <-rs.closing:
		err = errStreamClosing
	}
	s.stop()
	if errors.Is(err, io.EOF) {
		return nil // the client closed its side: every read it sent is answered
	}
	if _, ok := status.FromError(err); !ok {
		err = status.FromContextError(err).Err()
	}
	return err
}

// readSession is one stream's state: its reads in flight and the lock that
// orders their answers' sends (a gRPC stream allows one sender at a time).
type readSession struct {
	rs     *ReadStream
	stream cairnpb.KVStream_ReadsServer
	sendMu sync.Mutex
	mu     sync.Mutex // guards closed and the WaitGroup's Add
	closed bool
	wg     sync.WaitGroup
}

// receive reads requests and starts their reads until the stream ends or
// the session stops.
func (s *readSession) receive() error {
	for {
		req, err := s.stream.Recv()
		if err != nil {
			return err
		}
		for _, r := range req.GetReads() {
			if !s.start(r) {
				return errStreamClosing
			}
		}
	}
}

// start runs r on a goroutine of its own, unless the session stopped.
func (s *readSession) start(r *cairnpb.StreamRead) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.answer(s.serve(s.stream.Context(), r))
	}()
	return true
}

// stop takes no more reads and waits until those started have answered.
func (s *readSession) stop() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
}

// serve answers one read as the unary RPC would.
func (s *readSession) serve(ctx context.Context, r *cairnpb.StreamRead) *cairnpb.StreamAnswer {
	a := &cairnpb.StreamAnswer{Id: r.GetId()}
	var err error
	switch op := r.GetOp().(type) {
	case *cairnpb.StreamRead_Get:
		var resp *cairnpb.GetResponse
		resp, err = s.rs.kv.Get(ctx, op.Get)
		if err == nil {
			a.Op = &cairnpb.StreamAnswer_Get{Get: resp}
		}
	case *cairnpb.StreamRead_MultiGet:
		var resp *cairnpb.MultiGetResponse
		resp, err = s.rs.kv.MultiGet(ctx, op.MultiGet)
		if err == nil {
			a.Op = &cairnpb.StreamAnswer_MultiGet{MultiGet: resp}
		}
	default:
		err = toStatus(badInput("invalid_argument", "stream read %d: op: a stream read must carry a get or a multi_get", r.GetId()))
	}
	if err != nil {
		st := status.Convert(err).Proto()
		a.Code, a.Message, a.Details = uint32(st.GetCode()), st.GetMessage(), st.GetDetails()
	}
	return a
}

// answer sends a; a failed send means the stream is ending, which the
// receiving side notices.
func (s *readSession) answer(a *cairnpb.StreamAnswer) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	_ = s.stream.Send(&cairnpb.ReadsResponse{Answers: []*cairnpb.StreamAnswer{a}})
}
