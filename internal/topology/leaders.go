package topology

import (
	"cmp"
	"maps"
	"slices"
)

// spreadLeaders sets every shard's Preferred to one of its replicas so that
// the number of shards each node prefers to lead is as even as the replicas
// allow: when every node can lead floor or ceil of shards/nodes, it does.
//
// A shard whose Preferred is one of its replicas keeps it at first, so a
// changed topology changes few preferences. A first pass prefers, shard by
// shard, for the others, the replica that leads fewest relative to how
// many replicas it hosts (then fewest, then lowest id). Then, while some
// node u leads at least two more shards than a node v it can reach by an
// alternating path (u leads a shard with a replica on w, w leads a shard
// with a replica on ..., on v), leadership shifts one step along the path:
// u leads one fewer, v one more, the nodes between as many as before. With
// no such path left, the spread of leaders is optimal (Harvey et al.,
// "Semi-matchings for bipartite graphs and load balancing", 2006); each
// shift lowers the sum of squared leader counts, so it ends.
func spreadLeaders(shards []Shard) {
	hosted := make(map[NodeID]int)
	leads := make(map[NodeID]int)
	for _, s := range shards {
		for _, r := range s.Replicas {
			hosted[r]++
		}
		if slices.Contains(s.Replicas, s.Preferred) {
			leads[s.Preferred]++
		}
	}
	for i := range shards {
		if slices.Contains(shards[i].Replicas, shards[i].Preferred) {
			continue
		}
		best := shards[i].Replicas[0]
		for _, r := range shards[i].Replicas[1:] {
			// leads[r]/hosted[r] < leads[best]/hosted[best], then fewer, then id.
			c := cmp.Compare(leads[r]*hosted[best], leads[best]*hosted[r])
			if c == 0 {
				c = cmp.Compare(leads[r], leads[best])
			}
			if c < 0 || c == 0 && r < best {
				best = r
			}
		}
		shards[i].Preferred = best
		leads[best]++
	}
	nodes := slices.Sorted(maps.Keys(hosted))
	if len(nodes) == 0 {
		return
	}
	for shiftLeader(shards, nodes, leads) {
	}
}

// shiftLeader finds one path along which moving leadership evens out the
// leader counts, applies it, and reports whether it found one.
func shiftLeader(shards []Shard, nodes []NodeID, leads map[NodeID]int) bool {
	ledBy := make(map[NodeID][]int)
	for i, s := range shards {
		ledBy[s.Preferred] = append(ledBy[s.Preferred], i)
	}
	fewest := leads[nodes[0]]
	for _, n := range nodes {
		fewest = min(fewest, leads[n])
	}
	byLeads := slices.Clone(nodes)
	slices.SortStableFunc(byLeads, func(a, b NodeID) int { return cmp.Compare(leads[b], leads[a]) })
	type step struct {
		shard int
		from  NodeID
	}
	for _, u := range byLeads {
		if leads[u]-fewest < 2 {
			return false
		}
		via := map[NodeID]step{u: {-1, 0}}
		queue := []NodeID{u}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, si := range ledBy[x] {
				for _, w := range shards[si].Replicas {
					if _, seen := via[w]; seen {
						continue
					}
					via[w] = step{si, x}
					if leads[w] <= leads[u]-2 {
						for y := w; y != u; y = via[y].from {
							shards[via[y].shard].Preferred = y
						}
						leads[u]--
						leads[w]++
						return true
					}
					queue = append(queue, w)
				}
			}
		}
	}
	return false
}
