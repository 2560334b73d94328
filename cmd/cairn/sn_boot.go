package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/spf13/cobra"
)

// stderrLogger is the logger of a command that runs no node (sn init, sn
// restore): its lines go to the command's stderr.
func stderrLogger(cmd *cobra.Command) *slog.Logger {
	return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
}

func newSNInitCmd() *cobra.Command {
	var root string
	var c node.InitConfig
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a storage node's boot config (Oracle NoSQL's makebootconfig)",
		Long: `Write ROOT/config.json: where the node listens, how many shard replicas it
may host (its capacity) and where it keeps its data. Running it again with the
same values is harmless; different values for an existing root are refused.
Then start the node with 'cairn sn start --root ROOT' and deploy it with the
admin shell ('cairn admin'). One port carries everything: clients, Raft
traffic between nodes, and the admin.`,
		Example: `  cairn sn init --root /var/cairn/sn1 --host 127.0.0.1 --port 5000 --capacity 2`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for i, d := range c.StorageDirs {
				abs, err := filepath.Abs(d)
				if err != nil {
					return usageErr("%v", err)
				}
				c.StorageDirs[i] = abs
			}
			if err := c.Validate(); err != nil {
				return usageErr("%v", err)
			}
			fs, err := nodeFS(stderrLogger(cmd))
			if err != nil {
				return err
			}
			out, existed, err := node.WriteInit(fs, root, c)
			switch {
			case errors.Is(err, node.ErrInitConflict):
				return usageErr("%v", err)
			case err != nil:
				return err
			case existed:
				fmt.Fprintf(cmd.OutOrStdout(), "%s already holds this config (uid %s); nothing changed\n", filepath.Join(root, node.InitFile), out.UID)
			default:
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (uid %s, %s:%d, capacity %d)\nstart it with: cairn sn start --root %s\n",
					filepath.Join(root, node.InitFile), out.UID, out.Host, out.Port, out.Capacity, root)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&root, "root", "", "the node's directory (created if missing; required)")
	f.StringVar(&c.Host, "host", "127.0.0.1", "host name or IP that clients and other nodes reach this node at")
	f.IntVar(&c.Port, "port", 5000, "the node's one port: clients, peers and admin")
	f.IntVar(&c.Capacity, "capacity", 1, "how many shard replicas this node may host (e.g. its disks or cores)")
	f.StringArrayVar(&c.StorageDirs, "storagedir", nil, "directory for the node's data (default ROOT/data)")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}

func newSNStartCmd() *cobra.Command {
	cfg := node.DefaultSNConfig("")
	var logLevel, rejoinAs string
	var helpers, peers []string
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a storage node made by cairn sn init",
		Long: `Start the storage node whose boot config is ROOT/config.json. A node that is
not in a store yet serves only the admin: create a store on it with
'cairn admin ... configure -name STORE', or add it to a store with
'plan deploy-sn'. A deployed node restarts as what it was. SIGINT or SIGTERM
stops it cleanly.

Its port also serves a read-only web console: http://HOST:PORT/console
(https on a secure node, which asks for a user's login).

A node whose whole root is gone for good comes back under its old id with
--rejoin-as snN --helper-hosts HOST:PORT on an empty root: the admin (show
rejoin-config) gives its uid, address, capacity, peers and topology, and
refuses if snN still answers or was replaced by plan migrate-sn. Its
replicas then rejoin their shards and catch up by snapshot.`,
		Example: `  cairn sn start --root /var/cairn/sn1
  cairn sn start --root /var/cairn/sn3-new --rejoin-as sn3 --helper-hosts 127.0.0.1:5000   # sn3 lost its root`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			if rejoinAs != "" {
				if err := prepareRejoin(cmd.Context(), cfg.FS, cfg.Root, rejoinAs, helpers); err != nil {
					return err
				}
			}
			ic, err := node.LoadInit(cfg.FS, cfg.Root)
			if files.IsNotExist(err) {
				return usageErr("%s has no %s: run cairn sn init --root %s --host H --port P --capacity N first", cfg.Root, node.InitFile, cfg.Root)
			} else if err != nil {
				return err
			}
			cfg.Version, cfg.Init, cfg.Host, cfg.Port = version, &ic, ic.Host, ic.Port
			if len(ic.StorageDirs) > 0 {
				cfg.DataDir = ic.StorageDirs[0]
			}
			return runSN(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Root, "root", "", "the node's directory, holding config.json (required)")
	cmd.Flags().BoolVar(&cfg.Insecure, "insecure", false, "serve plaintext even on a non-loopback --host (refused otherwise without --secure: anyone who reaches the port could read, write and administer the store)")
	cmd.Flags().StringVar(&rejoinAs, "rejoin-as", "", "start on an empty root as storage node snN of a store, whose root was lost for good; asks the admin (show rejoin-config) through --helper-hosts")
	cmd.Flags().StringSliceVar(&helpers, "helper-hosts", nil, "HOST:PORT,... of running storage nodes of the store, for --rejoin-as")
	addSNTuningFlags(cmd, &cfg, &logLevel)
	cmd.Flags().StringArrayVar(&peers, "peer", nil, "reach peer node ID at ADDR instead of its address in the store: --peer ID=HOST:PORT (repeatable; for fault-injection proxies)")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}

func newSNRestoreCmd() *cobra.Command {
	var rc node.RestoreConfig
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Restore a stopped storage node's shards from a snapshot",
		Long: `Replace the data of every shard this node hosts with a snapshot taken by
'snapshot create' in the admin shell. Restore is store-wide: stop every node,
run restore on each, then start them all. Every node that was reachable when
the snapshot was taken holds the files of each shard it hosts in
ROOT/snapshots/NAME. A node that was not (snapshot list names it) needs
--from: another node's root, or a copy of its snapshots directory. Restore
checks each file's length and checksum and refuses a corrupt one.

A snapshot taken before the topology changed (the store grew, shrank,
rebalanced or split its partitions since) is re-sharded: each shard the node
hosts now is built from the snapshot's shards that held its partitions. A
node that hosts partitions no replica of it held then (a node added since)
needs --from naming the roots of nodes that held them; restore says which.`,
		Example: `  cairn sn restore --root /var/cairn/sn1 --snapshot nightly
  cairn sn restore --root /var/cairn/sn3 --snapshot nightly --from /var/cairn/sn1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rc.Out, rc.Logger = cmd.OutOrStdout(), stderrLogger(cmd)
			var err error
			if rc.FS, err = nodeFS(rc.Logger); err != nil {
				return err
			}
			// A node of cairn cluster has no config.json; a corrupt one
			// could name another data directory, so it stops the restore.
			ic, err := node.LoadInit(rc.FS, rc.Root)
			switch {
			case err != nil && !files.IsNotExist(err):
				return err
			case err == nil && len(ic.StorageDirs) > 0:
				rc.DataDir = ic.StorageDirs[0]
			}
			if err := node.Restore(rc); errors.Is(err, node.ErrRestoreInput) {
				return usageErr("%v", err)
			} else if err != nil {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&rc.Root, "root", "", "the stopped node's directory (required)")
	f.StringVar(&rc.Name, "snapshot", "", "the snapshot's name (required)")
	f.StringArrayVar(&rc.From, "from", nil, "another place holding the snapshot's shard files (repeatable)")
	_ = cmd.MarkFlagRequired("root")
	_ = cmd.MarkFlagRequired("snapshot")
	return cmd
}
