package main

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

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
  cairn lite --root /tmp/cairn --pprof 127.0.0.1:6060   # then: go tool pprof http://127.0.0.1:6060/debug/pprof/profile`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Version = version
			var err error
			if cfg.Logger, err = newLogger(logLevel); err != nil {
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
	f.Int64Var(&cfg.CacheBytes, "cache-bytes", cfg.CacheBytes, "block cache size in bytes")
	f.Int64Var(&cfg.MinFreeBytes, "min-free-bytes", cfg.MinFreeBytes, "refuse writes when free disk space is below this")
	f.IntVar(&cfg.Limits.MaxKeyBytes, "max-key-bytes", cfg.Limits.MaxKeyBytes, "largest key, in bytes")
	f.IntVar(&cfg.Limits.MaxValueBytes, "max-value-bytes", cfg.Limits.MaxValueBytes, "largest value, in bytes")
	f.IntVar(&cfg.Limits.MaxComponents, "max-components", cfg.Limits.MaxComponents, "most components in a key")
	f.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", cfg.ShutdownGrace, "how long shutdown waits for in-flight requests")
	f.IntVar(&cfg.StreamWorkers, "stream-workers", cfg.StreamWorkers, "goroutines kept to run requests (0: one new goroutine per request)")
	f.IntVar(&cfg.GCPercent, "gc-percent", cfg.GCPercent, "Go GC percent for this process (0: the runtime's; the GOGC environment variable wins)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&cfg.PprofAddr, "pprof", "", "serve Go profiles (net/http/pprof) on this host:port, a listener of its own (default off; use loopback)")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}

func runLite(ctx context.Context, cfg node.LiteConfig) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	n, err := node.StartLite(ctx, cfg)
	if err != nil {
		return err
	}
	m := n.Store()
	fmt.Printf("cairn lite: store %q (%d partitions) ready at %s\n", m.Name, m.Partitions, n.Addr())
	if a := n.PprofAddr(); a != "" {
		cfg.Logger.Info("profiling endpoint", "addr", "http://"+a+"/debug/pprof/")
	}
	return serveUntilStopped(ctx, n, cfg.Logger)
}
