package node

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/soheilhy/cmux"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// A secure node's one port (docs/design/20261127_security.md §1):
//
//	listener ──cmux (1st byte)──┬── 0x16 (TLS handshake) ──► TLS 1.3 ──ALPN──┬── h2 ──────► grpc.Server
//	                            │                                             └── else ────► net/http (HTTP/JSON)
//	                            ├── HTTP/1.x in plaintext ──► 426 "this node is in secure mode"
//	                            └── anything else (a plaintext gRPC client) ──► Unavailable, same message
//
// The handshake is done here, before routing, so the gRPC server is given
// connections that are already TLS (handshaken, below) and the HTTP server
// sees *tls.Conn (r.TLS is set). A plaintext caller gets an answer in its
// own protocol that names the fix, never a hang or a reset.

// SecureModeMessage is what a plaintext caller of a secure node is told.
const SecureModeMessage = "this node is in secure mode (TLS and logins): log in with a login file " +
	"(cairn kv --security FILE; client.Config TLS, User and Password) or use https:// with credentials; plaintext is refused"

// servePortTLS is servePort for a secure node: cfg is its TLS configuration
// (NextProtos must list "h2"; "http/1.1" first lets curl pick HTTP/1.1).
func servePortTLS(lis net.Listener, cfg *tls.Config, g *grpc.Server, h http.Handler, served chan<- error) *port {
	m := cmux.New(lis)
	m.SetReadTimeout(sniffTimeout)
	tlsL := m.Match(firstByte(0x16))
	plainHTTP := m.Match(cmux.HTTP1Fast())
	plainOther := m.Match(cmux.Any())

	grpcL, httpL := newChanListener(lis.Addr()), newChanListener(lis.Addr())
	p := &port{root: lis, mux: m, grpc: g, refuse: refusingGRPC(), extra: []io.Closer{grpcL, httpL}}
	if h != nil {
		p.http = &http.Server{Handler: h, ReadHeaderTimeout: sniffTimeout}
		go func() { _ = p.http.Serve(httpL) }()
	}
	p.refuseHTTP = &http.Server{Handler: http.HandlerFunc(refuseHTTP), ReadHeaderTimeout: sniffTimeout}
	go func() { served <- g.Serve(grpcL) }()
	go func() { _ = p.refuseHTTP.Serve(plainHTTP) }()
	go func() { _ = p.refuse.Serve(plainOther) }()
	go acceptTLS(tlsL, cfg, grpcL, httpL, h != nil)
	go func() { _ = m.Serve() }()
	return p
}

// acceptTLS handshakes each connection of l and hands it to gRPC (ALPN h2)
// or to HTTP, until l is closed.
func acceptTLS(l net.Listener, cfg *tls.Config, grpcL, httpL *chanListener, serveHTTP bool) {
	for {
		c, err := l.Accept()
		if err != nil {
			grpcL.Close()
			httpL.Close()
			return
		}
		go func() {
			tc := tls.Server(c, cfg)
			_ = tc.SetDeadline(time.Now().Add(sniffTimeout))
			if err := tc.Handshake(); err != nil {
				_ = tc.Close() // a wrong CA, a bad certificate, or not TLS after all
				return
			}
			_ = tc.SetDeadline(time.Time{})
			switch {
			case tc.ConnectionState().NegotiatedProtocol == "h2":
				grpcL.deliver(tc)
			case serveHTTP:
				httpL.deliver(tc)
			default:
				_ = tc.Close()
			}
		}()
	}
}

// firstByte matches a connection whose first byte is b.
func firstByte(b byte) cmux.Matcher {
	return func(r io.Reader) bool {
		var buf [1]byte
		n, _ := io.ReadFull(r, buf[:])
		return n == 1 && buf[0] == b
	}
}

func refuseHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusUpgradeRequired)
	_, _ = io.WriteString(w, `{"error": {"code": "Unavailable", "kind": "tls_required", "action": "FIX_INPUT", "message": "`+SecureModeMessage+`"}}`+"\n")
}

// refusingGRPC answers every call of a plaintext gRPC client with
// Unavailable and the secure-mode message.
func refusingGRPC() *grpc.Server {
	st, _ := status.New(codes.Unavailable, SecureModeMessage).WithDetails(
		&cairnpb.ErrorDetail{Kind: "tls_required", Action: cairnpb.ErrorDetail_ACTION_FIX_INPUT})
	return grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error { return st.Err() }))
}

// handshaken is the gRPC server's transport credentials for connections
// that acceptTLS already handshook: it passes them through and reports
// their TLS state, so handlers see the peer's verified certificate.
type handshaken struct{}

func (handshaken) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return nil, nil, errors.New("node: a connection reached gRPC without TLS")
	}
	return tc, credentials.TLSInfo{State: tc.ConnectionState(),
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
}

func (handshaken) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("node: handshaken credentials are for the server side")
}

func (handshaken) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls", SecurityVersion: "1.3"}
}
func (h handshaken) Clone() credentials.TransportCredentials { return h }
func (handshaken) OverrideServerName(string) error           { return nil }

// chanListener is a net.Listener fed by deliver.
type chanListener struct {
	addr   net.Addr
	conns  chan net.Conn
	done   chan struct{}
	closed sync.Once
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) deliver(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }
