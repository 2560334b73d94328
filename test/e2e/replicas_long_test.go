package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/topology"
)

var replicasLong = flag.Bool("replicas.long", false, "run TestReplicaChangesLong (make replicas)")

// TestReplicaChangesLong is the long variant of TestReplaceFailedNode
// (make replicas; skipped otherwise): under the same write load, on the
// white paper's store with three admins,
//   - topology change-repfactor raises RF from 3 to 5 onto two new nodes,
//     with the admin leader SIGKILLed (and restarted) after the plan's
//     first replica change: the next admin leader resumes the plan;
//   - sn3, which hosts an admin, is SIGKILLed with its root deleted and
//     plan migrate-sn moves its replicas and its admin onto a new node;
//     the leader of rg2 is SIGKILLed (and restarted) once rg1 is done, just
//     before rg2's replica change;
//   - topology rebalance over a pool without sn1 moves sn1's replicas to a
//     seventh node (sn1 leads some shards, so leadership moves first).
//
// After each, every shard has the expected replicas and verify
// configuration has no violation; at the end every acknowledged write reads
// back with ABSOLUTE consistency and from every node hosting its shard.
func TestReplicaChangesLong(t *testing.T) {
	if !*replicasLong {
		t.Skip("long: make replicas (-replicas.long)")
	}
	seed := *replaceSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -replace.seed=%d)", seed, seed)
	nodes := initNodes(t, 3)
	for _, sn := range nodes { // so that the admin leader's kill lands mid-plan
		sn.env = []string{"CAIRN_FAILPOINT_TASK_DELAY=200ms"}
	}
	deployWhitePaperOn(t, nodes)
	mustAdmin(t, nodes[0], "plan deploy-admin -sn sn2 -wait", "plan deploy-admin -sn sn3 -wait")
	c := openStore(t, nodes)
	load := startLoad(c, "long", seed, 2, 256, true)
	stopped := false
	defer func() {
		if !stopped {
			load.end()
		}
	}()
	load.waitAcked(t, 200, "before the changes")
	deploy := func(n int) []*storageNode {
		more := initNodes(t, n)
		var script []string
		for _, sn := range more {
			sn.start(t)
			script = append(script, fmt.Sprintf("plan deploy-sn -znname MyZone -host 127.0.0.1 -port %d -wait", sn.port))
		}
		mustAdmin(t, nodes[0], script...)
		return more
	}

	more := deploy(2) // sn4, sn5
	mustAdmin(t, nodes[0], "pool join -name MyPool -sn sn4", "pool join -name MyPool -sn sn5",
		"topology clone -current -name RF5", "topology change-repfactor -name RF5 -pool MyPool -zn zn1 -rf 5", "topology preview -name RF5")
	timed(t, "change-repfactor 3 -> 5, the admin leader SIGKILLed mid-plan", func() { killAdminMidPlan(t, nodes, "plan", "deploy-topology", "-name", "RF5") })
	checkReplicas(t, nodes[0], 5, nil)
	checkClean(t, nodes[0])

	nodes[2].kill()
	if err := os.RemoveAll(nodes[2].root); err != nil {
		t.Fatal(err)
	}
	sn6 := deploy(1)[0]
	byID := map[uint64]*storageNode{1: nodes[0], 2: nodes[1], 4: more[0], 5: more[1], 6: sn6}
	timed(t, "migrate-sn sn3 -> sn6 (with its admin), rg2's leader SIGKILLed mid-plan", func() {
		killShardLeaderMidPlan(t, byID, "rg2", 3, "plan", "migrate-sn", "-from", "sn3", "-to", "sn6")
	})
	runPlan(t, nodes[0], time.Minute, "plan", "remove-sn", "-sn", "sn3")
	checkReplicas(t, nodes[0], 5, []topology.NodeID{3})
	if ids, _ := showAdmins(t, nodes[0]); !slices.Contains(ids, 6) || slices.Contains(ids, 3) {
		t.Errorf("admins after migrate-sn: %v, want sn6's in place of sn3's", ids)
	}
	checkClean(t, nodes[0])

	sn7 := deploy(1)[0]
	mustAdmin(t, nodes[0], "pool create -name NoSN1", "pool join -name NoSN1 -sn sn2", "pool join -name NoSN1 -sn sn4",
		"pool join -name NoSN1 -sn sn5", "pool join -name NoSN1 -sn sn6", "pool join -name NoSN1 -sn sn7",
		"topology clone -current -name Reb", "topology rebalance -name Reb -pool NoSN1", "topology preview -name Reb")
	timed(t, "rebalance off sn1", func() { runPlan(t, nodes[0], 3*time.Minute, "plan", "deploy-topology", "-name", "Reb") })
	checkReplicas(t, nodes[0], 5, []topology.NodeID{1, 3})
	checkClean(t, nodes[0])

	final := load.end()
	stopped = true
	readAbsolute(t, c, final)
	readHosts(t, []*storageNode{nodes[0], nodes[1], more[0], more[1], sn6, sn7}, final)
	t.Logf("summary: acked=%d lost=0 failed attempts (retried): %s %s", len(final), load.errors(), load.firstErrors())
}

// killAdminMidPlan starts a plan, SIGKILLs the admin leader once the plan's
// first replica change succeeded, restarts that node, and waits until the
// next admin leader has resumed the plan and it succeeded.
func killAdminMidPlan(t *testing.T, nodes []*storageNode, args ...string) {
	t.Helper()
	id := startPlanJSON(t, nodes[0], args...)
	waitFor(t, time.Minute, "the plan's first replica change", func() bool {
		p := showPlanJSON(t, nodes[0], id)
		return p.Plan.Tasks[2].State == "SUCCEEDED" || p.State != "RUNNING"
	})
	_, leader := showAdmins(t, nodes[0])
	p := showPlanJSON(t, nodes[0], id)
	victim := nodes[leader-1]
	victim.kill()
	t.Logf("SIGKILLed the admin leader sn%d with the plan %s", leader, p.State)
	other := nodes[leader%3]
	victim.start(t)
	waitFor(t, 2*time.Minute, "the plan to be resumed and succeed", func() bool {
		code, out, _ := admin(t, other, "-json", "show", "plan", "-id", strconv.Itoa(id))
		var q planDocJSON
		if code != 0 || json.Unmarshal([]byte(out), &q) != nil {
			return false
		}
		if q.State == "ERROR" || q.State == "FAILED" {
			t.Fatalf("plan %d: %s %s", id, q.State, q.Plan.Error)
		}
		return q.State == "SUCCEEDED"
	})
}

// killShardLeaderMidPlan starts a plan, SIGKILLs the leader of shard once
// the plan's task afterTask succeeded, restarts it, and waits until the
// plan succeeded.
func killShardLeaderMidPlan(t *testing.T, byID map[uint64]*storageNode, shard string, afterTask int, args ...string) {
	t.Helper()
	ask := byID[1]
	id := startPlanJSON(t, ask, args...)
	waitFor(t, time.Minute, fmt.Sprintf("task %d of plan %d", afterTask+1, id), func() bool {
		p := showPlanJSON(t, ask, id)
		return p.Plan.Tasks[afterTask].State == "SUCCEEDED" || p.State != "RUNNING"
	})
	var victim uint64
	waitFor(t, time.Minute, shard+"'s leader", func() bool {
		_, out, _ := admin(t, ask, "-json", "ping")
		var r struct {
			StorageNodes []struct {
				SN       uint64 `json:"sn"`
				Replicas []struct {
					Service, Status string
				} `json:"replicas"`
			} `json:"storage_nodes"`
		}
		if json.Unmarshal([]byte(out), &r) != nil {
			return false
		}
		for _, n := range r.StorageNodes {
			for _, rep := range n.Replicas {
				if strings.HasPrefix(rep.Service, shard+"-") && strings.Contains(rep.Status, "MASTER") {
					victim = n.SN
				}
			}
		}
		return victim != 0
	})
	p := showPlanJSON(t, ask, id)
	byID[victim].kill()
	t.Logf("SIGKILLed sn%d, %s's leader, with the plan %s", victim, shard, p.State)
	byID[victim].start(t)
	waitFor(t, 2*time.Minute, "the plan to succeed", func() bool {
		code, out, _ := admin(t, ask, "-json", "show", "plan", "-id", strconv.Itoa(id))
		var q planDocJSON
		if code != 0 || json.Unmarshal([]byte(out), &q) != nil {
			return false
		}
		if q.State == "ERROR" || q.State == "FAILED" {
			t.Fatalf("plan %d: %s %s", id, q.State, q.Plan.Error)
		}
		return q.State == "SUCCEEDED"
	})
}

func mustAdmin(t *testing.T, sn *storageNode, lines ...string) {
	t.Helper()
	if code, out, errOut := admin(t, sn, "-script", writeScript(t, lines)); code != 0 {
		t.Fatalf("%v: exit %d\n%s\n%s", lines, code, out, errOut)
	}
}

func timed(t *testing.T, what string, fn func()) {
	t.Helper()
	start := time.Now()
	fn()
	t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
}

// checkReplicas checks that every deployed shard has rf replicas, none on
// the nodes not.
func checkReplicas(t *testing.T, sn *storageNode, rf int, not []topology.NodeID) {
	t.Helper()
	_, out, _ := admin(t, sn, "-json", "show", "topology")
	for _, sh := range decodeShownTopology(t, out).Shards {
		if len(sh.Replicas) != rf || slices.ContainsFunc(sh.Replicas, func(n topology.NodeID) bool { return slices.Contains(not, n) }) {
			t.Errorf("%s's replicas: %v, want %d and none on %v", topology.ShardName(sh.ID), sh.Replicas, rf, not)
		}
	}
}

func checkClean(t *testing.T, sn *storageNode) {
	t.Helper()
	var out string
	waitFor(t, time.Minute, "verify configuration clean", func() bool {
		var code int
		code, out, _ = admin(t, sn, "verify", "configuration")
		return code == 0 && strings.Contains(out, "0 violations")
	})
	t.Logf("verify configuration:\n%s", out)
}
