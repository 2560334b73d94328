package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/spf13/cobra"
)

func newSNCmd() *cobra.Command {
	cfg := node.DefaultSNConfig("")
	var logLevel string
	var peers []string
	cmd := &cobra.Command{
		Use:   "sn",
		Short: "Run a storage node: replicas of several shards, on one port",
		Long: `Run a Cairn storage node. A node holds replicas of several shards and serves
clients, peers and the admin on one port. SIGINT or SIGTERM stops it cleanly.

Deploying a store (see docs/operations.md):
  cairn sn init --root DIR --host H --port P --capacity N   once per node
  cairn sn start --root DIR                                 then the admin
                                                            shell deploys it
  cairn sn restore --root DIR --snapshot S                  offline restore

'cairn sn --root DIR' without a subcommand runs a node of a store laid out
by 'cairn cluster start' (ROOT/topology.json, found by --host:--port); the
cluster command starts these nodes itself.`,
		Example: `  cairn sn init --root /var/cairn/sn1 --host 127.0.0.1 --port 5000 --capacity 2
  cairn sn start --root /var/cairn/sn1
  cairn sn --root /tmp/cluster/n1 --host 127.0.0.1 --port 5001   # a cairn cluster node`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Version = version
			var err error
			if cfg.Logger, err = newLogger(logLevel); err != nil {
				return err
			}
			if cfg.PeerAddrs, err = parsePeers(peers); err != nil {
				return usageErr("%v", err)
			}
			if cfg.FS, err = nodeFS(cfg.Logger); err != nil {
				return err
			}
			if err := checkLegacyRoot(cfg.FS, cfg.Root); err != nil {
				return err
			}
			return runSN(cmd.Context(), cfg)
		},
	}
	addSNFlags(cmd, &cfg, &logLevel, &peers)
	_ = cmd.MarkFlagRequired("root")
	cmd.AddCommand(newSNInitCmd(), newSNStartCmd(), newSNRestoreCmd())
	return cmd
}

// addSNFlags adds the flags of the bare cairn sn, a node of cairn cluster.
func addSNFlags(cmd *cobra.Command, cfg *node.SNConfig, logLevel *string, peers *[]string) {
	f := cmd.Flags()
	f.StringVar(&cfg.Root, "root", "", "the node's directory, holding topology.json (required)")
	f.StringVar(&cfg.Host, "host", cfg.Host, "address to listen on (as listed in the topology)")
	f.IntVar(&cfg.Port, "port", cfg.Port, "port to listen on (as listed in the topology)")
	addSNTuningFlags(cmd, cfg, logLevel)
	f.StringArrayVar(peers, "peer", nil, "reach peer node ID at ADDR instead of its topology address: --peer ID=HOST:PORT (repeatable; for fault-injection proxies)")
}

// checkSNFlags checks flags for the bare cairn sn (cairn cluster start
// --sn-flag) as the node would, without a node: each must be one of its
// flags with a value it takes (addSNFlags, --log-level, --peer, and
// node.SNConfig.ValidateTuning).
func checkSNFlags(flags []string) error {
	cfg := node.DefaultSNConfig("")
	var logLevel string
	var peers []string
	cmd := &cobra.Command{Use: "sn"}
	addSNFlags(cmd, &cfg, &logLevel, &peers)
	f := cmd.Flags()
	f.SetOutput(io.Discard)
	if err := f.Parse(flags); err != nil {
		return err
	}
	if _, err := newLogger(logLevel); err != nil {
		return err
	}
	if _, err := parsePeers(peers); err != nil {
		return err
	}
	return cfg.ValidateTuning()
}

// addSNTuningFlags adds the flags shared by cairn sn and cairn sn start:
// those of every node (addNodeTuningFlags, shared with cairn lite) and
// Raft's.
func addSNTuningFlags(cmd *cobra.Command, cfg *node.SNConfig, logLevel *string) {
	f := cmd.Flags()
	addNodeTuningFlags(f, nodeTuning{
		cacheBytes: &cfg.CacheBytes, rowCacheBytes: &cfg.RowCacheBytes, minFreeBytes: &cfg.MinFreeBytes, shutdownGrace: &cfg.ShutdownGrace,
		streamWorkers: &cfg.StreamWorkers, gcPercent: &cfg.GCPercent, noHTTP: &cfg.NoHTTP, pprofAddr: &cfg.PprofAddr, logLevel: logLevel, scrub: &cfg.Scrub,
	})
	f.DurationVar(&cfg.TickInterval, "raft-tick", cfg.TickInterval, "Raft tick; an election takes 10 ticks")
	f.Uint64Var(&cfg.LogKeep, "raft-log-keep", cfg.LogKeep, "the most applied Raft entries a leader keeps for a replica that lags (one further behind gets a snapshot); once every replica has an entry, logs keep 500")
	f.DurationVar(&cfg.RepairStuckAfter, "repair-stuck-after", cfg.RepairStuckAfter, "when this node's admin leads: rebuild from its peers a replica that has answered its shard's leader without being able to follow it for this long (verify configuration's \"stuck\": started on an old copy of its root, or taking none of its leader's log; never one restored from a snapshot), if the shard keeps a healthy majority without it and no plan runs (0: never, only report it)")
	f.BoolVar(&cfg.Secure, "secure", false, "serve TLS 1.3 only with ROOT/security (cairn security init; the store's ca.pem, token.key and users.json, and this node's certificate): peers need a certificate from the store CA, users a login")
}

func runSN(ctx context.Context, cfg node.SNConfig) error {
	if err := cfg.Validate(); err != nil {
		return startError(err, true)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	n, err := node.StartSN(ctx, cfg)
	if err != nil {
		return startError(err, false)
	}
	if w := node.InsecureWarning(cfg.Host, n.Addr(), cfg.Secure); w != "" {
		cfg.Logger.Warn(w)
	}
	switch t := n.Topology(); {
	case t != nil:
		fmt.Printf("cairn sn: node %d of store %q (%d shards here) ready at %s\n", n.ID(), t.Store, len(t.ShardsOn(n.ID())), n.Addr())
	case n.ID() != 0:
		fmt.Printf("cairn sn: sn%d ready at %s, waiting for the admin to deploy a topology\n", n.ID(), n.Addr())
	default:
		fmt.Printf("cairn sn: storage node ready at %s, not in a store yet (cairn admin --host %s --port %d, then configure or plan deploy-sn)\n",
			n.Addr(), cfg.Host, cfg.Port)
	}
	// A node of cairn sn init has an admin to ask (a cairn cluster node has
	// none). A line of its own: the ready line's form is parsed (internal/cluster).
	if !cfg.NoHTTP && cfg.Init != nil {
		fmt.Printf("cairn sn: web console at %s\n", consoleURL(cfg.Secure, n.Addr()))
	}
	return serveUntilStopped(ctx, n, cfg.Logger)
}

// consoleURL is the node's web console.
func consoleURL(secure bool, addr string) string {
	if secure {
		return "https://" + addr + "/console"
	}
	return "http://" + addr + "/console"
}

func parsePeers(specs []string) (map[topology.NodeID]string, error) {
	out := make(map[topology.NodeID]string)
	for _, s := range specs {
		id, addr, ok := strings.Cut(s, "=")
		n, err := strconv.ParseUint(id, 10, 64)
		if !ok || err != nil || n == 0 || addr == "" {
			return nil, fmt.Errorf("--peer %q: want NODE_ID=HOST:PORT, e.g. --peer 2=127.0.0.1:7002", s)
		}
		out[topology.NodeID(n)] = addr
	}
	return out, nil
}

// checkLegacyRoot refuses a root made by cairn sn init, which the bare
// cairn sn (a cairn cluster node) cannot run, pointing to cairn sn start.
func checkLegacyRoot(fs files.FS, root string) error {
	if _, err := fs.Stat(filepath.Join(root, node.InitFile)); err != nil {
		return nil
	}
	if _, err := fs.Stat(filepath.Join(root, topology.FileName)); err == nil {
		return nil
	}
	return usageErr("%s was set up by cairn sn init: start it with cairn sn start --root %s", root, root)
}
