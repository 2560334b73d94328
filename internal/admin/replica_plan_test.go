package admin

import (
	"reflect"
	"testing"

	"github.com/cairndb/cairn/internal/topology"
)

func TestReplicaTasksOrder(t *testing.T) {
	tasks := replicaTasks([]topology.ReplicaChange{
		{Shard: 1, Add: []topology.NodeID{4}, Remove: []topology.NodeID{3}},
		{Shard: 2, Add: []topology.NodeID{4, 5}},
		{Shard: 3, Remove: []topology.NodeID{1, 2}, Add: []topology.NodeID{6}},
	})
	var got []string
	for _, tk := range tasks {
		got = append(got, tk.Kind+" "+tk.Args["shard"]+" "+tk.Args["sn"])
	}
	want := []string{ // per shard, one node at a time, each add before the matching remove
		"join-replica 1 4", "leave-replica 1 3",
		"join-replica 2 4", "join-replica 2 5",
		"join-replica 3 6", "leave-replica 3 1", "leave-replica 3 2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tasks:\n%v\nwant\n%v", got, want)
	}
}

func TestSuccessorVoter(t *testing.T) {
	for _, c := range []struct {
		voters  []uint64
		leaving uint64
		pref    topology.NodeID
		want    uint64
	}{
		{[]uint64{1, 2, 3, 4}, 3, 4, 4},
		{[]uint64{3, 2, 1}, 1, 0, 2},
		{[]uint64{1, 2, 3}, 1, 5, 2}, // the preferred node does not vote (yet)
		{[]uint64{1, 2}, 2, 2, 1},
		{[]uint64{1}, 1, 0, 0},
	} {
		if got := successorVoter(c.voters, c.leaving, c.pref); got != c.want {
			t.Errorf("successorVoter(%v, %d, %d) = %d, want %d", c.voters, c.leaving, c.pref, got, c.want)
		}
	}
}

func TestMigratedTopology(t *testing.T) {
	m := &Meta{Zones: []Zone{{ID: 1, Name: "Z", RF: 3}}, Deployed: &topology.Topology{Store: "kv", Seq: 4, Partitions: 2,
		Nodes: []topology.Node{{ID: 1, Addr: "a:1"}, {ID: 2, Addr: "a:2"}, {ID: 3, Addr: "a:3"}},
		Shards: []topology.Shard{
			{ID: 1, Replicas: []topology.NodeID{1, 2, 3}, Preferred: 3},
			{ID: 2, Replicas: []topology.NodeID{3, 1, 2}, Preferred: 1},
		}, PartitionShard: []topology.ShardID{1, 2}}}
	from, to := &SN{ID: 3, Zone: 1}, &SN{ID: 4, Zone: 1, Host: "a", Port: 4, Capacity: 2}
	got := migratedTopology(m, from, to)
	ch, err := topology.Compare(m.Deployed, got)
	if err != nil {
		t.Fatal(err)
	}
	want := []topology.ReplicaChange{{Shard: 1, Add: []topology.NodeID{4}, Remove: []topology.NodeID{3}}, {Shard: 2, Add: []topology.NodeID{4}, Remove: []topology.NodeID{3}}}
	if !reflect.DeepEqual(ch.Replicas, want) || !reflect.DeepEqual(ch.NewNodes, []topology.NodeID{4}) || len(ch.Moves) != 0 {
		t.Fatalf("changes %+v; want sn4 in place of sn3 in both shards, no moves", ch)
	}
	if s, _ := got.Shard(1); s.Preferred != 4 {
		t.Errorf("rg1 prefers sn%d, want sn4 (sn3's successor)", s.Preferred)
	}
	if n, _ := got.Node(4); n.Zone != "Z" || n.Addr != "a:4" || n.Capacity != 2 {
		t.Errorf("sn4 in the topology: %+v", n)
	}
	if m.Deployed.Shards[0].Replicas[2] != 3 {
		t.Error("migratedTopology changed the deployed topology")
	}
}

func TestUnprefer(t *testing.T) {
	mk := func() *topology.Topology {
		return &topology.Topology{Shards: []topology.Shard{{ID: 1, Replicas: []topology.NodeID{1, 2, 3, 4}, Preferred: 3}, {ID: 2, Replicas: []topology.NodeID{1, 2, 3}, Preferred: 1}}}
	}
	for _, c := range []struct {
		pref topology.NodeID
		want topology.NodeID
	}{{4, 4}, {5, 0}, {3, 0}, {0, 0}} {
		tp := mk()
		unprefer(tp, 1, 3, c.pref)
		if tp.Shards[0].Preferred != c.want || tp.Shards[1].Preferred != 1 {
			t.Errorf("unprefer(rg1, leaving sn3, pref sn%d): rg1 prefers sn%d, rg2 sn%d; want sn%d and sn1", c.pref, tp.Shards[0].Preferred, tp.Shards[1].Preferred, c.want)
		}
	}
}
