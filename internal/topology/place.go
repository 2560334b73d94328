package topology

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ZoneRF names a primary zone and how many replicas of every shard it holds.
type ZoneRF struct {
	Name string // matches Node.Zone
	RF   int    // replicas of each shard in this zone; at least 1
}

// Place lays out a new store over nodes with as many shards as the nodes'
// capacities allow, and returns it validated, with Seq 1.
//
// Every zone in zones gets RF replicas of every shard, on RF distinct nodes
// of that zone. Nodes whose Zone is not listed are ignored and left out of
// the topology. The shard count is the largest S that every zone can host
// (a zone with capacities c_i hosts S shards exactly when
// sum_i min(c_i, S) >= S*RF), but at most partitions, so every shard owns a
// partition. A node with Capacity 0 counts as unlimited, so a zone of such
// nodes is bounded by partitions alone: set capacities to get fewer, larger
// shards.
//
// Each zone fills its shards in order, giving each shard the RF nodes with
// the most spare capacity; ties go to the lowest id, rotated by one node per
// shard. This greedy order always places all S shards. Partitions are dealt
// to shards in contiguous blocks as in Build, and preferred leaders are
// spread as evenly over the nodes as the replicas allow (see Check's
// leader-spread rule).
//
// Place returns an error wrapping ErrInvalid that says what to change when
// partitions is 0, zones is empty or names a zone twice, a zone has an RF
// below 1 or no nodes, a node has a negative capacity, a zone cannot host
// even one shard, or the result fails Validate (e.g. duplicate node ids).
func Place(store string, partitions uint32, nodes []Node, zones []ZoneRF) (*Topology, error) {
	if partitions == 0 {
		return nil, fmt.Errorf("%w: 0 partitions; a store needs at least one partition", ErrInvalid)
	}
	pl, err := newPool(nodes, zones)
	if err != nil {
		return nil, err
	}
	shards := int64(partitions)
	for _, z := range zones {
		caps := pl.caps(z.Name)
		s := maxShards(caps, z.RF, shards)
		if s == 0 {
			return nil, fmt.Errorf("%w: zone %q has %s with capacity %s; replication factor %d needs at least %d storage nodes with capacity >= 1: deploy more storage nodes in the zone or lower the replication factor",
				ErrInvalid, z.Name, plural(len(caps), "storage node"), capList(caps), z.RF, z.RF)
		}
		shards = min(shards, s)
	}

	t := &Topology{Store: store, Partitions: partitions, Seq: 1}
	for _, n := range nodes {
		if _, ok := pl.nodes[n.ID]; ok {
			t.Nodes = append(t.Nodes, n)
		}
	}
	t.Shards = make([]Shard, shards)
	for i := range t.Shards {
		t.Shards[i] = Shard{ID: ShardID(i + 1), Origin: randomOrigin()}
	}
	for _, z := range zones {
		if err := placeZone(t.Shards, pl.byZone[z.Name], z, nil); err != nil {
			return nil, err
		}
	}
	spreadLeaders(t.Shards)
	t.PartitionShard = dealPartitions(partitions, int(shards))
	t.MaxShard = ShardID(shards)
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// maxShards returns the most shards, at most limit, that nodes with
// capacities caps (0: unlimited) can host with rf replicas each on distinct
// nodes (fitShards with each node's capacity as its spare).
func maxShards(caps []int, rf int, limit int64) int64 {
	spare := make([]int64, len(caps))
	for i, c := range caps {
		spare[i] = limit
		if c > 0 && int64(c) < limit {
			spare[i] = int64(c)
		}
	}
	return fitShards(spare, rf, limit)
}

// fitShards returns the most new shards, at most limit, that nodes which
// may each take spare[i] more replicas can host with rf replicas each on
// distinct nodes. S shards fit exactly when sum_i min(spare_i, S) >= S*rf:
// a node hosts at most one replica of each shard, and when the inequality
// holds, dealing each node's min(spare_i, S) slots round-robin over the
// shards places them all. The left side minus the right is concave in S
// and 0 at S = 0, so the feasible S form a prefix of 0, 1, 2, ... and
// binary search finds its end.
func fitShards(spare []int64, rf int, limit int64) int64 {
	if rf < 1 || rf > len(spare) {
		return 0
	}
	fits := func(s int64) bool {
		var sum int64
		for _, c := range spare {
			sum += max(0, min(c, s))
		}
		return sum >= s*int64(rf)
	}
	lo, hi := int64(0), limit
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// placeZone appends z.RF replicas on nodes (all of zone z) to every shard,
// on top of the replicas the nodes already host (hosted; nil: none).
// Each shard takes the nodes with the most spare capacity, so a node never
// exceeds its capacity and, for a shard count fitShards allows, no shard
// runs short: with k shards left and spare capacities e_i, placing one
// shard on the RF largest e_i keeps sum_i min(e_i, k) >= k*RF true for k-1
// (a node left out that could still serve all k shards implies every
// chosen node could too, and their surplus pays for it).
func placeZone(shards []Shard, nodes []Node, z ZoneRF, hosted map[NodeID]int) error {
	nodes = slices.SortedFunc(slices.Values(nodes), func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	n := len(nodes)
	spare := make([]int, n)
	for i, nd := range nodes {
		spare[i] = len(shards) // a node holds at most one replica of each shard
		if nd.Capacity > 0 {
			spare[i] = max(0, min(spare[i], nd.Capacity-hosted[nd.ID]))
		}
	}
	if n < z.RF && len(shards) > 0 {
		return fmt.Errorf("%w: zone %q has %s; replication factor %d needs %d", ErrInvalid, z.Name, plural(n, "storage node"), z.RF, z.RF)
	}
	order := make([]int, n)
	for s := range shards {
		for i := range order {
			order[i] = i
		}
		// Most spare first; among equals, start at node s mod n.
		slices.SortFunc(order, func(a, b int) int {
			if c := cmp.Compare(spare[b], spare[a]); c != 0 {
				return c
			}
			return cmp.Compare((a-s%n+n)%n, (b-s%n+n)%n)
		})
		picked := make([]NodeID, 0, z.RF)
		for _, i := range order[:z.RF] {
			if spare[i] == 0 {
				return fmt.Errorf("%w: internal error: zone %q ran out of capacity at shard %s; please report this with the node list", ErrInvalid, z.Name, ShardName(shards[s].ID))
			}
			spare[i]--
			picked = append(picked, nodes[i].ID)
		}
		slices.Sort(picked)
		shards[s].Replicas = append(shards[s].Replicas, picked...)
	}
	return nil
}

func zoneNames(byZone map[string][]Node) string {
	names := make([]string, 0, len(byZone))
	for _, z := range slices.Sorted(maps.Keys(byZone)) {
		names = append(names, strconv.Quote(z))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func capList(caps []int) string {
	out := make([]string, len(caps))
	for i, c := range caps {
		if c == 0 {
			out[i] = "unlimited"
		} else {
			out[i] = strconv.Itoa(c)
		}
	}
	return strings.Join(out, ",")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
