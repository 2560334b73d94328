package topology

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Diff describes, one human-readable line per change, what deploying to
// over from changes; from may be nil (nothing deployed yet), and so may to
// (everything removed). It returns the
// single line "no change" when the two place the same nodes, replicas,
// preferred leaders and partitions (SameLayout). Seq and shard origins are
// not compared. When to's partition count is a multiple of from's, Diff
// describes the split and compares owners in to's numbering (partition p
// of from is partitions p*f .. p*f+f-1 of to). Under any other count,
// partition p names a different slice of the hash space in each, so Diff
// says the count changes and lists no partition moves.
//
// Lines come in the order a deployment would apply them:
//
//	split the 100 partitions into 200: each partition's hash range in two halves; ...
//	add storage node sn4 at 10.0.0.4:5000 (zone "a", capacity 2)
//	create shard rg1 with replicas on sn1, sn2, sn3 (leader preferred on sn1)
//	add a replica of rg2 on sn4
//	remove rg2's replica from sn1
//	prefer rg2's leader on sn4 instead of sn1
//	assign 50 partitions to rg1
//	move 25 partitions from rg1 to rg3
//	remove shard rg4 (replicas on sn1, sn2, sn3)
//	remove storage node sn5
func Diff(from, to *Topology) []string {
	out := changes(from, to)
	if len(out) == 0 {
		return []string{"no change"}
	}
	return out
}

// SameLayout reports whether a and b place the same nodes (address, zone,
// capacity), replicas, preferred leaders and partitions in the same store,
// so that deploying one over the other changes nothing. Seq and shard
// origins are not compared. Two nil topologies are the same.
func SameLayout(a, b *Topology) bool { return len(changes(a, b)) == 0 }

// changes is Diff without the "no change" line.
func changes(from, to *Topology) []string {
	switch {
	case from == nil && to == nil:
		return nil
	case from == nil:
		from = &Topology{Store: to.Store, Partitions: to.Partitions}
	case to == nil:
		to = &Topology{Store: from.Store, Partitions: from.Partitions}
	}
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if from.Store != to.Store && from.Store != "" {
		add("change the store from %q to %q; a topology belongs to one store, so check which store you deploy to", from.Store, to.Store)
	}
	f := uint32(1)
	switch {
	case from.Partitions == to.Partitions || from.Partitions == 0:
	case to.Partitions%from.Partitions == 0 && to.Partitions > from.Partitions:
		f = to.Partitions / from.Partitions
		add("split the %d partitions into %d: %s", from.Partitions, to.Partitions, splitText(f))
	default:
		f = 0
		add("change the partition count from %d to %d; it is fixed when a store is created, so this needs a new store", from.Partitions, to.Partitions)
	}
	for _, n := range to.Nodes {
		old, ok := from.Node(n.ID)
		sn := NodeName(n.ID)
		switch {
		case !ok:
			add("add storage node %s at %s (zone %q, capacity %s)", sn, n.Addr, n.Zone, capList([]int{n.Capacity}))
		default:
			if old.Addr != n.Addr {
				add("move %s from %s to %s", sn, old.Addr, n.Addr)
			}
			if old.Zone != n.Zone {
				add("move %s from zone %q to zone %q", sn, old.Zone, n.Zone)
			}
			if old.Capacity != n.Capacity {
				add("change %s's capacity from %s to %s", sn, capList([]int{old.Capacity}), capList([]int{n.Capacity}))
			}
		}
	}
	for _, s := range to.Shards {
		rg := ShardName(s.ID)
		old, ok := from.Shard(s.ID)
		if !ok {
			add("create shard %s with replicas on %s%s", rg, nodeList(s.Replicas), leaderNote(s.Preferred))
			continue
		}
		for _, n := range s.Replicas {
			if !slices.Contains(old.Replicas, n) {
				add("add a replica of %s on %s", rg, NodeName(n))
			}
		}
		for _, n := range old.Replicas {
			if !slices.Contains(s.Replicas, n) {
				add("remove %s's replica from %s", rg, NodeName(n))
			}
		}
		if old.Preferred != s.Preferred {
			switch {
			case s.Preferred == 0:
				add("stop preferring a leader for %s (was %s)", rg, NodeName(old.Preferred))
			case old.Preferred == 0:
				add("prefer %s's leader on %s", rg, NodeName(s.Preferred))
			default:
				add("prefer %s's leader on %s instead of %s", rg, NodeName(s.Preferred), NodeName(old.Preferred))
			}
		}
	}
	if f > 0 {
		out = append(out, partitionMoves(splitOwners(from.PartitionShard, f), to.PartitionShard)...)
	}
	for _, s := range from.Shards {
		if _, ok := to.Shard(s.ID); !ok {
			add("remove shard %s (replicas on %s)", ShardName(s.ID), nodeList(s.Replicas))
		}
	}
	for _, n := range from.Nodes {
		if _, ok := to.Node(n.ID); !ok {
			add("remove storage node %s at %s", NodeName(n.ID), n.Addr)
		}
	}
	return out
}

// splitText says what a split f ways does to keys.
func splitText(f uint32) string {
	if f == 2 {
		return "each partition's hash range in two halves; no key changes partition except to one of its halves"
	}
	return fmt.Sprintf("each partition's hash range in %d equal parts; no key changes partition except to one of its parts", f)
}

func leaderNote(preferred NodeID) string {
	if preferred == 0 {
		return " (no preferred leader)"
	}
	return " (leader preferred on " + NodeName(preferred) + ")"
}

// partitionMoves counts partitions changing owner, one line per pair of
// shards: first partitions new in to (assigned), then those changing shard
// (moved), then those gone from to (dropped).
func partitionMoves(from, to []ShardID) []string {
	type move struct{ from, to ShardID } // 0: no owner
	count := make(map[move]int)
	for p := range max(len(from), len(to)) {
		var m move
		if p < len(from) {
			m.from = from[p]
		}
		if p < len(to) {
			m.to = to[p]
		}
		if m.from != m.to {
			count[m]++
		}
	}
	kind := func(m move) int { // assign, then move, then drop
		switch {
		case m.from == 0:
			return 0
		case m.to == 0:
			return 2
		}
		return 1
	}
	moves := slices.SortedFunc(maps.Keys(count), func(a, b move) int {
		return cmp.Or(cmp.Compare(kind(a), kind(b)), cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
	})
	var out []string
	for _, m := range moves {
		n := plural(count[m], "partition")
		switch {
		case m.from == 0:
			out = append(out, fmt.Sprintf("assign %s to %s", n, ShardName(m.to)))
		case m.to == 0:
			out = append(out, fmt.Sprintf("drop %s from %s", n, ShardName(m.from)))
		default:
			out = append(out, fmt.Sprintf("move %s from %s to %s", n, ShardName(m.from), ShardName(m.to)))
		}
	}
	return out
}
