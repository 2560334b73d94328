package client

import (
	"context"
	"sync"
	"sync/atomic"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// streamKV is a connection's KV client whose Get and MultiGet travel on the
// connection's read stream (cairnpb.KVStream, one long-lived gRPC stream):
// a read then costs one DATA frame each way instead of a new HTTP/2 stream
// with its headers and trailers. Every other call is the unary one. A
// server without the stream (an older one, or a secure store, which serves
// reads unary only) answers the stream UNIMPLEMENTED; the connection then
// reads unary from then on.
type streamKV struct {
	cairnpb.KVClient
	rs *readStream
}

func newStreamKV(cc *grpc.ClientConn) streamKV {
	return streamKV{KVClient: cairnpb.NewKVClient(cc), rs: &readStream{api: cairnpb.NewKVStreamClient(cc)}}
}

// Get implements cairnpb.KVClient.
func (k streamKV) Get(ctx context.Context, in *cairnpb.GetRequest, opts ...grpc.CallOption) (*cairnpb.GetResponse, error) {
	a, err := k.rs.do(ctx, &cairnpb.StreamRead{Op: &cairnpb.StreamRead_Get{Get: in}})
	if err == errNoStream {
		return k.KVClient.Get(ctx, in, opts...)
	}
	if err != nil {
		return nil, err
	}
	return a.GetGet(), nil
}

// MultiGet implements cairnpb.KVClient.
func (k streamKV) MultiGet(ctx context.Context, in *cairnpb.MultiGetRequest, opts ...grpc.CallOption) (*cairnpb.MultiGetResponse, error) {
	a, err := k.rs.do(ctx, &cairnpb.StreamRead{Op: &cairnpb.StreamRead_MultiGet{MultiGet: in}})
	if err == errNoStream {
		return k.KVClient.MultiGet(ctx, in, opts...)
	}
	if err != nil {
		return nil, err
	}
	return a.GetMultiGet(), nil
}

// errNoStream says the server has no read stream: read unary.
var errNoStream = status.Error(codes.Unimplemented, "the server has no read stream")

// readStream is a connection's read stream, opened on the first read and
// again on the first read after it broke.
//
// Invariants: a read is in waiting from before its request is sent until
// its answer, its caller giving up, or the stream breaking, whichever comes
// first; each of those removes it, so exactly one of them answers it. A
// stream that broke is never used again (readStream.cur moves on).
type readStream struct {
	api     cairnpb.KVStreamClient
	off     atomic.Bool   // the server answered UNIMPLEMENTED
	mu      sync.Mutex    // guards cur and opening
	cur     *openStream   // the working stream; nil: none
	opening chan struct{} // closed when the open under way ends; nil: none
	nextID  atomic.Uint64
}

// openStream is one gRPC stream and the reads waiting on it.
type openStream struct {
	stream  cairnpb.KVStream_ReadsClient
	cancel  context.CancelFunc
	sendMu  sync.Mutex // one sender at a time
	mu      sync.Mutex // guards waiting and err
	waiting map[uint64]chan streamResult
	err     error // why the stream broke; nil while it works
	dead    bool  // the stream broke (guarded by readStream.mu)
}

type streamResult struct {
	a   *cairnpb.StreamAnswer
	err error
}

// do sends r and waits for its answer, or for ctx to end. The error is the
// answer's status, the stream's failure (UNAVAILABLE, so reads retry), ctx's
// error, or errNoStream.
func (rs *readStream) do(ctx context.Context, r *cairnpb.StreamRead) (*cairnpb.StreamAnswer, error) {
	if rs.off.Load() {
		return nil, errNoStream
	}
	s, err := rs.open(ctx)
	if err != nil {
		return nil, err
	}
	r.Id = rs.nextID.Add(1)
	ch := make(chan streamResult, 1)
	if err := s.wait(r.Id, ch); err != nil {
		return nil, err
	}
	if err := s.send(r); err != nil {
		s.fail(rs, err)
	}
	select {
	case res := <-ch:
		return res.a, res.err
	case <-ctx.Done():
		s.forget(r.Id)
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

// open returns the working stream, opening one if there is none. One
// caller opens at a time; the others wait for it, each no longer than its
// own ctx allows. Opening waits for the connection like a unary call does,
// and gives up when the opener's ctx ends.
func (rs *readStream) open(ctx context.Context) (*openStream, error) {
	for {
		rs.mu.Lock()
		if s := rs.cur; s != nil {
			rs.mu.Unlock()
			return s, nil
		}
		if wait := rs.opening; wait != nil {
			rs.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, status.FromContextError(ctx.Err()).Err()
			}
		}
		done := make(chan struct{})
		rs.opening = done
		rs.mu.Unlock()
		s, err := rs.dial(ctx)
		rs.mu.Lock()
		rs.opening = nil
		if s != nil && !s.dead {
			rs.cur = s // unless it broke already (fail ran before this)
		}
		rs.mu.Unlock()
		close(done)
		return s, err
	}
}

// dial opens a stream. The stream outlives ctx, but opening it does not.
func (rs *readStream) dial(ctx context.Context) (*openStream, error) {
	sctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	st, err := rs.api.Reads(sctx)
	if !stop() && err == nil {
		err = status.FromContextError(ctx.Err()).Err() // ctx ended while the stream opened
	}
	if err != nil {
		cancel()
		if status.Code(err) == codes.Unimplemented {
			rs.off.Store(true)
			return nil, errNoStream
		}
		return nil, err
	}
	s := &openStream{stream: st, cancel: cancel, waiting: make(map[uint64]chan streamResult)}
	go s.receive(rs)
	return s, nil
}

// wait registers ch for read id's answer, unless the stream broke.
func (s *openStream) wait(id uint64, ch chan streamResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.waiting[id] = ch
	return nil
}

// forget drops read id's wait: its caller gave up.
func (s *openStream) forget(id uint64) {
	s.mu.Lock()
	delete(s.waiting, id)
	s.mu.Unlock()
}

func (s *openStream) send(r *cairnpb.StreamRead) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.stream.Send(&cairnpb.ReadsRequest{Reads: []*cairnpb.StreamRead{r}})
}

// receive hands each answer to its waiting read until the stream ends.
func (s *openStream) receive(rs *readStream) {
	for {
		resp, err := s.stream.Recv()
		if err != nil {
			s.fail(rs, err)
			return
		}
		for _, a := range resp.GetAnswers() {
			s.mu.Lock()
			ch := s.waiting[a.GetId()]
			delete(s.waiting, a.GetId())
			s.mu.Unlock()
			if ch != nil {
				ch <- streamResult{a: a, err: answerError(a)}
			}
		}
	}
}

// fail breaks the stream: every waiting read gets err (as UNAVAILABLE
// unless it already is a status, errNoStream for UNIMPLEMENTED), and the
// next read opens a new stream.
func (s *openStream) fail(rs *readStream, err error) {
	if status.Code(err) == codes.Unimplemented {
		rs.off.Store(true)
		err = errNoStream
	} else if _, ok := status.FromError(err); !ok || status.Code(err) == codes.Unknown {
		err = status.Errorf(codes.Unavailable, "read stream broke: %v", err)
	}
	rs.mu.Lock()
	s.dead = true
	if rs.cur == s {
		rs.cur = nil
	}
	rs.mu.Unlock()
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	waiting := s.waiting
	s.waiting = make(map[uint64]chan streamResult)
	s.mu.Unlock()
	for _, ch := range waiting {
		ch <- streamResult{err: err}
	}
	s.cancel()
}

// answerError is the status an answer carries, nil for a response.
func answerError(a *cairnpb.StreamAnswer) error {
	if a.GetCode() == 0 {
		return nil
	}
	return status.ErrorProto(&spb.Status{Code: int32(a.GetCode()), Message: a.GetMessage(), Details: a.GetDetails()})
}
