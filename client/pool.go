package client

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/grpcconn"
)

// failPeriod is how long a node that could not be reached is passed over
// when another replica can serve. After it, the node is used again once one
// of its connections is ready; until then each period ends with a reconnect
// probe.
const failPeriod = time.Second

// pool is a few gRPC connections to one address. Connections are made
// lazily by gRPC, on the first request, and reconnect with grpcconn's
// bounded back-off (at most about a second between attempts).
type pool struct {
	addr  string
	conns []*grpc.ClientConn
	kvs   []cairnpb.KVClient // kvs[i] talks over conns[i]
	sock  *sockPool          // the node's call socket, shared by kvs; nil: none
	next  atomic.Uint64      // round-robin cursor into conns
	// failUntil is when a failure mark ends (Unix nanoseconds; 0: none).
	failUntil atomic.Int64
	attempts  atomic.Int64 // requests sent through the pool (for tests)
}

// dialPool creates n connections to addr, with TLS when cfg.TLS is set and
// a login's token on every call when s is. Calls travel on the node's call
// socket (callsocket.go) and, if it has none, on each connection's call
// stream (streamKV), unless cfg.UnaryCalls is set; cfg.NoCallSocket keeps
// them on the stream. With a login, the socket and the stream carry the
// session's token too.
func dialPool(addr string, n int, cfg Config, s *session) (*pool, error) {
	tc := cfg.TLS
	p := &pool{addr: addr}
	if !cfg.UnaryCalls && !cfg.NoCallSocket {
		p.sock = newSockPool(addr, tc, s)
	}
	opts := []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(maxMsgBytes), grpc.MaxCallRecvMsgSize(maxMsgBytes)),
		grpc.WithStatsHandler(sentTracker{}),
	}
	if tc != nil {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	}
	if s != nil {
		opts = append(opts, grpc.WithPerRPCCredentials(s))
	}
	for range n {
		cc, err := grpcconn.New(addr, opts...)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("host %q: %w", addr, err)
		}
		p.conns = append(p.conns, cc)
		if cfg.UnaryCalls {
			p.kvs = append(p.kvs, cairnpb.NewKVClient(cc))
		} else {
			p.kvs = append(p.kvs, newStreamKV(cc, s, p.sock))
		}
	}
	return p, nil
}

// kv returns the pool's next connection in round-robin order, skipping those
// that are failing or shut down as long as another one is not.
func (p *pool) kv() cairnpb.KVClient {
	return p.kvs[p.pick()]
}

func (p *pool) pick() int {
	p.attempts.Add(1)
	n := uint64(len(p.conns))
	start := p.next.Add(1) - 1
	for i := range n {
		j := (start + i) % n
		switch p.conns[j].GetState() {
		case connectivity.TransientFailure, connectivity.Shutdown:
			continue
		}
		return int(j)
	}
	return int(start % n)
}

// readyKV is kv for a replicated store: if the connection is not ready it
// waits up to wait for it, so that a node whose host does not answer (gRPC
// keeps connecting, and a request would wait until its deadline) is left
// for another replica. The error is Unavailable and the request was not
// sent. A connection that failed outright is returned at once: the request
// fails fast with gRPC's own error.
func (p *pool) readyKV(ctx context.Context, wait time.Duration) (cairnpb.KVClient, error) {
	j := p.pick()
	cc := p.conns[j]
	st := cc.GetState()
	if st == connectivity.Ready {
		return p.kvs[j], nil // the common case: no timer to arm
	}
	if st == connectivity.Idle {
		cc.Connect()
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for st != connectivity.Ready && st != connectivity.TransientFailure && st != connectivity.Shutdown {
		if !cc.WaitForStateChange(wctx, st) {
			if ctx.Err() != nil {
				break // the request fails with the operation's own error
			}
			return nil, &Error{Code: codes.Unavailable, Action: ActionRetry,
				Msg: fmt.Sprintf("no connection to %s within %v (still %v)", p.addr, wait, st)}
		}
		st = cc.GetState()
	}
	return p.kvs[j], nil
}

// markFailing passes the node over for failPeriod.
func (p *pool) markFailing(now time.Time) { p.failUntil.Store(now.Add(failPeriod).UnixNano()) }

// markOK clears a failure mark: the node answered.
func (p *pool) markOK() {
	if p.failUntil.Load() != 0 {
		p.failUntil.Store(0)
	}
}

// failing reports whether the node should be passed over. Once a mark's
// period is over, the node is usable again if a connection is ready;
// otherwise the pool asks gRPC to reconnect now (rather than after its own,
// growing backoff) and stays marked for another period.
func (p *pool) failing(now time.Time) bool {
	until := p.failUntil.Load()
	if until == 0 {
		return false
	}
	if now.UnixNano() < until {
		return true
	}
	for _, cc := range p.conns {
		if cc.GetState() == connectivity.Ready {
			p.failUntil.Store(0)
			return false
		}
	}
	if !p.failUntil.CompareAndSwap(until, now.Add(failPeriod).UnixNano()) {
		return true // another goroutine probes
	}
	for _, cc := range p.conns {
		cc.Connect()
		cc.ResetConnectBackoff()
	}
	return true
}

func (p *pool) close() error {
	if p.sock != nil {
		p.sock.close()
	}
	var errs []error
	for _, cc := range p.conns {
		errs = append(errs, cc.Close())
	}
	return errors.Join(errs...)
}
