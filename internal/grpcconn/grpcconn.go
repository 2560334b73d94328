package grpcconn

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
)

// The reconnect policy. After a failed connection attempt gRPC waits
// BaseBackoff, then 1.6 times longer after each further failure, never more
// than MaxBackoff (each wait with up to 20% jitter either way). An attempt
// gets at least MinConnectTimeout to complete its TCP and HTTP/2 handshake.
const (
	BaseBackoff       = 100 * time.Millisecond
	MaxBackoff        = time.Second
	MinConnectTimeout = 2 * time.Second
)

// Policy is the connect parameters every connection of this package uses.
var Policy = grpc.ConnectParams{
	Backoff: backoff.Config{
		BaseDelay:  BaseBackoff,
		Multiplier: backoff.DefaultConfig.Multiplier,
		Jitter:     backoff.DefaultConfig.Jitter,
		MaxDelay:   MaxBackoff,
	},
	MinConnectTimeout: MinConnectTimeout,
}

// ErrClosed is returned by Cache.Get after Close.
var ErrClosed = errors.New("grpcconn: cache closed")

// Options returns the dial options of a connection to a storage node:
// plaintext and Policy, then extra (which may override them).
func Options(extra ...grpc.DialOption) []grpc.DialOption {
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(Policy),
	}
	opts = append(opts, DialWindows()...)
	return append(opts, extra...)
}

// New returns a connection to addr (host:port) with Options(extra...). It
// does not connect: gRPC does on the first call, or on Connect. It fails
// only on a malformed target or option, with grpc.NewClient's error.
func New(addr string, extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, Options(extra...)...)
}

// Cache keeps one connection per address, made by New on first use and
// closed by Close. The zero Cache is ready to use.
type Cache struct {
	// Extra are dial options for every connection (set before the first
	// Get), e.g. a secure node's TLS credentials.
	Extra []grpc.DialOption
	// Route, if set (before the first Get), returns the address to dial
	// for addr, e.g. a node's --peer override of a peer's address.
	// Connections are cached by the address dialed, so a route that
	// changes gets a connection of its own.
	Route  func(addr string) string
	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	closed bool
}

// Get returns the cached connection to addr (routed by Route), dialing it
// on first use.
func (c *Cache) Get(addr string) (*grpc.ClientConn, error) {
	if c.Route != nil {
		addr = c.Route(addr)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if cc, ok := c.conns[addr]; ok {
		return cc, nil
	}
	cc, err := New(addr, c.Extra...)
	if err != nil {
		return nil, fmt.Errorf("grpcconn: %s: %w", addr, err)
	}
	if c.conns == nil {
		c.conns = make(map[string]*grpc.ClientConn)
	}
	c.conns[addr] = cc
	return cc, nil
}

// Len returns the number of cached connections.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

// Close closes every cached connection; later Gets fail with ErrClosed.
// Calls in flight on them fail with codes.Canceled. Close is idempotent.
func (c *Cache) Close() error {
	c.mu.Lock()
	conns := c.conns
	c.conns, c.closed = nil, true
	c.mu.Unlock()
	var errs []error
	for _, cc := range conns {
		errs = append(errs, cc.Close())
	}
	return errors.Join(errs...)
}
