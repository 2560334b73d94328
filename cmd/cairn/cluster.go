package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/cairndb/cairn/internal/cluster"
	"github.com/cairndb/cairn/internal/exitcode"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/spf13/cobra"
)

// newClusterCmd returns "cairn cluster" and its subcommands. They parse
// flags; package cluster does the work.
func newClusterCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "cluster COMMAND",
		Short: "Run a whole store on this machine: one storage node process per node",
		Long: `Run a Cairn store of several storage nodes on this machine, each a background
'cairn sn' process with its own directory under --root. 'start' lays out the
store the first time and (re)starts the nodes that are not running; 'stop'
stops them; 'status' shows each node and each shard's leader; 'kill' sends a
node a signal, for fault testing.

Exit codes: 0 ok; 1 failed (for status: not healthy); 2 bad flags or flags
that disagree with the existing cluster. See 'cairn --help'.`,
		Example: `  cairn cluster start --root /tmp/cluster --nodes 3 --rf 3 --shards 2
  cairn cluster status --root /tmp/cluster
  cairn cluster kill --root /tmp/cluster --node 1
  cairn cluster start --root /tmp/cluster --node 1
  cairn cluster stop --root /tmp/cluster`,
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(clusterStartCmd(), clusterStopCmd(), clusterStatusCmd(), clusterKillCmd())
	return c
}

// clusterErr maps a cluster error to an exit code: 2 for bad or
// disagreeing flags, 1 otherwise.
func clusterErr(err error) error {
	if err == nil {
		return nil
	}
	code := exitcode.Failed
	if errors.Is(err, cluster.ErrInvalid) || errors.Is(err, cluster.ErrMismatch) || errors.Is(err, topology.ErrInvalid) {
		code = exitcode.Usage
	}
	return &exitError{code: code, err: err}
}

func clusterStartCmd() *cobra.Command {
	o := cluster.StartOptions{Spec: cluster.DefaultSpec(), Wait: cluster.DefaultWait}
	var node uint64
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Create the cluster in --root (first time) and start its nodes",
		Long: `Start a local cluster. On a directory without cluster.json it lays out a new
store (--nodes, --rf, --shards, --partitions, --store, --host, --base-port)
and starts every node. On an existing cluster it restarts the nodes that are
not running and keeps the layout; layout flags given then must agree with it.
--node starts just one node. It waits for each node's ready line and then for
every shard to have a leader, and prints how to reach the store.

Flags for every 'cairn sn' pass through with --sn-flag (repeatable). They are
checked as 'cairn sn' would before anything is written, and remembered in
cluster.json for later restarts once a node started with them is ready.

The nodes share this machine, so each runs with GOMAXPROCS set to its share
of the cores (the cores divided by the nodes, at least 1), unless GOMAXPROCS
is set in the environment: a node given every core would spin and wake its
threads against the other nodes' for nothing.`,
		Example: `  cairn cluster start --root /tmp/cluster --nodes 3 --rf 3 --shards 2 --partitions 100
  cairn cluster start --root /tmp/cluster --sn-flag=--raft-tick=50ms
  cairn cluster start --root /tmp/cluster --node 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cluster: find the cairn binary to run the nodes with: %w", err)
			}
			o.Binary, o.Node, o.Out, o.CheckSNFlags = exe, topology.NodeID(node), cmd.OutOrStdout(), checkSNFlags
			o.Given = map[string]bool{}
			for _, name := range []string{cluster.FlagStore, cluster.FlagNodes, cluster.FlagRF, cluster.FlagShards,
				cluster.FlagPartitions, cluster.FlagHost, cluster.FlagBasePort, cluster.FlagSecure} {
				o.Given[name] = cmd.Flags().Changed(name)
			}
			return clusterErr(cluster.Start(cmd.Context(), o))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Root, "root", "", "the cluster's directory (required)")
	f.IntVar(&o.Spec.Nodes, cluster.FlagNodes, o.Spec.Nodes, "number of storage nodes")
	f.IntVar(&o.Spec.RF, cluster.FlagRF, o.Spec.RF, "replication factor: replicas per shard, on distinct nodes")
	f.IntVar(&o.Spec.Shards, cluster.FlagShards, o.Spec.Shards, "number of shards (Raft groups)")
	f.Uint32Var(&o.Spec.Partitions, cluster.FlagPartitions, o.Spec.Partitions, "number of partitions (fixed at creation)")
	f.StringVar(&o.Spec.Store, cluster.FlagStore, o.Spec.Store, "store name")
	f.StringVar(&o.Spec.Host, cluster.FlagHost, o.Spec.Host, "host every node listens on")
	f.IntVar(&o.Spec.BasePort, cluster.FlagBasePort, o.Spec.BasePort, "node I listens on base-port+I-1 (0: free ports)")
	f.Uint64Var(&node, "node", 0, "start only this node of an existing cluster")
	f.BoolVar(&o.Spec.Secure, "secure", false, "a new cluster in secure mode: makes ROOT/security (the store CA, the admin user and its login file client.security) and runs every node with --secure")
	f.StringArrayVar(&o.SNFlags, "sn-flag", nil, "a flag for every 'cairn sn', e.g. --sn-flag=--raft-tick=50ms (repeatable)")
	f.DurationVar(&o.Wait, "wait", o.Wait, "how long to wait for the nodes to be ready and every shard to have a leader")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}

func clusterStopCmd() *cobra.Command {
	o := cluster.StopOptions{Timeout: cluster.DefaultStopTimeout}
	var node uint64
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the cluster's nodes (SIGTERM, then SIGKILL after --timeout)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Node, o.Out = topology.NodeID(node), cmd.OutOrStdout()
			return clusterErr(cluster.Stop(cmd.Context(), o))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Root, "root", "", "the cluster's directory (required)")
	f.Uint64Var(&node, "node", 0, "stop only this node")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long a node has to exit after SIGTERM before SIGKILL")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}

func clusterStatusCmd() *cobra.Command {
	var root string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each node and each shard's leader; exit 1 unless all is well",
		Long: `Show each node (address, pid, up or down, the shards it leads) and each shard
(its leader as the live nodes report it, term, and each replica's applied
index). Exit code 0 if every node is up and every shard has a leader, 1
otherwise, with the reasons.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := cluster.GetStatus(cmd.Context(), root)
			if err != nil {
				return &exitError{code: exitcode.Failed, err: err}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(st, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s\n", b)
			} else {
				fmt.Fprint(out, st.Text())
			}
			if !st.Healthy {
				return &exitError{code: exitcode.Failed, err: fmt.Errorf("cluster: not healthy: %d problem(s), first: %s", len(st.Problems), st.Problems[0])}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&root, "root", "", "the cluster's directory (required)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}

func clusterKillCmd() *cobra.Command {
	o := cluster.KillOptions{Signal: "KILL", Timeout: cluster.DefaultStopTimeout}
	var node uint64
	cmd := &cobra.Command{
		Use:   "kill",
		Short: "Send one node a signal (KILL, STOP, CONT or TERM), for fault testing",
		Long: `Send one node's process a signal and wait for its effect: KILL and TERM until
the process is gone, STOP until it is paused, CONT until it runs again.
'cairn cluster start --node N' restarts a killed node.`,
		Example: `  cairn cluster kill --root /tmp/cluster --node 1
  cairn cluster kill --root /tmp/cluster --node 2 --signal STOP`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Node, o.Out = topology.NodeID(node), cmd.OutOrStdout()
			return clusterErr(cluster.Kill(cmd.Context(), o))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Root, "root", "", "the cluster's directory (required)")
	f.Uint64Var(&node, "node", 0, "the node to signal (required)")
	f.StringVar(&o.Signal, "signal", o.Signal, "KILL, STOP, CONT or TERM")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long to wait for the signal's effect")
	_ = cmd.MarkFlagRequired("root")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}
