package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// streamFakeKV answers StoreInfo for store "s" and unary gets with the
// value "unary"; it counts the unary gets.
type streamFakeKV struct {
	cairnpb.UnimplementedKVServer
	unaryGets atomic.Int64
}

func (*streamFakeKV) StoreInfo(context.Context, *cairnpb.StoreInfoRequest) (*cairnpb.StoreInfoResponse, error) {
	return &cairnpb.StoreInfoResponse{Store: "s"}, nil
}

func (f *streamFakeKV) Get(_ context.Context, req *cairnpb.GetRequest) (*cairnpb.GetResponse, error) {
	f.unaryGets.Add(1)
	return found(req.GetKey(), "unary"), nil
}

func found(k *cairnpb.Key, v string) *cairnpb.GetResponse {
	return &cairnpb.GetResponse{Found: true, Record: &cairnpb.Record{Key: k, Value: []byte(v), Version: []byte{1}}}
}

// fakeStream serves KVStream by a rule per stream: the n-th stream (from
// 0) calls serve(n, stream) and ends with what it returns.
type fakeStream struct {
	cairnpb.UnimplementedKVStreamServer
	streams atomic.Int64
	serve   func(n int64, s cairnpb.KVStream_CallsServer) error
}

func (f *fakeStream) Calls(s cairnpb.KVStream_CallsServer) error {
	return f.serve(f.streams.Add(1)-1, s)
}

// serveStreamFake serves kv (and st, unless nil) on a free 127.0.0.1 port until
// the test ends, and opens a client of store "s" to it.
func serveStreamFake(t *testing.T, kv cairnpb.KVServer, st cairnpb.KVStreamServer) *Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	cairnpb.RegisterKVServer(srv, kv)
	if st != nil {
		cairnpb.RegisterKVStreamServer(srv, st)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	c, err := Open(context.Background(), Config{Hosts: []string{lis.Addr().String()}, Store: "s", Conns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCallStreamFallsBackToUnary: a server without KVStream (an older one,
// or a secure store before StreamCall.token) answers the stream UNIMPLEMENTED; the read is then
// made unary, and so is every later one on that connection.
func TestCallStreamFallsBackToUnary(t *testing.T) {
	kv := &streamFakeKV{}
	c := serveStreamFake(t, kv, nil)
	for i := range 3 {
		rec, ok, err := c.Get(context.Background(), MustParseKey("/a"))
		if err != nil || !ok || string(rec.Value) != "unary" {
			t.Fatalf("get %d: %v %v %q, want the unary answer", i, err, ok, rec.Value)
		}
	}
	if n := kv.unaryGets.Load(); n != 3 {
		t.Fatalf("%d unary gets, want 3", n)
	}
	if !c.kvs[0].(streamKV).cs.off.Load() {
		t.Fatal("the connection still tries the stream")
	}
}

// TestCallStreamBreakRetries: a read whose stream breaks under it fails as
// UNAVAILABLE inside the client, which retries it on a new stream; the
// caller sees only the answer.
func TestCallStreamBreakRetries(t *testing.T) {
	kv := &streamFakeKV{}
	st := &fakeStream{serve: func(n int64, s cairnpb.KVStream_CallsServer) error {
		for {
			req, err := s.Recv()
			if err != nil {
				return err
			}
			if n == 0 {
				return status.Error(codes.Unavailable, "breaking the first stream")
			}
			r := req.GetCalls()[0]
			a := &cairnpb.StreamAnswer{Id: r.GetId(), Op: &cairnpb.StreamAnswer_Get{Get: found(r.GetGet().GetKey(), "stream")}}
			if err := s.Send(&cairnpb.CallsResponse{Answers: []*cairnpb.StreamAnswer{a}}); err != nil {
				return err
			}
		}
	}}
	c := serveStreamFake(t, kv, st)
	rec, ok, err := c.Get(context.Background(), MustParseKey("/a"))
	if err != nil || !ok || string(rec.Value) != "stream" {
		t.Fatalf("get: %v %v %q, want the second stream's answer", err, ok, rec.Value)
	}
	if n := st.streams.Load(); n != 2 {
		t.Fatalf("%d streams opened, want 2", n)
	}
	if n := kv.unaryGets.Load(); n != 0 {
		t.Fatalf("%d unary gets, want none", n)
	}
}

// TestCallStreamAnswersOutOfOrder: answers come back in any order and each
// reaches its own caller; an answer's status is the caller's error, with
// its ErrorDetail.
func TestCallStreamAnswersOutOfOrder(t *testing.T) {
	const n = 8
	var mu sync.Mutex
	var held []*cairnpb.StreamCall
	st := &fakeStream{serve: func(_ int64, s cairnpb.KVStream_CallsServer) error {
		for {
			req, err := s.Recv()
			if err != nil {
				return err
			}
			mu.Lock()
			held = append(held, req.GetCalls()...)
			ready := len(held) == n
			mu.Unlock()
			if !ready {
				continue
			}
			for i := n - 1; i >= 0; i-- { // the last read first
				r := held[i]
				a := &cairnpb.StreamAnswer{Id: r.GetId()}
				if k := r.GetGet().GetKey(); k.GetMajor()[0] == "bad" {
					st, _ := status.New(codes.InvalidArgument, "bad key").WithDetails(&cairnpb.ErrorDetail{Kind: "invalid_key", Action: cairnpb.ErrorDetail_ACTION_FIX_INPUT})
					p := st.Proto()
					a.Code, a.Message, a.Details = uint32(p.GetCode()), p.GetMessage(), p.GetDetails()
				} else {
					a.Op = &cairnpb.StreamAnswer_Get{Get: found(k, k.GetMajor()[0])}
				}
				if err := s.Send(&cairnpb.CallsResponse{Answers: []*cairnpb.StreamAnswer{a}}); err != nil {
					return err
				}
			}
		}
	}}
	c := serveStreamFake(t, &streamFakeKV{}, st)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			major := string(rune('a' + i))
			if i == 3 {
				major = "bad"
			}
			rec, _, err := c.Get(context.Background(), MustParseKey("/"+major))
			switch {
			case i == 3:
				var e *Error
				if !errors.As(err, &e) || e.Code != codes.InvalidArgument || e.Kind != "invalid_key" {
					errs[i] = errors.New("read 3: want invalid_key, got " + errString(err))
				}
			case err != nil || string(rec.Value) != major:
				errs[i] = errors.New("read " + major + ": got " + string(rec.Value) + " " + errString(err))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestCallStreamDeadline: a read that gets no answer ends at its deadline
// with DEADLINE_EXCEEDED, and its wait is dropped from the stream.
func TestCallStreamDeadline(t *testing.T) {
	got := make(chan struct{}, 1)
	st := &fakeStream{serve: func(_ int64, s cairnpb.KVStream_CallsServer) error {
		for {
			if _, err := s.Recv(); err != nil {
				return err
			}
			got <- struct{}{}
		}
	}}
	c := serveStreamFake(t, &streamFakeKV{}, st)
	_, _, err := c.Get(context.Background(), MustParseKey("/a"), WithTimeout(300*time.Millisecond))
	var e *Error
	if !errors.As(err, &e) || e.Code != codes.DeadlineExceeded {
		t.Fatalf("get: %v, want DEADLINE_EXCEEDED", err)
	}
	<-got
	s := c.kvs[0].(streamKV).cs.cur
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) != 0 {
		t.Fatalf("%d reads still wait on the stream", len(s.waiting))
	}
}

// putStream serves a fake KVStream whose first stream takes one call and
// ends with first; later streams answer every put.
func putStream(first error) *fakeStream {
	return &fakeStream{serve: func(n int64, s cairnpb.KVStream_CallsServer) error {
		for {
			req, err := s.Recv()
			if err != nil {
				return err
			}
			if n == 0 {
				return first
			}
			c := req.GetCalls()[0]
			res := &cairnpb.OperationResult{Success: true, NewVersion: make([]byte, 16)}
			a := &cairnpb.StreamAnswer{Id: c.GetId(), Op: &cairnpb.StreamAnswer_Put{Put: &cairnpb.WriteResponse{Result: res}}}
			if err := s.Send(&cairnpb.CallsResponse{Answers: []*cairnpb.StreamAnswer{a}}); err != nil {
				return err
			}
		}
	}}
}

// TestCallStreamLostWriteMaybeApplied: a write sent on a stream that breaks
// before its answer may have been applied: the caller is told so, and the
// client does not send it again. That holds whatever status ended the
// stream, unless the node said (with an ErrorDetail) what it means: one
// call's failure (say, too large to send) ends the whole stream with its
// own code, which says nothing of the others.
func TestCallStreamLostWriteMaybeApplied(t *testing.T) {
	for _, end := range []error{
		status.Error(codes.Unavailable, "the connection broke"),
		status.Error(codes.ResourceExhausted, "another call was too large"),
	} {
		st := putStream(end)
		c := serveStreamFake(t, &streamFakeKV{}, st)
		_, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"))
		var e *Error
		if !errors.As(err, &e) || !e.MaybeApplied || !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("stream ended with %v; put: %v, want an outcome-unknown error", end, err)
		}
		if n := st.streams.Load(); n != 1 {
			t.Fatalf("stream ended with %v: %d streams opened, the write was sent again", end, n)
		}
	}
}

// TestCallStreamShutdownRetriesWrite: a node that closes a stream at
// shutdown says (kind shutting_down) that the calls it did not answer never
// ran, so a write waiting on it is sent again, and succeeds.
func TestCallStreamShutdownRetriesWrite(t *testing.T) {
	closing, _ := status.New(codes.Unavailable, "the node is shutting down").
		WithDetails(&cairnpb.ErrorDetail{Kind: "shutting_down", Action: cairnpb.ErrorDetail_ACTION_RETRY})
	st := putStream(closing.Err())
	c := serveStreamFake(t, &streamFakeKV{}, st)
	if _, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v")); err != nil {
		t.Fatalf("put: %v, want it retried on a new stream", err)
	}
	if n := st.streams.Load(); n != 2 {
		t.Fatalf("%d streams opened, want 2", n)
	}
}
