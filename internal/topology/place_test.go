package topology

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("topology.seed", 0, "seed for the randomized topology tests (0: from the clock)")

// capNodes returns nodes with ids first, first+1, ... in zone, one per
// capacity.
func capNodes(first int, zone string, caps ...int) []Node {
	var out []Node
	for i, c := range caps {
		id := first + i
		out = append(out, Node{ID: NodeID(id), Addr: fmt.Sprintf("127.0.0.1:%d", 5000+id), Capacity: c, Zone: zone})
	}
	return out
}

func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions uint32
		nodes      []Node
		zones      []ZoneRF
		shards     int
		warnings   []string // "rule subject" of Check's warnings, in order
	}{
		{"3 nodes cap 2 rf 3", 100, capNodes(1, "z", 2, 2, 2), []ZoneRF{{"z", 3}}, 2, nil},
		{"4 nodes cap 1 rf 3", 100, capNodes(1, "z", 1, 1, 1, 1), []ZoneRF{{"z", 3}}, 1, []string{"unused-capacity sn4"}},
		{"caps 3,1,1,1 rf 3", 100, capNodes(1, "z", 3, 1, 1, 1), []ZoneRF{{"z", 3}}, 1, []string{"unused-capacity sn1", "unused-capacity sn4"}},
		{"caps 3,3,2,1 rf 3", 100, capNodes(1, "z", 3, 3, 2, 1), []ZoneRF{{"z", 3}}, 3, nil},
		{"caps 4,2,2,2,1 rf 2", 100, capNodes(1, "z", 4, 2, 2, 2, 1), []ZoneRF{{"z", 2}}, 5, []string{"unused-capacity sn3"}},
		{"caps 3,1 rf 1", 100, capNodes(1, "z", 3, 1), []ZoneRF{{"z", 1}}, 4, []string{"leader-spread sn1"}},
		{"two zones rf 1", 100, append(capNodes(1, "a", 2, 2), capNodes(3, "b", 1, 1, 1)...), []ZoneRF{{"a", 1}, {"b", 1}}, 3, []string{"unused-capacity sn2"}},
		{"two zones rf 2 and 1, one ignored", 100, slices.Concat(capNodes(1, "a", 2, 2, 2), capNodes(4, "b", 3), capNodes(5, "c", 9)), []ZoneRF{{"a", 2}, {"b", 1}}, 3, nil},
		{"partitions fewer than shards fit", 4, capNodes(1, "z", 3, 3, 3, 3, 3, 3), []ZoneRF{{"z", 3}}, 4, []string{"unused-capacity sn1", "unused-capacity sn2", "unused-capacity sn3", "unused-capacity sn4", "unused-capacity sn5", "unused-capacity sn6"}},
		{"unlimited capacity", 8, capNodes(1, "z", 0, 0, 0, 0), []ZoneRF{{"z", 3}}, 8, nil},
		{"old topology without zones", 10, nodes(3), []ZoneRF{{"", 3}}, 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := Place("kvstore", tc.partitions, tc.nodes, tc.zones)
			if err != nil {
				t.Fatal(err)
			}
			if len(topo.Shards) != tc.shards {
				t.Fatalf("%d shards, want %d", len(topo.Shards), tc.shards)
			}
			checkPlaced(t, topo, tc.nodes, tc.zones)
			var warned []string
			for _, f := range topo.Check().Warnings {
				warned = append(warned, f.Rule+" "+f.Subject)
			}
			if !slices.Equal(warned, tc.warnings) {
				t.Errorf("warnings %q, want %q", warned, tc.warnings)
			}
		})
	}
}

func TestPlaceThreeNodesOfCapacityTwo(t *testing.T) {
	topo, err := Place("kvstore", 100, capNodes(1, "z", 2, 2, 2), []ZoneRF{{"z", 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range topo.Nodes {
		if got := len(topo.ShardsOn(n.ID)); got != 2 {
			t.Errorf("%s hosts %d replicas, want 2", NodeName(n.ID), got)
		}
	}
	for _, s := range topo.Shards {
		if got := len(topo.PartitionsOf(s.ID)); got != 50 {
			t.Errorf("%s owns %d partitions, want 50", ShardName(s.ID), got)
		}
	}
	if topo.Shards[0].Preferred == topo.Shards[1].Preferred {
		t.Errorf("both shards prefer %s as leader", NodeName(topo.Shards[0].Preferred))
	}
	if r := topo.Check(); !r.OK() || len(r.Warnings) > 0 {
		t.Errorf("check: %+v", r)
	}
	if topo.Seq != 1 || topo.Shards[0].Origin == topo.Shards[1].Origin {
		t.Errorf("seq %d, origins %d and %d", topo.Seq, topo.Shards[0].Origin, topo.Shards[1].Origin)
	}
}

func TestPlaceRefuses(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions uint32
		nodes      []Node
		zones      []ZoneRF
		want       string
	}{
		{"too few nodes", 100, capNodes(1, "MyZone", 2, 2), []ZoneRF{{"MyZone", 3}},
			`topology: invalid: zone "MyZone" has 2 storage nodes with capacity 2,2; replication factor 3 needs at least 3 storage nodes with capacity >= 1: deploy more storage nodes in the zone or lower the replication factor`},
		{"too few nodes in the second zone", 100, append(capNodes(1, "a", 1, 1, 1), capNodes(4, "b", 0)...), []ZoneRF{{"a", 1}, {"b", 2}},
			`zone "b" has 1 storage node with capacity unlimited; replication factor 2 needs at least 2`},
		{"no zones", 100, capNodes(1, "z", 1), nil, "no zones given"},
		{"zone without nodes", 100, capNodes(1, "z", 1), []ZoneRF{{"Z", 1}}, `zone "Z" has no storage nodes (nodes are in zones "z")`},
		{"rf 0", 100, capNodes(1, "z", 1), []ZoneRF{{"z", 0}}, `zone "z" has replication factor 0; it must be at least 1`},
		{"zone twice", 100, capNodes(1, "z", 1), []ZoneRF{{"z", 1}, {"z", 1}}, `zone "z" is listed twice`},
		{"no partitions", 0, capNodes(1, "z", 1), []ZoneRF{{"z", 1}}, "0 partitions"},
		{"negative capacity", 100, capNodes(1, "z", 1, -1), []ZoneRF{{"z", 1}}, "sn2 has capacity -1"},
		{"duplicate node ids", 100, append(capNodes(1, "z", 1), capNodes(1, "z", 1)...), []ZoneRF{{"z", 1}}, "duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := Place("kvstore", tc.partitions, tc.nodes, tc.zones)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || topo != nil {
				t.Fatalf("got %v, %v; want an ErrInvalid containing %q", topo, err, tc.want)
			}
		})
	}
}

func TestMaxShards(t *testing.T) {
	for _, tc := range []struct {
		caps  []int
		rf    int
		limit int64
		want  int64
	}{
		{[]int{2, 2, 2}, 3, 100, 2},
		{[]int{2, 2}, 3, 100, 0},
		{[]int{3, 1, 1, 1}, 3, 100, 1},
		{[]int{3, 3, 2, 1}, 3, 100, 3},
		{[]int{4, 2, 2, 2, 1}, 2, 100, 5},
		{[]int{100, 1}, 2, 100, 1},
		{[]int{0, 0, 5}, 3, 100, 5},
		{[]int{0, 0, 0}, 3, 100, 100},
		{[]int{0}, 1, 1 << 32, 1 << 32},
		{[]int{7, 7, 7}, 1, 10, 10},
	} {
		if got := maxShards(tc.caps, tc.rf, tc.limit); got != tc.want {
			t.Errorf("maxShards(%v, rf %d, limit %d) = %d, want %d", tc.caps, tc.rf, tc.limit, got, tc.want)
		}
	}
}

// TestPlaceRandom places random zones and checks every result against
// checkPlaced, and every refusal against the one reason a zone can host no
// shard: fewer nodes than its replication factor.
func TestPlaceRandom(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./internal/topology/ -run '^%s$' -count=1 -v -topology.seed=%d)", seed, t.Name(), seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range 2000 {
		var nodes []Node
		var zones []ZoneRF
		for z := range 1 + rng.IntN(3) {
			name := fmt.Sprintf("z%d", z)
			var caps []int
			for range 1 + rng.IntN(6) {
				c := 1 + rng.IntN(5)
				if rng.IntN(10) == 0 {
					c = 0 // unlimited
				}
				caps = append(caps, c)
			}
			nodes = append(nodes, capNodes(len(nodes)+1, name, caps...)...)
			zones = append(zones, ZoneRF{name, 1 + rng.IntN(4)})
		}
		rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		partitions := uint32(1 + rng.IntN(40))
		topo, err := Place("kvstore", partitions, nodes, zones)
		desc := fmt.Sprintf("case %d: %d partitions, zones %v, nodes %+v", i, partitions, zones, nodes)
		if err != nil {
			short := false
			for _, z := range zones {
				short = short || len(zoneNodes(nodes, z.Name)) < z.RF
			}
			if !short || !errors.Is(err, ErrInvalid) {
				t.Fatalf("%s: %v", desc, err)
			}
			continue
		}
		if !t.Run(fmt.Sprint(i), func(t *testing.T) { checkPlaced(t, topo, nodes, zones) }) {
			t.Fatal(desc)
		}
	}
}

// checkPlaced checks what Place promises for its inputs: a valid topology
// with no rule violations, every zone's replicas on its own nodes, and as
// many shards as fit (one more would not, by brute force where the case is
// small and by maxShards's inequality otherwise).
func checkPlaced(t *testing.T, topo *Topology, nodes []Node, zones []ZoneRF) {
	t.Helper()
	if err := topo.Validate(); err != nil {
		t.Fatal(err)
	}
	if r := topo.Check(); !r.OK() {
		t.Fatalf("violations: %v", r.Violations)
	}
	s := len(topo.Shards)
	if s == 0 || s > int(topo.Partitions) {
		t.Fatalf("%d shards for %d partitions", s, topo.Partitions)
	}
	oneMoreFits := s < int(topo.Partitions)
	for _, z := range zones {
		zn := zoneNodes(nodes, z.Name)
		in := make(map[NodeID]bool)
		for _, n := range zn {
			in[n.ID] = true
		}
		for _, sh := range topo.Shards {
			got := 0
			for _, r := range sh.Replicas {
				if in[r] {
					got++
				}
			}
			if got != z.RF {
				t.Fatalf("%s has %d replicas in zone %q, want %d", ShardName(sh.ID), got, z.Name, z.RF)
			}
		}
		var caps []int
		for _, n := range zn {
			caps = append(caps, n.Capacity)
		}
		if !fits(caps, z.RF, s) {
			t.Fatalf("zone %q (caps %v, rf %d) holds %d shards that do not fit", z.Name, caps, z.RF, s)
		}
		oneMoreFits = oneMoreFits && fits(caps, z.RF, s+1)
	}
	if oneMoreFits {
		t.Fatalf("%d shards placed, but %d fit", s, s+1)
	}
	for _, n := range topo.Nodes {
		if !slices.ContainsFunc(zones, func(z ZoneRF) bool { return z.Name == n.Zone }) {
			t.Fatalf("%s in unlisted zone %q is in the topology", NodeName(n.ID), n.Zone)
		}
	}
}

func zoneNodes(nodes []Node, zone string) []Node {
	var out []Node
	for _, n := range nodes {
		if n.Zone == zone {
			out = append(out, n)
		}
	}
	return out
}

// fits reports whether shards shards of rf replicas on distinct nodes fit
// nodes of capacities caps (0: unlimited): by exhaustive search when the
// case is small, else by maxShards's inequality.
func fits(caps []int, rf, shards int) bool {
	if len(caps) > 6 || shards > 12 {
		return maxShards(caps, rf, int64(shards)) == int64(shards)
	}
	spare := make([]int, len(caps))
	for i, c := range caps {
		spare[i] = c
		if c == 0 || c > shards {
			spare[i] = shards
		}
	}
	memo := make(map[string]bool)
	var search func(left int) bool
	search = func(left int) bool {
		if left == 0 {
			return true
		}
		key := fmt.Sprint(left, slices.Sorted(slices.Values(spare)))
		if ok, seen := memo[key]; seen {
			return ok
		}
		ok := false
		var choose func(from, need int) // picks need more nodes from from on
		choose = func(from, need int) {
			if ok {
				return
			}
			if need == 0 {
				ok = search(left - 1)
				return
			}
			for i := from; i < len(spare); i++ {
				if spare[i] > 0 {
					spare[i]--
					choose(i+1, need-1)
					spare[i]++
				}
			}
		}
		choose(0, rf)
		memo[key] = ok
		return ok
	}
	return search(shards)
}

func TestSpreadLeadersFollowsPaths(t *testing.T) {
	// sn1 leads two shards; only a path sn1 -rg1-> sn2 -rg3-> sn3 -rg4-> sn4
	// lets every node lead one.
	shards := []Shard{
		{ID: 1, Replicas: []NodeID{1, 2}},
		{ID: 2, Replicas: []NodeID{1, 2}},
		{ID: 3, Replicas: []NodeID{2, 3}},
		{ID: 4, Replicas: []NodeID{3, 4}},
	}
	for _, pref := range [][]NodeID{{1, 1, 2, 3}, {1, 2, 2, 3}, {2, 2, 3, 3}} {
		leads := map[NodeID]int{}
		for i, p := range pref {
			shards[i].Preferred = p
			leads[p]++
		}
		for shiftLeader(shards, []NodeID{1, 2, 3, 4}, leads) {
		}
		got := map[NodeID]int{}
		for _, s := range shards {
			if !slices.Contains(s.Replicas, s.Preferred) {
				t.Fatalf("%v: %s prefers %s", pref, ShardName(s.ID), NodeName(s.Preferred))
			}
			got[s.Preferred]++
		}
		if len(got) != 4 {
			t.Errorf("from %v: leaders %v, want one each", pref, got)
		}
	}
}
