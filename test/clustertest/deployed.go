package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// adminTimeout bounds one `cairn admin` command (a plan's -wait included).
const adminTimeout = 2 * time.Minute

// errAdminUnavailable is AdminOn's error for exit status 3: no node or no
// admin leader answered; another node may.
var errAdminUnavailable = errors.New("admin unavailable (exit 3)")

// startDeployed makes the store of Options.Deployed: `cairn sn init` and
// `cairn sn start` per node (through the proxies' --peer addresses, if
// any), then the admin shell configures the store, deploys every node with
// an admin on each but the Spare ones, and deploys a topology of
// c.opts.Shards shards on the nodes that are not spare.
func (c *Cluster) startDeployed(base string, tnodes []topology.Node) {
	t, o := c.t, c.opts
	hosts := o.Nodes - o.Spare
	if o.Spare < 0 || hosts < o.RF || (o.Shards*o.RF)%hosts != 0 {
		t.Fatalf("clustertest: %d shards of %d replicas do not spread evenly over %d nodes (%d spare)", o.Shards, o.RF, hosts, o.Spare)
	}
	capacity := o.Shards * o.RF / hosts
	for _, tn := range tnodes {
		root := filepath.Join(base, fmt.Sprintf("sn%d", tn.ID))
		host, port, _ := net.SplitHostPort(tn.Addr)
		out, err := exec.Command(Binary(t), "sn", "init", "--root", root, "--host", host, "--port", port,
			"--capacity", strconv.Itoa(capacity)).CombinedOutput()
		if err != nil {
			t.Fatalf("cairn sn init for node %d: %v\n%s", tn.ID, err, out)
		}
		args := []string{"sn", "start", "--root", root,
			"--raft-tick", o.Tick.String(), "--min-free-bytes", "0", "--cache-bytes", strconv.Itoa(8 << 20),
			"--shutdown-grace", "1s"}
		if o.LogKeep > 0 {
			args = append(args, "--raft-log-keep", strconv.FormatUint(o.LogKeep, 10))
		}
		for _, b := range tnodes {
			if p := c.links[link{tn.ID, b.ID}]; p != nil {
				args = append(args, "--peer", fmt.Sprintf("%d=%s", b.ID, p.Addr()))
			}
		}
		args = append(args, o.Args...)
		c.nodes = append(c.nodes, &Node{ID: tn.ID, Addr: tn.Addr, Root: root, args: args, log: &logBuffer{}})
	}
	for _, n := range c.nodes {
		c.launch(n)
	}
	for _, n := range c.nodes {
		c.waitReady(n)
	}
	// Nodes are deployed in id order, so the admin names node i sn<i>.
	script := []string{"configure -name " + o.Store, fmt.Sprintf("plan deploy-zone -name Z -rf %d -wait", o.RF)}
	for i, n := range c.nodes {
		_, port, _ := net.SplitHostPort(n.Addr)
		script = append(script, fmt.Sprintf("plan deploy-sn -znname Z -host 127.0.0.1 -port %s -wait", port))
		if i < hosts {
			script = append(script, fmt.Sprintf("plan deploy-admin -sn sn%d -wait", n.ID))
		}
	}
	script = append(script, "pool create -name P")
	for _, n := range c.nodes[:hosts] {
		script = append(script, fmt.Sprintf("pool join -name P -sn sn%d", n.ID))
	}
	script = append(script, fmt.Sprintf("topology create -name T -pool P -partitions %d", o.Partitions), "plan deploy-topology -name T -wait")
	path := filepath.Join(base, "deploy.kvs")
	if err := os.WriteFile(path, []byte(strings.Join(script, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AdminOn(c.nodes[0].ID, "-script", path); err != nil {
		t.Fatalf("deploying the store: %v", err)
	}
	c.topo = c.ShownTopology()
	if len(c.topo.Shards) != o.Shards {
		t.Fatalf("the deployed topology has %d shards, want %d", len(c.topo.Shards), o.Shards)
	}
	c.WaitPreferredLeaders(startTimeout)
}

// AdminOn runs one `cairn admin` command against node id and returns its
// standard output. Exit status 3 (no admin leader, or the node is down)
// wraps errAdminUnavailable; any other failure says what the admin printed.
func (c *Cluster) AdminOn(id topology.NodeID, args ...string) (string, error) {
	host, port, _ := net.SplitHostPort(c.Node(id).Addr)
	cmd := exec.Command(Binary(c.t), append([]string{"admin", "-host", host, "-port", port}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(adminTimeout):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("cairn admin %s on node %d: no answer within %v", strings.Join(args, " "), id, adminTimeout)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), nil
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		return out.String(), fmt.Errorf("cairn admin %s on node %d: %w: %s", strings.Join(args, " "), id, errAdminUnavailable, strings.TrimSpace(errOut.String()))
	}
	return out.String(), fmt.Errorf("cairn admin %s on node %d: %v\n%s\n%s", strings.Join(args, " "), id, err, out.String(), errOut.String())
}

// Admin runs one `cairn admin` command on the first serving node that has
// an admin leader to answer it, retrying for up to timeout while none does
// (an admin leader was just killed).
func (c *Cluster) Admin(timeout time.Duration, args ...string) (string, error) {
	var out string
	var last error
	err := Poll(timeout, func() bool {
		for _, n := range c.nodes {
			if !n.serving() {
				continue
			}
			out, last = c.AdminOn(n.ID, args...)
			if !errors.Is(last, errAdminUnavailable) {
				return true
			}
		}
		return false
	})
	if err != nil {
		return "", fmt.Errorf("%w; last: %v", err, last)
	}
	return out, last
}

// ShownTopology returns the deployed topology as `cairn admin -json show
// topology` prints it, and makes it the cluster's Topology.
func (c *Cluster) ShownTopology() *topology.Topology {
	c.t.Helper()
	out, err := c.Admin(startTimeout, "-json", "show", "topology")
	if err != nil {
		c.t.Fatalf("show topology: %v", err)
	}
	var reply struct {
		Topology json.RawMessage `json:"topology"`
	}
	raw := json.RawMessage(out)
	if json.Unmarshal([]byte(out), &reply) == nil && len(reply.Topology) > 0 {
		raw = reply.Topology
	}
	topo, err := topology.Decode(raw)
	var seq struct {
		Seq uint64 `json:"topology_seq"` // show topology's name for "seq"
	}
	if err == nil {
		err = json.Unmarshal(raw, &seq)
	}
	if err != nil || seq.Seq == 0 {
		c.t.Fatalf("show topology -json: %v (sequence %d)\n%s", err, seq.Seq, out)
	}
	topo.Seq = seq.Seq
	c.topo = topo
	return topo
}

// PartEntry is a partition's entry in a shard's partition table, as
// ShardTable reads it (internal/storage PartEntry's JSON).
type PartEntry struct {
	State int    `json:"state"` // 1 OWNED, 2 OUTGOING, 3 GONE, 4 INCOMING
	Peer  uint64 `json:"peer,omitempty"`
}

// The states of a PartEntry (storage.PartState).
const (
	PartOwned    = 1
	PartOutgoing = 2
	PartGone     = 3
	PartIncoming = 4
)

// PartTable is a shard's partition table.
type PartTable struct {
	N     uint32               `json:"n"`
	Parts map[uint32]PartEntry `json:"parts"`
}

// Serves reports whether the table's shard serves partition p (OWNED or
// OUTGOING: it takes writes and ABSOLUTE reads for p).
func (t *PartTable) Serves(p uint32) bool {
	e, ok := t.Parts[p]
	return ok && (e.State == PartOwned || e.State == PartOutgoing)
}

// ShardTable reads shard s's partition table on node id with the node's
// Control ShardTable RPC, which answers only on the shard's leader, after a
// ReadIndex round (so the table is current as of some instant during the
// call). A nil table with a nil error: the shard has none.
func (c *Cluster) ShardTable(id topology.NodeID, s topology.ShardID) (*PartTable, error) {
	ctx, cancel := context.WithTimeout(context.Background(), infoTimeout)
	defer cancel()
	r, err := controlpb.NewControlClient(c.conn(id)).ShardTable(ctx, &controlpb.ShardTableRequest{Store: c.opts.Store, Shard: uint64(s)})
	if err != nil {
		return nil, err
	}
	if len(r.GetTable()) == 0 {
		return nil, nil
	}
	var t PartTable
	if err := json.Unmarshal(r.GetTable(), &t); err != nil {
		return nil, fmt.Errorf("node %d: shard %d's table: %w", id, s, err)
	}
	return &t, nil
}

// LeaderTable reads shard s's table from whichever serving node leads it.
func (c *Cluster) LeaderTable(s topology.ShardID) (*PartTable, topology.NodeID, error) {
	var last error = fmt.Errorf("no serving node leads shard %d", s)
	for _, n := range c.nodes {
		if !n.serving() {
			continue
		}
		t, err := c.ShardTable(n.ID, s)
		if err == nil {
			return t, n.ID, nil
		}
		last = err
	}
	return nil, 0, last
}

// TopologySeq returns the sequence number of the topology node id runs
// (Control Describe).
func (c *Cluster) TopologySeq(id topology.NodeID) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), infoTimeout)
	defer cancel()
	info, err := controlpb.NewControlClient(c.conn(id)).Describe(ctx, &controlpb.DescribeRequest{})
	if err != nil {
		return 0, err
	}
	return info.GetTopologySeq(), nil
}
