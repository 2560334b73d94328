package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cairndb/cairn/internal/topology"
)

// Shard is what the server needs from a local replica of a shard.
type Shard interface {
	ProposeWith(ctx context.Context, cmd *commandpb.Command, w replica.WriteOptions) (storage.Result, error)
	ReadReady(ctx context.Context, c replica.Consistency) error
	Engine() *storage.Engine
	Meta() storage.StoreMeta
	// Spans are the shard's record spans; nil means all of its records.
	Spans() []storage.Span
	// Shard is the shard's id, whose records it reads (0: lite's).
	Shard() uint64
	// Serves returns nil if the shard serves major's partition, else an
	// error wrapping storage.ErrNotServed or storage.ErrMoving. Reads call
	// it after ReadReady.
	Serves(major []string) error
}

// Router finds the local replica that serves a request.
type Router interface {
	// ShardFor returns the local replica of the shard owning major's
	// partition, or an error wrapping ErrWrongShard.
	ShardFor(major []string) (Shard, error)
	// ShardByID returns the local replica of shard id (0: the only shard of
	// a lite store), or an error wrapping ErrWrongShard.
	ShardByID(id uint64) (Shard, error)
	// Topology is the store's layout; nil for a lite store.
	Topology() *topology.Topology
	// Status reports the local replicas; node is this node's id (0: lite).
	Status() (node uint64, shards []*cairnpb.ShardStatus)
}

// ErrWrongShard is returned (wrapped) for a request about a shard this node
// holds no replica of: the client's topology is stale.
var ErrWrongShard = errors.New("server: this node holds no replica of the shard")

// ErrStaleTopology names the error kind stale_topology, which older builds
// returned for a request routed with an older topology than the node's;
// this one serves such a request when it can (see begin).
var ErrStaleTopology = errors.New("server: the client's topology is stale")

// single routes everything to one shard (cairn lite).
type single struct{ s Shard }

func (r single) ShardFor([]string) (Shard, error) { return r.s, nil }
func (r single) ShardByID(id uint64) (Shard, error) {
	if id != 0 {
		return nil, fmt.Errorf("%w: this is cairn lite, whose one shard is 0; there is no shard %d", ErrWrongShard, id)
	}
	return r.s, nil
}
func (r single) Topology() *topology.Topology             { return nil }
func (r single) Status() (uint64, []*cairnpb.ShardStatus) { return 0, nil }

// Config configures a Server.
type Config struct {
	// Limits bounds keys and values. Default keys.DefaultLimits().
	Limits keys.Limits
	// DefaultTimeout applies to requests that carry none. Default 5s.
	DefaultTimeout time.Duration
	// MaxTimeout caps a request's timeout. Default 5m.
	MaxTimeout time.Duration
	// MaxResultBytes bounds an unpaged multi-get response. Default 32 MiB.
	MaxResultBytes int
	// Version is the Cairn build version reported by StoreInfo.
	Version string
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Limits: keys.DefaultLimits(), DefaultTimeout: 5 * time.Second, MaxTimeout: 5 * time.Minute,
		MaxResultBytes: 32 << 20, Version: "dev",
	}
}

// Server implements cairnpb.KVServer over the replicas of one node.
type Server struct {
	cairnpb.UnimplementedKVServer
	cfg    Config
	limits keys.Limits
	router Router
	meta   storage.StoreMeta
	calls  opCounts // for Stats (stats.go)
}

// New returns a server for a lite store's one shard.
func New(shard Shard, cfg Config) (*Server, error) {
	return NewRouted(single{shard}, shard.Meta(), cfg)
}

// NewRouted returns a server over the replicas router finds.
func NewRouted(router Router, meta storage.StoreMeta, cfg Config) (*Server, error) {
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, limits: cfg.Limits, router: router, meta: meta}, nil
}

// begin checks the header and derives the request's context.
func (s *Server) begin(ctx context.Context, h *cairnpb.RequestHeader) (context.Context, context.CancelFunc, error) {
	d, err := s.timeout(h)
	if err != nil {
		return ctx, func() {}, err
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, nil
}

// timeout checks a request's header and returns how long it may take.
func (s *Server) timeout(h *cairnpb.RequestHeader) (time.Duration, error) {
	if h.GetStore() != "" && h.GetStore() != s.meta.Name {
		return 0, errStoreMismatchFor(h.GetStore(), s.meta.Name)
	}
	// cairn lite has no topology: a request routed by one was sent by a
	// client that took lite for a replicated store.
	if seq := h.GetTopologySeq(); seq != 0 && s.router.Topology() == nil {
		return 0, fmt.Errorf("%w: this is cairn lite, one shard and no topology, but the request was routed with topology seq %d", ErrWrongShard, seq)
	}
	// A request routed with an older topology is served when this node
	// can: the shards' partition tables, not topology sequence numbers,
	// decide who serves a partition (a moved one answers wrong_shard), so
	// refusing it would only make every client refresh after each step of
	// a deploy.
	if h.GetTimeoutMs() < 0 {
		return 0, badInput("invalid_argument", "header.timeout_ms: negative timeout %d", h.GetTimeoutMs())
	}
	d := s.cfg.DefaultTimeout
	if h.GetTimeoutMs() > 0 {
		d = min(time.Duration(h.GetTimeoutMs())*time.Millisecond, s.cfg.MaxTimeout)
	}
	return d, nil
}

func errStoreMismatchFor(asked, have string) error {
	return &wrapped{msg: "request is for store \"" + asked + "\" but this server holds \"" + have + "\"", err: errStoreMismatch}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// StoreInfo reports the store's identity and limits.
func (s *Server) StoreInfo(ctx context.Context, _ *cairnpb.StoreInfoRequest) (*cairnpb.StoreInfoResponse, error) {
	m := s.meta
	resp := &cairnpb.StoreInfoResponse{
		Store: m.Name, Partitions: m.Partitions, Version: s.cfg.Version,
		Limits: &cairnpb.Limits{
			MaxKeyBytes: int64(s.limits.MaxKeyBytes), MaxValueBytes: int64(s.limits.MaxValueBytes),
			MaxComponents: int32(s.limits.MaxComponents),
			MaxTimeoutMs:  s.cfg.MaxTimeout.Milliseconds(), MaxResultBytes: int64(s.cfg.MaxResultBytes),
			MaxPutManyRecords: MaxPutManyRecords,
		},
	}
	if t := s.router.Topology(); t != nil {
		resp.Topology, resp.TopologySeq = t.ToPB(), t.Seq
	}
	resp.Node, resp.LocalShards = s.router.Status()
	return resp, nil
}
