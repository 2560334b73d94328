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
	if len(zones) == 0 {
		return nil, fmt.Errorf("%w: no zones given; name at least one zone and its replication factor", ErrInvalid)
	}
	byZone := make(map[string][]Node)
	for _, n := range nodes {
		if n.Capacity < 0 {
			return nil, fmt.Errorf("%w: storage node %s has capacity %d; capacity is how many replicas it may host (0: unlimited): set it to 0 or more", ErrInvalid, NodeName(n.ID), n.Capacity)
		}
		byZone[n.Zone] = append(byZone[n.Zone], n)
	}
	shards := int64(partitions)
	listed := make(map[string]bool)
	for _, z := range zones {
		zn := byZone[z.Name]
		switch {
		case listed[z.Name]:
			return nil, fmt.Errorf("%w: zone %q is listed twice; list each zone once", ErrInvalid, z.Name)
		case z.RF < 1:
			return nil, fmt.Errorf("%w: zone %q has replication factor %d; it must be at least 1", ErrInvalid, z.Name, z.RF)
		case len(zn) == 0:
			return nil, fmt.Errorf("%w: zone %q has no storage nodes (nodes are in zones %s): deploy storage nodes in zone %q or fix the zone name", ErrInvalid, z.Name, zoneNames(byZone), z.Name)
		}
		listed[z.Name] = true
		caps := make([]int, len(zn))
		for i, n := range zn {
			caps[i] = n.Capacity
		}
		s := maxShards(caps, z.RF, shards)
		if s == 0 {
			return nil, fmt.Errorf("%w: zone %q has %s with capacity %s; replication factor %d needs at least %d storage nodes with capacity >= 1: deploy more storage nodes in the zone or lower the replication factor",
				ErrInvalid, z.Name, plural(len(zn), "storage node"), capList(caps), z.RF, z.RF)
		}
		shards = min(shards, s)
	}

	t := &Topology{Store: store, Partitions: partitions, Seq: 1}
	for _, n := range nodes {
		if listed[n.Zone] {
			t.Nodes = append(t.Nodes, n)
		}
	}
	t.Shards = make([]Shard, shards)
	for i := range t.Shards {
		t.Shards[i] = Shard{ID: ShardID(i + 1), Origin: randomOrigin()}
	}
	for _, z := range zones {
		if err := placeZone(t.Shards, byZone[z.Name], z); err != nil {
			return nil, err
		}
	}
	spreadLeaders(t.Shards)
	t.PartitionShard = dealPartitions(partitions, int(shards))
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// maxShards returns the most shards, at most limit, that nodes with
// capacities caps (0: unlimited) can host with rf replicas each on distinct
// nodes. S shards fit exactly when sum_i min(c_i, S) >= S*rf: a node hosts at
// most one replica of each shard, and when the inequality holds, dealing
// each node's min(c_i, S) slots round-robin over the shards places them all.
// The left side minus the right is concave in S and 0 at S = 0, so the
// feasible S form a prefix of 0, 1, 2, ... and binary search finds its end.
func maxShards(caps []int, rf int, limit int64) int64 {
	if rf < 1 || rf > len(caps) {
		return 0
	}
	fits := func(s int64) bool {
		var sum int64
		for _, c := range caps {
			if c == 0 || int64(c) > s {
				sum += s
			} else {
				sum += int64(c)
			}
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

// placeZone appends z.RF replicas on nodes (all of zone z) to every shard.
// Each shard takes the nodes with the most spare capacity, so a node never
// exceeds its capacity and, for a shard count maxShards allows, no shard
// runs short: with k shards left and spare capacities e_i, placing one
// shard on the RF largest e_i keeps sum_i min(e_i, k) >= k*RF true for k-1
// (a node left out that could still serve all k shards implies every
// chosen node could too, and their surplus pays for it).
func placeZone(shards []Shard, nodes []Node, z ZoneRF) error {
	nodes = slices.SortedFunc(slices.Values(nodes), func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	n := len(nodes)
	spare := make([]int, n)
	for i, nd := range nodes {
		spare[i] = len(shards) // a node holds at most one replica of each shard
		if nd.Capacity > 0 && nd.Capacity < spare[i] {
			spare[i] = nd.Capacity
		}
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
