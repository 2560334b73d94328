package clustertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// Options describes a cluster. Zero fields take the defaults noted.
type Options struct {
	Nodes      int           // storage nodes; default 3
	Shards     int           // shards; default 1
	RF         int           // replicas per shard; default min(3, Nodes)
	Partitions uint32        // default 20
	Store      string        // default "kvstore"
	Tick       time.Duration // --raft-tick; default 50ms (an election takes 10 ticks)
	LogKeep    uint64        // --raft-log-keep; 0 keeps the node's default (10000)
	// Proxies routes every node-to-node link through a Proxy (see the
	// package doc), so that Cut, Isolate and Heal work.
	Proxies bool
	// Args are extra flags for every `cairn sn`.
	Args []string
	// Deployed makes the store as an operator does (deployed.go): `cairn
	// sn init` and `cairn sn start` per node, then the admin shell deploys
	// Shards shards (each node's capacity is Shards*RF/Nodes) with an
	// admin on every node, so plans (deploy-topology ...) run.
	Deployed bool
	// Env is extra environment (KEY=VALUE) for every run of every node.
	Env []string
	// Spare (with Deployed) is how many of the Nodes, the highest ids, are
	// deployed with the capacity of the others but host nothing: no
	// admin, not in the pool the topology was made from. A test moves
	// replicas onto them with a plan.
	Spare int
}

func (o Options) withDefaults() Options {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Shards == 0 {
		o.Shards = 1
	}
	if o.RF == 0 {
		o.RF = min(3, o.Nodes)
	}
	if o.Partitions == 0 {
		o.Partitions = 20
	}
	if o.Store == "" {
		o.Store = "kvstore"
	}
	if o.Tick == 0 {
		o.Tick = 50 * time.Millisecond
	}
	return o
}

// startTimeout bounds Start's wait for every shard to be led by its
// preferred replica.
const startTimeout = 20 * time.Second

// infoTimeout bounds one StoreInfo asked of a node for its shards' state.
const infoTimeout = 500 * time.Millisecond

// Node is one storage node of a Cluster.
type Node struct {
	ID   topology.NodeID
	Addr string // the topology address, which clients use
	Root string // holds topology.json and data/

	args []string
	log  *logBuffer // the output of every run

	mu       sync.Mutex
	proc     *process // the latest run; nil before the first
	stopped  bool     // SIGSTOPped
	runs     int
	runStart int // where the latest run's output begins in log
}

// runMark begins the line the log gets before each run.
const runMark = "=== clustertest: run "

// RunLog returns what the node's latest run printed.
func (n *Node) RunLog() string {
	n.mu.Lock()
	start := n.runStart
	n.mu.Unlock()
	return n.log.String()[start:]
}

// ExitCode returns the exit code of the node's latest run (-1 if a signal
// ended it), and false while it runs.
func (n *Node) ExitCode() (int, bool) {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil || p.running() {
		return 0, false
	}
	return p.state.ExitCode(), true
}

// Log returns everything the node printed, over all its runs.
func (n *Node) Log() string { return n.log.String() }

// Running reports whether the node's latest run is still alive (a stopped
// process is alive).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil && n.proc.running()
}

// Exited returns a channel closed when the node's current run exits.
func (n *Node) Exited() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc.exited
}

// serving reports whether the node runs and is not stopped.
func (n *Node) serving() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil && n.proc.running() && !n.stopped
}

type link struct{ from, to topology.NodeID }

// Cluster is a running store of `cairn sn` processes.
type Cluster struct {
	t     testing.TB
	opts  Options
	topo  *topology.Topology
	nodes []*Node
	links map[link]*Proxy

	connMu sync.Mutex
	conns  map[topology.NodeID]*grpc.ClientConn
}

// Start starts a cluster as Options describes and waits until every shard is
// led by its preferred replica. Everything it started is stopped when the
// test ends; if the test failed, every node's output is logged and saved in
// the artifact directory.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	o = o.withDefaults()
	// TempDir's removal must run after the nodes are killed, and cleanups
	// run last-registered first.
	base := t.TempDir()
	c := &Cluster{t: t, opts: o, links: make(map[link]*Proxy), conns: make(map[topology.NodeID]*grpc.ClientConn)}
	t.Cleanup(c.cleanup)

	var tnodes []topology.Node
	used := make(map[string]bool)
	for i := 1; i <= o.Nodes; i++ {
		addr := freeAddr(t)
		for used[addr] {
			addr = freeAddr(t)
		}
		used[addr] = true
		tnodes = append(tnodes, topology.Node{ID: topology.NodeID(i), Addr: addr})
	}
	topo, err := topology.Build(o.Store, o.Partitions, tnodes, o.Shards, o.RF)
	if err != nil {
		t.Fatalf("topology: %v", err)
	}
	c.topo = topo
	if o.Proxies {
		for _, a := range tnodes {
			for _, b := range tnodes {
				if a.ID == b.ID {
					continue
				}
				p, err := NewProxy(a.ID, b.ID, b.Addr)
				if err != nil {
					t.Fatalf("proxy %d->%d: %v", a.ID, b.ID, err)
				}
				c.links[link{a.ID, b.ID}] = p
			}
		}
	}
	if o.Deployed {
		c.startDeployed(base, tnodes)
		return c
	}
	for _, tn := range tnodes {
		root := filepath.Join(base, fmt.Sprintf("n%d", tn.ID))
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := files.WriteJSON(files.Default, filepath.Join(root, topology.FileName), topo); err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(tn.Addr)
		args := []string{"sn", "--root", root, "--host", host, "--port", port,
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
	// Start every node before waiting for any: a node's replicas need the
	// others to elect leaders, not to become ready.
	for _, n := range c.nodes {
		c.launch(n)
	}
	for _, n := range c.nodes {
		c.waitReady(n)
	}
	c.WaitPreferredLeaders(startTimeout)
	return c
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago. It
// picks ports below the kernel's ephemeral range (32768 and up on Linux), so
// an outgoing connection cannot take a node's port while the node is down
// between a Kill and a Restart.
func freeAddr(t testing.TB) string {
	t.Helper()
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		return l.Addr().String()
	}
	t.Fatal("no free port in 20000-31999 after 100 tries")
	return ""
}

func (c *Cluster) cleanup() {
	for _, n := range c.nodes {
		n.mu.Lock()
		p := n.proc
		n.mu.Unlock()
		if p != nil && p.running() {
			if err := p.kill(); err != nil {
				c.t.Errorf("node %d: %v", n.ID, err)
			}
		}
	}
	for _, p := range c.links {
		p.Close()
	}
	c.connMu.Lock()
	for _, cc := range c.conns {
		cc.Close()
	}
	c.connMu.Unlock()
	if !c.t.Failed() {
		return
	}
	dir := ArtifactDir(c.t)
	for _, n := range c.nodes {
		out := n.Log()
		c.t.Logf("node %d (%s): cairn %s\n%s--- end of node %d ---", n.ID, n.Addr, strings.Join(n.args, " "), out, n.ID)
		path := filepath.Join(dir, fmt.Sprintf("node-%d.log", n.ID))
		if err := os.WriteFile(path, []byte(out), 0o644); err == nil {
			c.t.Logf("node %d's log: %s", n.ID, path)
		}
	}
}

// launch starts a run of n with env (KEY=VALUE, may be nil) without
// waiting for it.
func (c *Cluster) launch(n *Node, env ...string) {
	c.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.runs++
	fmt.Fprintf(n.log, "%s%d of node %d at %s%s ===\n", runMark, n.runs, n.ID, time.Now().Format("15:04:05.000"),
		strings.Join(append([]string{""}, env...), " with "))
	n.runStart = n.log.Len()
	p, err := startProcess(Binary(c.t), n.args, append(slices.Clone(c.opts.Env), env...), n.log)
	if err != nil {
		c.t.Fatalf("node %d: start: %v", n.ID, err)
	}
	n.proc, n.stopped = p, false
}

// waitReady waits for n's ready line.
func (c *Cluster) waitReady(n *Node) {
	c.t.Helper()
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	select {
	case addr := <-p.stdout.ready:
		if addr != n.Addr {
			c.t.Fatalf("node %d: ready at %s, want %s", n.ID, addr, n.Addr)
		}
	case <-p.exited:
		c.t.Fatalf("node %d exited (%v) before it was ready; its output:\n%s", n.ID, p.state, n.Log())
	case <-time.After(readyTimeout):
		c.t.Fatalf("node %d: no ready line within %v", n.ID, readyTimeout)
	}
}

// Topology returns the store's layout.
func (c *Cluster) Topology() *topology.Topology { return c.topo }

// Store returns the store's name.
func (c *Cluster) Store() string { return c.opts.Store }

// Nodes returns the nodes, by id.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Node returns node id.
func (c *Cluster) Node(id topology.NodeID) *Node {
	c.t.Helper()
	for _, n := range c.nodes {
		if n.ID == id {
			return n
		}
	}
	c.t.Fatalf("no node %d", id)
	return nil
}

// Addrs returns every node's client address.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.Addr)
	}
	return out
}

// Kill sends SIGKILL to node id and waits until it is gone.
func (c *Cluster) Kill(id topology.NodeID) {
	c.t.Helper()
	n := c.Node(id)
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil || !p.running() {
		c.t.Fatalf("kill node %d: not running", id)
	}
	if err := p.kill(); err != nil {
		c.t.Fatalf("kill node %d: %v", id, err)
	}
	fmt.Fprintf(n.log, "=== clustertest: SIGKILL node %d at %s ===\n", id, time.Now().Format("15:04:05.000"))
}

// Stop sends SIGSTOP to node id and waits until it is stopped.
func (c *Cluster) Stop(id topology.NodeID) {
	c.t.Helper()
	c.signal(id, syscall.SIGSTOP, true)
}

// Cont sends SIGCONT to a stopped node id and waits until it runs.
func (c *Cluster) Cont(id topology.NodeID) {
	c.t.Helper()
	c.signal(id, syscall.SIGCONT, false)
}

func (c *Cluster) signal(id topology.NodeID, sig syscall.Signal, stop bool) {
	c.t.Helper()
	n := c.Node(id)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil || !n.proc.running() {
		c.t.Fatalf("%v node %d: not running", sig, id)
	}
	if err := n.proc.signalAndWait(sig, stop); err != nil {
		c.t.Fatalf("node %d: %v", id, err)
	}
	n.stopped = stop
	fmt.Fprintf(n.log, "=== clustertest: %v node %d at %s ===\n", sig, id, time.Now().Format("15:04:05.000"))
}

// Restart starts node id again on its root (SIGKILLing it first if it still
// runs) and waits for its ready line.
func (c *Cluster) Restart(id topology.NodeID) {
	c.t.Helper()
	c.restart(id, false)
}

// RestartWithEnv starts node id again on its root (SIGKILLing it first if
// it still runs) with env (KEY=VALUE) added to its environment for this
// run only, e.g. CAIRN_FAULTS, and waits for its ready line or its exit:
// it reports whether the node became ready. Later restarts go without env.
func (c *Cluster) RestartWithEnv(id topology.NodeID, env ...string) bool {
	c.t.Helper()
	n := c.Node(id)
	if n.Running() {
		c.Kill(id)
	}
	c.launch(n, env...)
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	select {
	case <-p.stdout.ready:
		return true
	case <-p.exited:
		return false
	case <-time.After(readyTimeout):
		c.t.Fatalf("node %d: no ready line and no exit within %v", n.ID, readyTimeout)
		return false
	}
}

// WipeAndRestart SIGKILLs node id if it runs, deletes its data directory
// (ROOT/data; the rest of ROOT, topology.json included, stays), starts it
// again and waits for its ready line.
func (c *Cluster) WipeAndRestart(id topology.NodeID) {
	c.t.Helper()
	c.restart(id, true)
}

func (c *Cluster) restart(id topology.NodeID, wipe bool) {
	c.t.Helper()
	n := c.Node(id)
	if n.Running() {
		c.Kill(id)
	}
	if wipe {
		if err := os.RemoveAll(filepath.Join(n.Root, "data")); err != nil {
			c.t.Fatalf("wipe node %d: %v", id, err)
		}
		fmt.Fprintf(n.log, "=== clustertest: wiped %s ===\n", filepath.Join(n.Root, "data"))
	}
	c.launch(n)
	c.waitReady(n)
}

// Cut stops the traffic from node from to node to (one direction): Raft
// messages and the calls from makes to to (see the package doc).
func (c *Cluster) Cut(from, to topology.NodeID) {
	c.t.Helper()
	p := c.links[link{from, to}]
	if p == nil {
		c.t.Fatalf("cut %d->%d: no proxy (start the cluster with Options.Proxies)", from, to)
	}
	p.Cut()
}

// CutBetween cuts the links between nodes a and b, both ways: a
// partition that leaves each of them with the other nodes.
func (c *Cluster) CutBetween(a, b topology.NodeID) {
	c.t.Helper()
	c.Cut(a, b)
	c.Cut(b, a)
	for _, id := range []topology.NodeID{a, b} {
		fmt.Fprintf(c.Node(id).log, "=== clustertest: cut node %d from node %d at %s ===\n", a, b, time.Now().Format("15:04:05.000"))
	}
}

// Isolate cuts every link from and to node id.
func (c *Cluster) Isolate(id topology.NodeID) {
	c.t.Helper()
	for _, n := range c.nodes {
		if n.ID != id {
			c.Cut(id, n.ID)
			c.Cut(n.ID, id)
		}
	}
	fmt.Fprintf(c.Node(id).log, "=== clustertest: isolated node %d at %s ===\n", id, time.Now().Format("15:04:05.000"))
}

// Heal reopens every link.
func (c *Cluster) Heal() {
	for _, p := range c.links {
		p.Heal()
	}
	for _, n := range c.nodes {
		fmt.Fprintf(n.log, "=== clustertest: healed every link at %s ===\n", time.Now().Format("15:04:05.000"))
	}
}

// conn returns a gRPC connection to node id's client address.
func (c *Cluster) conn(id topology.NodeID) *grpc.ClientConn {
	c.t.Helper()
	c.connMu.Lock()
	defer c.connMu.Unlock()
	if cc := c.conns[id]; cc != nil {
		return cc
	}
	cc, err := grpc.NewClient(c.Node(id).Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		c.t.Fatalf("dial node %d: %v", id, err)
	}
	c.conns[id] = cc
	return cc
}

// KV returns a raw KV stub for node id: requests go to that node only,
// with no routing or retries.
func (c *Cluster) KV(id topology.NodeID) cairnpb.KVClient {
	c.t.Helper()
	return cairnpb.NewKVClient(c.conn(id))
}

// Header returns a request header for the store with a timeout.
func (c *Cluster) Header(timeout time.Duration) *cairnpb.RequestHeader {
	return &cairnpb.RequestHeader{Store: c.opts.Store, TimeoutMs: timeout.Milliseconds(), TopologySeq: c.topo.Seq}
}

// Client opens a smart client with every node as a helper host and the
// given per-operation timeout. It is closed when the test ends.
func (c *Cluster) Client(timeout time.Duration) *client.Client {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := client.Open(ctx, client.Config{Hosts: c.Addrs(), Store: c.opts.Store, Timeout: timeout})
	if err != nil {
		c.t.Fatalf("client.Open: %v", err)
	}
	c.t.Cleanup(func() { cl.Close() })
	return cl
}

// ShardStatuses asks node id for the state of its replicas.
func (c *Cluster) ShardStatuses(id topology.NodeID) ([]*cairnpb.ShardStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), infoTimeout)
	defer cancel()
	resp, err := c.KV(id).StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetLocalShards(), nil
}

// ShardStatus returns node id's view of shard s.
func (c *Cluster) ShardStatus(id topology.NodeID, s topology.ShardID) (*cairnpb.ShardStatus, error) {
	sts, err := c.ShardStatuses(id)
	if err != nil {
		return nil, err
	}
	for _, st := range sts {
		if topology.ShardID(st.GetShard()) == s {
			return st, nil
		}
	}
	return nil, fmt.Errorf("node %d holds no replica of shard %d", id, s)
}

// Leader asks every running, unstopped node about shard s and returns the
// node that says it leads at the highest term, and that term (0, 0: none).
// A leader cut off from its peers may still believe it leads at an older
// term; the highest term wins.
func (c *Cluster) Leader(s topology.ShardID) (topology.NodeID, uint64) {
	type view struct {
		id   topology.NodeID
		term uint64
	}
	var mu sync.Mutex
	var views []view
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		if !n.serving() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := c.ShardStatus(n.ID, s)
			if err == nil && st.GetIsLeader() {
				mu.Lock()
				views = append(views, view{n.ID, st.GetTerm()})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var best view
	for _, v := range views {
		if v.term > best.term {
			best = v
		}
	}
	return best.id, best.term
}

// WaitLeader waits up to timeout for shard s to have a leader and returns it.
func (c *Cluster) WaitLeader(s topology.ShardID, timeout time.Duration) topology.NodeID {
	c.t.Helper()
	return c.WaitLeaderNot(s, 0, timeout)
}

// WaitLeaderNot waits up to timeout for shard s to be led by a node other
// than not, and returns it.
func (c *Cluster) WaitLeaderNot(s topology.ShardID, not topology.NodeID, timeout time.Duration) topology.NodeID {
	c.t.Helper()
	var lead topology.NodeID
	Eventually(c.t, timeout, fmt.Sprintf("shard %d led by a node other than %d", s, not), func() bool {
		lead, _ = c.Leader(s)
		return lead != 0 && lead != not
	})
	return lead
}

// WaitPreferredLeaders waits up to timeout until every shard is led by its
// preferred replica (the nodes move leadership there once it is caught up).
func (c *Cluster) WaitPreferredLeaders(timeout time.Duration) {
	c.t.Helper()
	Eventually(c.t, timeout, "every shard led by its preferred replica", func() bool {
		for _, s := range c.topo.Shards {
			if lead, _ := c.Leader(s.ID); lead != s.Preferred {
				return false
			}
		}
		return true
	})
}

// WaitApplied waits up to timeout until node id has applied index of shard s.
func (c *Cluster) WaitApplied(id topology.NodeID, s topology.ShardID, index uint64, timeout time.Duration) {
	c.t.Helper()
	var last uint64
	Eventually(c.t, timeout, fmt.Sprintf("node %d applying shard %d up to index %d", id, s, index), func() bool {
		st, err := c.ShardStatus(id, s)
		if err != nil {
			return false
		}
		last = st.GetApplied()
		return last >= index
	})
}

// Followers returns the replicas of shard s other than lead.
func (c *Cluster) Followers(s topology.ShardID, lead topology.NodeID) []topology.NodeID {
	sh, _ := c.topo.Shard(s)
	return slices.DeleteFunc(slices.Clone(sh.Replicas), func(n topology.NodeID) bool { return n == lead })
}

// Eventually polls cond every pollInterval until it holds, and fails the
// test if it does not within timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := Poll(timeout, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// errTimeout is returned by Poll.
var errTimeout = errors.New("condition not met in time")

// Poll polls cond every pollInterval until it holds (nil) or timeout passes.
func Poll(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%v)", errTimeout, timeout)
		}
		time.Sleep(pollInterval) // polling a condition, with a deadline
	}
}
