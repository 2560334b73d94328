package node

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/soheilhy/cmux"
	"google.golang.org/grpc"

	"github.com/cairndb/cairn/internal/server"
)

// A node's one port carries three protocols (docs/design/20261127_every_language.md,
// docs/design/20261128_call_socket.md):
//
//	listener ──cmux──┬── "CAIRN-CALLS/1\r\n" ─────► the call socket: KV calls (server.CallStream.ServeConn)
//	                 ├── HTTP/1.x request line ──► net/http: the HTTP/JSON API (internal/httpapi)
//	                 └── anything else (HTTP/2) ─► grpc.Server: KV, Raft, admin, control
//
// Each connection is classified once, by its first bytes, which cmux
// replays to the server it picks; the gRPC path pays nothing per request.
type port struct {
	root net.Listener
	mux  cmux.CMux
	grpc *grpc.Server
	http *http.Server
	// A secure port's refusals of plaintext callers, and its inner
	// listeners (port_tls.go); nil otherwise.
	refuse     *grpc.Server
	refuseHTTP *http.Server
	extra      []io.Closer
}

// sniffTimeout bounds how long a new connection may take to send the bytes
// that say which protocol it speaks.
const sniffTimeout = 10 * time.Second

// servePort serves g, h and the call socket (calls) on lis; g's Serve
// error goes to served. A nil h serves g alone on lis, without cmux
// (--no-http).
func servePort(lis net.Listener, g *grpc.Server, h http.Handler, calls connHandler, served chan<- error) *port {
	if h == nil {
		go func() { served <- g.Serve(lis) }()
		return &port{root: lis, grpc: g}
	}
	m := cmux.New(lis)
	m.SetReadTimeout(sniffTimeout)
	callsL := m.Match(callsPreface)
	httpL := m.Match(cmux.HTTP1Fast())
	grpcL := m.Match(cmux.Any())
	p := &port{root: lis, mux: m, grpc: g, http: &http.Server{Handler: h, ReadHeaderTimeout: sniffTimeout}}
	go func() { served <- g.Serve(grpcL) }()
	go serveConns(callsL, calls)
	go func() { _ = p.http.Serve(httpL) }()
	go func() { _ = m.Serve() }()
	return p
}

// callsPreface matches a call socket: its first bytes are server.Preface.
// It reads no more than those (cmux's PrefixMatcher reads one byte more,
// which a client waiting for the node's preface never sends).
func callsPreface(r io.Reader) bool {
	var buf [len(server.Preface)]byte
	n, _ := io.ReadFull(r, buf[:])
	return n == len(buf) && string(buf[:]) == server.Preface
}

// connHandler serves one connection until it ends, and closes it.
type connHandler func(net.Conn)

// serveConns hands each connection of l to h on a goroutine of its own,
// until l is closed.
func serveConns(l net.Listener, h connHandler) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go h(c)
	}
}

// stop lets requests in flight finish for up to grace, then cuts them, and
// closes the port.
func (p *port) stop(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	stopped := make(chan struct{})
	go func() { p.grpc.GracefulStop(); close(stopped) }()
	if p.http != nil {
		if err := p.http.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = p.http.Close()
		}
	}
	select {
	case <-stopped:
	case <-ctx.Done():
		p.grpc.Stop()
	}
	if p.refuse != nil {
		p.refuse.Stop()
		_ = p.refuseHTTP.Close()
	}
	for _, c := range p.extra {
		_ = c.Close()
	}
	if p.mux != nil {
		p.mux.Close()
	}
	_ = p.root.Close()
}
