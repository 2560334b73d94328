package server

import (
	"context"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// Shard is what the server needs from the replica that owns the data.
type Shard interface {
	Propose(ctx context.Context, cmd *commandpb.Command, mode storage.SyncMode) (storage.Result, error)
	ReadReady(ctx context.Context, c replica.Consistency) error
	Engine() *storage.Engine
	Meta() storage.StoreMeta
}

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

// Server implements cairnpb.KVServer over one shard.
type Server struct {
	cairnpb.UnimplementedKVServer
	cfg    Config
	limits keys.Limits
	shard  Shard
}

// New returns a server for shard.
func New(shard Shard, cfg Config) (*Server, error) {
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, limits: cfg.Limits, shard: shard}, nil
}

// begin checks the header and derives the request's context.
func (s *Server) begin(ctx context.Context, h *cairnpb.RequestHeader) (context.Context, context.CancelFunc, error) {
	if h.GetStore() != "" && h.GetStore() != s.shard.Meta().Name {
		return ctx, func() {}, errStoreMismatchFor(h.GetStore(), s.shard.Meta().Name)
	}
	if h.GetTimeoutMs() < 0 {
		return ctx, func() {}, badInput("invalid_argument", "header.timeout_ms: negative timeout %d", h.GetTimeoutMs())
	}
	d := s.cfg.DefaultTimeout
	if h.GetTimeoutMs() > 0 {
		d = min(time.Duration(h.GetTimeoutMs())*time.Millisecond, s.cfg.MaxTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, nil
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
	m := s.shard.Meta()
	return &cairnpb.StoreInfoResponse{
		Store: m.Name, Partitions: m.Partitions, Version: s.cfg.Version,
		Limits: &cairnpb.Limits{
			MaxKeyBytes: int64(s.limits.MaxKeyBytes), MaxValueBytes: int64(s.limits.MaxValueBytes),
			MaxComponents: int32(s.limits.MaxComponents),
		},
	}, nil
}
