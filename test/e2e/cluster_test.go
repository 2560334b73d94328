package e2e

// `cairn cluster` end to end: start a 3-node store (rf 3, 2 shards) of real
// `cairn sn` processes, read and write through the leaders, SIGKILL a
// leader and time the failover, restart the node and watch it catch up,
// stop everything and check that no process is left.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"google.golang.org/grpc/codes"
)

const (
	// clusterCmdTimeout bounds one `cairn cluster` command (start waits
	// for elections; stop may wait for a node's shutdown grace).
	clusterCmdTimeout = 45 * time.Second
	// failoverTimeout bounds the wait for a new leader after a kill.
	failoverTimeout = 10 * time.Second
	// catchUpTimeout bounds the wait for a restarted node to catch up.
	catchUpTimeout = 15 * time.Second
	// pollInterval is how often conditions on other processes are checked.
	pollInterval = 10 * time.Millisecond
)

// clusterStatusJSON is `cairn cluster status --json`, the parts the test reads.
type clusterStatusJSON struct {
	Healthy  bool     `json:"healthy"`
	Problems []string `json:"problems"`
	Nodes    []struct {
		ID    uint64   `json:"id"`
		Addr  string   `json:"addr"`
		PID   int      `json:"pid"`
		State string   `json:"state"`
		Leads []uint64 `json:"leads"`
	} `json:"nodes"`
	Shards []struct {
		ID       uint64 `json:"id"`
		Leader   uint64 `json:"leader"`
		Term     uint64 `json:"term"`
		Led      bool   `json:"led"`
		Replicas []struct {
			Node    uint64 `json:"node"`
			Up      bool   `json:"up"`
			Applied uint64 `json:"applied"`
		} `json:"replicas"`
	} `json:"shards"`
}

func (s *clusterStatusJSON) node(id uint64) (state string, pid int, addr string) {
	for _, n := range s.Nodes {
		if n.ID == id {
			return n.State, n.PID, n.Addr
		}
	}
	return "", 0, ""
}

func (s *clusterStatusJSON) shard(id uint64) (leader uint64, term uint64, led bool) {
	for _, sh := range s.Shards {
		if sh.ID == id {
			return sh.Leader, sh.Term, sh.Led
		}
	}
	return 0, 0, false
}

// runCairn runs the binary to completion and returns its exit code, stdout
// and stderr.
func runCairn(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	p := startProc(t, strings.Join(args[:min(2, len(args))], " "), args...)
	code, ok := p.waitExit(clusterCmdTimeout)
	if !ok {
		p.kill()
		t.Fatalf("cairn %s: still running after %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), clusterCmdTimeout, p.stdout.String(), p.stderr.String())
	}
	return code, p.stdout.String(), p.stderr.String()
}

// mustCairn runs the binary and fails the test unless it exits 0.
func mustCairn(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCairn(t, args...)
	if code != 0 {
		t.Fatalf("cairn %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// clusterStatus runs `cairn cluster status --json`.
func clusterStatus(t *testing.T, dir string) (int, *clusterStatusJSON) {
	t.Helper()
	code, out, errOut := runCairn(t, "cluster", "status", "--root", dir, "--json")
	var st clusterStatusJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("cluster status --json (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	if (code == 0) != st.Healthy {
		t.Fatalf("cluster status: exit %d but healthy=%v; problems %v", code, st.Healthy, st.Problems)
	}
	return code, &st
}

// waitStatus polls `cairn cluster status` until ok holds or the deadline
// passes.
func waitStatus(t *testing.T, dir string, d time.Duration, what string, ok func(*clusterStatusJSON) bool) *clusterStatusJSON {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		_, st := clusterStatus(t, dir)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster status: not %s within %v; last: %+v", what, d, st)
		}
	}
}

// clusterFile reads the pids and addresses recorded in DIR/cluster.json.
type clusterFile struct {
	SNFlags []string `json:"sn_flags"`
	Nodes   []struct {
		ID   uint64 `json:"id"`
		Addr string `json:"addr"`
		Root string `json:"root"`
		PID  int    `json:"pid"`
	} `json:"nodes"`
}

func readClusterFile(t *testing.T, dir string) *clusterFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f clusterFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("cluster.json: %v", err)
	}
	return &f
}

// processAlive reports whether pid is a live process (not a zombie) whose
// command line mentions root, and describes it.
func processAlive(pid int, root string) (bool, string) {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false, "gone"
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false, "gone"
	}
	if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false, "zombie"
	}
	cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	line := strings.ReplaceAll(string(cmd), "\x00", " ")
	return strings.Contains(line, root), line
}

// kvNodes is a client per node address.
type kvNodes struct {
	t       *testing.T
	addrs   []string
	clients map[string]cairnpb.KVClient
}

func dialNodes(t *testing.T, addrs []string) *kvNodes {
	n := &kvNodes{t: t, addrs: addrs, clients: map[string]cairnpb.KVClient{}}
	for _, a := range addrs {
		n.clients[a] = dial(t, a)
	}
	return n
}

// onLeader runs call against nodes until one serves it, following
// not_leader hints and skipping unreachable nodes, within a deadline.
func (n *kvNodes) onLeader(what string, call func(context.Context, cairnpb.KVClient) error) {
	n.t.Helper()
	deadline := time.Now().Add(failoverTimeout)
	next, hint := 0, ""
	var last error
	for time.Now().Before(deadline) {
		addr := hint
		if addr == "" {
			addr = n.addrs[next%len(n.addrs)]
			next++
		}
		hint = ""
		ctx, cancel := rpcCtx()
		err := call(ctx, n.clients[addr])
		cancel()
		if err == nil {
			return
		}
		last = err
		st, d := errorDetail(err)
		switch {
		case d.GetKind() == "not_leader" && d.GetLeaderAddr() != "":
			hint = d.GetLeaderAddr()
		case d.GetKind() == "not_leader", st.Code() == codes.Unavailable, st.Code() == codes.DeadlineExceeded:
			// an election is under way or the node is gone: try the next
			// one, pausing a little once every node has been tried
			if next%len(n.addrs) == 0 {
				<-time.After(pollInterval)
			}
		default:
			n.t.Fatalf("%s at %s: %v", what, addr, err)
		}
	}
	n.t.Fatalf("%s: no leader served it within %v; last error: %v", what, failoverTimeout, last)
}

func (n *kvNodes) put(k *cairnpb.Key, v string) {
	n.t.Helper()
	n.onLeader(fmt.Sprintf("put %v", k), func(ctx context.Context, c cairnpb.KVClient) error {
		return put(ctx, c, k, []byte(v), cairnpb.SyncPolicy_SYNC_POLICY_WRITE_NO_SYNC)
	})
}

// getAbsolute reads k on its shard's leader.
func (n *kvNodes) getAbsolute(k *cairnpb.Key) (string, bool) {
	n.t.Helper()
	var resp *cairnpb.GetResponse
	n.onLeader(fmt.Sprintf("get %v", k), func(ctx context.Context, c cairnpb.KVClient) error {
		var err error
		resp, err = c.Get(ctx, &cairnpb.GetRequest{Key: k, Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE}})
		return err
	})
	return string(resp.GetRecord().GetValue()), resp.GetFound()
}

// localShards returns the StoreInfo local shard views of the node at addr.
func (n *kvNodes) localShards(addr string) ([]*cairnpb.ShardStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	info, err := n.clients[addr].StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
	return info.GetLocalShards(), err
}

func TestClusterStartStatusStop(t *testing.T) {
	begin := time.Now()
	dir := t.TempDir()
	seenPIDs := map[int]string{} // every node pid, with its root
	t.Cleanup(func() { cleanupCluster(t, dir, seenPIDs) })

	// A status on an empty directory says how to start a cluster.
	code, _, errOut := runCairn(t, "cluster", "status", "--root", dir)
	if code != 1 || !strings.Contains(errOut, "run 'cairn cluster start --root") {
		t.Fatalf("status without a cluster: exit %d, stderr %q", code, errOut)
	}

	out := mustCairn(t, "cluster", "start", "--root", dir, "--nodes", "3", "--rf", "3", "--shards", "2", "--partitions", "100")
	t.Logf("cluster start (%.1fs):\n%s", time.Since(begin).Seconds(), out)
	f := readClusterFile(t, dir)
	var addrs []string
	for _, n := range f.Nodes {
		addrs = append(addrs, n.Addr)
		seenPIDs[n.PID] = n.Root
	}
	if want := "cairn kv --hosts " + strings.Join(addrs, ",") + " --store kvstore "; !strings.Contains(out, want) {
		t.Errorf("start output lacks %q", want)
	}
	// The nodes share this machine's cores (unless the environment says).
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		want := "GOMAXPROCS=" + strconv.Itoa(max(1, runtime.NumCPU()/3))
		for _, n := range f.Nodes {
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", n.PID))
			if err != nil || !slices.Contains(strings.Split(string(env), "\x00"), want) {
				t.Errorf("node %d (pid %d) runs without %s (%v)", n.ID, n.PID, want, err)
			}
		}
	}

	code, st := clusterStatus(t, dir)
	if code != 0 || len(st.Nodes) != 3 || len(st.Shards) != 2 {
		t.Fatalf("status after start: exit %d, %+v", code, st)
	}
	for _, n := range st.Nodes {
		if n.State != "up" || n.PID == 0 {
			t.Errorf("node %d: %s, pid %d", n.ID, n.State, n.PID)
		}
	}
	for _, sh := range st.Shards {
		if !sh.Led || sh.Leader == 0 {
			t.Errorf("shard %d: no leader: %+v", sh.ID, sh)
		}
	}

	// A second start finds everything running; a disagreeing one is refused.
	if out := mustCairn(t, "cluster", "start", "--root", dir); strings.Count(out, "already running") != 3 {
		t.Errorf("second start:\n%s", out)
	}
	code, _, errOut = runCairn(t, "cluster", "start", "--root", dir, "--nodes", "5")
	if code != 2 || !strings.Contains(errOut, "--nodes 5 (the cluster has 3)") {
		t.Errorf("start --nodes 5 on a 3-node cluster: exit %d, stderr %q", code, errOut)
	}

	// Writes and reads through the leaders.
	kv := dialNodes(t, addrs)
	records := map[string]string{}
	recordKey := func(name string) *cairnpb.Key { return key([]string{"cluster", name}, "v") }
	write := func(name, value string) {
		kv.put(recordKey(name), value)
		records[name] = value
	}
	for i := range 10 {
		write("user"+strconv.Itoa(i), "before-"+strconv.Itoa(i))
	}
	for name, want := range records {
		if got, found := kv.getAbsolute(recordKey(name)); !found || got != want {
			t.Fatalf("get %s: %q, %v; want %q", name, got, found, want)
		}
	}

	// Kill the leader of shard 1 and time the election of a new one.
	victim, oldTerm, _ := st.shard(1)
	victimState, victimPID, victimAddr := st.node(victim)
	if victimState != "up" {
		t.Fatalf("shard 1's leader %d is %s", victim, victimState)
	}
	killed := time.Now()
	out = mustCairn(t, "cluster", "kill", "--root", dir, "--node", strconv.FormatUint(victim, 10))
	killDone := time.Since(killed)
	if alive, what := processAlive(victimPID, f.Nodes[victim-1].Root); alive {
		t.Fatalf("node %d (pid %d) still alive after cluster kill: %s", victim, victimPID, what)
	}
	var newLeader uint64
	var newTerm uint64
	deadline := time.Now().Add(failoverTimeout)
	for newLeader == 0 {
		for _, a := range addrs {
			if a == victimAddr {
				continue
			}
			views, err := kv.localShards(a)
			if err != nil {
				continue
			}
			for _, v := range views {
				if v.GetShard() == 1 && v.GetIsLeader() && v.GetTerm() > oldTerm {
					newLeader, newTerm = v.GetLeader(), v.GetTerm()
				}
			}
		}
		if newLeader == 0 && time.Now().After(deadline) {
			t.Fatalf("no new leader of shard 1 within %v of killing node %d", failoverTimeout, victim)
		}
		if newLeader == 0 {
			<-time.After(pollInterval)
		}
	}
	failover := time.Since(killed)
	t.Logf("FAILOVER: node %d (leader of shard 1, term %d) SIGKILLed; node %d leads at term %d after %v (the kill command took %v)",
		victim, oldTerm, newLeader, newTerm, failover.Round(time.Millisecond), killDone.Round(time.Millisecond))

	st = waitStatus(t, dir, failoverTimeout, "showing the failover", func(s *clusterStatusJSON) bool {
		state, _, _ := s.node(victim)
		leader, _, led := s.shard(1)
		return state == "down" && led && leader != victim
	})
	if st.Healthy {
		t.Errorf("status is healthy with node %d down", victim)
	}
	if !strings.Contains(strings.Join(st.Problems, "\n"), fmt.Sprintf("node %d is down", victim)) {
		t.Errorf("problems do not name node %d: %v", victim, st.Problems)
	}

	// Write more while the node is down, then restart it.
	for i := range 10 {
		write("user"+strconv.Itoa(i), "after-"+strconv.Itoa(i))
		write("late"+strconv.Itoa(i), "late-"+strconv.Itoa(i))
	}
	target := map[uint64]uint64{} // shard -> applied index on its leader now
	for _, a := range addrs {
		if a == victimAddr {
			continue
		}
		views, err := kv.localShards(a)
		if err != nil {
			t.Fatalf("StoreInfo %s: %v", a, err)
		}
		for _, v := range views {
			if v.GetIsLeader() {
				target[v.GetShard()] = v.GetApplied()
			}
		}
	}
	if len(target) != 2 {
		t.Fatalf("leaders' applied indexes: %v; want both shards", target)
	}
	restarted := time.Now()
	out = mustCairn(t, "cluster", "start", "--root", dir, "--node", strconv.FormatUint(victim, 10))
	t.Logf("cluster start --node %d (%.1fs):\n%s", victim, time.Since(restarted).Seconds(), out)
	if strings.Contains(out, "already running") {
		t.Errorf("restart of node %d touched other nodes:\n%s", victim, out)
	}
	f = readClusterFile(t, dir)
	seenPIDs[f.Nodes[victim-1].PID] = f.Nodes[victim-1].Root

	deadline = time.Now().Add(catchUpTimeout)
	for {
		views, err := kv.localShards(victimAddr)
		caught := err == nil && len(views) == 2
		for _, v := range views {
			if v.GetApplied() < target[v.GetShard()] {
				caught = false
			}
		}
		if caught {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d did not catch up within %v: %v (%v); want applied %v", victim, catchUpTimeout, views, err, target)
		}
		<-time.After(pollInterval)
	}
	t.Logf("node %d caught up %v after its restart began", victim, time.Since(restarted).Round(time.Millisecond))
	// Its own copy of every record, read locally, is current.
	c := kv.clients[victimAddr]
	for name, want := range records {
		ctx, cancel := rpcCtx()
		resp, err := c.Get(ctx, &cairnpb.GetRequest{Key: recordKey(name), Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}})
		cancel()
		if err != nil || !resp.GetFound() || string(resp.GetRecord().GetValue()) != want {
			t.Errorf("restarted node %d, %s: %q, found %v, %v; want %q", victim, name, resp.GetRecord().GetValue(), resp.GetFound(), err, want)
		}
	}
	waitStatus(t, dir, failoverTimeout, "healthy", func(s *clusterStatusJSON) bool { return s.Healthy })

	// Stop everything; no process may be left.
	stopped := time.Now()
	out = mustCairn(t, "cluster", "stop", "--root", dir)
	t.Logf("cluster stop (%.1fs):\n%s", time.Since(stopped).Seconds(), out)
	for pid, root := range seenPIDs {
		if alive, what := processAlive(pid, root); alive {
			t.Errorf("pid %d (%s) is still running after cluster stop", pid, what)
		}
	}
	code, st = clusterStatus(t, dir)
	if code != 1 {
		t.Errorf("status after stop: exit %d", code)
	}
	for _, n := range st.Nodes {
		if n.State != "down" {
			t.Errorf("after stop node %d is %s", n.ID, n.State)
		}
	}
	t.Logf("whole test: %.1fs", time.Since(begin).Seconds())
}

// cleanupCluster stops whatever the test left running: through the binary,
// then with SIGKILL for any recorded pid that still runs our node.
func cleanupCluster(t *testing.T, dir string, pids map[int]string) {
	if _, err := os.Stat(filepath.Join(dir, "cluster.json")); err != nil {
		return
	}
	var left []int
	for pid, root := range pids {
		if alive, _ := processAlive(pid, root); alive {
			left = append(left, pid)
		}
	}
	if len(left) == 0 {
		return
	}
	t.Logf("cleanup: nodes %v still run; stopping them", left)
	runCairn(t, "cluster", "stop", "--root", dir, "--timeout", "2s")
	for pid, root := range pids {
		if alive, _ := processAlive(pid, root); alive {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
