package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/replica"
)

// maxAnswerBatch bounds the answers combined in one message (see
// callSession): the rest wait for the next.
const maxAnswerBatch = 1 << 20

// CallStream serves cairnpb.KVStream: KV's calls multiplexed on one
// long-lived stream per client connection, each answered by the KV
// service's own method (docs/design/20261127_call_stream.md).
//
//	client -> server: CallsRequest{calls: [StreamCall{id, get | multi_get |
//	                  put | delete | execute | put_many | multi_delete}, ...]}
//	server -> client: CallsResponse{answers: [StreamAnswer{id, code, message,
//	                  details, the same op's response}, ...]}, in any order
//
// Each call runs on a worker goroutine (NewCallStream), under the stream's
// context (its header's timeout bounds it, as for the unary call), and its
// answer is sent as soon as it is ready. An answer's code, message and details are
// the status the unary call would have ended with (code 0: its response).
//
// On a secure node, Authorize sets the check of each call: the stream's
// token (StreamCall.token: the last one a call on the stream carried) and
// the role the call's op needs, as its unary RPC's interceptor checks
// them. A call refused is answered with the refusal and not run.
//
// Close ends every stream: a stream stops taking calls, lets those it took
// finish and send their answers, then ends with UNAVAILABLE, kind
// shutting_down, which tells the client that the calls it still waits for
// never ran. Call Close before the gRPC server's GracefulStop, which would
// otherwise wait for the streams until its grace ran out.
type CallStream struct {
	cairnpb.UnimplementedKVStreamServer
	kv      cairnpb.KVServer
	check   func(method, token string) error // nil: calls are not checked
	work    chan func()                      // idle workers wait here
	closing chan struct{}
	once    sync.Once
	// Open gRPC call streams and call sockets, and call sockets accepted.
	streams, sockets, socketsTotal atomic.Int64 // never below 0: each Add(-1) follows its Add(1)
}

// StreamStats is a CallStream's connections now (Stats).
type StreamStats struct {
	Streams      uint64 // gRPC call streams open
	Sockets      uint64 // call sockets open (past their preface)
	SocketsTotal uint64 // call sockets accepted since the node started
}

// Stats reports the open streams and sockets.
func (cs *CallStream) Stats() StreamStats {
	return StreamStats{Streams: uint64(cs.streams.Load()), Sockets: uint64(cs.sockets.Load()), SocketsTotal: uint64(cs.socketsTotal.Load())}
}

// NewCallStream returns a KVStream service whose calls kv answers, run by
// up to workers long-lived goroutines (the node's StreamWorkers, as gRPC's
// own handlers are). A goroutine's stack grows to what a call needs (a
// response's marshal recurses deeply) and a worker keeps it, where a fresh
// goroutine per call would grow and copy its stack every time (14 % of
// lite's CPU under gets). A call that finds every worker busy runs on a
// goroutine of its own, so a slow call (a write waiting for its commit)
// never holds up another.
func NewCallStream(kv cairnpb.KVServer, workers int) *CallStream {
	cs := &CallStream{kv: kv, work: make(chan func()), closing: make(chan struct{})}
	for range workers {
		go cs.worker()
	}
	return cs
}

// Authorize makes every call pass check(method, token) before it runs:
// method is the call's unary method (cairnpb.KV_Get_FullMethodName...)
// and token the stream's token. Call it before serving.
func (cs *CallStream) Authorize(check func(method, token string) error) { cs.check = check }

// worker runs calls until Close.
func (cs *CallStream) worker() {
	for {
		select {
		case f := <-cs.work:
			f()
		case <-cs.closing:
			return
		}
	}
}

// run hands f to an idle worker, or to a goroutine of its own.
func (cs *CallStream) run(f func()) {
	select {
	case cs.work <- f:
	default:
		go f()
	}
}

// Close ends the open streams and stops the workers; safe to call twice.
func (cs *CallStream) Close() { cs.once.Do(func() { close(cs.closing) }) }

// errStreamClosing ends a stream at shutdown (UNAVAILABLE, kind
// shutting_down, action RETRY): every call the stream took was answered
// before it, so the calls the client still waits for were never run and
// may be sent again, writes included.
var errStreamClosing = toStatus(fmt.Errorf("the node is shutting down; the calls this stream did not answer were not run: %w", replica.ErrClosed))

// errAnswerLost ends a stream at shutdown when an answer could not be
// sent: the client cannot tell which of its calls ran (no detail, so a
// write it sent is reported as maybe applied).
var errAnswerLost = status.Error(codes.Unavailable, "the node is shutting down and an answer on this stream was lost")

// Calls implements cairnpb.KVStreamServer.
func (cs *CallStream) Calls(stream cairnpb.KVStream_CallsServer) error {
	cs.streams.Add(1)
	defer cs.streams.Add(-1)
	if err := cs.session(stream); err != nil {
		return endStatus(err)
	}
	return nil
}

// callsStream is what a session takes calls from and sends answers on: a
// gRPC stream (Calls), or a connection (ServeConn, callconn.go).
type callsStream interface {
	Recv() (*cairnpb.CallsRequest, error)
	Send(*cairnpb.CallsResponse) error
	Context() context.Context
}

// session serves stream's calls until it ends or the service closes, and
// returns why it ended: nil when the client closed its side (every call it
// sent was answered).
func (cs *CallStream) session(stream callsStream) error {
	s := &callSession{cs: cs, stream: stream}
	s.sent.L = &s.outMu
	recvErr := make(chan error, 1)
	go func() { recvErr <- s.receive() }()
	var err error
	select {
	case err = <-recvErr:
	case <-cs.closing:
		err = errStreamClosing
	}
	if s.stop() && err == errStreamClosing {
		err = errAnswerLost
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// callSession is one stream's state: its calls in flight and the queue of
// their answers (a stream allows one sender at a time).
//
// Answers are sent by combining: a call that finishes while another
// call's goroutine is sending queues its answer and returns; the sender,
// once its send is done, sends everything queued as one message (a few
// calls' answers in one write, as gRPC's writer batches frames). So a
// stream has at most one sender, and an answer queued is sent before the
// sender stops.
type callSession struct {
	cs      *CallStream
	stream  callsStream
	token   string     // the stream's token (receive's goroutine only)
	outMu   sync.Mutex // guards out, spare, sending and lost
	out     []*cairnpb.StreamAnswer
	spare   []*cairnpb.StreamAnswer // out's previous backing array, reused
	sending bool                    // a goroutine is sending out
	sent    sync.Cond               // signalled (on outMu) when sending ends
	lost    bool                    // an answer failed to send
	mu      sync.Mutex              // guards closed and the WaitGroup's Add
	closed  bool
	wg      sync.WaitGroup
}

// receive reads requests and starts their calls until the stream ends or
// the session stops.
func (s *callSession) receive() error {
	for {
		req, err := s.stream.Recv()
		if err != nil {
			return err
		}
		for _, c := range req.GetCalls() {
			if t := c.GetToken(); t != "" {
				s.token = t // this call's and the next ones'
			}
			if !s.start(c, s.token) {
				return errStreamClosing
			}
		}
	}
}

// start runs c, under the stream's token tok, on a worker, unless the
// session stopped.
func (s *callSession) start(c *cairnpb.StreamCall, tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	s.cs.run(func() {
		defer s.wg.Done()
		s.answer(s.cs.serve(s.stream.Context(), c, tok))
	})
	return true
}

// stop takes no more calls, waits until those started have answered and
// their answers were sent, and reports whether an answer was lost.
func (s *callSession) stop() (lost bool) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
	s.outMu.Lock()
	defer s.outMu.Unlock()
	for s.sending {
		s.sent.Wait()
	}
	return s.lost
}

// answer sends a, with the answers that queued while it was sent (see
// callSession). A failed send means the stream is ending (the receiving
// side notices) or the answers could not be sent; either way they are lost.
func (s *callSession) answer(a *cairnpb.StreamAnswer) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.out = append(s.out, a)
	if s.sending {
		return // the sender sends it next
	}
	s.sending = true
	for len(s.out) > 0 {
		batch := s.out
		s.out = s.spare[:0]
		s.outMu.Unlock()
		err := s.send(batch)
		clear(batch)
		s.outMu.Lock()
		s.spare = batch[:0]
		if err != nil {
			s.lost = true
		}
	}
	s.sending = false
	s.sent.Broadcast()
}

// send sends answers in messages of at most maxAnswerBatch bytes (a single
// larger answer goes alone), so one write stays bounded.
func (s *callSession) send(answers []*cairnpb.StreamAnswer) error {
	var err error
	for len(answers) > 0 {
		n, size := 1, 0
		if len(answers) > 1 {
			size = proto.Size(answers[0])
			for n < len(answers) {
				size += proto.Size(answers[n])
				if size > maxAnswerBatch {
					break
				}
				n++
			}
		}
		if e := s.stream.Send(&cairnpb.CallsResponse{Answers: answers[:n]}); e != nil && err == nil {
			err = e
		}
		answers = answers[n:]
	}
	return err
}

// serve answers c, if the check (Authorize) admits it under token tok. A
// call without an op is not checked: serveCall refuses it.
func (cs *CallStream) serve(ctx context.Context, c *cairnpb.StreamCall, tok string) *cairnpb.StreamAnswer {
	if m := callMethod(c); cs.check != nil && m != "" {
		if err := cs.check(m, tok); err != nil {
			return answerError(&cairnpb.StreamAnswer{Id: c.GetId()}, err)
		}
	}
	return serveCall(ctx, cs.kv, c)
}

// callMethod is the unary method of c's op ("" for none).
func callMethod(c *cairnpb.StreamCall) string {
	switch c.GetOp().(type) {
	case *cairnpb.StreamCall_Get:
		return cairnpb.KV_Get_FullMethodName
	case *cairnpb.StreamCall_MultiGet:
		return cairnpb.KV_MultiGet_FullMethodName
	case *cairnpb.StreamCall_Put:
		return cairnpb.KV_Put_FullMethodName
	case *cairnpb.StreamCall_Delete:
		return cairnpb.KV_Delete_FullMethodName
	case *cairnpb.StreamCall_Execute:
		return cairnpb.KV_Execute_FullMethodName
	case *cairnpb.StreamCall_PutMany:
		return cairnpb.KV_PutMany_FullMethodName
	case *cairnpb.StreamCall_MultiDelete:
		return cairnpb.KV_MultiDelete_FullMethodName
	case *cairnpb.StreamCall_StoreInfo:
		return cairnpb.KV_StoreInfo_FullMethodName
	}
	return ""
}

// serveCall answers one call as the unary RPC would.
func serveCall(ctx context.Context, kv cairnpb.KVServer, c *cairnpb.StreamCall) *cairnpb.StreamAnswer {
	a := &cairnpb.StreamAnswer{Id: c.GetId()}
	var err error
	switch op := c.GetOp().(type) {
	case *cairnpb.StreamCall_Get:
		err = run(ctx, kv.Get, op.Get, func(r *cairnpb.GetResponse) { a.Op = &cairnpb.StreamAnswer_Get{Get: r} })
	case *cairnpb.StreamCall_MultiGet:
		err = run(ctx, kv.MultiGet, op.MultiGet, func(r *cairnpb.MultiGetResponse) { a.Op = &cairnpb.StreamAnswer_MultiGet{MultiGet: r} })
	case *cairnpb.StreamCall_Put:
		err = run(ctx, kv.Put, op.Put, func(r *cairnpb.WriteResponse) { a.Op = &cairnpb.StreamAnswer_Put{Put: r} })
	case *cairnpb.StreamCall_Delete:
		err = run(ctx, kv.Delete, op.Delete, func(r *cairnpb.WriteResponse) { a.Op = &cairnpb.StreamAnswer_Delete{Delete: r} })
	case *cairnpb.StreamCall_Execute:
		err = run(ctx, kv.Execute, op.Execute, func(r *cairnpb.ExecuteResponse) { a.Op = &cairnpb.StreamAnswer_Execute{Execute: r} })
	case *cairnpb.StreamCall_PutMany:
		err = run(ctx, kv.PutMany, op.PutMany, func(r *cairnpb.PutManyResponse) { a.Op = &cairnpb.StreamAnswer_PutMany{PutMany: r} })
	case *cairnpb.StreamCall_MultiDelete:
		err = run(ctx, kv.MultiDelete, op.MultiDelete, func(r *cairnpb.MultiDeleteResponse) { a.Op = &cairnpb.StreamAnswer_MultiDelete{MultiDelete: r} })
	case *cairnpb.StreamCall_StoreInfo:
		err = run(ctx, kv.StoreInfo, op.StoreInfo, func(r *cairnpb.StoreInfoResponse) { a.Op = &cairnpb.StreamAnswer_StoreInfo{StoreInfo: r} })
	default:
		err = toStatus(badInput("invalid_argument", "stream call %d: op: a call must carry one of get, multi_get, put, delete, execute, put_many, multi_delete, store_info", c.GetId()))
	}
	if err != nil {
		return answerError(a, err)
	}
	return a
}

// answerError sets err's status (code, message, details) on a.
func answerError(a *cairnpb.StreamAnswer, err error) *cairnpb.StreamAnswer {
	st := status.Convert(err).Proto()
	a.Code, a.Message, a.Details = uint32(st.GetCode()), st.GetMessage(), st.GetDetails()
	return a
}

// run calls fn and hands its response to set, or returns its error.
func run[Req, Resp any](ctx context.Context, fn func(context.Context, Req) (Resp, error), req Req, set func(Resp)) error {
	resp, err := fn(ctx, req)
	if err == nil {
		set(resp)
	}
	return err
}
