package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/grpcconn"
	"github.com/cairndb/cairn/internal/httpapi"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/internal/transport"
	"github.com/cairndb/cairn/internal/transport/transportpb"
	"google.golang.org/grpc"
)

// SNConfig configures a storage node.
type SNConfig struct {
	// Root holds the node's files: topology.json (the store's layout, which
	// must list this node's address) and data/ (the engine). Required.
	Root string
	// Host and Port are where the node listens; host:port must be this
	// node's address in the topology.
	Host string
	Port int
	// CacheBytes, MinFreeBytes, Limits, ShutdownGrace, Version, Logger: as
	// for LiteConfig.
	CacheBytes    int64
	RowCacheBytes int64
	MinFreeBytes  int64
	Limits        keys.Limits
	ShutdownGrace time.Duration
	Version       string
	Logger        *slog.Logger
	// TickInterval is the Raft tick (default 100ms); elections take 10
	// ticks. LogKeep is how many applied entries each log keeps (default
	// 10000).
	TickInterval time.Duration
	LogKeep      uint64
	// PeerAddrs overrides the address used to reach a peer node (default:
	// its topology address) for every connection to it: Raft, moves, the
	// admin's calls (route). Fault tests route peer traffic through
	// proxies with it; clients still use the topology addresses.
	PeerAddrs map[topology.NodeID]string
	// PprofAddr, when set, serves Go's profiling endpoints on a listener of
	// its own (see LiteConfig.PprofAddr). Default "" (off).
	PprofAddr string
	// Init, when set, is the boot config written by `cairn sn init`: the node
	// may start before it belongs to a store, and the admin deploys it. Nil
	// for nodes laid out by `cairn cluster`, which need ROOT/topology.json.
	Init *InitConfig
	// DataDir holds the engine. Default ROOT/data.
	DataDir string
	// StreamWorkers, GCPercent and NoHTTP: as for LiteConfig (defaults 128,
	// 800 and false).
	StreamWorkers int
	GCPercent     int
	NoHTTP        bool
	// Insecure allows serving plaintext on a non-loopback Host, which is
	// otherwise refused (docs/design/20261127_security.md §8).
	Insecure bool
	// Secure serves TLS 1.3 only with ROOT/security (made by cairn security
	// init or add-node, with the store's token.key and users.json copied
	// in): peers must present a certificate from the store CA, users a
	// login's token (sn_secure.go).
	Secure bool
	// FS is the file system every file of the node goes through: its own
	// (config.json, membership.json, node.json, topology.json, snapshots)
	// and its engines' (data, admin). Nil means files.Default.
	FS files.FS
	// Scrub configures the background scrub (scrub.go); off by default.
	Scrub ScrubConfig
	// RepairStuckAfter is how long a replica may answer its shard's leader
	// without being able to follow it before this node's admin, while it
	// leads the admin group, has it rebuilt from its peers
	// (docs/design/20261129_stuck_repair.md). Default 30s; 0: never.
	RepairStuckAfter time.Duration
}

// DefaultRepairStuckAfter is SNConfig.RepairStuckAfter's default.
const DefaultRepairStuckAfter = 30 * time.Second

// DefaultSNConfig returns the defaults for root.
func DefaultSNConfig(root string) SNConfig {
	return SNConfig{
		Root: root, Host: "127.0.0.1", Port: 5000, CacheBytes: 256 << 20, RowCacheBytes: storage.DefaultRowCacheBytes, MinFreeBytes: 64 << 20,
		Limits: keys.DefaultLimits(), ShutdownGrace: 5 * time.Second, Version: "dev",
		TickInterval: 100 * time.Millisecond, LogKeep: 10000, StreamWorkers: 128, GCPercent: 800,
		Scrub: ScrubConfig{Interval: DefaultScrubInterval}, RepairStuckAfter: DefaultRepairStuckAfter,
	}
}

func (c SNConfig) dataDir() string {
	if c.DataDir != "" {
		return c.DataDir
	}
	return filepath.Join(c.Root, "data")
}

// Validate reports a config that cannot work, naming the flag.
func (c SNConfig) Validate() error {
	switch {
	case c.Root == "":
		return errors.New("root: required (the node's directory, holding topology.json)")
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("port: %d is not a TCP port", c.Port)
	}
	if err := c.ValidateTuning(); err != nil {
		return err
	}
	if err := checkDowngrade(c.Root, c.Secure); err != nil {
		return err
	}
	return checkExposure(c.Host, c.Secure, c.Insecure, "start it with --secure (cairn security init, docs/design/20261127_security.md)")
}

// ValidateTuning is the part of Validate that needs no root, host or port:
// the tuning values (Raft, caches, workers, scrub, limits), naming the
// flag. cairn cluster checks the flags it passes every node with it.
func (c SNConfig) ValidateTuning() error {
	switch {
	case c.TickInterval < time.Millisecond:
		return fmt.Errorf("raft-tick: %v is below 1ms", c.TickInterval)
	case c.LogKeep < 1:
		return fmt.Errorf("raft-log-keep: %d; keep at least one entry", c.LogKeep)
	case c.ShutdownGrace < 0:
		return fmt.Errorf("shutdown-grace: negative %v", c.ShutdownGrace)
	case c.GCPercent < 0:
		return fmt.Errorf("gc-percent: negative %d", c.GCPercent)
	case c.RepairStuckAfter < 0:
		return fmt.Errorf("repair-stuck-after: negative %v (0 turns the repair off)", c.RepairStuckAfter)
	case c.RowCacheBytes != 0 && c.RowCacheBytes < storage.MinRowCacheBytes:
		return fmt.Errorf("row-cache-bytes: %d is below the row cache's minimum of 32MiB (0 turns it off)", c.RowCacheBytes)
	case c.StreamWorkers < 0 || c.StreamWorkers > maxStreamWorkers:
		return fmt.Errorf("stream-workers: %d is not between 0 and %d", c.StreamWorkers, maxStreamWorkers)
	}
	if err := c.Scrub.validate(); err != nil {
		return err
	}
	return c.Limits.Validate()
}

// SN is a running storage node: the replicas of every shard the topology
// places on it, one engine, one port for clients, peers and the admin.
//
// A node started by `cairn sn start` may not belong to a store yet: it then
// serves only the admin and control services until the admin deploys it
// (Join), makes it host an admin (HostAdmin) and gives it a topology
// (InstallTopology). Those change the node while it runs, so the topology,
// the node id and the transport are published atomically, and changes are
// serialized by ctlMu.
type SN struct {
	cfg    SNConfig
	log    *slog.Logger
	audit  *files.AppendLog               // ROOT/audit.log: the admin commands this node received (audit.go)
	sec    *snSecurity                    // secure mode's TLS and guard; nil when plaintext (sn_secure.go)
	eng    atomic.Pointer[storage.Engine] // replaced by a heal (heal.go)
	topo   atomic.Pointer[topology.Topology]
	selfID atomic.Uint64
	tr     atomic.Pointer[transport.Transport]
	kv     atomic.Pointer[server.Server]
	admin  atomic.Pointer[adminHost]
	// adminConns are the connections to peers of forwardAdmin and
	// CopySnapshot, closed on shutdown.
	adminConns grpcconn.Cache

	ctlMu  sync.Mutex // serializes control changes; guards member and rebuilt
	member membership
	view   atomic.Pointer[memberView] // member's store and stopped shards, read without ctlMu (noteStore)
	// rebuildIDs holds, per shard, the id of the last RebuildReplica
	// request (rebuild.go), so a repeated request does nothing.
	rebuildIDs map[uint64]uint64
	// scrub is the background scrub (nil: off); blocks the admin's block
	// check (scrub.go).
	scrub  *scrubber
	blocks blockChecks
	// movePoint and replicaPoint are the pause failpoints of partition
	// moves and of the admin's replica changes (failpoint.go); nil unless
	// a fault test sets them.
	movePoint, replicaPoint *pausePoint

	mu       sync.RWMutex // guards replicas while they start
	replicas map[uint64]*replica.Raft
	lis      net.Listener
	grpc     *grpc.Server
	calls    *server.CallStream // set before the port and the debug listener serve
	port     *port
	httpAPI  *httpapi.Lazy
	served   chan error
	started  chan struct{} // closed once StartSN has started the node
	closing  chan struct{} // closed when shutdown begins
	debug    *debugServer

	// serveMu is held for reading by every KV request and snapshot read
	// while it may use the engine; a heal holds it for writing while it
	// swaps the engine, after closing the replicas (heal.go). healing is
	// set for the whole heal: requests then answer "rejoining".
	serveMu   sync.RWMutex
	healing   atomic.Bool
	incidents *incidentLog
	// forceRejoin makes every replica without Raft state rejoin through its
	// leader: set once a heal set the node's data aside (see mustRejoin).
	forceRejoin atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// StartSN opens the node's engine, starts its replicas and serves.
func StartSN(ctx context.Context, cfg SNConfig) (*SN, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FS == nil {
		cfg.FS = files.Default
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	member, joined, err := loadMembership(cfg.FS, cfg.Root)
	if err != nil {
		return nil, err
	}
	topo, err := loadTopology(cfg.FS, filepath.Join(cfg.Root, topology.FileName))
	switch {
	case files.IsNotExist(err) && cfg.Init != nil:
		topo = nil // not deployed yet: the admin will install one
	case err != nil:
		return nil, err
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	var self topology.NodeID
	switch {
	case joined:
		self = member.SN
		if topo != nil && topo.Store != member.Store {
			return nil, fmt.Errorf("%s is of store %q but %s says this node belongs to %q", topology.FileName, topo.Store, membershipFile, member.Store)
		}
	case topo != nil:
		for _, n := range topo.Nodes {
			if n.Addr == addr {
				self = n.ID
			}
		}
		if self == 0 {
			return nil, fmt.Errorf("this node's address %s is not in the topology of store %q (its nodes: %v); start it with the --host and --port the topology lists", addr, topo.Store, topo.Nodes)
		}
	}
	n := &SN{cfg: cfg, log: cfg.Logger, member: member, replicas: make(map[uint64]*replica.Raft),
		served: make(chan error, 1), started: make(chan struct{}), closing: make(chan struct{})}
	n.selfID.Store(uint64(self))
	n.noteStore()
	if self != 0 {
		n.log = cfg.Logger.With("node", self)
	}
	n.movePoint = newPausePoint(failpointMovePause, "move", n.log)
	n.replicaPoint = newPausePoint(failpointReplicaPause, "replica change", n.log)
	if n.audit, err = files.OpenAppendLog(cfg.FS, filepath.Join(cfg.Root, AuditFile), auditMaxBytes, auditKeep); err != nil {
		return nil, err
	}
	if n.incidents, err = loadIncidents(cfg.FS, cfg.Root); err != nil {
		return nil, err
	}
	n.adminConns.Route = n.route
	if cfg.Secure {
		if n.sec, err = n.openSecurity(); err != nil {
			return nil, err
		}
		n.adminConns.Extra = n.sec.dialOptions()
	}
	if err := n.openEngine(topo, joined); err != nil {
		return nil, err
	}
	setGCPercent(cfg.GCPercent)
	if err := n.start(addr, topo); err != nil {
		n.shutdown()
		return nil, err
	}
	close(n.started)
	go n.watchRebuild()
	return n, nil
}

// engine returns the node's engine (a heal replaces it).
func (n *SN) engine() *storage.Engine { return n.eng.Load() }

// engineConfig is the storage config of the node's engine.
func (n *SN) engineConfig() storage.Config {
	sc := storage.DefaultConfig(n.cfg.dataDir())
	sc.CacheBytes, sc.MinFreeBytes, sc.Logger, sc.FS = n.cfg.CacheBytes, n.cfg.MinFreeBytes, n.cfg.Logger, n.cfg.FS
	sc.RowCacheBytes = n.cfg.RowCacheBytes
	sc.OnCorruption = n.onCorruption
	return sc
}

func (n *SN) start(addr string, topo *topology.Topology) error {
	if n.id() != 0 {
		if err := n.ensureTransport(n.id()); err != nil {
			return err
		}
	}
	// The listener is bound before replicas start, so peers can reach us as
	// soon as our replicas speak.
	var err error
	if n.lis, err = net.Listen("tcp", addr); err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	if topo != nil {
		if err := n.openTopology(topo); err != nil {
			if err := n.healOpening(topo, err); err != nil {
				return err
			}
		}
	}
	if n.member.Admin {
		if err := n.startAdmin(); err != nil {
			return err
		}
	}
	gopts := []grpc.ServerOption{grpc.MaxRecvMsgSize(64 << 20), grpc.MaxSendMsgSize(64 << 20),
		grpc.NumStreamWorkers(uint32(max(n.cfg.StreamWorkers, 0)))}
	if n.sec != nil {
		gopts = append(gopts, grpc.Creds(handshaken{}),
			grpc.ChainUnaryInterceptor(n.sec.guard.Unary), grpc.ChainStreamInterceptor(n.sec.guard.Stream))
	}
	gopts = append(gopts, grpcconn.ServerWindows()...)
	n.grpc = grpc.NewServer(gopts...)
	cairnpb.RegisterKVServer(n.grpc, kvGate{n: n})
	transportpb.RegisterRaftServer(n.grpc, raftGate{n: n})
	cairnpb.RegisterAdminServer(n.grpc, adminRPC{n: n})
	controlpb.RegisterControlServer(n.grpc, controlRPC{n: n})
	n.calls = server.NewCallStream(kvGate{n: n}, max(n.cfg.StreamWorkers, 0))
	if n.sec != nil {
		cairnpb.RegisterAuthServer(n.grpc, n.sec.guard)
		n.calls.Authorize(n.sec.guard.AuthorizeCall)
	}
	cairnpb.RegisterKVStreamServer(n.grpc, n.calls)
	if !n.cfg.NoHTTP {
		n.httpAPI = httpapi.NewLazy(func(ctx context.Context) (*client.Client, error) {
			t := n.topology()
			if t == nil {
				return nil, errors.New("this storage node is not in a deployed store yet (plan deploy-sn, then plan deploy-topology)")
			}
			// Secure: each HTTP request's call carries its caller's token
			// in its own metadata, which only a unary call sends.
			return client.Open(ctx, client.Config{Hosts: []string{n.Addr()}, Store: t.Store, TLS: n.sec.dialTLS(), UnaryCalls: n.sec != nil})
		}, int64(n.cfg.Limits.MaxValueBytes))
	}
	web := withConsole(n.httpAPI.Handler(), n.consoleHandler())
	if n.sec != nil {
		n.port = servePortTLS(n.lis, n.sec.server, n.grpc, web, n.calls.ServeConn, n.served)
	} else {
		n.port = servePort(n.lis, n.grpc, web, n.calls.ServeConn, n.served)
	}
	if n.cfg.PprofAddr != "" {
		if n.debug, err = startDebug(n.cfg.PprofAddr, n.metrics); err != nil {
			return err
		}
		n.log.Info("profiling endpoint", "url", "http://"+n.debug.Addr()+"/debug/pprof/", "metrics", "http://"+n.debug.Addr()+"/metrics")
	}
	n.scrub = startScrub(n.engine(), n.cfg.Scrub, n.log)
	n.rejoinAll()
	if topo != nil {
		return n.writeMarker()
	}
	return nil
}

// openTopology initializes the engine for topo, opens the replicas it
// places here (except stopped ones) and publishes topo. A replica the node
// must rebuild from its peers starts silent (see mustRejoin); rejoinAll
// then starts its rejoin.
func (n *SN) openTopology(topo *topology.Topology) error {
	n.topo.Store(topo)
	meta, err := n.openReplicas(topo)
	if err != nil {
		return err
	}
	scfg := server.DefaultConfig()
	scfg.Limits, scfg.Version = n.cfg.Limits, n.cfg.Version
	srv, err := server.NewRouted(router{n}, meta, scfg)
	if err != nil {
		return err
	}
	n.kv.Store(srv)
	return nil
}

// openReplicas initializes the engine for topo and opens the replicas it
// places here, except those plan stop-service stopped.
func (n *SN) openReplicas(topo *topology.Topology) (storage.StoreMeta, error) {
	meta, err := n.engine().Init(topo.Store, topo.Partitions)
	if err != nil {
		return meta, err
	}
	for _, s := range topo.ShardsOn(n.id()) {
		if slices.Contains(n.member.Stopped, uint64(s.ID)) {
			continue
		}
		if err := n.openReplica(meta, s); err != nil {
			return meta, err
		}
	}
	return meta, nil
}

// ensureTransport creates the transport once the node knows its id.
func (n *SN) ensureTransport(id topology.NodeID) error {
	if n.tr.Load() != nil {
		return nil
	}
	tr, err := transport.New(transport.Config{
		TLS:     n.sec.dialTLS(),
		NodeID:  transport.NodeID(id),
		Resolve: n.resolve,
		OnUnreachable: func(s transport.ShardID, to transport.NodeID) {
			if r := n.raftFor(uint64(s)); r != nil {
				r.ReportUnreachable(uint64(to))
			}
		},
		OnSnapshotStatus: func(s transport.ShardID, to transport.NodeID, ok bool) {
			if r := n.raftFor(uint64(s)); r != nil {
				r.ReportSnapshot(uint64(to), ok)
			}
		},
		OpenSnapshot: n.openSnapshot,
		Logger:       n.cfg.Logger, // the transport adds node itself
	}, handler{n})
	if err != nil {
		return err
	}
	n.tr.Store(tr)
	return nil
}

// resolve finds a peer's address: a configured override, the topology, then
// the peers the admin told this node about.
func (n *SN) resolve(id transport.NodeID) (string, bool) {
	if a, ok := n.cfg.PeerAddrs[topology.NodeID(id)]; ok {
		return a, true
	}
	if t := n.topology(); t != nil {
		if nd, ok := t.Node(topology.NodeID(id)); ok {
			return nd.Addr, true
		}
	}
	n.ctlMu.Lock()
	a, ok := n.member.Peers[topology.NodeID(id)]
	n.ctlMu.Unlock()
	if ok {
		return a, true
	}
	if h := n.admin.Load(); h != nil && h.use() {
		defer h.done()
		return h.svc.Addr(uint64(id))
	}
	return "", false
}

// route returns the address to dial for addr: the override of the peer
// the topology lists at addr (Config.PeerAddrs, --peer), else addr. The
// connections to peers outside the Raft transport (which uses resolve) go
// through it, so that a fault test's proxies carry all of a node's traffic
// to a peer: partition moves' and the admin's calls too. It takes no lock.
func (n *SN) route(addr string) string {
	t := n.topology()
	if len(n.cfg.PeerAddrs) == 0 || t == nil {
		return addr
	}
	for id, over := range n.cfg.PeerAddrs {
		if nd, ok := t.Node(id); ok && nd.Addr == addr {
			return over
		}
	}
	return addr
}

// raftFor returns the local replica of shard s, the admin group included.
func (n *SN) raftFor(s uint64) *replica.Raft {
	if s == admin.Shard {
		if h := n.admin.Load(); h != nil {
			return h.rep
		}
		return nil
	}
	return n.replica(s)
}

// id returns the node's id (0 before it joins a store).
func (n *SN) id() topology.NodeID { return topology.NodeID(n.selfID.Load()) }

// topology returns the installed topology, or nil.
func (n *SN) topology() *topology.Topology { return n.topo.Load() }

// transport returns the transport, or nil before the node has an id.
func (n *SN) transport() *transport.Transport { return n.tr.Load() }

// openReplica opens this node's replica of shard s; one the node must
// rebuild from its peers (mustRejoin) starts silent.
func (n *SN) openReplica(meta storage.StoreMeta, s topology.Shard) error {
	rejoin, err := n.mustRejoin(uint64(s.ID))
	if err != nil {
		return fmt.Errorf("shard %d: %w", s.ID, err)
	}
	return n.openReplicaAs(meta, s, rejoin)
}

// openReplicaAs opens a replica of s, as a rejoin (lost data) or not.
func (n *SN) openReplicaAs(meta storage.StoreMeta, s topology.Shard, rejoin bool) error {
	voters := make([]uint64, len(s.Replicas))
	for i, r := range s.Replicas {
		voters[i] = uint64(r)
	}
	topo := n.topology()
	r, err := replica.OpenRaft(n.engine(), meta, replica.RaftConfig{
		Shard: uint64(s.ID), Node: uint64(n.id()), Voters: voters, Origin: s.Origin,
		Spans:      storage.ShardSpans(uint64(s.ID)),
		Partitions: topo.PartitionsOf(s.ID),
		Preferred:  uint64(s.Preferred), TickInterval: n.cfg.TickInterval, LogKeep: n.cfg.LogKeep,
		Sender: sender{n}, Logger: n.log, Rejoin: rejoin,
	})
	if err != nil {
		return fmt.Errorf("shard %d: %w", s.ID, err)
	}
	n.mu.Lock()
	n.replicas[uint64(s.ID)] = r
	n.mu.Unlock()
	return nil
}

func (n *SN) closed() bool {
	select {
	case <-n.closing:
		return true
	default:
		return false
	}
}

// handoff moves leadership of the shards this node leads to other replicas
// before it stops, bounded by a second per shard, in parallel.
func (n *SN) handoff() {
	n.mu.RLock()
	defer n.mu.RUnlock()
	var wg sync.WaitGroup
	for _, r := range n.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			r.Handoff(ctx)
		}()
	}
	wg.Wait()
}

// replica returns the local replica of shard id, or nil.
func (n *SN) replica(id uint64) *replica.Raft {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.replicas[id]
}

// Addr returns the address the node listens on.
func (n *SN) Addr() string { return n.lis.Addr().String() }

// ID returns the node's id (0 until it joins a store).
func (n *SN) ID() topology.NodeID { return n.id() }

// Topology returns the store's layout, or nil before one is installed.
func (n *SN) Topology() *topology.Topology { return n.topology() }

// Done returns a channel that receives the serve loop's error if the gRPC
// server stops on its own.
func (n *SN) Done() <-chan error { return n.served }

// Close stops serving, stops the replicas and closes the engine.
func (n *SN) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.shutdown() })
	return n.closeErr
}

func (n *SN) shutdown() error {
	close(n.closing)
	if n.debug != nil {
		n.debug.close()
	}
	n.handoff()
	if h := n.admin.Load(); h != nil {
		h.handoff()
	}
	if tr := n.transport(); tr != nil {
		_ = tr.Close() // ends peer streams, so GracefulStop waits only for clients
	}
	if n.calls != nil {
		n.calls.Close() // ends clients' call streams, which would last until the grace ran out
	}
	if n.port != nil {
		n.port.stop(n.cfg.ShutdownGrace)
		n.httpAPI.Close()
	} else if n.lis != nil {
		n.lis.Close()
	}
	_ = n.adminConns.Close()
	n.ctlMu.Lock() // a heal under way finishes first; later ones see closing
	defer n.ctlMu.Unlock()
	n.mu.RLock()
	for _, r := range n.replicas {
		r.Close()
	}
	n.mu.RUnlock()
	if h := n.admin.Load(); h != nil {
		h.close()
	}
	n.scrub.stop()
	n.blocks.stop()
	_ = n.audit.Close()
	return n.engine().Close()
}
