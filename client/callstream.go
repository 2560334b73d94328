package client

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// errNoStream says the server has no call stream: call unary.
var errNoStream = status.Error(codes.Unimplemented, "the server has no call stream")

// callStream is a connection's call stream (cairnpb.KVStream), opened on
// the first call and again on the first call after it broke.
//
// Invariants: a call is in waiting from before its request is sent until
// its answer, its caller giving up, or the stream breaking, whichever comes
// first; each of those removes it, so exactly one of them answers it. A
// stream that broke is never used again (callStream.cur moves on).
type callStream struct {
	api     cairnpb.KVStreamClient
	token   func() string // the login's current token; nil: no login
	off     atomic.Bool   // the server answered UNIMPLEMENTED
	mu      sync.Mutex    // guards cur and opening
	cur     *openStream   // the working stream; nil: none
	opening chan struct{} // closed when the open under way ends; nil: none
	nextID  atomic.Uint64
	sock    *sockPool // the node's call socket, tried first; nil: none
}

// openStream is one gRPC stream and the calls waiting on it.
type openStream struct {
	stream  cairnpb.KVStream_CallsClient
	token   func() string // callStream.token
	cancel  context.CancelFunc
	sendMu  sync.Mutex // one sender at a time; guards sentTok
	sentTok string     // the stream's token: the last one a sent call carried
	mu      sync.Mutex // guards waiting and err
	waiting map[uint64]chan streamResult
	err     error // why the stream broke; nil while it works
	dead    bool  // the stream broke (guarded by callStream.mu)
}

type streamResult struct {
	a   *cairnpb.StreamAnswer
	err error
}

// do sends r and waits for its answer, or for ctx to end. It goes on the
// node's call socket when the connection has one (callsocket.go), else on
// the gRPC stream. The error is the
// answer's status, the stream's failure (UNAVAILABLE), ctx's error, or
// errNoStream (r was not run: call unary). Once r is handed to the stream,
// do sets the attempt's sent flag (sent.go) as a unary call's stats handler
// would: a write that then fails without an answer may have been applied.
func (cs *callStream) do(ctx context.Context, r *cairnpb.StreamCall) (*cairnpb.StreamAnswer, error) {
	if cs.sock != nil && !cs.sock.off() {
		if a, err := cs.sock.do(ctx, r); err != errNoStream {
			return a, err
		}
	}
	if cs.off.Load() {
		return nil, errNoStream
	}
	s, err := cs.open(ctx)
	if err != nil {
		return nil, err
	}
	r.Id = cs.nextID.Add(1)
	ch := make(chan streamResult, 1)
	if err := s.wait(r.Id, ch); err != nil {
		return nil, err
	}
	switch err := s.send(r); {
	case errors.Is(err, io.EOF):
		// The stream ended before r went out; the status it ended with
		// comes from Recv, and receive hands it to r too.
	case err != nil:
		s.forget(r.Id) // not sent (say, too large): the stream goes on
		return nil, err
	default:
		if f, ok := ctx.Value(sentKey{}).(*atomic.Bool); ok {
			f.Store(true)
		}
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
func (cs *callStream) open(ctx context.Context) (*openStream, error) {
	for {
		cs.mu.Lock()
		if s := cs.cur; s != nil {
			cs.mu.Unlock()
			return s, nil
		}
		if wait := cs.opening; wait != nil {
			cs.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, status.FromContextError(ctx.Err()).Err()
			}
		}
		done := make(chan struct{})
		cs.opening = done
		cs.mu.Unlock()
		s, err := cs.dial(ctx)
		cs.mu.Lock()
		cs.opening = nil
		if s != nil && !s.dead {
			cs.cur = s // unless it broke already (fail ran before this)
		}
		cs.mu.Unlock()
		close(done)
		return s, err
	}
}

// dial opens a stream. The stream outlives ctx, but opening it does not.
func (cs *callStream) dial(ctx context.Context) (*openStream, error) {
	sctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	st, err := cs.api.Calls(sctx)
	if !stop() && err == nil {
		err = status.FromContextError(ctx.Err()).Err() // ctx ended while the stream opened
	}
	if err != nil {
		cancel()
		if status.Code(err) == codes.Unimplemented {
			cs.off.Store(true)
			return nil, errNoStream
		}
		return nil, err
	}
	s := &openStream{stream: st, token: cs.token, cancel: cancel, waiting: make(map[uint64]chan streamResult)}
	go s.receive(cs)
	return s, nil
}

// wait registers ch for call id's answer, unless the stream broke.
func (s *openStream) wait(id uint64, ch chan streamResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.waiting[id] = ch
	return nil
}

// forget drops call id's wait: its caller gave up.
func (s *openStream) forget(id uint64) {
	s.mu.Lock()
	delete(s.waiting, id)
	s.mu.Unlock()
}

// send sends r. With a login, r carries the session's token when it is
// not the stream's token yet (the stream's first call, the first after a
// renewal); the node checks r and the calls after it with that token.
func (s *openStream) send(r *cairnpb.StreamCall) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.token != nil {
		if tok := s.token(); tok != s.sentTok {
			r.Token = tok
		}
	}
	err := s.stream.Send(&cairnpb.CallsRequest{Calls: []*cairnpb.StreamCall{r}})
	if err == nil && r.Token != "" {
		s.sentTok = r.Token
	}
	return err
}

// receive hands each answer to its waiting call until the stream ends.
func (s *openStream) receive(cs *callStream) {
	for {
		resp, err := s.stream.Recv()
		if err != nil {
			s.fail(cs, err)
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

// fail breaks the stream: every waiting call gets err, and the next call
// opens a new stream. A status with an ErrorDetail, which only the node
// ends a stream with, is passed on (at shutdown, kind shutting_down says
// the waiting calls never ran); UNIMPLEMENTED becomes errNoStream; anything
// else UNAVAILABLE with no detail, so a sent write is reported as maybe
// applied.
func (s *openStream) fail(cs *callStream, err error) {
	switch {
	case status.Code(err) == codes.Unimplemented:
		cs.off.Store(true)
		err = errNoStream
	case !hasErrorDetail(err):
		// Not the node's word on these calls: a broken connection, or a
		// status that one call's failure gave the whole stream (one too
		// large to send ends it with RESOURCE_EXHAUSTED). Unavailable
		// with no detail: reads retry, a sent write may have been applied.
		err = status.Errorf(codes.Unavailable, "call stream broke: %v", err)
	}
	cs.mu.Lock()
	s.dead = true
	if cs.cur == s {
		cs.cur = nil
	}
	cs.mu.Unlock()
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

// hasErrorDetail reports whether err is a status with a Cairn ErrorDetail: the
// node ended the stream and said what that means for the calls (at
// shutdown: they never ran).
func hasErrorDetail(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	for _, d := range st.Details() {
		if _, ok := d.(*cairnpb.ErrorDetail); ok {
			return true
		}
	}
	return false
}

// answerError is the status an answer carries, nil for a response.
func answerError(a *cairnpb.StreamAnswer) error {
	if a.GetCode() == 0 {
		return nil
	}
	return status.ErrorProto(&spb.Status{Code: int32(a.GetCode()), Message: a.GetMessage(), Details: a.GetDetails()})
}
