package robustness

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/test/clustertest"
)

// replicaFaultNames are TestReplicaFaults' scenarios, in the order "all"
// runs them.
var replicaFaultNames = []string{"kill-leader", "kill-joiner", "kill-leaving", "kill-admin", "cut-joiner", "cut-admin", "isolate-leaving"}

var replicaFault = flag.String("replica.fault", "random",
	"TestReplicaFaults: the fault to inject ("+strings.Join(replicaFaultNames, ", ")+"), all of them, or random (one, picked by the seed; make chaos runs all)")

// replicaPause is how long the admin's replica change pauses at the phase
// a scenario strikes at (CAIRN_FAILPOINT_REPLICA_PAUSE).
const replicaPause = 3 * time.Second

// TestReplicaFaults: faults in the middle of a change of shards' replica
// sets (docs/guarantees.md M17). Each scenario deploys 4 nodes through the
// admin shell, every peer link through a proxy: 3 shards of 3 replicas on
// sn1-sn3 (an admin on each) and sn4 deployed with room for 3 replicas,
// hosting nothing. A rebalance over a pool without one of sn1-sn3 (the
// leaving node, from the seed) moves each shard's replica from the leaving
// node to sn4: per shard, join-replica (sn4 opens an empty replica, the
// leader adds it as a learner and sends it a snapshot and the log, then
// promotes it, then the topology lists it) and leave-replica (the leaving
// node hands its leadership off, the leader removes it, then the topology
// drops it), while 6 clients run the workload of TestFailoverUnderLoad on
// 9 keys, 3 per shard. The fault strikes while the admin's first, second
// or third change (from the seed) is paused at the scenario's phase, once
// in the store:
//
//   - kill-leader: SIGKILL the shard's leader while sn4 is a learner
//     catching up; it is restarted once the plan has ended;
//   - kill-joiner: SIGKILL sn4 while it is a learner (its replica is not
//     in its topology yet), and restart it after the pause and 0.5-4s more
//     (from the seed): the admin must reopen it and the leader resume;
//   - kill-leaving: SIGKILL the leaving node once it led the shard no
//     more, before its removal; it is restarted once the plan has ended,
//     and must then drop the replicas the plan removed;
//   - kill-admin: SIGKILL the admin leader while sn4 is a learner: the plan
//     must resume on the new admin leader (show events says so);
//   - cut-joiner: cut the links between the shard's leader and sn4, both
//     ways, once sn4's replica is open and before the leader adds it as a
//     learner, for the pause and 0.5-4s more: the learner cannot catch up,
//     so the plan must not end while the cut lasts, and must end once it
//     heals (cut later, once the learner has caught up, the plan may end
//     during the cut: the group keeps a majority without it);
//   - cut-admin: the same between the admin leader and sn4: the admin
//     cannot see the learner catch up until the cut heals;
//   - isolate-leaving: cut the leaving node off from every peer as its
//     leave begins (it may lead the shard, and it leads another): the
//     others elect leaders, the admin removes it without its answer and
//     publishes without it, and the plan must end while it is cut off;
//     once healed, it must drop the replicas it lost.
//
// The plan must succeed with no operator's help. Then no acknowledged write
// is lost (every key read ABSOLUTE), the history is linearizable per key
// (porcupine), every shard's replicas are the plan's (sn4 in, the leaving
// node out) in the deployed topology and on every node, the leaving node
// serves no shard once it runs the final topology, and every replica holds
// the final values.
//
// -replica.fault picks the scenario: random (the default, as in make test)
// runs one chosen by the seed, all runs the seven (make chaos).
func TestReplicaFaults(t *testing.T) {
	runScenarios(t, "TestReplicaFaults", "replica.fault", replicaFaultNames, *replicaFault, 78, runReplicaFault)
}

// replicaPausedRE matches the admin's log line as a replica change pauses.
var replicaPausedRE = regexp.MustCompile(`msg="failpoint: replica change paused"[^\n]* phase=(\w+) shard=rg(\d+) sn=sn(\d+)`)

func runReplicaFault(t *testing.T, fault string, seed uint64) {
	rng := clustertest.Rand(seed, 100+uint64(slices.Index(replicaFaultNames, fault))) // each scenario its own draws
	start := time.Now()
	phase := map[string]string{"kill-leaving": "handoff", "isolate-leaving": "leave", "cut-joiner": "join"}[fault]
	if phase == "" {
		phase = "learner"
	}
	// The pause comes at the first, second or third shard's change (from
	// the seed), so that the shard's leader is a different node; the
	// leaving node is isolated at the first, before the leave of the shard
	// it leads.
	skip := rng.IntN(3)
	if fault == "isolate-leaving" {
		skip = 0
	}
	c := clustertest.Start(t, clustertest.Options{Nodes: 4, Spare: 1, Shards: 3, RF: 3, Partitions: 30, Proxies: true, Deployed: true,
		Env: []string{fmt.Sprintf("CAIRN_FAILPOINT_REPLICA_PAUSE=%s=%v,skip=%d,once=%s", phase, replicaPause, skip, filepath.Join(t.TempDir(), "paused"))}})
	topo := c.Topology()
	const joiner = topology.NodeID(4)
	// The leaving node is not the admin leader's, so that kill-leaving and
	// kill-admin strike different roles.
	adminLead := adminLeader(t, c)
	var others []topology.NodeID
	for id := topology.NodeID(1); id <= 3; id++ {
		if id != adminLead {
			others = append(others, id)
		}
	}
	leaving := others[rng.IntN(len(others))]
	t.Logf("store deployed in %v: %d shards on sn1-sn3, sn4 spare; admin leader sn%d; sn%d's replicas move to sn%d",
		time.Since(start).Round(time.Millisecond), len(topo.Shards), adminLead, leaving, joiner)

	wkeys := keysOnShards(topo, "replica", 3)
	h := clustertest.NewHistory()
	cl := c.Client(opTimeout)
	const clients = 6
	w := startWorkload(cl, h, topo, wkeys, clients, seed)
	defer w.Stop()
	w.waitAcked(t, 150, "before the replica changes")

	script := []string{"pool create -name Q"}
	for _, n := range c.Nodes() {
		if n.ID != leaving {
			script = append(script, fmt.Sprintf("pool join -name Q -sn sn%d", n.ID))
		}
	}
	script = append(script, "topology clone -current -name R", "topology rebalance -name R -pool Q")
	for _, line := range script {
		if out, err := c.Admin(failoverTimeout, strings.Fields(line)...); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	plan := startPlan(t, c, "deploy-topology", "-name", "R")
	planStart := time.Now()

	var shard topology.ShardID
	clustertest.Eventually(t, 60*time.Second, "the admin pausing a replica change at "+phase, func() bool {
		for _, n := range c.Nodes() {
			if m := replicaPausedRE.FindStringSubmatch(n.RunLog()); m != nil && m[1] == phase {
				id, _ := strconv.ParseUint(m[2], 10, 64)
				shard = topology.ShardID(id)
				return true
			}
		}
		return false
	})
	faultAt := h.Now()
	var victim topology.NodeID
	switch fault {
	case "kill-leader", "cut-joiner":
		victim = c.WaitLeader(shard, failoverTimeout)
	case "kill-joiner":
		victim = joiner
	case "kill-leaving", "isolate-leaving":
		victim = leaving
	case "kill-admin", "cut-admin":
		victim = adminLeader(t, c)
	}
	t.Logf("%s: the change of %s's replica on sn%d (change %d of 3) paused at %s %v after the plan started; striking sn%d at %v with %d puts acknowledged",
		fault, topology.ShardName(shard), map[bool]topology.NodeID{true: joiner, false: leaving}[phase == "learner" || phase == "join"], skip+1, phase,
		time.Since(planStart).Round(time.Millisecond), victim, time.Duration(faultAt), w.acked.Load())
	switch fault {
	case "cut-joiner":
		cutLink(t, c, rng, victim, joiner, plan, replicaPause, "the learner's catch-up")
	case "cut-admin":
		cutLink(t, c, rng, victim, joiner, plan, replicaPause, "the admin's calls to the learner")
	case "isolate-leaving":
		c.Isolate(victim)
	default:
		c.Kill(victim)
	}
	restartNow := fault == "kill-joiner"
	if restartNow {
		hold := replicaPause + time.Duration(500+rng.IntN(3500))*time.Millisecond
		time.Sleep(hold) // the fault's length, from the seed: not a wait for anything
		c.Restart(victim)
		t.Logf("sn%d restarted after %v down", victim, hold.Round(time.Millisecond))
	}

	state := waitPlan(t, c, plan, planTimeout)
	t.Logf("plan %d %s %v after the fault", plan, state, time.Duration(h.Now()-faultAt).Round(time.Millisecond))
	if state != "SUCCEEDED" {
		out, _ := c.Admin(failoverTimeout, "show", "plan", "-id", strconv.Itoa(plan))
		t.Fatalf("plan %d ended %s after %s:\n%s", plan, state, fault, out)
	}
	w.waitAcked(t, 100, "after the replica changes")
	switch {
	case fault == "isolate-leaving":
		c.Heal()
	case strings.HasPrefix(fault, "kill-") && !restartNow:
		c.Restart(victim)
	}
	w.waitAcked(t, 100, "after the node came back")
	w.Stop()

	finals, ops := checkHistory(t, cl, h, wkeys, clients)

	final := c.ShownTopology()
	checkReplicaSets(t, c, topo, final, leaving, joiner)
	checkReplicasAgree(t, c, wkeys, finals)
	if fault == "kill-admin" {
		checkPlanResumed(t, c, plan)
	}
	logTrace(t, c, replicaLogRE, "the replica changes")
	t.Logf("summary: %s: %d ops, %d puts acknowledged, lost 0, linearizable; sn%d's replicas on sn%d; took %v",
		fault, len(ops), w.acked.Load(), leaving, joiner, time.Since(start).Round(time.Millisecond))
}

// startPlan starts plan kind with args and returns its id.
func startPlan(t *testing.T, c *clustertest.Cluster, kind string, args ...string) int {
	t.Helper()
	out, err := c.Admin(failoverTimeout, append([]string{"-json", "plan", kind}, args...)...)
	var started struct {
		PlanID int `json:"plan_id"`
	}
	if err != nil || json.Unmarshal([]byte(out), &started) != nil || started.PlanID == 0 {
		t.Fatalf("plan %s: %v\n%s", kind, err, out)
	}
	return started.PlanID
}

// checkReplicaSets checks that final moved every replica of leaving in
// before onto joiner and changed nothing else, that every node runs final
// (a killed one gets it from the admin once restarted), and that each node
// serves exactly the shards final gives it: joiner all of leaving's, and
// leaving none.
func checkReplicaSets(t *testing.T, c *clustertest.Cluster, before, final *topology.Topology, leaving, joiner topology.NodeID) {
	t.Helper()
	hosts := map[topology.NodeID][]uint64{}
	for _, s := range before.Shards {
		want := slices.Clone(s.Replicas)
		if i := slices.Index(want, leaving); i >= 0 {
			want[i] = joiner
		}
		slices.Sort(want)
		sh, ok := final.Shard(s.ID)
		got := slices.Sorted(slices.Values(sh.Replicas))
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%s's replicas in the deployed topology: %v, want %v", topology.ShardName(s.ID), got, want)
		}
		for _, n := range want {
			hosts[n] = append(hosts[n], uint64(s.ID))
		}
	}
	for _, n := range c.Nodes() {
		clustertest.Eventually(t, catchUpTimeout, fmt.Sprintf("sn%d running topology %d and serving shards %v", n.ID, final.Seq, hosts[n.ID]), func() bool {
			seq, err := c.TopologySeq(n.ID)
			if err != nil || seq < final.Seq {
				return false
			}
			sts, err := c.ShardStatuses(n.ID)
			if err != nil {
				return false
			}
			var serving []uint64
			for _, st := range sts {
				serving = append(serving, st.GetShard())
			}
			slices.Sort(serving)
			return slices.Equal(serving, hosts[n.ID])
		})
	}
}

// replicaLogRE matches the node log lines that trace the replica changes.
var replicaLogRE = regexp.MustCompile(`(?m)^.*(msg="(failpoint: replica change paused|plan task failed|replica set changed|opened a replica joining its shard[^"]*|opened the replica of a shard this node joined|dropped the replica of a shard this node no longer hosts|installing snapshot)"|=== clustertest: (SIGKILL|isolated|cut|healed|run)).*$`)
