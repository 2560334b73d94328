package cluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/topology"
)

// view is one replica's report: shard, leader it knows, term, applied.
type view struct {
	shard, leader, term, applied uint64
}

func answer(node uint64, views ...view) reply {
	info := &cairnpb.StoreInfoResponse{Store: "kvstore", Node: node}
	for _, v := range views {
		info.LocalShards = append(info.LocalShards, &cairnpb.ShardStatus{
			Shard: v.shard, Leader: v.leader, Term: v.term, Applied: v.applied, IsLeader: v.leader == node,
		})
	}
	return reply{info: info}
}

var down = reply{err: errors.New("connection refused")}

func assessFixture(t *testing.T, procs map[topology.NodeID]ProcState, replies map[topology.NodeID]reply) *Status {
	t.Helper()
	f := sampleFile("/c")
	topo, err := topology.Build("kvstore", 100, []topology.Node{{ID: 1, Addr: "a:1"}, {ID: 2, Addr: "a:2"}, {ID: 3, Addr: "a:3"}}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	return assess("/c", f, topo, procs, replies)
}

func running3() map[topology.NodeID]ProcState {
	return map[topology.NodeID]ProcState{1: ProcRunning, 2: ProcRunning, 3: ProcRunning}
}

func TestAssessHealthy(t *testing.T) {
	st := assessFixture(t, running3(), map[topology.NodeID]reply{
		1: answer(1, view{1, 1, 6, 9}, view{2, 2, 6, 7}),
		2: answer(2, view{1, 1, 6, 9}, view{2, 2, 6, 7}),
		3: answer(3, view{1, 1, 6, 8}, view{2, 2, 6, 7}),
	})
	if !st.Healthy || len(st.Problems) != 0 || !st.AllLed() {
		t.Fatalf("not healthy: %+v", st.Problems)
	}
	if n, _ := st.Node(1); len(n.Leads) != 1 || n.Leads[0] != 1 || n.State != StateUp || n.PID != 4242 {
		t.Errorf("node 1: %+v", n)
	}
	if n, _ := st.Node(3); len(n.Leads) != 0 {
		t.Errorf("node 3 leads %v", n.Leads)
	}
	sh, _ := st.Shard(1)
	if sh.Leader != 1 || sh.Term != 6 || !sh.Led || sh.Replicas[2].Applied != 8 {
		t.Errorf("shard 1: %+v", sh)
	}
	text := st.Text()
	for _, want := range []string{"healthy: every node is up", "1*: 6/9", "3: 6/8"} {
		if !strings.Contains(text, want) {
			t.Errorf("text does not say %q:\n%s", want, text)
		}
	}
}

// A paused old leader that comes back still claims shard 1 at term 6; the
// others elected node 2 at term 7. The higher term wins.
func TestAssessStaleLeaderLoses(t *testing.T) {
	st := assessFixture(t, running3(), map[topology.NodeID]reply{
		1: answer(1, view{1, 1, 6, 9}, view{2, 2, 6, 7}),
		2: answer(2, view{1, 2, 7, 12}, view{2, 2, 6, 7}),
		3: answer(3, view{1, 2, 7, 12}, view{2, 2, 6, 7}),
	})
	sh, _ := st.Shard(1)
	if sh.Leader != 2 || sh.Term != 7 || !sh.Led {
		t.Fatalf("shard 1: %+v", sh)
	}
	if n, _ := st.Node(1); len(n.Leads) != 0 {
		t.Errorf("stale node 1 counted as leading %v", n.Leads)
	}
}

func TestAssessDownLeaderAndStoppedNode(t *testing.T) {
	procs := map[topology.NodeID]ProcState{1: ProcGone, 2: ProcStopped, 3: ProcRunning}
	st := assessFixture(t, procs, map[topology.NodeID]reply{
		1: down,
		2: {err: errors.New("deadline exceeded")},
		3: answer(3, view{1, 1, 6, 9}, view{2, 0, 7, 7}),
	})
	if st.Healthy || st.AllLed() {
		t.Fatalf("healthy with nodes down: %+v", st)
	}
	if n, _ := st.Node(1); n.State != StateDown || n.PID != 0 || n.Process != "gone" {
		t.Errorf("node 1: %+v", n)
	}
	if n, _ := st.Node(2); n.State != StateStopped {
		t.Errorf("node 2: %+v", n)
	}
	problems := strings.Join(st.Problems, "\n")
	for _, want := range []string{
		"node 1 is down; start it with 'cairn cluster start --root /c --node 1'",
		"node 2 is paused (SIGSTOP",
		"shard 1 has no leader: node 1, named leader at term 6, does not answer",
		"shard 2 has no leader: no live replica knows one (1 of 3 replicas answer; a leader needs 2)",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems do not say %q:\n%s", want, problems)
		}
	}
}

func TestAssessForeignAnswer(t *testing.T) {
	r := answer(1, view{1, 1, 6, 9})
	r.info.Store = "other"
	st := assessFixture(t, running3(), map[topology.NodeID]reply{1: r, 2: down, 3: down})
	if n, _ := st.Node(1); n.State != StateForeign || !strings.Contains(n.Error, `store "other"`) {
		t.Fatalf("node 1: %+v", n)
	}
}
