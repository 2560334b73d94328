package client

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
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
	c     net.Conn
	r     *bufio.Reader
	calls []*cairnpb.StreamCall // read, not yet returned by read
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
	for len(l.calls) == 0 {
		l.calls = l.readFrame()
		if l.calls == nil {
			return nil
		}
	}
	c := l.calls[0]
	l.calls = l.calls[1:]
	return c
}

// readFrame returns the calls of the next frame, or nil when the client
// closed the link (or sent a frame that does not decode).
func (l *fakeLink) readFrame() []*cairnpb.StreamCall {
	var hdr [4]byte
	if _, err := io.ReadFull(l.r, hdr[:]); err != nil {
		return nil
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(l.r, b); err != nil {
		return nil
	}
	var req cairnpb.CallsRequest
	if err := proto.Unmarshal(b, &req); err != nil || len(req.GetCalls()) == 0 {
		return nil
	}
	return req.GetCalls()
}

func (l *fakeLink) answer(a ...*cairnpb.StreamAnswer) {
	b, _ := proto.Marshal(&cairnpb.CallsResponse{Answers: a})
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

// Sequential calls keep to one link; each carries a new id, and the
// login's token only when it is not the link's yet.
func TestCallSocketReusesLinksAndSendsTokenOnce(t *testing.T) {
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

// A call whose node sends nothing until its deadline ends then, and its
// link, silent for longer than sockSilent, is closed (so the node cancels
// it); one whose link breaks after the frame left is UNAVAILABLE with the
// sent flag set (a write is maybe applied).
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

// An end frame (a node shutting down) gives its status to the call, and
// breaks and closes the link.
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
	_, err := p.do(ctx, getCall())
	if status.Code(err) != codes.Unavailable || !hasErrorDetail(err) {
		t.Fatalf("an end frame: %v, want its UNAVAILABLE with the detail", err)
	}
	l := p.links[0].Load()
	if !l.broken() {
		t.Fatal("the link is not broken after an end frame")
	}
	if _, err := l.c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the link after an end frame: %v, want it closed", err)
	}
}

// A link its node closed while the client was quiet (a node killed) is
// found before a call is written on it: the call goes on a new link
// instead of being lost as "maybe applied".
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
	l := p.links[0].Load()
	l.mu.Lock()
	l.lastUsed -= int64(sockProbeAfter) // idle long enough to be checked
	l.mu.Unlock()
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
		if !p.links[0].Load().broken() {
			t.Fatalf("%s: the link is not broken", name)
		}
		p.close()
	}
}

// Many goroutines' calls share the node's links: each gets its own answer
// although the node answers a frame's calls together and in reverse order.
func TestCallSocketSharedLinksRouteAnswersById(t *testing.T) {
	var frames, calls atomic.Int64
	f := startFakeNode(t, &fakeNode{serve: func(_ int64, l *fakeLink) {
		for cs := l.readFrame(); cs != nil; cs = l.readFrame() {
			frames.Add(1)
			calls.Add(int64(len(cs)))
			var as []*cairnpb.StreamAnswer
			for i := len(cs) - 1; i >= 0; i-- {
				as = append(as, gotAnswer(cs[i].GetId(), fmt.Sprint("v", cs[i].GetId())))
			}
			l.answer(as...)
		}
	}})
	p := newSockPool(f.addr, nil, nil)
	defer p.close()
	const goroutines, each = 32, 50
	inParallel(t, goroutines, func(int) error {
		for range each {
			ctx, _ := ctxSent(t, 10*time.Second)
			c := getCall()
			a, err := p.do(ctx, c)
			if want := fmt.Sprint("v", c.GetId()); err != nil || string(a.GetGet().GetRecord().GetValue()) != want {
				return fmt.Errorf("call %d: %v, %v; want %s", c.GetId(), a, err, want)
			}
		}
		return nil
	})
	if n := f.conns.Load(); n > sockLinks {
		t.Fatalf("%d goroutines opened %d links, want %d at most", goroutines, n, sockLinks)
	}
	t.Logf("%d calls in %d frames", calls.Load(), frames.Load())
}

// A caller that gives up (its ctx cancelled while it reads) ends at once
// and leaves the link to the others: a call after it is answered on the
// same link, and the late answer to the call given up
// is dropped, not taken as another's.
func TestCallSocketGiveUpKeepsLink(t *testing.T) {
	f := startFakeNode(t, &fakeNode{serve: func(_ int64, l *fakeLink) {
		first := l.read() // held until the second call has come
		for c := l.read(); c != nil; c = l.read() {
			if first != nil {
				l.answer(gotAnswer(first.GetId(), "late"))
				first = nil
			}
			l.answer(gotAnswer(c.GetId(), "v"))
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
	for deadline := time.Now().Add(10 * time.Second); waitingOn(p, 0) != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first call is not waiting on a link")
		}
	}
	cancel()
	select {
	case err := <-done:
		if status.Code(err) != codes.Canceled {
			t.Fatalf("the call given up: %v, want CANCELED", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled call still waits")
	}
	for i := range 2 {
		ctx, _ := ctxSent(t, 10*time.Second)
		if a, err := p.do(ctx, getCall()); err != nil || string(a.GetGet().GetRecord().GetValue()) != "v" {
			t.Fatalf("call %d after one given up: %v, %v; want v", i, a, err)
		}
	}
	if n := f.conns.Load(); n != 1 {
		t.Fatalf("%d links opened, want the one kept", n)
	}
}

// A call larger than a frame may be is refused before anything is sent,
// and the link goes on.
func TestCallSocketOversizedCallRefused(t *testing.T) {
	f := startFakeNode(t, &fakeNode{serve: func(_ int64, l *fakeLink) {
		for c := l.read(); c != nil; c = l.read() {
			l.answer(gotAnswer(c.GetId(), "v"))
		}
	}})
	p := newSockPool(f.addr, nil, nil)
	defer p.close()
	big := &cairnpb.StreamCall{Op: &cairnpb.StreamCall_Put{Put: &cairnpb.PutRequest{Op: &cairnpb.PutOp{Value: make([]byte, sockMaxFrame)}}}}
	for i := range 2 {
		ctx, sent := ctxSent(t, 10*time.Second)
		if _, err := p.do(ctx, big); status.Code(err) != codes.ResourceExhausted || sent.Load() {
			t.Fatalf("a call over the limit (%d): %v, sent %v; want RESOURCE_EXHAUSTED, not sent", i, err, sent.Load())
		}
		ctx, _ = ctxSent(t, 10*time.Second)
		if _, err := p.do(ctx, getCall()); err != nil {
			t.Fatalf("a call after one refused: %v", err)
		}
	}
	if n := f.conns.Load(); n != 1 {
		t.Fatalf("%d links opened, want 1", n)
	}
}

// waitingOn is how many calls wait on slot's link.
func waitingOn(p *sockPool, slot int) int {
	p.mu.Lock()
	l := p.links[slot].Load()
	p.mu.Unlock()
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiting)
}

// pipeRand is a seeded source for the randomized tests here: the -seed
// flag (model_test.go's), or the clock.
func pipeRand(t *testing.T) *rand.Rand {
	var s uint64
	if f := flag.Lookup("seed"); f != nil {
		s, _ = strconv.ParseUint(f.Value.String(), 10, 64)
	}
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed=%d)", s, s)
	return rand.New(rand.NewPCG(s, s))
}

// Goroutines share the links while some give up (deadlines, cancels) and
// the node answers after random delays, out of order: every call ends with
// its own answer or its ctx's end, within its deadline, and no link breaks
// (the node is never silent for sockSilent).
func TestCallSocketSharedLinksUnderGiveUps(t *testing.T) {
	rng := pipeRand(t)
	var delays sync.Mutex
	delay := func() time.Duration {
		delays.Lock()
		defer delays.Unlock()
		return time.Duration(rng.IntN(3000)) * time.Microsecond
	}
	f := startFakeNode(t, &fakeNode{serve: func(_ int64, l *fakeLink) {
		var wmu sync.Mutex
		for c := l.read(); c != nil; c = l.read() {
			go func() {
				time.Sleep(delay()) // the call's running time
				wmu.Lock()
				l.answer(gotAnswer(c.GetId(), fmt.Sprint("v", c.GetId())))
				wmu.Unlock()
			}()
		}
	}})
	p := newSockPool(f.addr, nil, nil)
	defer p.close()
	const goroutines, each = 16, 200
	type plan struct {
		timeout, cancelAfter time.Duration
	}
	plans := make([][]plan, goroutines)
	for g := range plans {
		for range each {
			pl := plan{timeout: 10 * time.Second}
			switch rng.IntN(10) {
			case 0:
				pl.timeout = time.Duration(1+rng.IntN(3)) * time.Millisecond
			case 1:
				pl.cancelAfter = time.Duration(rng.IntN(2000)) * time.Microsecond
			}
			plans[g] = append(plans[g], pl)
		}
	}
	var answered, ended atomic.Int64
	inParallel(t, goroutines, func(g int) error {
		for _, pl := range plans[g] {
			ctx, cancel := context.WithTimeout(context.Background(), pl.timeout)
			if pl.cancelAfter > 0 {
				time.AfterFunc(pl.cancelAfter, cancel)
			}
			c := getCall()
			start := time.Now()
			a, err := p.do(ctx, c)
			took := time.Since(start)
			cancel()
			switch code := status.Code(err); {
			case err == nil && string(a.GetGet().GetRecord().GetValue()) == fmt.Sprint("v", c.GetId()):
				answered.Add(1)
			case code == codes.DeadlineExceeded || code == codes.Canceled:
				ended.Add(1)
			default:
				return fmt.Errorf("call %d: %v, %v", c.GetId(), a, err)
			}
			if took > pl.timeout+2*time.Second {
				return fmt.Errorf("call %d with a timeout of %v took %v", c.GetId(), pl.timeout, took)
			}
		}
		return nil
	})
	if n := f.conns.Load(); n > sockLinks {
		t.Fatalf("%d links opened, want %d at most: one broke", n, sockLinks)
	}
	t.Logf("%d answered, %d ended by their ctx", answered.Load(), ended.Load())
	if answered.Load() < goroutines*each/2 {
		t.Fatalf("only %d of %d calls answered", answered.Load(), goroutines*each)
	}
}

// pick gives a call the first link with nothing in flight (or none open),
// and, when all are busy, the less loaded of the first sockShared.
func TestCallSocketPick(t *testing.T) {
	for _, c := range []struct {
		inflight []int32 // -1: no link in the slot
		want     int
	}{
		{[]int32{-1, -1, -1, -1}, 0},
		{[]int32{0, -1, -1, -1}, 0},
		{[]int32{1, -1, -1, -1}, 1},
		{[]int32{1, 1, 0, 1}, 2},
		{[]int32{3, 2, 1, 1}, 1},
		{[]int32{2, 2, 1, 1}, 0},
	} {
		p := newSockPool("127.0.0.1:1", nil, nil)
		for i, n := range c.inflight {
			if n < 0 {
				continue
			}
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			l := newPipeLink(a, bufio.NewReader(a))
			l.inflight.Store(n)
			p.links[i].Store(l)
		}
		if got := p.pick(); got != c.want {
			t.Errorf("in flight %v: pick %d, want %d", c.inflight, got, c.want)
		}
	}
}

// inParallel runs fn(0..n-1) on n goroutines and fails t with the first
// error any returns.
func inParallel(t *testing.T, n int, fn func(g int) error) {
	t.Helper()
	errs := make(chan error, n)
	for g := range n {
		go func() { errs <- fn(g) }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
