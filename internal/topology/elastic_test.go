package topology

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func mustPlace(t *testing.T, partitions uint32, nodes []Node, zones []ZoneRF) *Topology {
	t.Helper()
	topo, err := Place("kvstore", partitions, nodes, zones)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// counts returns how many partitions each shard of topo owns.
func counts(topo *Topology) map[ShardID]int {
	out := make(map[ShardID]int)
	for _, s := range topo.PartitionShard {
		out[s]++
	}
	return out
}

func replicasOf(topo *Topology) map[ShardID][]NodeID {
	out := make(map[ShardID][]NodeID)
	for _, s := range topo.Shards {
		out[s.ID] = slices.Sorted(slices.Values(s.Replicas))
	}
	return out
}

// checkClean fails unless topo validates, Check finds no violation and no
// warning but those listed ("rule subject"), and Compare accepts it over
// from.
func checkClean(t *testing.T, from, topo *Topology, warnings ...string) Changes {
	t.Helper()
	if err := topo.Validate(); err != nil {
		t.Fatal(err)
	}
	r := topo.Check()
	var warned []string
	for _, f := range r.Warnings {
		warned = append(warned, f.Rule+" "+f.Subject)
	}
	if !r.OK() || !slices.Equal(warned, warnings) {
		t.Errorf("check: violations %v, warnings %q (want %q)", r.Violations, warned, warnings)
	}
	c, err := Compare(from, topo)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	return c
}

// TestWhitePaperGrowAndShrink: the white paper's store (3 nodes of
// capacity 2, RF 3, 100 partitions: 2 shards) grows by 3 nodes of
// capacity 2 to 4 shards of 25 partitions, the new shards on the new
// nodes only, and contracts back to the first layout; shard ids are not
// reused.
func TestWhitePaperGrowAndShrink(t *testing.T) {
	zones := []ZoneRF{{"z", 3}}
	small := capNodes(1, "z", 2, 2, 2)
	big := append(slices.Clone(small), capNodes(4, "z", 2, 2, 2)...)
	deployed := mustPlace(t, 100, small, zones)

	grown, err := Redistribute(deployed, big, zones)
	if err != nil {
		t.Fatal(err)
	}
	c := checkClean(t, deployed, grown)
	if len(grown.Shards) != 4 || grown.MaxShard != 4 {
		t.Fatalf("%d shards, max shard %d; want 4 and 4", len(grown.Shards), grown.MaxShard)
	}
	for id, n := range counts(grown) {
		if n != 25 {
			t.Errorf("%s owns %d partitions, want 25", ShardName(id), n)
		}
	}
	reps := replicasOf(grown)
	for _, id := range []ShardID{1, 2} {
		if !slices.Equal(reps[id], []NodeID{1, 2, 3}) || grown.Shards[id-1].Origin != deployed.Shards[id-1].Origin {
			t.Errorf("%s changed: replicas %v", ShardName(id), reps[id])
		}
	}
	for _, id := range []ShardID{3, 4} {
		if !slices.Equal(reps[id], []NodeID{4, 5, 6}) {
			t.Errorf("new shard %s on %v, want sn4-sn6", ShardName(id), reps[id])
		}
	}
	if !slices.Equal(c.NewNodes, []NodeID{4, 5, 6}) || len(c.NewShards) != 2 || len(c.Moves) != 50 || len(c.Replicas) != 0 || c.Split != 0 {
		t.Errorf("changes: %+v", c)
	}
	// The fullest shards give up their highest partitions, in blocks.
	for _, m := range c.Moves {
		if want := (Move{m.Partition, ShardID(m.Partition/50 + 1), ShardID(m.Partition/50 + 3)}); m != want || m.Partition%50 < 25 {
			t.Errorf("move %+v, want %+v", m, want)
		}
	}

	shrunk, err := Contract(grown, small, zones)
	if err != nil {
		t.Fatal(err)
	}
	c = checkClean(t, grown, shrunk)
	if !slices.Equal(shrunk.PartitionShard, deployed.PartitionShard) || len(shrunk.Nodes) != 3 || shrunk.MaxShard != 4 {
		t.Errorf("contracted: %d nodes, max shard %d, partitions %v", len(shrunk.Nodes), shrunk.MaxShard, counts(shrunk))
	}
	if !slices.Equal(c.RemovedShards, []ShardID{3, 4}) || !slices.Equal(c.RemovedNodes, []NodeID{4, 5, 6}) || len(c.Moves) != 50 {
		t.Errorf("changes: %+v", c)
	}
	if SameLayout(deployed, shrunk) != true {
		t.Errorf("contract did not restore the first layout: %q", Diff(deployed, shrunk))
	}

	again, err := Redistribute(shrunk, big, zones)
	if err != nil {
		t.Fatal(err)
	}
	if ids := slices.Collect(func(yield func(ShardID) bool) {
		for _, s := range again.Shards {
			yield(s.ID)
		}
	}); !slices.Equal(ids, []ShardID{1, 2, 5, 6}) {
		t.Errorf("shard ids after growing again: %v, want rg5 and rg6 new (rg3 and rg4 are never reused)", ids)
	}
}

func TestRedistribute(t *testing.T) {
	z3 := []ZoneRF{{"z", 3}}
	for _, tc := range []struct {
		name      string
		cur       func(t *testing.T) *Topology
		nodes     []Node
		zones     []ZoneRF
		shards    int
		moves     int
		newOn     []NodeID // the nodes the new shards use, if any
		warnings  []string
		wantError string
	}{
		{name: "3 shards to 4 with one new shard's worth of capacity",
			cur:    func(t *testing.T) *Topology { return mustPlace(t, 100, capNodes(1, "z", 3, 3, 3), z3) },
			nodes:  append(capNodes(1, "z", 3, 3, 3), capNodes(4, "z", 1, 1, 1)...),
			zones:  z3,
			shards: 4, moves: 25, newOn: []NodeID{4, 5, 6}},
		{name: "new shards use spare capacity on old nodes too",
			cur:    func(t *testing.T) *Topology { return mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), z3) },
			nodes:  capNodes(1, "z", 3, 3, 3),
			zones:  z3,
			shards: 3, moves: 33, newOn: []NodeID{1, 2, 3}},
		{name: "only spreads partitions when no shard fits",
			cur: func(t *testing.T) *Topology {
				cur := mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), z3)
				cur, err := MovePartition(cur, 0, 2)
				if err != nil {
					t.Fatal(err)
				}
				return cur
			},
			nodes:  capNodes(1, "z", 2, 2, 2),
			zones:  z3,
			shards: 2, moves: 1},
		{name: "two zones: the zone with least room decides",
			cur: func(t *testing.T) *Topology {
				return mustPlace(t, 90, append(capNodes(1, "a", 1, 1, 1), capNodes(4, "b", 3)...), []ZoneRF{{"a", 3}, {"b", 1}})
			},
			nodes:  slices.Concat(capNodes(1, "a", 1, 1, 1), capNodes(4, "b", 3), capNodes(5, "a", 2, 2, 2)),
			zones:  []ZoneRF{{"a", 3}, {"b", 1}},
			shards: 3, moves: 60, newOn: []NodeID{4, 5, 6, 7}},
		{name: "no room", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), z3) },
			nodes: append(capNodes(1, "z", 2, 2, 2), capNodes(4, "z", 3)...), zones: z3,
			wantError: `nothing to redistribute: the partitions are spread evenly already and no new shard fits: zone "z" has no room for a new shard of 3 replicas on distinct storage nodes (spare capacity: sn1 0, sn2 0, sn3 0, sn4 3): add storage nodes`},
		{name: "a shard per partition already", cur: func(t *testing.T) *Topology { return mustPlace(t, 4, capNodes(1, "z", 0, 0, 0), z3) },
			nodes: capNodes(1, "z", 0, 0, 0), zones: z3,
			wantError: "each of the 4 partitions has its own shard already: split the partitions first (topology split-partitions)"},
		{name: "bad pool", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), z3) },
			nodes: capNodes(1, "z", 2, 2, 2), zones: []ZoneRF{{"y", 3}},
			wantError: `zone "y" has no storage nodes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := tc.cur(t)
			got, err := Redistribute(cur, tc.nodes, tc.zones)
			if tc.wantError != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := checkClean(t, cur, got, tc.warnings...)
			if len(got.Shards) != tc.shards || len(c.Moves) != tc.moves || len(c.Replicas) != 0 {
				t.Errorf("%d shards, %d moves, replica changes %v; want %d, %d, none", len(got.Shards), len(c.Moves), c.Replicas, tc.shards, tc.moves)
			}
			var on []NodeID
			for _, s := range c.NewShards {
				on = append(on, s.Replicas...)
			}
			if on = slices.Compact(slices.Sorted(slices.Values(on))); !slices.Equal(on, tc.newOn) {
				t.Errorf("new shards on %v, want %v", on, tc.newOn)
			}
		})
	}
}

func TestRebalance(t *testing.T) {
	z3 := []ZoneRF{{"z", 3}}
	four := capNodes(1, "z", 2, 2, 2, 2) // Place: rg1 on sn1-sn3, rg2 on sn2-sn4
	for _, tc := range []struct {
		name      string
		cur       func(t *testing.T) *Topology
		nodes     []Node
		replicas  map[ShardID][]NodeID // after
		leaders   int                  // preferred leaders that change
		warnings  []string
		wantError string
	}{
		{name: "nothing to do", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, four, z3) }, nodes: four,
			replicas: map[ShardID][]NodeID{1: {1, 2, 3}, 2: {2, 3, 4}}, warnings: []string{"unused-capacity sn1", "unused-capacity sn4"}},
		{name: "a node leaves the pool", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, four, z3) },
			nodes:    append(capNodes(1, "z", 2, 2), capNodes(4, "z", 2, 2)...), // sn3 out, sn5 in
			replicas: map[ShardID][]NodeID{1: {1, 2, 5}, 2: {1, 2, 4}}, warnings: []string{"unused-capacity sn4", "unused-capacity sn5"}},
		{name: "a node's capacity drops", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, four, z3) },
			nodes:    capNodes(1, "z", 2, 1, 2, 2),
			replicas: map[ShardID][]NodeID{1: {1, 3, 4}, 2: {2, 3, 4}}, warnings: []string{"unused-capacity sn1"}},
		{name: "a zone short of its replication factor", cur: func(t *testing.T) *Topology {
			cur := mustPlace(t, 100, four, z3)
			cur.Shards[0].Replicas = []NodeID{1, 2}
			return cur
		}, nodes: four, replicas: map[ShardID][]NodeID{1: {1, 2, 3}, 2: {2, 3, 4}}, warnings: []string{"unused-capacity sn1", "unused-capacity sn4"}},
		{name: "leaders bunched on one node", cur: func(t *testing.T) *Topology {
			cur := mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), z3)
			cur.Shards[0].Preferred, cur.Shards[1].Preferred = 2, 2
			return cur
		}, nodes: capNodes(1, "z", 2, 2, 2), replicas: map[ShardID][]NodeID{1: {1, 2, 3}, 2: {1, 2, 3}}, leaders: 1},
		{name: "no room for the replicas of a node that left", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, four, z3) },
			nodes:     capNodes(1, "z", 1, 2, 2),
			wantError: `zone "z" has no storage node with room for another replica of rg2 to hold its replication factor (it has replicas on sn2, sn3; spare capacity: sn1 0, sn2 0, sn3 0)`},
		{name: "no room to relieve a node", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), z3) },
			nodes:     capNodes(1, "z", 1, 2, 2),
			wantError: `sn1 hosts 2 replicas but its capacity is 1, and no other storage node of zone "z" has room for one of them`},
		{name: "every replica leaves at once", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), z3) },
			nodes:     capNodes(4, "z", 2, 2, 2),
			wantError: "every replica of rg1 would move at once (from sn1, sn2, sn3 to sn4, sn5, sn6), but one must stay so that membership changes, made one at a time, keep a majority: rebalance in two steps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := tc.cur(t)
			got, err := Rebalance(cur, tc.nodes, z3)
			if tc.wantError != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := checkClean(t, cur, got, tc.warnings...)
			if reps := replicasOf(got); !mapsEqual(reps, tc.replicas) {
				t.Errorf("replicas %v, want %v", reps, tc.replicas)
			}
			if len(c.Moves) != 0 || len(c.NewShards) != 0 || len(c.RemovedShards) != 0 || len(c.Leaders) != tc.leaders {
				t.Errorf("changes beyond replicas: %+v", c)
			}
			// Each replica changed once: fewest moves.
			moved := 0
			for _, r := range c.Replicas {
				moved += len(r.Add)
			}
			if want := minReplicaMoves(cur, got); moved != want {
				t.Errorf("%d replicas added, want %d", moved, want)
			}
		})
	}
}

// minReplicaMoves counts, shard by shard, the replicas of got that cur
// lacks: the replicas a rebalance must add, whatever it does.
func minReplicaMoves(cur, got *Topology) int {
	n := 0
	for _, s := range got.Shards {
		old, _ := cur.Shard(s.ID)
		n += len(missing(s.Replicas, old.Replicas))
	}
	return n
}

func mapsEqual(a, b map[ShardID][]NodeID) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestContract(t *testing.T) {
	z3 := []ZoneRF{{"z", 3}}
	six := capNodes(1, "z", 2, 2, 2, 2, 2, 2)
	for _, tc := range []struct {
		name      string
		cur       func(t *testing.T) *Topology
		nodes     []Node
		shards    []ShardID
		nodesLeft int
		moves     int
		warnings  []string
		wantError string
	}{
		{name: "one node of six leaves", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, six, z3) },
			nodes: six[:5], shards: []ShardID{1, 2, 3}, nodesLeft: 5, moves: 25, warnings: []string{"unused-capacity sn2"}},
		{name: "capacities drop", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, six, z3) },
			nodes: capNodes(1, "z", 1, 1, 1, 1, 1, 1), shards: []ShardID{1, 2}, nodesLeft: 6, moves: 50},
		{name: "nothing to remove", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, six, z3) },
			nodes: six, shards: []ShardID{1, 2, 3, 4}, nodesLeft: 6},
		{name: "the pool can host no shard", cur: func(t *testing.T) *Topology { return mustPlace(t, 100, six, z3) },
			nodes:     six[:2],
			wantError: `zone "z" has 2 storage nodes with capacity 2,2; replication factor 3 needs at least 3 storage nodes with capacity >= 1, so the pool could host no shard`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := tc.cur(t)
			got, err := Contract(cur, tc.nodes, z3)
			if tc.wantError != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := checkClean(t, cur, got, tc.warnings...)
			var ids []ShardID
			for _, s := range got.Shards {
				ids = append(ids, s.ID)
			}
			if !slices.Equal(ids, tc.shards) || len(got.Nodes) != tc.nodesLeft || len(c.Moves) != tc.moves || got.MaxShard != cur.MaxShard {
				t.Errorf("shards %v, %d nodes, %d moves, max shard %d; want %v, %d, %d, %d", ids, len(got.Nodes), len(c.Moves), got.MaxShard, tc.shards, tc.nodesLeft, tc.moves, cur.MaxShard)
			}
		})
	}
}

func TestChangeRepFactor(t *testing.T) {
	z3 := []ZoneRF{{"z", 3}}
	four := capNodes(1, "z", 2, 2, 2, 2) // Place: rg1 on sn1-sn3, rg2 on sn2-sn4
	for _, tc := range []struct {
		name      string
		nodes     []Node
		zone      string
		rf        int
		replicas  map[ShardID][]NodeID
		wantError string
	}{
		{name: "3 to 4", nodes: four, zone: "z", rf: 4, replicas: map[ShardID][]NodeID{1: {1, 2, 3, 4}, 2: {1, 2, 3, 4}}},
		{name: "lower", nodes: four, zone: "z", rf: 2, wantError: `zone "z" has replication factor 3; it can only grow (lowering it is not supported): give 4 or more`},
		{name: "same", nodes: four, zone: "z", rf: 3, wantError: `zone "z" has replication factor 3 already`},
		{name: "unknown zone", nodes: four, zone: "y", rf: 4, wantError: `zone "y" is not among the pool's zones ("z")`},
		{name: "too few nodes", nodes: four, zone: "z", rf: 5, wantError: `zone "z" has 4 storage nodes in the pool; replication factor 5 needs 5`},
		{name: "no capacity", nodes: capNodes(1, "z", 2, 2, 2, 1), zone: "z", rf: 4,
			wantError: `zone "z" needs 2 more replicas to reach replication factor 4, but its storage nodes have room for 1 (spare capacity: sn1 1, sn2 0, sn3 0, sn4 0)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := mustPlace(t, 100, four, z3)
			got, err := ChangeRepFactor(cur, tc.nodes, z3, tc.zone, tc.rf)
			if tc.wantError != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkClean(t, cur, got)
			if reps := replicasOf(got); !mapsEqual(reps, tc.replicas) {
				t.Errorf("replicas %v, want %v", reps, tc.replicas)
			}
			if zs := got.ZoneRFs(z3); zs[0].RF != tc.rf {
				t.Errorf("ZoneRFs after the change: %v", zs)
			}
			// Redistribute over the raised factor gives new shards rf replicas.
			more := append(slices.Clone(tc.nodes), capNodes(5, "z", 1, 1, 1, 1)...)
			grown, err := Redistribute(got, more, got.ZoneRFs(z3))
			if err != nil {
				t.Fatal(err)
			}
			if s := grown.Shards[len(grown.Shards)-1]; len(s.Replicas) != tc.rf {
				t.Errorf("new shard %s has %d replicas, want %d", ShardName(s.ID), len(s.Replicas), tc.rf)
			}
		})
	}
}
