package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// TestRepairStuckGuards: a stuck replica is due once it has been stuck for
// the wait, and not while a plan runs, nor when it holds a restored
// history, nor when its shard would be left without a healthy majority; once rebuilt, it is not due again within
// the back-off, and a spell that ends restarts the wait.
func TestRepairStuckGuards(t *testing.T) {
	const after = 30 * time.Second
	sh := topology.Shard{ID: 1, Replicas: []topology.NodeID{1, 2, 3}}
	m := &Meta{Deployed: &topology.Topology{Shards: []topology.Shard{sh}}}
	info := func(st *controlpb.ShardState) *controlpb.NodeInfo {
		st.Shard, st.Running = 1, true
		return &controlpb.NodeInfo{Shards: []*controlpb.ShardState{st}, Storage: &controlpb.StorageInfo{State: "ok"}}
	}
	stuck := func() map[uint64]*controlpb.NodeInfo {
		return map[uint64]*controlpb.NodeInfo{
			1: info(&controlpb.ShardState{IsLeader: true, Applied: 100, Stuck: map[uint64]string{3: "it acknowledges entries its leader never had"}}),
			2: info(&controlpb.ShardState{Applied: 100}),
			3: info(&controlpb.ShardState{Applied: 7}),
		}
	}
	marks := map[string]*repairMark{}
	t0 := time.Unix(1_000_000, 0)
	due := func(infos map[uint64]*controlpb.NodeInfo, at time.Duration) ([]stuckRepair, map[string]string) {
		return dueRepairs(m, infos, marks, t0.Add(at), after)
	}

	if d, _ := due(stuck(), 0); len(d) != 0 {
		t.Fatalf("at once: %v due, want none before %v", d, after)
	}
	if d, _ := due(stuck(), after-time.Second); len(d) != 0 {
		t.Fatalf("before the wait: %v due", d)
	}
	m.Plans = []*Plan{{ID: 7, Name: "deploy-topology", State: Running}}
	if d, held := due(stuck(), after); len(d) != 0 || !strings.Contains(held["rg1-rn3"], "plan 7 (deploy-topology) is running") {
		t.Fatalf("while a plan runs: due %v, held %v", d, held)
	}
	m.Plans = nil
	restored := stuck()
	restored[3].Shards[0].Applied = 100 + 1<<40
	if d, held := due(restored, after); len(d) != 0 || held["rg1-rn3"] != restoredHeld {
		t.Fatalf("restored from a snapshot: due %v, held %v; want it held as restored", d, held)
	}
	down := stuck()
	delete(down, 2) // sn2 does not answer: the leader alone is not a majority without sn3
	if d, held := due(down, after); len(d) != 0 || !strings.Contains(held["rg1-rn3"], "keeps 1 healthy replicas of 3") {
		t.Fatalf("without a healthy majority: due %v, held %v", d, held)
	}
	d, _ := due(stuck(), after)
	if len(d) != 1 || d[0].sn != 3 || d[0].stuckFor != after || !strings.Contains(d[0].why, "never had") {
		t.Fatalf("after the wait: due %+v, want rg1-rn3 stuck for %v", d, after)
	}

	marks["rg1-rn3"].rebuilt = t0.Add(after)
	healed := stuck()
	healed[1].Shards[0].Stuck = nil
	if d, _ := due(healed, after+10*time.Second); len(d) != 0 || marks["rg1-rn3"] == nil || !marks["rg1-rn3"].since.IsZero() {
		t.Fatalf("healed after its rebuild: due %v, mark %+v (want kept for the back-off, its spell ended)", d, marks["rg1-rn3"])
	}
	if d, _ := due(stuck(), after+20*time.Second); len(d) != 0 {
		t.Fatalf("stuck again at once: due %v", d)
	}
	if d, _ := due(stuck(), after+repairBackoff-time.Second); len(d) != 0 {
		t.Fatalf("stuck again for longer than the wait, within the back-off: due %v", d)
	}
	if d, _ := due(stuck(), after+repairBackoff); len(d) != 1 || d[0].stuckFor != repairBackoff-20*time.Second {
		t.Fatalf("stuck again, past the back-off: due %+v, want rg1-rn3 stuck since its new spell began", d)
	}
	if d, _ := due(healed, 3*after+2*repairBackoff); len(d) != 0 || len(marks) != 0 {
		t.Fatalf("healthy long after: due %v, marks %v, want none", d, marks)
	}
}
