package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/api/cairnpb"
)

// The call socket (docs/design/20261128_call_socket.md): the call stream's
// messages on a bare connection, framed by a length, that the calling
// goroutine writes and reads itself.
//
//	client ─► node: sockPreface, then frames of CallsRequest (one call each)
//	node ─► client: sockPreface, then frames of CallsResponse
//	frame:          ┌──────────────────────┬────────────────────┐
//	                │ length n: uint32, BE │ n bytes: message   │  n ≤ sockMaxFrame
//	                └──────────────────────┴────────────────────┘
//	end frame:      an answer with id 0: the node ends the connection
const (
	sockPreface  = "CAIRN-CALLS/1\r\n"
	sockALPN     = "cairn-calls/1"
	sockMaxFrame = 64 << 20
	// sockMaxIdle is how many idle links a node keeps; more are closed
	// when put back.
	sockMaxIdle = 64
	// sockKeepBuf is the largest frame buffer a link keeps for the next call.
	sockKeepBuf = 1 << 20
	// sockOpenTimeout bounds connecting, the TLS handshake and the prefaces
	// when the call's own deadline is later.
	sockOpenTimeout = 5 * time.Second
	// sockProbeAfter is how long a link may lie idle before a call checks
	// that its node did not close it meanwhile (a node killed while the
	// client was quiet): a write on a dead link would be "maybe applied".
	sockProbeAfter = time.Millisecond
	// sockOffPeriod is how long calls go on the gRPC stream once a node
	// showed it has no call socket; then the socket is tried again (the
	// node may have been upgraded, or only closing).
	sockOffPeriod = time.Minute
)

// sockPool is one node's call socket: idle links, each carrying one call at
// a time. A call takes a link (or opens one), writes its frame, reads until
// its answer and puts the link back.
//
// Invariants: a link is in idle or held by one call, never both; a call
// that did not end with an answer (a timeout, a cancellation, a broken
// connection, an end frame) closes its link, so a late answer is never read
// as a later call's, and the node cancels the call. While offUntil is in
// the future, the node is taken to have no call socket.
type sockPool struct {
	addr     string
	tls      *tls.Config   // nil: plaintext
	token    func() string // the login's current token; nil: no login
	offUntil atomic.Int64  // Unix nanoseconds; 0: on
	mu       sync.Mutex    // guards idle and closed
	idle     []*sockLink
	closed   bool
}

// sockLink is one connection of the call socket.
type sockLink struct {
	c         net.Conn
	r         *bufio.Reader
	buf       []byte // the frame written or read last
	nextID    uint64
	sentTok   string    // the last token a call on this link carried
	idleSince time.Time // when it was put back
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
// status; UNAVAILABLE with no detail when the link broke (after the frame
// left, a write may have been applied; before, the sent flag is unset);
// ctx's error; an end frame's status; or errNoStream when the node has no
// call socket (r was not sent).
func (p *sockPool) do(ctx context.Context, r *cairnpb.StreamCall) (*cairnpb.StreamAnswer, error) {
	l, err := p.take(ctx)
	if err != nil {
		return nil, err
	}
	a, err := l.call(ctx, r, p.token)
	var ac answerAndClose
	var ef *endFrame
	switch {
	case err == nil:
		p.put(l)
	case errors.As(err, &ac):
		l.c.Close()
		a = ac.a
	case errors.As(err, &ef):
		l.c.Close()
		p.purge() // the node ended every link: it is shutting down
		return nil, ef.err
	default:
		l.c.Close()
		if ctx.Err() == nil && status.Code(err) == codes.Unavailable {
			p.purge() // the node went away: its idle links are dead too
		}
		return nil, err
	}
	return a, answerError(a)
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

// take returns an idle link, or opens one.
func (p *sockPool) take(ctx context.Context) (*sockLink, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errSockClosed
	}
	if n := len(p.idle); n > 0 {
		l := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if time.Since(l.idleSince) < sockProbeAfter || alive(l) {
			return l, nil
		}
		l.c.Close()
		p.purge() // the node closed it: it went away, so did the others
		return p.open(ctx)
	}
	p.mu.Unlock()
	return p.open(ctx)
}

// put keeps l for the next call, unless enough are kept already.
func (p *sockPool) put(l *sockLink) {
	if cap(l.buf) > sockKeepBuf {
		l.buf = nil
	}
	l.idleSince = time.Now()
	p.mu.Lock()
	if !p.closed && len(p.idle) < sockMaxIdle {
		p.idle = append(p.idle, l)
		l = nil
	}
	p.mu.Unlock()
	if l != nil {
		l.c.Close()
	}
}

// purge closes the idle links.
func (p *sockPool) purge() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, l := range idle {
		l.c.Close()
	}
}

// close closes the idle links; a call under way closes its own when it ends.
func (p *sockPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.purge()
}

// open connects, handshakes on a secure store, and exchanges prefaces. Any
// failure is UNAVAILABLE (nothing was sent), except a node that shows it
// has no call socket: errNoStream, and the pool is off for a while. A node
// shows it by refusing the protocol in TLS, by answering the preface in
// another protocol (a port of gRPC alone), or by closing the connection
// without a byte (a secure node run with --no-http, or one shutting down:
// the stream then reports that).
func (p *sockPool) open(ctx context.Context) (*sockLink, error) {
	deadline := time.Now().Add(sockOpenTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	octx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(octx, "tcp", p.addr)
	if err != nil {
		return nil, p.unavailable("connecting to", ctx, err)
	}
	stop := context.AfterFunc(octx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if p.tls != nil {
		tc := tls.Client(c, p.tls)
		err := tc.HandshakeContext(octx)
		if err != nil && !noALPN(err) {
			c.Close()
			return nil, p.unavailable("a TLS handshake with", ctx, err)
		}
		if err != nil || tc.ConnectionState().NegotiatedProtocol != sockALPN {
			c.Close() // a TLS that refuses the protocol, or agrees to none
			return nil, p.turnOff()
		}
		c = tc
	}
	l := &sockLink{c: c, r: bufio.NewReaderSize(c, 16<<10)}
	var pre [len(sockPreface)]byte
	n := 0
	_, err = io.WriteString(c, sockPreface)
	if err == nil {
		n, err = io.ReadFull(l.r, pre[:])
	}
	if (n > 0 && string(pre[:n]) != sockPreface[:n]) || (n == 0 && errors.Is(err, io.EOF)) {
		c.Close()
		return nil, p.turnOff()
	}
	if !stop() || err != nil {
		c.Close()
		return nil, p.unavailable("opening the call socket to", ctx, cmpErr(err, octx.Err()))
	}
	return l, nil
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
// was not sent, so the router may try it elsewhere. ctx's own end is
// reported as such.
func (p *sockPool) unavailable(what string, ctx context.Context, err error) error {
	if err := ended(ctx); err != nil {
		return status.FromContextError(err).Err()
	}
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

// call writes r's frame and reads frames until r's answer. Any error but
// an answer's leaves the link unusable. A cancelled ctx cuts the link's
// blocked write or read at once.
func (l *sockLink) call(ctx context.Context, r *cairnpb.StreamCall, token func() string) (*cairnpb.StreamAnswer, error) {
	dl, _ := ctx.Deadline()
	_ = l.c.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = l.c.SetDeadline(time.Unix(1, 0)) })
	l.nextID++
	r.Id = l.nextID
	if token != nil {
		if tok := token(); tok != l.sentTok {
			r.Token = tok
		}
	}
	if err := l.write(r); err != nil {
		stop()
		return nil, linkError(ctx, err)
	}
	if r.Token != "" {
		l.sentTok = r.Token
	}
	if f, ok := ctx.Value(sentKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
	a, err := l.answer(r.Id)
	if !stop() && err == nil {
		// ctx ended as the answer came: the deadline may be in the past
		// now. The answer stands; the link does not.
		return nil, answerAndClose{a}
	}
	if err != nil {
		return nil, linkError(ctx, err)
	}
	return a, nil
}

// write sends r as one frame.
func (l *sockLink) write(r *cairnpb.StreamCall) error {
	b, err := proto.MarshalOptions{}.MarshalAppend(append(l.buf[:0], 0, 0, 0, 0), &cairnpb.CallsRequest{Calls: []*cairnpb.StreamCall{r}})
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "encoding the call: %v", err)
	}
	l.buf = b
	n := len(b) - 4
	if n > sockMaxFrame {
		return status.Errorf(codes.ResourceExhausted, "a call of %d bytes is larger than the limit of %d", n, sockMaxFrame)
	}
	binary.BigEndian.PutUint32(b, uint32(n))
	_, err = l.c.Write(b)
	return err
}

// answer reads frames until the answer to call id.
func (l *sockLink) answer(id uint64) (*cairnpb.StreamAnswer, error) {
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(l.r, hdr[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > sockMaxFrame {
			return nil, fmt.Errorf("the node sent a frame of %d bytes, over the limit of %d", n, sockMaxFrame)
		}
		if cap(l.buf) < int(n) {
			l.buf = make([]byte, n)
		}
		l.buf = l.buf[:n]
		if _, err := io.ReadFull(l.r, l.buf); err != nil {
			return nil, err
		}
		var resp cairnpb.CallsResponse
		if err := proto.Unmarshal(l.buf, &resp); err != nil {
			return nil, fmt.Errorf("an undecodable frame from the node: %v", err)
		}
		for _, a := range resp.GetAnswers() {
			switch a.GetId() {
			case id:
				return a, nil
			case 0:
				return nil, &endFrame{answerError(a)}
			}
		}
	}
}

// endFrame is the status the node ended the connection with.
type endFrame struct{ err error }

func (e *endFrame) Error() string { return e.err.Error() }

// answerAndClose carries an answer that came as the call's context ended:
// the call has its answer, but the link is closed.
type answerAndClose struct{ a *cairnpb.StreamAnswer }

func (answerAndClose) Error() string { return "answered as the call ended" }

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
