package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/api/cairnpb"
)

// The call stream on a bare connection (docs/design/20261128_call_socket.md):
// the same calls and answers as cairn.v1.KVStream/Calls, framed by a length
// instead of HTTP/2 and gRPC.
//
//	client ─► node: Preface, then frames of CallsRequest
//	node ─► client: Preface (the node serves the protocol), then frames of
//	                CallsResponse; the last may be the end frame
//
//	frame:      ┌──────────────────────┬───────────────────────────┐
//	            │ length n: uint32, BE │ n bytes: the message      │  n ≤ MaxFrame
//	            └──────────────────────┴───────────────────────────┘
//	end frame:  a CallsResponse of one StreamAnswer with id 0, whose code,
//	            message and details are the status the gRPC stream would
//	            have ended with (call ids start at 1)
//
// On a secure node the connection is TLS with ALPN protocol ALPN, and the
// preface follows the handshake; calls carry the session's token as on
// the gRPC stream.
const (
	// Preface is the first bytes a client sends: they pick this protocol
	// on a node's one port.
	Preface = "CAIRN-CALLS/1\r\n"
	// ALPN is the TLS application protocol of the call socket.
	ALPN = "cairn-calls/1"
	// MaxFrame is the largest frame either side sends or takes, as the
	// gRPC server's message limit.
	MaxFrame = 64 << 20
	// keepBuf is the largest frame buffer a connection keeps for the next.
	keepBuf = 1 << 20
	// prefaceTimeout bounds how long a new connection may take to send
	// its preface (a TLS one reaches ServeConn before it sends any).
	prefaceTimeout = 10 * time.Second
)

// ServeConn serves the call stream on c, whose client sent Preface (cmux
// replays it, so it is read here, and answered with it), until the client
// closes or the service closes; then it closes c. Closing the connection cancels its calls in
// flight. Like Calls, it ends with the end frame when the stream fails:
// a malformed or oversized frame, or the node shutting down.
func (cs *CallStream) ServeConn(c net.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer c.Close()
	st := &connStream{ctx: ctx, cancel: cancel, c: c, r: bufio.NewReaderSize(c, 32<<10)}
	var pre [len(Preface)]byte
	_ = c.SetDeadline(time.Now().Add(prefaceTimeout))
	if _, err := io.ReadFull(st.r, pre[:]); err != nil || string(pre[:]) != Preface {
		return
	}
	if _, err := io.WriteString(c, Preface); err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	cs.socketsTotal.Add(1)
	cs.sockets.Add(1)
	defer cs.sockets.Add(-1)
	if err := cs.session(st); err != nil {
		_, _ = c.Write(EndFrame(err))
	}
}

// EndFrame is the end frame of a stream that failed with err.
func EndFrame(err error) []byte {
	b, _ := appendFrame(nil, &cairnpb.CallsResponse{Answers: []*cairnpb.StreamAnswer{answerError(&cairnpb.StreamAnswer{}, endStatus(err))}})
	return b
}

// appendFrame appends m to b as one frame (its length, then its bytes).
func appendFrame(b []byte, m proto.Message) ([]byte, error) {
	start := len(b)
	b, err := proto.MarshalOptions{}.MarshalAppend(append(b, 0, 0, 0, 0), m)
	if err != nil {
		return nil, err
	}
	n := len(b) - start - 4
	if n > MaxFrame {
		return nil, fmt.Errorf("call socket: a frame of %d bytes is larger than the limit of %d", n, MaxFrame)
	}
	binary.BigEndian.PutUint32(b[start:], uint32(n))
	return b, nil
}

// endStatus is the status a failed session ends with.
func endStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.FromContextError(err).Err()
}

// connStream is a callsStream on a connection. Recv runs on the session's
// receiving goroutine only, and Send under its sendMu.
type connStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	c      net.Conn
	r      *bufio.Reader
	in     []byte // Recv's frame buffer (the message is copied out of it)
	out    []byte // Send's frame buffer
}

func (s *connStream) Context() context.Context { return s.ctx }

// Recv reads the next frame. When the client closed the connection or it
// broke, the calls in flight are cancelled: nobody waits for them.
func (s *connStream) Recv() (*cairnpb.CallsRequest, error) {
	req, err := s.recv()
	if err != nil && !isFrameError(err) {
		s.cancel()
	}
	return req, err
}

func (s *connStream) recv() (*cairnpb.CallsRequest, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return nil, frameError(fmt.Sprintf("call socket: a frame of %d bytes is larger than the limit of %d", n, MaxFrame))
	}
	buf := s.in[:0]
	switch {
	case cap(buf) >= int(n):
	case n <= keepBuf:
		s.in = make([]byte, n)
		buf = s.in
	default:
		buf = make([]byte, n) // not kept: a rare large frame
	}
	buf = buf[:n]
	if _, err := io.ReadFull(s.r, buf); err != nil {
		return nil, err
	}
	req := new(cairnpb.CallsRequest)
	if err := proto.Unmarshal(buf, req); err != nil {
		return nil, frameError("call socket: a frame is not a cairn.v1.CallsRequest: " + err.Error())
	}
	return req, nil
}

// Send writes r as one frame.
func (s *connStream) Send(r *cairnpb.CallsResponse) error {
	b, err := appendFrame(s.out[:0], r)
	if err != nil {
		return err
	}
	if cap(b) <= keepBuf {
		s.out = b[:0]
	}
	_, err = s.c.Write(b)
	return err
}

// frameError is a malformed frame: the session ends with INVALID_ARGUMENT.
func frameError(msg string) error {
	return toStatus(badInput("invalid_argument", "%s", msg))
}

func isFrameError(err error) bool {
	var se interface{ GRPCStatus() *status.Status }
	return errors.As(err, &se)
}
