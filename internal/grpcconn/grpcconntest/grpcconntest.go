package grpcconntest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"
)

// The outage Outage simulates.
const (
	// FailedAttempts is how many connection attempts must fail during the
	// outage. gRPC's default back-off would then wait about 10 s before
	// the next one (1.6^5 s); a bounded policy waits about a second.
	FailedAttempts = 6
	// OutageDeadline bounds the outage: the default back-off needs about
	// 16 s for FailedAttempts, a bounded policy under 3 s.
	OutageDeadline = 8 * time.Second
	// ReconnectDeadline is how soon after the restart the connection must
	// be ready: grpcconn.MaxBackoff plus 20% jitter is 1.2 s, the rest is
	// margin for a loaded machine. The default back-off would wait 8 s or
	// more.
	ReconnectDeadline = 2500 * time.Millisecond
)

// CheckReconnect fails t unless Outage(newConn) succeeds. newConn may call
// t.Fatal.
func CheckReconnect(t *testing.T, newConn func(addr string) *grpc.ClientConn) {
	t.Helper()
	took, err := Outage(newConn)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reached the restarted server in %v", took.Round(time.Millisecond))
}

// Outage runs a gRPC server (the health service) on a loopback port and
// gives its address to newConn, which returns the connection under test
// (owned by the caller, who closes it). Once the connection is ready the
// server goes down: the port then accepts and closes every connection,
// which gRPC counts as a failed attempt. After FailedAttempts (which must
// come within OutageDeadline) a server starts again on the same port, and
// the connection must be ready, and answer a health check, within
// ReconnectDeadline. Outage asks an idle connection to connect, as a call
// on it would. It returns how long the reconnection took.
func Outage(newConn func(addr string) *grpc.ClientConn) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := ln.Addr().String()
	srv := serve(ln)
	cc := newConn(addr)
	err = waitReady(cc, time.Now().Add(5*time.Second))
	srv.Stop()
	if err != nil {
		return 0, fmt.Errorf("first connection to %s: %w", addr, err)
	}
	if err := refuseUntilFailed(cc, addr); err != nil {
		return 0, err
	}
	up, err := net.Listen("tcp", addr)
	if err != nil {
		return 0, err
	}
	srv = serve(up)
	defer srv.Stop()
	restarted := time.Now()
	deadline := restarted.Add(ReconnectDeadline)
	if err := waitReady(cc, deadline); err != nil {
		return 0, fmt.Errorf("after the restart: %w; the reconnect back-off is not bounded", err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if _, err := grpc_health_v1.NewHealthClient(cc).Check(ctx, &grpc_health_v1.HealthCheckRequest{}); err != nil {
		return 0, fmt.Errorf("health check after the restart: %w", err)
	}
	return time.Since(restarted), nil
}

// serve runs a gRPC server with the health service on ln.
func serve(ln net.Listener) *grpc.Server {
	s := grpc.NewServer()
	grpc_health_v1.RegisterHealthServer(s, health.NewServer())
	go func() { _ = s.Serve(ln) }()
	return s
}

// refuseUntilFailed listens on addr (which a server just closed; Go sets
// SO_REUSEADDR, so connections in TIME_WAIT do not hold the port), closing
// every connection, while cc keeps connecting: until FailedAttempts
// attempts failed or OutageDeadline passed.
func refuseUntilFailed(cc *grpc.ClientConn, addr string) error {
	down, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	reached := make(chan struct{})
	go refuse(down, reached)
	ctx, cancel := context.WithTimeout(context.Background(), OutageDeadline)
	defer cancel()
	go func() {
		select {
		case <-reached:
			cancel()
		case <-ctx.Done():
		}
	}()
	keepConnecting(ctx, cc)
	down.Close()
	select {
	case <-reached:
		return nil
	default:
		return fmt.Errorf("outage: fewer than %d failed connection attempts in %v; the reconnect back-off is not bounded", FailedAttempts, OutageDeadline)
	}
}

// refuse accepts and closes connections on ln until ln is closed, and
// closes reached at the FailedAttempts-th.
func refuse(ln net.Listener, reached chan<- struct{}) {
	for n := 1; ; n++ {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
		if n == FailedAttempts {
			close(reached)
		}
	}
}

// keepConnecting asks cc to connect whenever it is idle, as calls on it
// would, until ctx is done.
func keepConnecting(ctx context.Context, cc *grpc.ClientConn) {
	for ctx.Err() == nil {
		st := cc.GetState()
		if st == connectivity.Idle {
			cc.Connect()
		}
		cc.WaitForStateChange(ctx, st)
	}
}

// waitReady keeps cc connecting until it is ready or the deadline passes.
func waitReady(cc *grpc.ClientConn, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for {
		st := cc.GetState()
		switch st {
		case connectivity.Ready:
			return nil
		case connectivity.Idle:
			cc.Connect()
		case connectivity.Shutdown:
			return errors.New("connection closed")
		}
		if !cc.WaitForStateChange(ctx, st) {
			return fmt.Errorf("not ready by the deadline (still %v)", st)
		}
	}
}
