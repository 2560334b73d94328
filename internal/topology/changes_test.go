package topology

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	zones := []ZoneRF{{"z", 3}}
	deployed := mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), zones)
	grown, err := Redistribute(deployed, capNodes(1, "z", 2, 2, 2, 2, 2, 2), zones)
	if err != nil {
		t.Fatal(err)
	}
	shrunk, err := Contract(grown, capNodes(1, "z", 2, 2, 2), zones) // rg3, rg4 removed
	if err != nil {
		t.Fatal(err)
	}
	change := func(f func(c *Topology)) *Topology {
		c := deployed.Clone()
		f(c)
		return c
	}
	for _, tc := range []struct {
		name      string
		from, to  *Topology
		wantError string
	}{
		{"another store", deployed, change(func(c *Topology) { c.Store = "other" }),
			`the topology is of store "other", not "kvstore"`},
		{"another partition count", deployed, mustPlace(t, 150, capNodes(1, "z", 2, 2, 2), zones),
			"150 partitions cannot follow 100: the count only grows by splitting every partition into equal parts (a multiple of 100): clone the deployed topology (topology clone -current) and split it (topology split-partitions)"},
		{"fewer partitions", deployed, mustPlace(t, 50, capNodes(1, "z", 2, 2, 2), zones), "50 partitions cannot follow 100"},
		{"another origin (topology create over a deployed store)", deployed, mustPlace(t, 100, capNodes(1, "z", 2, 2, 2, 2, 2, 2), zones),
			"shard rg1 has another origin than the deployed rg1, so it is another shard (its record versions would clash): build the new topology from a clone of the deployed one (topology clone -current)"},
		{"a removed shard's id reused", shrunk, func() *Topology {
			c := shrunk.Clone()
			c.Shards = append(c.Shards, Shard{ID: 3, Replicas: []NodeID{1, 2, 3}, Origin: 3})
			c.PartitionShard[99] = 3
			return c
		}(), "new shard rg3 reuses an id of the store (ids up to rg4 have been used, and nodes may keep state of removed shards): give new shards ids above 4"},
		{"max shard goes back", shrunk, change(func(c *Topology) { c.MaxShard = 2 }),
			"the topology's highest shard id ever used (2) is below the deployed one's (4)"},
		{"every replica replaced", deployed, change(func(c *Topology) {
			c.Nodes = capNodes(1, "z", 2, 2, 2, 2, 2, 2)
			c.Shards[0].Replicas, c.Shards[0].Preferred = []NodeID{4, 5, 6}, 4
		}), "every replica of rg1 would move at once (from sn1, sn2, sn3 to sn4, sn5, sn6), but one must stay so that membership changes, made one at a time, keep a majority: rebalance in two steps"},
		{"a removed shard still owns partitions", grown, change(func(c *Topology) {
			c.MaxShard = 4
			c.PartitionShard[0] = 3
		}), "shard rg3 is removed but still owns partition 0 (and maybe others): give its partitions to remaining shards first"},
		{"nothing deployed", nil, deployed, "compare needs both topologies"},
		{"invalid", deployed, change(func(c *Topology) { c.Shards[0].Replicas = []NodeID{1, 1, 2} }), "unknown or doubled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compare(tc.from, tc.to)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantError) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantError)
			}
		})
	}
}

// TestCompareLists: every kind of change at once, in the new numbering.
func TestCompareLists(t *testing.T) {
	zones := []ZoneRF{{"z", 3}}
	from := mustPlace(t, 10, capNodes(1, "z", 2, 2, 2, 2, 2, 2), zones) // rg1-rg4 over sn1-sn6
	from.Nodes = append(from.Nodes, capNodes(7, "z", 1)...)             // sn7 hosts nothing
	to, err := SplitPartitions(from, 20)
	if err != nil {
		t.Fatal(err)
	}
	to.Nodes = slices.Concat(to.Nodes[:6], capNodes(8, "z", 2))
	to.Shards = to.Shards[:3] // rg4 removed
	to.Shards[0].Replicas = []NodeID{1, 2, 8}
	to.Shards[0].Preferred = 8
	to.Shards = append(to.Shards, Shard{ID: 5, Replicas: []NodeID{4, 5, 6}, Preferred: 5, Origin: 55})
	to.MaxShard = 5
	from4 := from.PartitionsOf(4)
	for i, p := range from4 { // rg4's partitions, split: two children each
		to.PartitionShard[2*p], to.PartitionShard[2*p+1] = 5, ShardID(i%3+1)
	}
	got, err := Compare(from, to)
	if err != nil {
		t.Fatal(err)
	}
	var old3 NodeID
	for _, r := range from.Shards[0].Replicas {
		if !slices.Contains([]NodeID{1, 2}, r) {
			old3 = r
		}
	}
	want := Changes{
		Split:         20,
		NewNodes:      []NodeID{8},
		NewShards:     []Shard{to.Shards[3]},
		Replicas:      []ReplicaChange{{Shard: 1, Add: []NodeID{8}, Remove: []NodeID{old3}}},
		Leaders:       []Shard{to.Shards[0]},
		RemovedShards: []ShardID{4},
		RemovedNodes:  []NodeID{7},
	}
	for i, p := range from4 {
		want.Moves = append(want.Moves, Move{2 * p, 4, 5}, Move{2*p + 1, 4, ShardID(i%3 + 1)})
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("changes\n\t%s\nwant\n\t%s", gb, wb)
	}
	if got.Empty() {
		t.Error("Empty() of changes")
	}
	none, err := Compare(from, from.Clone())
	if b, _ := json.Marshal(none); err != nil || !none.Empty() ||
		string(b) != `{"split":0,"new_nodes":[],"new_shards":[],"replicas":[],"leaders":[],"moves":[],"removed_shards":[],"removed_nodes":[]}` {
		t.Errorf("no changes: %s, %v", b, err)
	}
}

func TestMaxShard(t *testing.T) {
	topo := mustPlace(t, 10, capNodes(1, "z", 2, 2, 2), []ZoneRF{{"z", 3}})
	if topo.MaxShard != 2 {
		t.Errorf("Place: max shard %d, want 2", topo.MaxShard)
	}
	b, err := Build("kvstore", 10, nodes(3), 3, 3)
	if err != nil || b.MaxShard != 3 {
		t.Errorf("Build: max shard %d, %v", b.MaxShard, err)
	}
	bad := topo.Clone()
	bad.MaxShard = 1
	if err := bad.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "shard 2 is above the highest shard id ever used (1)") {
		t.Errorf("shard above MaxShard: %v", err)
	}
	old := topo.Clone()
	old.MaxShard = 0 // written before MaxShard existed
	if err := old.Validate(); err != nil || old.maxShard() != 2 {
		t.Errorf("without MaxShard: %v, max %d", err, old.maxShard())
	}
	if c := topo.Clone(); &c.Shards[0].Replicas[0] == &topo.Shards[0].Replicas[0] || &c.PartitionShard[0] == &topo.PartitionShard[0] {
		t.Error("Clone shares memory with the original")
	}
}
