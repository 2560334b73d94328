package grpcconn_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/cairndb/cairn/internal/grpcconn"
)

// TestStaticWindowsSendNoPings makes calls one after another, the pattern
// that keeps gRPC's bandwidth-delay estimator pinging, and counts the
// HTTP/2 PING frames the client writes: its own estimator's pings and its
// acks of the server's. With the package's windows on both sides there are
// none; with gRPC's defaults (the control) there are, so the counter works.
func TestStaticWindowsSendNoPings(t *testing.T) {
	const calls = 300
	defaults := countPings(t, nil, []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, calls)
	static := countPings(t, grpcconn.ServerWindows(), grpcconn.Options(), calls)
	t.Logf("PING frames from the client over %d calls: gRPC defaults %d, static windows %d", calls, defaults, static)
	if defaults == 0 {
		t.Fatalf("the control saw no PING frame with gRPC's default windows: the frame counter is broken")
	}
	if static != 0 {
		t.Fatalf("%d PING frames with static windows: the bandwidth-delay estimator is still on", static)
	}
}

// countPings serves the health service with sopts, calls it calls times
// over a connection dialed with dopts, and returns the PING frames the
// server received.
func countPings(t *testing.T, sopts []grpc.ServerOption, dopts []grpc.DialOption, calls int) int64 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := grpc.NewServer(sopts...)
	grpc_health_v1.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(cl) }()
	cc, err := grpc.NewClient(ln.Addr().String(), dopts...)
	if err != nil {
		t.Fatal(err)
	}
	hc := grpc_health_v1.NewHealthClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range calls {
		if _, err := hc.Check(ctx, &grpc_health_v1.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	cc.Close()
	srv.Stop()
	cl.wg.Wait() // every frame read has been counted
	return cl.pings.Load()
}

// countingListener hands out connections whose inbound bytes are also
// parsed as HTTP/2 frames, counting the PINGs.
type countingListener struct {
	net.Listener
	pings atomic.Int64
	wg    sync.WaitGroup
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	l.wg.Add(1)
	go l.parse(pr)
	return &teeConn{Conn: c, w: pw}, nil
}

// parse reads the client's preface, then frames, until the pipe closes.
func (l *countingListener) parse(r *io.PipeReader) {
	defer l.wg.Done()
	defer r.Close()
	br := bufio.NewReader(r)
	if _, err := io.ReadFull(br, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(nil, br)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		if _, ok := f.(*http2.PingFrame); ok {
			l.pings.Add(1)
		}
	}
}

// teeConn copies what it reads into w, and closes w when it closes.
type teeConn struct {
	net.Conn
	w    *io.PipeWriter
	once sync.Once
}

func (c *teeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		_, _ = c.w.Write(p[:n])
	}
	return n, err
}

func (c *teeConn) Close() error {
	c.once.Do(func() { c.w.Close() })
	return c.Conn.Close()
}
