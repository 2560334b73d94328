package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
	"unicode/utf8"
)

// Config configures a Client. Hosts and Store are required; every other
// field has a default that a zero value selects.
type Config struct {
	// Hosts lists host:port addresses of one or more nodes of the store.
	// Required. For cairn lite, requests are spread over all of them; one
	// that cannot be reached is skipped while others can. For a replicated
	// store they are helper hosts: Open asks them for the topology (the
	// first that answers), and requests then go to the nodes it lists; the
	// helpers are asked again only if no listed node answers a topology
	// refresh.
	Hosts []string
	// Store is the store's name. Required. Open fails with ErrStoreMismatch
	// if the node it reaches serves another store, and every request carries
	// it so a node of another store rejects the request the same way.
	Store string
	// Timeout bounds each operation (each page, for an iterator) unless
	// WithTimeout overrides it. Default 5s.
	Timeout time.Duration
	// Durability is the default durability of writes. Each zero field takes
	// its value from DefaultDurability: {WriteNoSync, NoSync,
	// AckSimpleMajority}.
	Durability Durability
	// Consistency is the default consistency of reads. Default NoneRequired.
	Consistency Consistency
	// Conns is the number of gRPC connections to each helper host (the only
	// host of a cairn lite store); requests round-robin over them. Default 2.
	Conns int
	// NodeConns is the number of gRPC connections to each node of a
	// replicated store. Default 1: with requests already spread over the
	// nodes, one connection per node batches more frames per system call
	// (workload C on a 3-node cluster, 16 threads: 1.12x the throughput of
	// 2, alternating pairs of cairn bench runs; see docs/benchmarks.md).
	NodeConns int
	// SpreadReads sends each read that any replica may serve (NoneRequired,
	// TimeLag, AtVersion) to a shard's replicas round robin. By default a
	// client sends them to its home replica of the shard, chosen per client
	// so that clients spread over the nodes: one node then serves a client's
	// reads of a shard more cheaply (3-node cluster, workload C: x0.53 the
	// nodes' CPU per read, see docs/benchmarks.md), and they see its state
	// only move forward. Spreading lets one client use every replica's
	// capacity. Unused for cairn lite.
	SpreadReads bool
	// UnaryCalls makes every call its own unary RPC. By default a
	// connection carries gets, multi-gets and writes on one long-lived call
	// stream (cairn.v1.KVStream), where a call costs one DATA frame each way
	// instead of a new HTTP/2 stream with headers and trailers (see
	// docs/design/20261127_call_stream.md). A store that has no call stream
	// (an older server) is called unary anyway.
	UnaryCalls bool
	// NoCallSocket keeps calls on the gRPC call stream. By default the
	// calls that the stream would carry go on the node's call socket
	// instead: up to four bare connections per node, each used by one
	// calling goroutine at a time while few call, and two of them shared,
	// pipelined, when more do; the callers write and read them themselves,
	// without HTTP/2 and gRPC's goroutines between
	// (docs/design/20261128_call_socket.md and
	// docs/design/20261129_pipelined_call_socket.md; one thread on lite A
	// ran about 1.3x the stream's throughput, see docs/benchmarks.md). A
	// node without the socket is called on the stream.
	NoCallSocket bool
	// ConnectTimeout bounds how long a request to a replicated store waits
	// for a connection to a node that is not yet (or no longer) connected
	// before it tries another replica: a host that is down may leave a
	// connection attempt unanswered. Unused for cairn lite. Default 2s.
	ConnectTimeout time.Duration
	// TLS, when set, makes every connection TLS with this configuration (a
	// secure store: its RootCAs hold the store CA, auth.ClientTLS builds
	// one). Nil: plaintext.
	TLS *tls.Config
	// User and Password log in to a secure store when User is set: Open
	// logs in (cairn.v1.Auth/Login), every request then carries the
	// session token, and the client renews it before it expires. A secure
	// store refuses requests without one (kind login_required). Needs TLS.
	User     string
	Password string
}

// Default values of Config fields.
const (
	DefaultTimeout        = 5 * time.Second
	DefaultConns          = 2
	DefaultNodeConns      = 1
	DefaultConnectTimeout = 2 * time.Second
)

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	c.Durability = c.Durability.or(DefaultDurability)
	if c.Consistency.IsZero() {
		c.Consistency = NoneRequired
	}
	if c.Conns == 0 {
		c.Conns = DefaultConns
	}
	if c.NodeConns == 0 {
		c.NodeConns = DefaultNodeConns
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	return c
}

// Validate reports a config that Open cannot use.
func (c Config) Validate() error {
	var errs []error
	if len(c.Hosts) == 0 {
		errs = append(errs, errors.New("Hosts is empty (want at least one host:port)"))
	}
	for i, h := range c.Hosts {
		if err := checkHostPort(h); err != nil {
			errs = append(errs, fmt.Errorf("Hosts[%d]: %w", i, err))
		}
	}
	if c.Store == "" {
		errs = append(errs, errors.New("Store is empty"))
	} else if !utf8.ValidString(c.Store) {
		errs = append(errs, fmt.Errorf("Store %q is not valid UTF-8", c.Store))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("Timeout %v is negative", c.Timeout))
	}
	if c.NodeConns < 0 {
		errs = append(errs, fmt.Errorf("NodeConns %d is negative", c.NodeConns))
	}
	if c.Conns < 0 {
		errs = append(errs, fmt.Errorf("Conns %d is negative", c.Conns))
	}
	if c.ConnectTimeout < 0 {
		errs = append(errs, fmt.Errorf("ConnectTimeout %v is negative", c.ConnectTimeout))
	}
	if c.User != "" && c.TLS == nil {
		errs = append(errs, errors.New("User is set but TLS is not: a login travels only over TLS (set TLS from the store's CA)"))
	}
	if err := errors.Join(errs...); err != nil {
		return invalidConfig(err)
	}
	return nil
}

// checkHostPort accepts host:port with a non-empty host and a port from 1
// to 65535. Without it, gRPC would quietly dial its own default port (443).
func checkHostPort(h string) error {
	if h == "" {
		return errors.New("empty (want host:port)")
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		return fmt.Errorf("%q: want host:port, e.g. 127.0.0.1:5000", h)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || host == "" {
		return fmt.Errorf("%q: want host:port with a host and a port from 1 to 65535", h)
	}
	return nil
}
