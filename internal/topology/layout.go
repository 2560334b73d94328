package topology

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// layout is a topology being changed over a pool (by Redistribute,
// Rebalance, Contract and ChangeRepFactor), with the replicas each node
// hosts kept up to date.
type layout struct {
	cur    *Topology // as it was; not changed
	t      *Topology // the copy being changed
	pool   *pool
	hosted map[NodeID]int
}

// unlimited is the spare capacity of a node of Capacity 0, less what it
// hosts, so that among such nodes the least loaded comes first.
const unlimited = 1 << 30

func begin(cur *Topology, nodes []Node, zones []ZoneRF) (*layout, error) {
	pl, err := newPool(nodes, zones)
	if err != nil {
		return nil, err
	}
	l := &layout{cur: cur, t: cur.Clone(), pool: pl, hosted: make(map[NodeID]int)}
	l.t.MaxShard = cur.maxShard()
	for _, s := range l.t.Shards {
		for _, r := range s.Replicas {
			l.hosted[r]++
		}
	}
	return l, nil
}

// spare is how many more replicas node id may host: 0 for a node outside
// the pool, possibly negative for one over its capacity.
func (l *layout) spare(id NodeID) int {
	n, ok := l.pool.nodes[id]
	switch {
	case !ok:
		return 0
	case n.Capacity == 0:
		return unlimited - l.hosted[id]
	}
	return n.Capacity - l.hosted[id]
}

// zoneOf is the zone of node id: the pool's, else the topology's.
func (l *layout) zoneOf(id NodeID) string {
	if n, ok := l.pool.nodes[id]; ok {
		return n.Zone
	}
	n, _ := l.t.Node(id)
	return n.Zone
}

// inZone counts shard si's replicas in zone.
func (l *layout) inZone(si int, zone string) int {
	c := 0
	for _, r := range l.t.Shards[si].Replicas {
		if l.zoneOf(r) == zone {
			c++
		}
	}
	return c
}

func (l *layout) add(si int, id NodeID) {
	l.t.Shards[si].Replicas = append(l.t.Shards[si].Replicas, id)
	l.hosted[id]++
}

func (l *layout) remove(si int, id NodeID) {
	s := &l.t.Shards[si]
	s.Replicas = slices.DeleteFunc(s.Replicas, func(r NodeID) bool { return r == id })
	if s.Preferred == id {
		s.Preferred = 0
	}
	l.hosted[id]--
}

// target returns the pool node of zone that should take a replica of shard
// si: one that hosts none of its replicas, with the most spare capacity
// (then the lowest id). ok is false when no such node has room.
func (l *layout) target(si int, zone string) (NodeID, bool) {
	var best NodeID
	most := 0
	for _, n := range l.pool.byZone[zone] {
		if sp := l.spare(n.ID); sp > most && !slices.Contains(l.t.Shards[si].Replicas, n.ID) {
			best, most = n.ID, sp
		}
	}
	return best, most > 0
}

// dropShards removes the shards with the given ids.
func (l *layout) dropShards(ids []ShardID) {
	l.t.Shards = slices.DeleteFunc(l.t.Shards, func(s Shard) bool {
		if !slices.Contains(ids, s.ID) {
			return false
		}
		for _, r := range s.Replicas {
			l.hosted[r]--
		}
		return true
	})
}

func (l *layout) shardIDs() []ShardID {
	ids := make([]ShardID, len(l.t.Shards))
	for i, s := range l.t.Shards {
		ids[i] = s.ID
	}
	return ids
}

// rebalance moves replicas, as few as it can, so that no replica is on a
// node outside the pool, every listed zone holds its RF of every shard,
// and no node hosts more than its capacity. Each fix takes the node of the
// zone with the most spare capacity. It returns an error wrapping
// ErrInvalid that says what to change when the pool lacks room.
func (l *layout) rebalance() error {
	for si, s := range l.t.Shards {
		for _, r := range slices.Clone(s.Replicas) {
			if _, ok := l.pool.nodes[r]; !ok {
				l.remove(si, r)
			}
		}
	}
	for _, z := range l.pool.zones {
		for si := range l.t.Shards {
			for l.inZone(si, z.Name) < z.RF {
				n, ok := l.target(si, z.Name)
				if !ok {
					return l.noRoom(si, z.Name, "to hold its replication factor")
				}
				l.add(si, n)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(l.pool.nodes)) {
		for l.spare(id) < 0 {
			if err := l.relieve(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// relieve moves one replica off node id, which is over its capacity: of a
// shard it does not prefer to lead if it can, the highest id first.
func (l *layout) relieve(id NodeID) error {
	zone := l.zoneOf(id)
	order := make([]int, 0, len(l.t.Shards))
	for si, s := range l.t.Shards {
		if slices.Contains(s.Replicas, id) {
			order = append(order, si)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		pa, pb := l.t.Shards[a].Preferred == id, l.t.Shards[b].Preferred == id
		if pa != pb {
			if pa {
				return 1
			}
			return -1
		}
		return cmp.Compare(l.t.Shards[b].ID, l.t.Shards[a].ID)
	})
	for _, si := range order {
		if n, ok := l.target(si, zone); ok {
			l.remove(si, id)
			l.add(si, n)
			return nil
		}
	}
	n := l.pool.nodes[id]
	return fmt.Errorf("%w: %s hosts %d replicas but its capacity is %d, and no other storage node of zone %q has room for one of them: add storage nodes to the pool, raise capacities, or remove shards (topology contract)",
		ErrInvalid, NodeName(id), l.hosted[id], n.Capacity, zone)
}

// noRoom says that zone has no node to take a replica of shard si.
func (l *layout) noRoom(si int, zone, why string) error {
	s := l.t.Shards[si]
	return fmt.Errorf("%w: zone %q has no storage node with room for another replica of %s %s (it has replicas on %s; spare capacity: %s): add storage nodes to the pool or raise their capacity",
		ErrInvalid, zone, ShardName(s.ID), why, nodeList(s.Replicas), l.spareList(zone))
}

func spareText(n int) string {
	if n > unlimited/2 {
		return "unlimited"
	}
	return fmt.Sprint(max(0, n))
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	if out == "" {
		return "none"
	}
	return out
}

// finish spreads preferred leaders, lists the pool's nodes and those
// still hosting replicas, checks that every shard kept one replica
// (keepsOne), and validates the result.
func (l *layout) finish() (*Topology, error) {
	spreadLeaders(l.t.Shards)
	var nodes []Node
	for _, n := range l.pool.nodes {
		nodes = append(nodes, n)
	}
	for _, n := range l.t.Nodes {
		if _, ok := l.pool.nodes[n.ID]; !ok && l.hosted[n.ID] > 0 {
			nodes = append(nodes, n)
		}
	}
	slices.SortFunc(nodes, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	l.t.Nodes = nodes
	if err := keepsOne(l.cur, l.t); err != nil {
		return nil, err
	}
	if err := l.t.Validate(); err != nil {
		return nil, err
	}
	return l.t, nil
}

// keepsOne refuses a shard of both from and to whose replicas all change
// at once: replicas are added and removed one Raft membership change at a
// time, and a shard that keeps none of its replicas would lose its data
// and majority on the way.
func keepsOne(from, to *Topology) error {
	for _, s := range to.Shards {
		old, ok := from.Shard(s.ID)
		if !ok || slices.ContainsFunc(old.Replicas, func(r NodeID) bool { return slices.Contains(s.Replicas, r) }) {
			continue
		}
		return fmt.Errorf("%w: every replica of %s would move at once (from %s to %s), but one must stay so that membership changes, made one at a time, keep a majority: rebalance in two steps (keep one of %s in the pool, deploy, then remove it and rebalance again)",
			ErrInvalid, ShardName(s.ID), nodeList(old.Replicas), nodeList(s.Replicas), nodeList(old.Replicas))
	}
	return nil
}
