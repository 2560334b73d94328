package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/grpcconn"
	"github.com/cairndb/cairn/internal/httpapi"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
	"google.golang.org/grpc"
)

// LiteConfig configures a lite node.
type LiteConfig struct {
	// Root is the directory holding the node's files. Required.
	Root string
	// Host and Port are where the node listens. Port 0 picks a free port.
	// Defaults 127.0.0.1 and 5000.
	Host string
	Port int
	// Store names the store. Default "kvstore".
	Store string
	// Partitions is the partition count, fixed at creation. Default 10.
	Partitions uint32
	// CacheBytes sizes the block cache. Default 256 MiB.
	CacheBytes int64
	// RowCacheBytes sizes the row cache of records in front of Pebble.
	// Default storage.DefaultRowCacheBytes; 0 turns it off.
	RowCacheBytes int64
	// MinFreeBytes: writes are refused below this much free disk. Default 64 MiB.
	MinFreeBytes int64
	// Limits bounds keys and values. Default keys.DefaultLimits().
	Limits keys.Limits
	// ShutdownGrace bounds how long Close waits for in-flight requests. Default 5s.
	ShutdownGrace time.Duration
	// Version is reported to clients. Default "dev".
	Version string
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Replica tunes the apply loop; zero means replica.DefaultConfig().
	Replica replica.Config
	// StreamWorkers is the number of long-lived goroutines that run RPC
	// handlers (gRPC's NumStreamWorkers), and as many again run the calls
	// of the call stream (server.CallStream); a request that finds them all busy
	// gets a goroutine of its own, as every request does with 0. Reusing a
	// goroutine keeps its grown stack: a fresh one starts small (2 KiB, or
	// the runtime's recent average) and is copied as it grows through the
	// handler and Pebble, a cost paid per request. Default 128; workers
	// beyond the requests in flight only hold their stacks.
	StreamWorkers int
	// NoHTTP serves gRPC alone on the port, without the HTTP/JSON API.
	NoHTTP bool
	// Secure serves TLS 1.3 only, with the certificates in ROOT/security,
	// made on first start if missing (docs/design/20261127_security.md); a
	// plaintext caller is refused with SecureModeMessage.
	Secure bool
	// Insecure allows serving plaintext on a non-loopback Host, which is
	// otherwise refused (docs/design/20261127_security.md §8).
	Insecure bool
	// TokenLifetime is how long a login's session token lasts in secure
	// mode. Default auth.DefaultTokenLifetime (1 hour).
	TokenLifetime time.Duration
	// GCPercent is set as the process's GC percent (runtime/debug.SetGCPercent)
	// when the node starts, unless the GOGC environment variable is set; 0
	// leaves the runtime's setting. The node's Go heap is small (Pebble's
	// block cache lives outside it), so with Go's default of 100 the heap
	// goal sits at its 4 MiB floor and the collector runs about fifty times
	// a second under load. 800 raises the floor to 32 MiB and the goal to 9x
	// the live heap. It is process-wide: the last node started sets it.
	// Default 800.
	GCPercent int
	// PprofAddr, when set, is a host:port on which Go's profiling endpoints
	// (net/http/pprof, under /debug/pprof/) are served, on a listener of
	// their own. Default "" (off). Profiles reveal keys and values in
	// memory: bind it to loopback.
	PprofAddr string
	// FS is the file system the node's files and engine go through. Nil
	// means files.Default (the operating system's); tests pass a MemFS,
	// and cmd/cairn a files.WithFaults FS when CAIRN_FAULTS is set.
	FS files.FS
	// Scrub configures the background scrub (scrub.go); off by default.
	Scrub ScrubConfig
}

// DefaultLiteConfig returns the defaults for root.
func DefaultLiteConfig(root string) LiteConfig {
	return LiteConfig{
		Root: root, Host: "127.0.0.1", Port: 5000, Store: "kvstore", Partitions: 10,
		CacheBytes: 256 << 20, RowCacheBytes: storage.DefaultRowCacheBytes, MinFreeBytes: 64 << 20, Limits: keys.DefaultLimits(),
		ShutdownGrace: 5 * time.Second, Version: "dev", StreamWorkers: 128, GCPercent: 800,
		Scrub: ScrubConfig{Interval: DefaultScrubInterval}, Replica: replica.DefaultConfig(),
	}
}

var storeNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// MaxGroupWait bounds LiteConfig.Replica.GroupWait (--sync-group-wait).
const MaxGroupWait = 100 * time.Millisecond

// maxStreamWorkers bounds LiteConfig.StreamWorkers.
const maxStreamWorkers = 1 << 16

// MaxPartitions bounds a store's partition count.
const MaxPartitions = 1 << 20

// Validate reports a config that cannot work, naming the field.
func (c LiteConfig) Validate() error {
	switch {
	case c.Root == "":
		return errors.New("root: required (the directory for the store's files)")
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("port: %d is not a TCP port", c.Port)
	case !storeNameRE.MatchString(c.Store):
		return fmt.Errorf("store: %q is not a store name (a letter, then up to 63 letters, digits, '_' or '-')", c.Store)
	case c.Partitions < 1 || c.Partitions > MaxPartitions:
		return fmt.Errorf("partitions: %d is not between 1 and %d", c.Partitions, MaxPartitions)
	case c.ShutdownGrace < 0:
		return fmt.Errorf("shutdown-grace: negative %v", c.ShutdownGrace)
	case c.GCPercent < 0:
		return fmt.Errorf("gc-percent: negative %d", c.GCPercent)
	case c.RowCacheBytes != 0 && c.RowCacheBytes < storage.MinRowCacheBytes:
		return fmt.Errorf("row-cache-bytes: %d is below the row cache's minimum of 32MiB (0 turns it off)", c.RowCacheBytes)
	case c.StreamWorkers < 0 || c.StreamWorkers > maxStreamWorkers:
		return fmt.Errorf("stream-workers: %d is not between 0 and %d", c.StreamWorkers, maxStreamWorkers)
	case c.Replica.GroupWait < 0 || c.Replica.GroupWait > MaxGroupWait:
		return fmt.Errorf("sync-group-wait: %v is not between 0 (off) and %v", c.Replica.GroupWait, MaxGroupWait)
	}
	if err := c.Scrub.validate(); err != nil {
		return err
	}
	if err := checkDowngrade(c.Root, c.Secure); err != nil {
		return err
	}
	if err := checkExposure(c.Host, c.Secure, c.Insecure, "start it with --secure"); err != nil {
		return err
	}
	return c.Limits.Validate()
}

// Lite is a running lite node.
type Lite struct {
	cfg     LiteConfig
	log     *slog.Logger
	lis     net.Listener
	grpc    *grpc.Server
	calls   *server.CallStream // set before the port and the debug listener serve
	port    *port
	httpAPI *httpapi.Lazy
	replica *replica.Local
	engine  *storage.Engine
	kv      *server.Server
	scrub   *scrubber    // nil unless Scrub.Rate is set
	debug   *debugServer // nil unless PprofAddr is set
	served  chan error
	marked  bool             // ROOT/store.json was there at start (litestore.go)
	audit   *files.AppendLog // ROOT/audit.log in secure mode: logins (secure.go)

	closeOnce sync.Once
	closeErr  error
}

// StartLite opens (or creates) the store under cfg.Root and starts serving.
// It binds its port first, so a port in use leaves a new root untouched
// (no store is created that a retry with other flags would then refuse).
// It returns once the listener is bound, so Addr is reachable.
func StartLite(ctx context.Context, cfg LiteConfig) (*Lite, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FS == nil {
		cfg.FS = files.Default
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	sc := storage.DefaultConfig(filepath.Join(cfg.Root, "data"))
	sc.CacheBytes, sc.MinFreeBytes, sc.Logger, sc.FS = cfg.CacheBytes, cfg.MinFreeBytes, cfg.Logger, cfg.FS
	sc.RowCacheBytes = cfg.RowCacheBytes
	// No peer can rebuild a lite store: after a fault it opens once its
	// files prove whole, with a warning (only unsynced writes can be lost).
	sc.NoPeers = true
	e, err := storage.Open(sc)
	if err != nil {
		_ = lis.Close()
		return nil, liteOpenError(cfg.Root, err)
	}
	marked, err := checkLiteStore(cfg.FS, cfg.Root, e)
	if err != nil {
		_ = e.Close()
		_ = lis.Close()
		return nil, err
	}
	setGCPercent(cfg.GCPercent)
	n := &Lite{cfg: cfg, log: cfg.Logger, engine: e, lis: lis, served: make(chan error, 1), marked: marked}
	if err := n.start(); err != nil {
		n.shutdown()
		_ = lis.Close() // never served: grpc did not take it over
		return nil, err
	}
	return n, nil
}

// start creates or opens the store's identity and replica, and serves
// n.lis (bound by StartLite).
func (n *Lite) start() error {
	meta, err := n.engine.Init(n.cfg.Store, n.cfg.Partitions)
	if err != nil {
		return err
	}
	if !n.marked {
		if err := writeLiteStore(n.cfg.FS, n.cfg.Root, meta); err != nil {
			return err
		}
	}
	rc := n.cfg.Replica
	if rc.MaxGroup == 0 {
		rc = replica.DefaultConfig()
	}
	rc.Logger = n.log
	if n.replica, err = replica.OpenLocal(n.engine, meta, rc); err != nil {
		return err
	}
	scfg := server.DefaultConfig()
	scfg.Limits, scfg.Version = n.cfg.Limits, n.cfg.Version
	srv, err := server.New(n.replica, scfg)
	n.kv = srv
	if err != nil {
		return err
	}
	gopts := []grpc.ServerOption{grpc.MaxRecvMsgSize(64 << 20), grpc.MaxSendMsgSize(64 << 20),
		grpc.NumStreamWorkers(uint32(n.cfg.StreamWorkers))}
	var tlsCfg *tls.Config
	var guard *auth.Guard
	if n.cfg.Secure {
		if tlsCfg, err = liteTLS(n.cfg, n.log); err != nil {
			return err
		}
		if guard, err = n.liteGuard(meta.Name); err != nil {
			return err
		}
		gopts = append(gopts, grpc.Creds(handshaken{}),
			grpc.ChainUnaryInterceptor(guard.Unary), grpc.ChainStreamInterceptor(guard.Stream))
	}
	gopts = append(gopts, grpcconn.ServerWindows()...)
	n.grpc = grpc.NewServer(gopts...)
	cairnpb.RegisterKVServer(n.grpc, srv)
	n.calls = server.NewCallStream(srv, n.cfg.StreamWorkers)
	if guard != nil {
		cairnpb.RegisterAuthServer(n.grpc, guard)
		n.calls.Authorize(guard.AuthorizeCall)
	}
	cairnpb.RegisterKVStreamServer(n.grpc, n.calls)
	if n.cfg.PprofAddr != "" {
		if n.debug, err = startDebug(n.cfg.PprofAddr, n.metrics); err != nil {
			return err
		}
	}
	if !n.cfg.NoHTTP {
		n.httpAPI = httpapi.NewLazy(func(ctx context.Context) (*client.Client, error) {
			// Secure: each HTTP request's call carries its caller's token
			// in its own metadata, which only a unary call sends.
			return client.Open(ctx, client.Config{Hosts: []string{n.Addr()}, Store: meta.Name, TLS: selfTLS(n.cfg.Root, tlsCfg), UnaryCalls: tlsCfg != nil})
		}, int64(n.cfg.Limits.MaxValueBytes))
	}
	web := withConsole(n.httpAPI.Handler(), liteConsole)
	if tlsCfg != nil {
		n.port = servePortTLS(n.lis, tlsCfg, n.grpc, web, n.calls.ServeConn, n.served)
	} else {
		n.port = servePort(n.lis, n.grpc, web, n.calls.ServeConn, n.served)
	}
	n.scrub = startScrub(n.engine, n.cfg.Scrub, n.log)
	return nil
}

// PprofAddr returns the host:port of the profiling endpoint, or "" when
// LiteConfig.PprofAddr was not set.
func (n *Lite) PprofAddr() string {
	if n.debug == nil {
		return ""
	}
	return n.debug.Addr()
}

// setGCPercent applies LiteConfig.GCPercent unless GOGC is set in the
// environment, which always wins.
func setGCPercent(p int) {
	if _, set := os.LookupEnv("GOGC"); set || p == 0 {
		return
	}
	debug.SetGCPercent(p)
}

// Addr returns the host:port the node listens on.
func (n *Lite) Addr() string { return n.lis.Addr().String() }

// Store returns the store's identity.
func (n *Lite) Store() storage.StoreMeta { return n.replica.Meta() }

// Done returns a channel that receives the serve loop's
// error if the gRPC server stops on its own.
func (n *Lite) Done() <-chan error { return n.served }

// Close stops serving (letting in-flight requests finish for up to
// ShutdownGrace), stops the replica, and closes the engine.
func (n *Lite) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.shutdown() })
	return n.closeErr
}

func (n *Lite) shutdown() error {
	if n.debug != nil {
		n.debug.close()
	}
	if n.calls != nil {
		n.calls.Close() // ends clients' call streams, which would last until the grace ran out
	}
	if n.port != nil {
		n.port.stop(n.cfg.ShutdownGrace)
		n.httpAPI.Close()
	}
	if n.replica != nil {
		n.replica.Close()
	}
	n.scrub.stop()
	if n.audit != nil {
		_ = n.audit.Close()
	}
	return n.engine.Close()
}
