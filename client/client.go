package client

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"

	"github.com/cairndb/cairn/api/cairnpb"
)

// maxMsgBytes bounds a gRPC message in either direction. It is well above
// the largest value the server accepts, so the server's limit errors (which
// name the limit) are what callers see.
const maxMsgBytes = 64 << 20

// Retry backoff: the first wait, and the cap the doubling stops at.
const (
	initialBackoff = 10 * time.Millisecond
	maxBackoff     = 500 * time.Millisecond
)

// Client is a connection pool to one store. It is safe for concurrent use.
// For cairn lite (one shard, all on one host) it spreads requests over the
// hosts of Config.Hosts. For a replicated store it caches the topology and
// sends each request to a node that holds the request's shard (route.go).
type Client struct {
	cfg     Config
	helpers []*pool            // one per Config.Hosts entry
	conns   []*grpc.ClientConn // helper connections interleaved by host: h0 h1 ... h0 h1 ...
	kvs     []cairnpb.KVClient // kvs[i] talks over conns[i]
	next    atomic.Uint64      // lite: round-robin cursor into conns
	cl      *cluster           // nil for cairn lite
	rr      atomic.Uint64      // cluster, SpreadReads: round-robin cursor over replicas
	seed    maphash.Seed       // cluster: this client's ranking of the nodes (home.go)
	// maxPutManyRecords is the store's max_put_many_records (StoreInfo).
	maxPutManyRecords atomic.Int32
	session           *session // the login to a secure store; nil without Config.User

	mu     sync.RWMutex
	pools  map[string]*pool // by address: the helpers and every node used
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// Open connects to the store: it creates cfg.Conns connections to each host,
// asks the hosts in order for StoreInfo until one answers, and checks that
// it serves cfg.Store. It fails if no host answers (each is asked once,
// within the context and cfg.Timeout) or with ErrStoreMismatch. If the
// answer carries a topology (a replicated store), the client keeps it and
// connects to the other nodes as requests need them.
func Open(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Hosts = append([]string(nil), cfg.Hosts...)
	c := &Client{cfg: cfg, pools: make(map[string]*pool), seed: maphash.MakeSeed()}
	if cfg.User != "" {
		c.session = newSession(cfg.User, cfg.Password)
	}
	for _, h := range cfg.Hosts {
		p, err := dialPool(h, cfg.Conns, cfg, c.session)
		if err != nil {
			c.Close()
			return nil, invalidConfig(err)
		}
		c.helpers = append(c.helpers, p)
		if c.pools[h] == nil {
			c.pools[h] = p
		}
	}
	for i := range cfg.Conns {
		for _, p := range c.helpers {
			c.conns = append(c.conns, p.conns[i])
			c.kvs = append(c.kvs, p.kvs[i])
		}
	}
	if c.session != nil {
		if err := c.login(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	resp, err := c.checkStore(ctx)
	c.maxPutManyRecords.Store(max(1, resp.GetLimits().GetMaxPutManyRecords()))
	if err == nil && resp.GetTopology() != nil {
		c.cl, err = newCluster(resp)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkStore asks each host in turn for StoreInfo; the first answer decides.
// If none gives one, the error is that of the first host that answered with
// an error (say, a node with no topology yet), or Unavailable "no host
// answered" when none answered at all; its message lists every host's.
func (c *Client) checkStore(ctx context.Context) (*cairnpb.StoreInfoResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var failures []string
	var last, answered *Error
	for i, h := range c.cfg.Hosts {
		resp, err := c.helpers[i].kvs[0].StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
		if err != nil {
			last = convertError(err, false, false)
			failures = append(failures, h+": "+last.Msg)
			if answered == nil && last.Code != codes.Unavailable && last.Code != codes.DeadlineExceeded {
				answered = last
			}
			continue
		}
		if resp.GetStore() != c.cfg.Store {
			return nil, &Error{Code: codes.FailedPrecondition, Kind: KindStoreMismatch, Action: ActionFixInput,
				Msg: fmt.Sprintf("node %s serves store %q, not %q", h, resp.GetStore(), c.cfg.Store)}
		}
		return resp, nil
	}
	if answered != nil {
		return nil, &Error{Code: answered.Code, Kind: answered.Kind, Action: answered.Action,
			Msg: strings.Join(failures, "; ")}
	}
	return nil, &Error{Code: last.Code, Kind: last.Kind, Action: last.Action,
		Msg: "no host answered: " + strings.Join(failures, "; ")}
}

// Close closes every connection. Operations in flight fail with
// ErrUnavailable or a cancellation error. Close is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.session.stop()
		c.mu.Lock()
		c.closed = true
		pools := slices.Clone(c.helpers)
		for _, p := range c.pools {
			if !slices.Contains(pools, p) {
				pools = append(pools, p)
			}
		}
		clear(c.pools)
		c.mu.Unlock()
		var errs []error
		for _, p := range pools {
			errs = append(errs, p.close())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// StoreInfo asks a node about the store. It retries like a read.
func (c *Client) StoreInfo(ctx context.Context, opts ...Option) (StoreInfo, error) {
	o := c.cfg.resolve(opts)
	var info StoreInfo
	err := c.call(ctx, o, infoRoute, func(ctx context.Context, kv cairnpb.KVClient, _ *cairnpb.RequestHeader) error {
		resp, err := kv.StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
		if err == nil {
			info = storeInfoFromPB(resp)
			if c.cl != nil {
				_, _ = c.cl.install(resp) // a newer topology is adopted; a bad one changes nothing
			}
		}
		return err
	})
	return info, err
}

// pick returns the next connection in round-robin order, skipping those that
// are failing or shut down as long as another one is not.
func (c *Client) pick() cairnpb.KVClient {
	n := uint64(len(c.conns))
	start := c.next.Add(1) - 1
	for i := range n {
		j := (start + i) % n
		switch c.conns[j].GetState() {
		case connectivity.TransientFailure, connectivity.Shutdown:
			continue
		}
		return c.kvs[j]
	}
	return c.kvs[start%n]
}

// header builds the request header for an attempt under ctx's deadline.
func (c *Client) header(ctx context.Context) *cairnpb.RequestHeader {
	h := &cairnpb.RequestHeader{Store: c.cfg.Store}
	if dl, ok := ctx.Deadline(); ok {
		h.TimeoutMs = max(millis(time.Until(dl)), 1)
	}
	return h
}

// attempt is one RPC against one connection.
type attempt func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error

// call runs fn until it succeeds, fails in a way that must not be retried,
// or the deadline leaves no room for another try. Reads retry on
// Unavailable and on RETRY or REFRESH; writes only on RETRY or REFRESH when
// the write was certainly not applied. It returns an *Error. For a
// replicated store, rt chooses the nodes (callCluster); for cairn lite only
// rt.write matters.
func (c *Client) call(ctx context.Context, o options, rt route, fn attempt) error {
	if c.cl != nil {
		return c.callCluster(ctx, o, rt, fn)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	backoff := initialBackoff
	for {
		var sent atomic.Bool
		err := fn(callContext(ctx, &sent), c.pick(), c.header(ctx))
		if err == nil {
			return nil
		}
		e := convertError(err, rt.write, sent.Load())
		if !retryable(e, rt.write) || !sleep(ctx, &backoff) {
			return e
		}
	}
}

// retryable reports whether a failed attempt may be tried again.
func retryable(e *Error, write bool) bool {
	if e.Code == codes.Canceled || e.Code == codes.DeadlineExceeded {
		return false
	}
	// The server already waited (consistency) or the condition outlasts a
	// request (a full disk): report at once and let the application decide.
	if e.Kind == "consistency_timeout" || e.Kind == "disk_full" {
		return false
	}
	again := e.Action == ActionRetry || e.Action == ActionRefresh
	if write {
		return again && !e.MaybeApplied
	}
	return again || e.Code == codes.Unavailable
}
