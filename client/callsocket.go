package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// The call socket (docs/design/20261128_call_socket.md): the call stream's
// messages on a bare connection, framed by a length. Every goroutine that
// calls a node shares its few links; a frame carries the calls that queued
// while the last one was written, and answers come in any order by id
// (callpipe.go, and docs/design/20261129_pipelined_call_socket.md).
//
//	client ─► node: sockPreface, then frames of CallsRequest (calls)
//	node ─► client: sockPreface, then frames of CallsResponse (answers)
//	frame:          ┌──────────────────────┬────────────────────┐
//	                │ length n: uint32, BE │ n bytes: message   │  n ≤ sockMaxFrame
//	                └──────────────────────┴────────────────────┘
//	end frame:      an answer with id 0: the node ends the connection
const (
	sockPreface  = "CAIRN-CALLS/1\r\n"
	sockALPN     = "cairn-calls/1"
	sockMaxFrame = 64 << 20
	// sockLinks is how many links a node's calls use at most, and
	// sockShared how many of them take calls when all are busy (pick).
	sockLinks  = 4
	sockShared = 2
	// sockFrameTarget is the size past which a link starts a new frame
	// for the next call queued: one write stays bounded.
	sockFrameTarget = 1 << 20
	// sockKeepBuf is the largest buffer a link keeps for the next frame.
	sockKeepBuf = 1 << 20
	// sockOpenTimeout bounds connecting, the TLS handshake and the prefaces
	// when the call's own deadline is later.
	sockOpenTimeout = 5 * time.Second
	// sockWriteTimeout bounds one write of a link: a node that takes
	// nothing for that long (its buffers full) breaks the link.
	sockWriteTimeout = 10 * time.Second
	// sockProbeAfter is how long a link may lie idle before a call checks
	// that its node did not close it meanwhile (checkIdle).
	sockProbeAfter = time.Millisecond
	// sockSilent is how long a link may read nothing before a call that
	// reaches its deadline with no byte read since it left breaks the
	// link: its node is gone, paused or cut off, and the next call opens
	// a new link, which fails fast if the node is unreachable.
	sockSilent = 100 * time.Millisecond
	// sockOffPeriod is how long calls go on the gRPC stream once a node
	// showed it has no call socket; then the socket is tried again (the
	// node may have been upgraded, or only closing).
	sockOffPeriod = time.Minute
)

// sockPool is one node's call socket: up to sockLinks links, each shared by
// the goroutines that call the node (callpipe.go). A call takes a link as
// pick says, opening it if it is not open or broke.
//
// Invariants: a slot holds at most one link, and at most one caller opens
// a slot's link at a time (the others wait for it); a broken link is never
// used again. While offUntil is in the future, the node is taken to have
// no call socket.
type sockPool struct {
	addr     string
	tls      *tls.Config                         // nil: plaintext
	token    func() string                       // the login's current token; nil: no login
	offUntil atomic.Int64                        // Unix nanoseconds; 0: on
	links    [sockLinks]atomic.Pointer[pipeLink] // stored under mu
	mu       sync.Mutex                          // guards opening and closed
	opening  [sockLinks]*linkOpen                // the slot's open under way; nil: none
	closed   bool
}

// errSockClosed is what a call on a closed client's socket gets.
var errSockClosed = status.Error(codes.Canceled, "the client is closed")

func newSockPool(addr string, tc *tls.Config, s *session) *sockPool {
	p := &sockPool{addr: addr}
	if tc != nil {
		p.tls = tc.Clone()
		p.tls.NextProtos = []string{sockALPN}
		p.tls.MinVersion = tls.VersionTLS13
		if p.tls.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err == nil {
				p.tls.ServerName = host
			}
		}
	}
	if s != nil {
		p.token = s.current
	}
	return p
}

// do makes call r and returns its answer. The error is the answer's
// status; UNAVAILABLE with no detail when the link broke (after r's frame
// left, a write may have been applied; before, the sent flag is unset);
// ctx's error; an end frame's status; or errNoStream when the node has no
// call socket (r was not sent). A call whose link broke before its frame
// left is made again on a new link.
func (p *sockPool) do(ctx context.Context, r *cairnpb.StreamCall) (*cairnpb.StreamAnswer, error) {
	slot := p.pick()
	for try := 0; ; try++ {
		l, err := p.link(ctx, slot)
		if err != nil {
			return nil, err
		}
		a, err := l.call(ctx, r, p.token)
		var ns notSent
		if errors.As(err, &ns) {
			if try < 2 && ctx.Err() == nil {
				continue // the slot opens a new link
			}
			return nil, linkError(ctx, ns.err)
		}
		if err != nil {
			return nil, err
		}
		return a, answerError(a)
	}
}

// pick is the first slot whose link has no call in flight (or is not
// open); when every link is busy, whichever of the first sockShared has
// fewer calls in flight. So a few callers each have a link to themselves,
// and read their own answers, while many share two links, where calls go
// out and come back several to a write.
func (p *sockPool) pick() int {
	var n [sockLinks]int32
	for i := range p.links {
		if l := p.links[i].Load(); l != nil && !l.broken() {
			n[i] = l.inflight.Load()
		}
		if n[i] == 0 {
			return i
		}
	}
	best := 0
	for i := 1; i < sockShared; i++ {
		if n[i] < n[best] {
			best = i
		}
	}
	return best
}

// link returns slot's working link, opening one if it has none. The link
// is opened for every caller, not for this one: the open goes on, bounded
// by sockOpenTimeout, when ctx ends first.
func (p *sockPool) link(ctx context.Context, slot int) (*pipeLink, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errSockClosed
	}
	if l := p.links[slot].Load(); l != nil && !l.broken() {
		p.mu.Unlock()
		return l, nil
	}
	if p.off() {
		p.mu.Unlock()
		return nil, errNoStream // found by another caller's open
	}
	o := p.opening[slot]
	if o == nil {
		o = &linkOpen{done: make(chan struct{})}
		p.opening[slot] = o
		go p.openSlot(slot, o)
	}
	p.mu.Unlock()
	select {
	case <-o.done:
		return o.l, o.err
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

// linkOpen is a slot's open under way; l and err are set before done is
// closed.
type linkOpen struct {
	done chan struct{}
	l    *pipeLink
	err  error
}

// openSlot opens slot's link and puts it in the slot.
func (p *sockPool) openSlot(slot int, o *linkOpen) {
	l, err := p.open()
	p.mu.Lock()
	p.opening[slot] = nil
	if l != nil && p.closed {
		l.shut(errSockClosed)
		l, err = nil, errSockClosed
	}
	if l != nil {
		p.links[slot].Store(l)
	}
	o.l, o.err = l, err
	p.mu.Unlock()
	close(o.done)
}

// off reports whether calls go on the gRPC stream for now.
func (p *sockPool) off() bool {
	u := p.offUntil.Load()
	return u != 0 && time.Now().UnixNano() < u
}

// turnOff sends calls to the gRPC stream for sockOffPeriod.
func (p *sockPool) turnOff() error {
	p.offUntil.Store(time.Now().Add(sockOffPeriod).UnixNano())
	return errNoStream
}

// close breaks every link: the calls waiting on them end CANCELED.
func (p *sockPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for i := range p.links {
		if l := p.links[i].Swap(nil); l != nil {
			l.shut(errSockClosed)
		}
	}
}

// open connects, handshakes on a secure store, and exchanges prefaces. Any
// failure is UNAVAILABLE (nothing was sent), except a node that shows it
// has no call socket: errNoStream, and the pool is off for a while. A node
// shows it by refusing the protocol in TLS, by answering the preface in
// another protocol (a port of gRPC alone), or by closing the connection
// without a byte (a secure node run with --no-http, or one shutting down:
// the stream then reports that).
func (p *sockPool) open() (*pipeLink, error) {
	octx, cancel := context.WithTimeout(context.Background(), sockOpenTimeout)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(octx, "tcp", p.addr)
	if err != nil {
		return nil, p.unavailable("connecting to", err)
	}
	stop := context.AfterFunc(octx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if p.tls != nil {
		tc := tls.Client(c, p.tls)
		err := tc.HandshakeContext(octx)
		if err != nil && !noALPN(err) {
			c.Close()
			return nil, p.unavailable("a TLS handshake with", err)
		}
		if err != nil || tc.ConnectionState().NegotiatedProtocol != sockALPN {
			c.Close() // a TLS that refuses the protocol, or agrees to none
			return nil, p.turnOff()
		}
		c = tc
	}
	r := bufio.NewReaderSize(c, 32<<10)
	var pre [len(sockPreface)]byte
	n := 0
	_, err = io.WriteString(c, sockPreface)
	if err == nil {
		n, err = io.ReadFull(r, pre[:])
	}
	if (n > 0 && string(pre[:n]) != sockPreface[:n]) || (n == 0 && errors.Is(err, io.EOF)) {
		c.Close()
		return nil, p.turnOff()
	}
	if !stop() || err != nil {
		c.Close()
		return nil, p.unavailable("opening the call socket to", cmpErr(err, octx.Err()))
	}
	_ = c.SetDeadline(time.Time{})
	return newPipeLink(c, r), nil
}

// noALPN reports whether a handshake failed because the node sent TLS's
// no_application_protocol alert (RFC 7301): it speaks none of the
// protocols offered. crypto/tls reports a received alert as a "remote
// error" whose text is the alert's.
func noALPN(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" && op.Err != nil &&
		op.Err.Error() == "tls: no application protocol"
}

// unavailable is the error of a link that could not be opened: the call
// was not sent, so the router may try it elsewhere.
func (p *sockPool) unavailable(what string, err error) error {
	return status.Errorf(codes.Unavailable, "call socket: %s %s: %v", what, p.addr, err)
}

// ended is ctx's error, or DeadlineExceeded once its deadline has passed:
// a link's deadline is ctx's, and may pass a moment before ctx's own timer
// marks it done.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// endFrame is the status the node ended the connection with.
type endFrame struct{ err error }

func (e *endFrame) Error() string { return e.err.Error() }

// linkError is the status of a call whose link failed: ctx's end, an
// oversized or unencodable call (a status already), or UNAVAILABLE with no
// detail, so a sent write is reported as maybe applied.
func linkError(ctx context.Context, err error) error {
	var ef *endFrame
	switch {
	case errors.As(err, &ef):
		return err
	case ended(ctx) != nil:
		return status.FromContextError(ended(ctx)).Err()
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Errorf(codes.Unavailable, "call socket broke: %v", err)
}
