package main

import (
	"context"
	"fmt"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/node"
	"github.com/spf13/cobra"
)

func newLiteCmd() *cobra.Command {
	cfg := node.DefaultLiteConfig("")
	var logLevel string
	cmd := &cobra.Command{
		Use:   "lite",
		Short: "Run a one-process store (one shard, one replica), like KVLite",
		Long: `Run a one-process Cairn store. It opens the store under --root, creating it on
first use, serves the KV API on --host:--port, and prints one line with its
address when ready. SIGINT or SIGTERM stops it cleanly.

The store name and partition count are fixed when the root is created;
starting on an existing root with different values is refused.`,
		Example: `  cairn lite --root /tmp/cairn --port 5000 --store kvstore --partitions 10
  cairn lite --root /tmp/cairn --pprof 127.0.0.1:6060   # then: go tool pprof http://127.0.0.1:6060/debug/pprof/profile
                                                        #   or: curl http://127.0.0.1:6060/metrics`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Version = version
			var err error
			if cfg.Logger, err = newLogger(logLevel); err != nil {
				return err
			}
			if cfg.FS, err = nodeFS(cfg.Logger); err != nil {
				return err
			}
			return runLite(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Root, "root", "", "directory for the store's files (required)")
	f.StringVar(&cfg.Host, "host", cfg.Host, "address to listen on")
	f.IntVar(&cfg.Port, "port", cfg.Port, "port to listen on (0 picks a free port)")
	f.StringVar(&cfg.Store, "store", cfg.Store, "store name")
	f.Uint32Var(&cfg.Partitions, "partitions", cfg.Partitions, "number of partitions (fixed at creation)")
	f.IntVar(&cfg.Limits.MaxKeyBytes, "max-key-bytes", cfg.Limits.MaxKeyBytes, "largest key, in bytes")
	f.IntVar(&cfg.Limits.MaxValueBytes, "max-value-bytes", cfg.Limits.MaxValueBytes, "largest value, in bytes")
	f.IntVar(&cfg.Limits.MaxComponents, "max-components", cfg.Limits.MaxComponents, "most components in a key")
	f.BoolVar(&cfg.Insecure, "insecure", false, "serve plaintext even on a non-loopback --host (refused otherwise: anyone who reaches the port could read, write and administer the store)")
	f.DurationVar(&cfg.Replica.GroupWait, "sync-group-wait", cfg.Replica.GroupWait, "group commit: the longest a SYNC write's group waits for writers on their way, so that one fsync carries them; it waits at most one recent fsync's time, and stops after a quarter of this with no arrival (0: off)")
	f.BoolVar(&cfg.Secure, "secure", false, "secure mode: TLS 1.3 only, with ROOT/security (made on first start: a store CA, this node's certificate and the login file ROOT/security/client.security)")
	addNodeTuningFlags(f, nodeTuning{
		cacheBytes: &cfg.CacheBytes, rowCacheBytes: &cfg.RowCacheBytes, minFreeBytes: &cfg.MinFreeBytes, shutdownGrace: &cfg.ShutdownGrace,
		streamWorkers: &cfg.StreamWorkers, gcPercent: &cfg.GCPercent, noHTTP: &cfg.NoHTTP, pprofAddr: &cfg.PprofAddr, logLevel: &logLevel, scrub: &cfg.Scrub,
	})
	_ = cmd.MarkFlagRequired("root")
	return cmd
}

func runLite(ctx context.Context, cfg node.LiteConfig) error {
	if err := cfg.Validate(); err != nil {
		return startError(err, true)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	n, err := node.StartLite(ctx, cfg)
	if err != nil {
		return startError(err, false)
	}
	m := n.Store()
	if w := node.InsecureWarning(cfg.Host, n.Addr(), cfg.Secure); w != "" {
		cfg.Logger.Warn(w)
	}
	if cfg.Secure { // before the ready line, which scripts wait for
		fmt.Printf("secure mode (TLS 1.3): clients need the login file %s\n", filepath.Join(node.SecurityDir(cfg.Root), auth.LoginFile))
	}
	fmt.Printf("cairn lite: store %q (%d partitions) ready at %s\n", m.Name, m.Partitions, n.Addr())
	if a := n.PprofAddr(); a != "" {
		cfg.Logger.Info("profiling endpoint", "addr", "http://"+a+"/debug/pprof/", "metrics", "http://"+a+"/metrics")
	}
	return serveUntilStopped(ctx, n, cfg.Logger)
}
