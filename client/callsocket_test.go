package client

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/cairndb/cairn/api/cairnpb"
)

// fakeNode is a call socket on a 127.0.0.1 port: each connection gets the
// preface exchange (unless preface is set: then it is sent instead, and the
// connection closed), then serve(conn number, link) until it returns.
type fakeNode struct {
	addr    string
	conns   atomic.Int64
	preface []byte
	serve   func(n int64, l *fakeLink)
}

type fakeLink struct {
	c net.Conn
	r *bufio.Reader
}

func startFakeNode(t *testing.T, f *fakeNode) *fakeNode {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	f.addr = lis.Addr().String()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			n := f.conns.Add(1) - 1
			go func() {
				defer c.Close()
				l := &fakeLink{c: c, r: bufio.NewReader(c)}
				pre := make([]byte, len(sockPreface))
				if _, err := io.ReadFull(l.r, pre); err != nil {
					return
				}
				if f.preface != nil {
					_, _ = c.Write(f.preface)
					return
				}
				_, _ = io.WriteString(c, sockPreface)
				f.serve(n, l)
			}()
		}
	}()
	return f
}

// read returns the next call, or nil when the client closed the link.
func (l *fakeLink) read() *cairnpb.StreamCall {
	var hdr [4]byte
	if _, err := io.ReadFull(l.r, hdr[:]); err != nil {
		return nil
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(l.r, b); err != nil {
		return nil
	}
	var req cairnpb.CallsRequest
	if err := proto.Unmarshal(b, &req); err != nil || len(req.GetCalls()) != 1 {
		return nil
	}
	return req.GetCalls()[0]
}

func (l *fakeLink) answer(a *cairnpb.StreamAnswer) {
	b, _ := proto.Marshal(&cairnpb.CallsResponse{Answers: []*cairnpb.StreamAnswer{a}})
	_, _ = l.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
}

func getCall() *cairnpb.StreamCall {
	return &cairnpb.StreamCall{Op: &cairnpb.StreamCall_Get{Get: &cairnpb.GetRequest{}}}
}

func gotAnswer(id uint64, v string) *cairnpb.StreamAnswer {
	return &cairnpb.StreamAnswer{Id: id, Op: &cairnpb.StreamAnswer_Get{Get: &cairnpb.GetResponse{Found: true, Record: &cairnpb.Record{Value: []byte(v)}}}}
}

// ctxSent is a call context with a sent flag, as attempt gives.
func ctxSent(t *testing.T, d time.Duration) (context.Context, *atomic.Bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	f := new(atomic.Bool)
	return context.WithValue(ctx, sentKey{}, f), f
}

// Sequential calls share one link; each carries a new id, and the login's
// token only when it is not the link's yet.
func TestCallSocketReusesLinkAndSendsTokenOnce(t *testing.T) {
	var mu sync.Mutex
	var tokens []string
	f := startFakeNode(t, &fakeNode{serve: func(_ int64, l *fakeLink) {
		for c := l.read(); c != nil; c = l.read() {
			mu.Lock()
			tokens = append(tokens, c.GetToken())
			mu.Unlock()
			l.answer(gotAnswer(c.GetId(), "v"))
		}
	}})
	tok := "t1"
	p := newSockPool(f.addr, nil, nil)
	p.token = func() string { return tok }
	defer p.close()
	for i := range 4 {
		if i == 2 {
			tok = "t2" // a renewal
		}
		ctx, sent := ctxSent(t, 10*time.Second)
		a, err := p.do(ctx, getCall())
		if err != nil || string(a.GetGet().GetRecord().GetValue()) != "v" || !sent.Load() {
			t.Fatalf("call %d: %v, %v, sent %v", i, a, err, sent.Load())
		}
	}
	if n := f.conns.Load(); n != 1 {
		t.Fatalf("4 sequential calls opened %d links, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"t1", "", "t2", ""}; !equalStrings(tokens, want) {
		t.Fatalf("tokens sent %q, want %q", tokens, want)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A node that answers the preface in another protocol, or closes without
// a byte, has no call socket: the call was not sent, and the pool is off
// for sockOffPeriod. A node that does not answer the preface in time is
// only late.
func TestCallSocketOffOrUnavailable(t *testing.T) {
	for name, pre := range map[string][]byte{
		"a gRPC-only node":              {0, 0, 18, 4, 0, 0, 0, 0, 0}, // an HTTP/2 SETTINGS frame
		"a node that closed at preface": {},
	} {
		f := startFakeNode(t, &fakeNode{preface: pre})
		p := newSockPool(f.addr, nil, nil)
		ctx, sent := ctxSent(t, 10*time.Second)
		before := time.Now()
		if _, err := p.do(ctx, getCall()); err != errNoStream || !p.off() || sent.Load() {
			t.Fatalf("%s: %v, off %v, sent %v; want errNoStream, off, not sent", name, err, p.off(), sent.Load())
		}
		if until := time.Unix(0, p.offUntil.Load()); until.Before(before.Add(sockOffPeriod)) {
			t.Fatalf("%s: off until %v, want %v after the call", name, until, sockOffPeriod)
		}
		p.offUntil.Store(time.Now().Add(-time.Second).UnixNano())
		if p.off() {
			t.Fatalf("%s: still off once the period passed", name)
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers the preface
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	p := newSockPool(lis.Addr().String(), nil, nil)
	ctx, sent := ctxSent(t, 300*time.Millisecond)
	_, err = p.do(ctx, getCall())
	if status.Code(err) != codes.DeadlineExceeded || p.off() || sent.Load() {
		t.Fatalf("a node silent at the preface: %v, off %v, sent %v; want DEADLINE_EXCEEDED, not off, not sent", err, p.off(), sent.Load())
	}
}

// A call whose node does not answer ends at its deadline, and its link is
// closed (so the node cancels it); one whose link breaks after the frame
// left is UNAVAILABLE with the sent flag set (a write is maybe applied).
func TestCallSocketDeadlineAndBrokenLink(t *testing.T) {
	closed := make(chan struct{})
	f := startFakeNode(t, &fakeNode{serve: func(n int64, l *fakeLink) {
		if l.read() == nil {
			return
		}
		if n == 0 { // silent until the client gives up
			if l.read() == nil {
				close(closed)
			}
			return
		}
		// n == 1: the link breaks after the call arrived
	}})
	p := newSockPool(f.addr, nil, nil)
	defer p.close()
	ctx, sent := ctxSent(t, 300*time.Millisecond)
	start := time.Now()
	_, err := p.do(ctx, getCall())
	if status.Code(err) != codes.DeadlineExceeded || !sent.Load() {
		t.Fatalf("an unanswered call: %v, sent %v; want DEADLINE_EXCEEDED, sent", err, sent.Load())
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the deadline of 300ms ended the call after %v", el)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the timed-out call's link was not closed")
	}
	ctx, sent = ctxSent(t, 10*time.Second)
	_, err = p.do(ctx, getCall())
	if status.Code(err) != codes.Unavailable || !sent.Load() || hasErrorDetail(err) {
		t.Fatalf("a link broken after the call left: %v, sent %v; want UNAVAILABLE without detail, sent", err, sent.Load())
	}
}

// Cancelling a call's context ends its wait at once.
func TestCallSocketCancel(t *testing.T) {
	f := startFakeNode(t, &fakeNode{serve: func(_ int64, l *fakeLink) {
		for l.read() != nil {
		}
	}})
	p := newSockPool(f.addr, nil, nil)
	defer p.close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.do(ctx, getCall())
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for f.conns.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if status.Code(err) != codes.Canceled {
			t.Fatalf("a cancelled call: %v, want CANCELED", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled call still waits")
	}
}

// An end frame (a node shutting down) gives its status to the call, and
// the pool closes its idle links: the node ended them all.
func TestCallSocketEndFrame(t *testing.T) {
	detail, _ := anypb.New(&cairnpb.ErrorDetail{Kind: "shutting_down"})
	f := startFakeNode(t, &fakeNode{serve: func(_ int64, l *fakeLink) {
		if c := l.read(); c != nil {
			l.answer(&cairnpb.StreamAnswer{Id: 0, Code: uint32(codes.Unavailable), Message: "shutting down", Details: []*anypb.Any{detail}})
		}
	}})
	p := newSockPool(f.addr, nil, nil)
	defer p.close()
	ctx, _ := ctxSent(t, 10*time.Second)
	l0, err := p.take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := p.take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.put(l0)
	p.put(l1) // the next call takes l1
	_, err = p.do(ctx, getCall())
	if status.Code(err) != codes.Unavailable || !hasErrorDetail(err) {
		t.Fatalf("an end frame: %v, want its UNAVAILABLE with the detail", err)
	}
	if len(p.idle) != 0 {
		t.Fatalf("%d idle links kept after an end frame", len(p.idle))
	}
	if _, err := l0.c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the idle link after an end frame: %v, want it closed", err)
	}
}

// A link its node closed while it lay idle (a node killed while the client
// was quiet) is found before a call is written on it: the call goes on a
// new link instead of being lost as "maybe applied".
func TestCallSocketIdleLinkClosedByNode(t *testing.T) {
	closed := make(chan struct{})
	f := startFakeNode(t, &fakeNode{serve: func(n int64, l *fakeLink) {
		for c := l.read(); c != nil; c = l.read() {
			l.answer(gotAnswer(c.GetId(), "v"))
			if n == 0 {
				l.c.Close()
				close(closed)
				return
			}
		}
	}})
	p := newSockPool(f.addr, nil, nil)
	defer p.close()
	ctx, _ := ctxSent(t, 10*time.Second)
	if _, err := p.do(ctx, getCall()); err != nil {
		t.Fatal(err)
	}
	<-closed
	p.mu.Lock()
	p.idle[0].idleSince = time.Now().Add(-sockProbeAfter) // idle long enough to be checked
	p.mu.Unlock()
	ctx, sent := ctxSent(t, 10*time.Second)
	if _, err := p.do(ctx, getCall()); err != nil || !sent.Load() {
		t.Fatalf("a call after the node closed the idle link: %v (sent %v), want an answer on a new link", err, sent.Load())
	}
	if n := f.conns.Load(); n != 2 {
		t.Fatalf("%d links opened, want 2", n)
	}
}

// A frame from the node that is over the limit or does not decode breaks
// the link: the call is UNAVAILABLE with the sent flag set (a write is
// maybe applied), and the link is closed, not pooled.
func TestCallSocketBadFrameFromNode(t *testing.T) {
	for name, frame := range map[string][]byte{
		"oversized":   binary.BigEndian.AppendUint32(nil, sockMaxFrame+1),
		"undecodable": append(binary.BigEndian.AppendUint32(nil, 3), 0xff, 0xff, 0xff),
	} {
		closed := make(chan struct{})
		f := startFakeNode(t, &fakeNode{serve: func(_ int64, l *fakeLink) {
			if l.read() == nil {
				return
			}
			_, _ = l.c.Write(frame)
			if l.read() == nil {
				close(closed)
			}
		}})
		p := newSockPool(f.addr, nil, nil)
		ctx, sent := ctxSent(t, 10*time.Second)
		_, err := p.do(ctx, getCall())
		if status.Code(err) != codes.Unavailable || !sent.Load() || hasErrorDetail(err) {
			t.Fatalf("%s: %v, sent %v; want UNAVAILABLE without detail, sent", name, err, sent.Load())
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the link was not closed", name)
		}
		if len(p.idle) != 0 {
			t.Fatalf("%s: the broken link was pooled", name)
		}
		p.close()
	}
}
