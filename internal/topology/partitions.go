package topology

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/internal/keys"
)

// MaxPartitions is the most partitions SplitPartitions makes.
const MaxPartitions = 1 << 20

// MovePartition returns a copy of cur in which shard to owns partition p.
// It refuses (ErrInvalid) a partition or shard that does not exist and a
// partition that to owns already. The partitions may then be spread
// unevenly: Check says so, and Redistribute evens them out.
func MovePartition(cur *Topology, p keys.PartitionID, to ShardID) (*Topology, error) {
	switch {
	case uint32(p) >= cur.Partitions:
		return nil, fmt.Errorf("%w: there is no partition %d: the store has %d partitions, 0 to %d", ErrInvalid, p, cur.Partitions, cur.Partitions-1)
	case !hasShard(cur, to):
		return nil, fmt.Errorf("%w: there is no shard %s in this topology; its shards are %s", ErrInvalid, ShardName(to), shardList(cur.Shards))
	case cur.PartitionShard[p] == to:
		return nil, fmt.Errorf("%w: partition %d belongs to %s already", ErrInvalid, p, ShardName(to))
	}
	t := cur.Clone()
	t.MaxShard = cur.maxShard()
	t.PartitionShard[p] = to
	return t, t.Validate()
}

// SplitPartitions returns a copy of cur with newCount partitions: with
// n = cur.Partitions and f = newCount/n, partition p of n becomes
// partitions p*f .. p*f+f-1 of newCount, all owned by p's shard. No key
// changes shard: partition p's hash range [ceil(p*2^64/n),
// ceil((p+1)*2^64/n)) is exactly the union of its children's, so
// keys.PartitionOf(h, n*f)/f == keys.PartitionOf(h, n) for every hash h.
//
// newCount must be a multiple of n, at least 2n, and at most
// MaxPartitions; otherwise SplitPartitions returns an error wrapping
// ErrInvalid that says which counts are allowed.
func SplitPartitions(cur *Topology, newCount uint32) (*Topology, error) {
	n := cur.Partitions
	switch {
	case newCount > MaxPartitions:
		return nil, fmt.Errorf("%w: %d partitions is more than the %d a store may have", ErrInvalid, newCount, MaxPartitions)
	case n == 0 || newCount%n != 0 || newCount/n < 2:
		return nil, fmt.Errorf("%w: %d partitions cannot be split into %d: each partition splits into equal parts, so give a multiple of %d, at least %d", ErrInvalid, n, newCount, n, 2*n)
	}
	t := cur.Clone()
	t.MaxShard = cur.maxShard()
	t.Partitions = newCount
	t.PartitionShard = splitOwners(cur.PartitionShard, newCount/n)
	return t, t.Validate()
}

// splitOwners returns the owners of partitions split f ways: child c of
// len(owner)*f belongs to the owner of partition c/f.
func splitOwners(owner []ShardID, f uint32) []ShardID {
	out := make([]ShardID, len(owner)*int(f))
	for c := range out {
		out[c] = owner[c/int(f)]
	}
	return out
}

// spreadPartitions returns owner changed so that shards (ids; every one
// must appear in the result, others lose their partitions) each own
// floor or ceil of len(owner)/len(shards) partitions, with as few
// partitions changing owner as possible.
//
// The shards owning most keep the larger share (targets of q+1 go to the
// largest, so the excess sum_s max(0, owned_s - target_s), which any
// spread must move, is smallest). A shard above its target gives up its
// highest-numbered partitions; the freed partitions, ascending, fill the
// shards below target in id order, so shards stay contiguous where they
// can.
func spreadPartitions(owner []ShardID, shards []ShardID) []ShardID {
	out := slices.Clone(owner)
	if len(shards) == 0 {
		return out
	}
	owned := make(map[ShardID][]int)
	for p, s := range owner {
		owned[s] = append(owned[s], p)
	}
	order := slices.Clone(shards)
	slices.SortFunc(order, func(a, b ShardID) int {
		return cmp.Or(cmp.Compare(len(owned[b]), len(owned[a])), cmp.Compare(a, b))
	})
	q, r := len(owner)/len(shards), len(owner)%len(shards)
	target := make(map[ShardID]int, len(shards))
	for i, s := range order {
		target[s] = q
		if i < r {
			target[s]++
		}
	}
	var free []int
	for s, ps := range owned {
		t, keep := target[s]
		if !keep {
			free = append(free, ps...)
		} else if extra := len(ps) - t; extra > 0 {
			free = append(free, ps[len(ps)-extra:]...)
		}
	}
	slices.Sort(free)
	for _, s := range slices.Sorted(slices.Values(shards)) {
		for need := target[s] - len(owned[s]); need > 0; need-- {
			out[free[0]] = s
			free = free[1:]
		}
	}
	return out
}

func hasShard(t *Topology, id ShardID) bool {
	_, ok := t.Shard(id)
	return ok
}

// shardList names shards as "rg1, rg2, rg3".
func shardList(shards []Shard) string {
	s := ""
	for i, sh := range shards {
		if i > 0 {
			s += ", "
		}
		s += ShardName(sh.ID)
	}
	if s == "" {
		return "none"
	}
	return s
}
