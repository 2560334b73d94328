package topology

import (
	"slices"
	"testing"
)

func TestDiff(t *testing.T) {
	build := func(partitions uint32, n, shards, rf int) *Topology {
		t.Helper()
		topo, err := Build("kvstore", partitions, nodes(n), shards, rf)
		if err != nil {
			t.Fatal(err)
		}
		return topo
	}
	two := build(100, 3, 2, 3)
	grown := func() *Topology {
		g := build(100, 4, 2, 3) // rg1 on sn1-sn3, rg2 on sn4, sn1, sn2
		g.Nodes[3].Capacity, g.Nodes[3].Zone = 2, "a"
		g.Shards[1].Preferred = 4
		return g
	}()
	for _, tc := range []struct {
		name     string
		from, to *Topology
		want     []string
	}{
		{"same", two, two, []string{"no change"}},
		{"same but newer", two, func() *Topology { c := *two; c.Seq++; return &c }(), []string{"no change"}},
		{"nothing to nothing", nil, nil, []string{"no change"}},
		{"first deployment", nil, two, []string{
			"add storage node sn1 at 127.0.0.1:5001 (zone \"\", capacity unlimited)",
			"add storage node sn2 at 127.0.0.1:5002 (zone \"\", capacity unlimited)",
			"add storage node sn3 at 127.0.0.1:5003 (zone \"\", capacity unlimited)",
			"create shard rg1 with replicas on sn1, sn2, sn3 (leader preferred on sn1)",
			"create shard rg2 with replicas on sn1, sn2, sn3 (leader preferred on sn2)",
			"assign 50 partitions to rg1",
			"assign 50 partitions to rg2",
		}},
		{"split shards", two, build(100, 3, 4, 3), []string{
			"create shard rg3 with replicas on sn1, sn2, sn3 (leader preferred on sn3)",
			"create shard rg4 with replicas on sn1, sn2, sn3 (leader preferred on sn1)",
			"move 25 partitions from rg1 to rg2",
			"move 25 partitions from rg2 to rg3",
			"move 25 partitions from rg2 to rg4",
		}},
		{"merge shards", build(100, 3, 4, 3), two, []string{
			"move 25 partitions from rg2 to rg1",
			"move 25 partitions from rg3 to rg2",
			"move 25 partitions from rg4 to rg2",
			"remove shard rg3 (replicas on sn1, sn2, sn3)",
			"remove shard rg4 (replicas on sn1, sn2, sn3)",
		}},
		{"add a node and move replicas", two, grown, []string{
			"add storage node sn4 at 127.0.0.1:5004 (zone \"a\", capacity 2)",
			"add a replica of rg2 on sn4",
			"remove rg2's replica from sn3",
			"prefer rg2's leader on sn4 instead of sn2",
		}},
		{"remove a node", grown, two, []string{
			"add a replica of rg2 on sn3",
			"remove rg2's replica from sn4",
			"prefer rg2's leader on sn2 instead of sn4",
			"remove storage node sn4 at 127.0.0.1:5004",
		}},
		{"node changes", two, func() *Topology {
			c := *two
			c.Nodes = slices.Clone(two.Nodes)
			c.Nodes[0].Addr, c.Nodes[1].Zone, c.Nodes[2].Capacity = "10.0.0.1:5000", "b", 3
			return &c
		}(), []string{
			"move sn1 from 127.0.0.1:5001 to 10.0.0.1:5000",
			"move sn2 from zone \"\" to zone \"b\"",
			"change sn3's capacity from unlimited to 3",
		}},
		{"other store", two, func() *Topology { c := build(10, 3, 2, 3); c.Store = "other"; return c }(), []string{
			"change the store from \"kvstore\" to \"other\"; a topology belongs to one store, so check which store you deploy to",
			"change the partition count from 100 to 10; it is fixed when a store is created, so this needs a new store",
		}},
		{"other partition count", two, build(50, 3, 2, 3), []string{
			// Partition p is another slice of the hash space: no moves.
			"change the partition count from 100 to 50; it is fixed when a store is created, so this needs a new store",
		}},
		{"split in two", two, split(two, 200, nil), []string{
			"split the 100 partitions into 200: each partition's hash range in two halves; no key changes partition except to one of its halves",
		}},
		{"split in four, then move halves", two, split(two, 400, map[int]ShardID{0: 2, 1: 2, 399: 1}), []string{
			"split the 100 partitions into 400: each partition's hash range in 4 equal parts; no key changes partition except to one of its parts",
			"move 2 partitions from rg1 to rg2",
			"move 1 partition from rg2 to rg1",
		}},
		{"remove everything", two, nil, []string{
			"drop 50 partitions from rg1",
			"drop 50 partitions from rg2",
			"remove shard rg1 (replicas on sn1, sn2, sn3)",
			"remove shard rg2 (replicas on sn1, sn2, sn3)",
			"remove storage node sn1 at 127.0.0.1:5001",
			"remove storage node sn2 at 127.0.0.1:5002",
			"remove storage node sn3 at 127.0.0.1:5003",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Diff(tc.from, tc.to); !slices.Equal(got, tc.want) {
				t.Errorf("got\n\t%q\nwant\n\t%q", got, tc.want)
			}
		})
	}
}

// split returns t split into n partitions, then with the owners in moves.
func split(t *Topology, n uint32, moves map[int]ShardID) *Topology {
	s, err := SplitPartitions(t, n)
	if err != nil {
		panic(err)
	}
	for p, to := range moves {
		s.PartitionShard[p] = to
	}
	return s
}

func TestDiffOfPlaceOverBuild(t *testing.T) {
	from, err := Build("kvstore", 100, nodes(3), 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	ns := nodes(3)
	for i := range ns {
		ns[i].Capacity = 2
	}
	to, err := Place("kvstore", 100, ns, []ZoneRF{{"", 3}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"change sn1's capacity from unlimited to 2",
		"change sn2's capacity from unlimited to 2",
		"change sn3's capacity from unlimited to 2",
		"create shard rg2 with replicas on sn1, sn2, sn3 (leader preferred on sn2)",
		"move 50 partitions from rg1 to rg2",
	}
	if got := Diff(from, to); !slices.Equal(got, want) {
		t.Errorf("got\n\t%q\nwant\n\t%q", got, want)
	}
}

func TestSameLayout(t *testing.T) {
	ns := nodes(3)
	for i := range ns {
		ns[i].Capacity = 2
	}
	place := func(partitions uint32) *Topology {
		t.Helper()
		topo, err := Place("kvstore", partitions, ns, []ZoneRF{{"", 3}})
		if err != nil {
			t.Fatal(err)
		}
		return topo
	}
	deployed, again := place(100), place(100)
	deployed.Seq = 4
	moved := place(100)
	moved.Shards[0].Preferred = moved.Shards[1].Preferred
	for _, tc := range []struct {
		name string
		a, b *Topology
		want bool
	}{
		{"placed twice over the same pool (other seq and origins)", deployed, again, true},
		{"nothing deployed", nil, again, false},
		{"both nil", nil, nil, true},
		{"other partition count", deployed, place(50), false},
		{"split", deployed, split(deployed, 200, nil), false},
		{"other preferred leader", deployed, moved, false},
	} {
		if got := SameLayout(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: SameLayout = %v, want %v (diff %q)", tc.name, got, tc.want, Diff(tc.a, tc.b))
		}
	}
}
