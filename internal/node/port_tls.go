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
	"github.com/cairndb/cairn/internal/server"
)

// A secure node's one port (docs/design/20261127_security.md §1):
//
//	listener ──cmux (1st byte)──┬── 0x16 (TLS handshake) ──► TLS 1.3 ──ALPN──┬── h2 ──────► grpc.Server
//	                            │                                             ├── cairn-calls/1 ► the call socket
//	                            │                                             └── else ────► net/http (HTTP/JSON)
//	                            ├── the call socket's preface in plaintext ──► its end frame, same message
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
func servePortTLS(lis net.Listener, cfg *tls.Config, g *grpc.Server, h http.Handler, calls connHandler, served chan<- error) *port {
	m := cmux.New(lis)
	m.SetReadTimeout(sniffTimeout)
	tlsL := m.Match(firstByte(0x16))
	plainCalls := m.Match(callsPreface)
	plainHTTP := m.Match(cmux.HTTP1Fast())
	plainOther := m.Match(cmux.Any())

	grpcL, httpL, callsL := newChanListener(lis.Addr()), newChanListener(lis.Addr()), newChanListener(lis.Addr())
	p := &port{root: lis, mux: m, grpc: g, refuse: refusingGRPC(), extra: []io.Closer{grpcL, httpL, callsL}}
	go serveConns(callsL, calls)
	go serveConns(plainCalls, refuseCalls)
	if h != nil {
		p.http = &http.Server{Handler: h, ReadHeaderTimeout: sniffTimeout}
		go func() { _ = p.http.Serve(httpL) }()
	}
	p.refuseHTTP = &http.Server{Handler: http.HandlerFunc(refuseHTTP), ReadHeaderTimeout: sniffTimeout}
	go func() { served <- g.Serve(grpcL) }()
	go func() { _ = p.refuseHTTP.Serve(plainHTTP) }()
	go func() { _ = p.refuse.Serve(plainOther) }()
	go acceptTLS(tlsL, cfg, routes{grpc: grpcL, http: httpL, calls: callsL}, h != nil)
	go func() { _ = m.Serve() }()
	return p
}

// routes are the listeners acceptTLS hands handshaken connections to.
type routes struct{ grpc, http, calls *chanListener }

// acceptTLS handshakes each connection of l and hands it to gRPC (ALPN
// h2), to the call socket (ALPN cairn-calls/1) or to HTTP, until l is
// closed. Without serveHTTP (--no-http) only gRPC is served.
func acceptTLS(l net.Listener, cfg *tls.Config, to routes, serveHTTP bool) {
	for {
		c, err := l.Accept()
		if err != nil {
			to.grpc.Close()
			to.http.Close()
			to.calls.Close()
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
			switch proto := tc.ConnectionState().NegotiatedProtocol; {
			case proto == "h2":
				to.grpc.deliver(tc)
			case !serveHTTP: // --no-http: gRPC alone, as on a plaintext port
				_ = tc.Close()
			case proto == server.ALPN:
				to.calls.deliver(tc)
			default:
				to.http.deliver(tc)
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

// refuseCalls answers a plaintext call socket with the preface and an end
// frame: Unavailable, the secure-mode message.
func refuseCalls(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(sniffTimeout))
	var pre [len(server.Preface)]byte
	if _, err := io.ReadFull(c, pre[:]); err != nil {
		return
	}
	st, _ := status.New(codes.Unavailable, SecureModeMessage).WithDetails(
		&cairnpb.ErrorDetail{Kind: "tls_required", Action: cairnpb.ErrorDetail_ACTION_FIX_INPUT})
	_, _ = c.Write(append([]byte(server.Preface), server.EndFrame(st.Err())...))
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
