package admin

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cairndb/cairn/internal/topology"
)

// partSum is one partition's checksum on one replica.
type partSum struct {
	Sum            uint64
	Records, Bytes int64
}

func (p partSum) String() string {
	return fmt.Sprintf("sum %016x, %d %s", p.Sum, p.Records, plural(int(p.Records), "record", "records"))
}

// replicaSums is one replica's checksum of its shard at one index: its
// sums by partition, or Err when it has none.
type replicaSums struct {
	SN   uint64
	Sums map[uint32]partSum
	Err  string
}

// divergence is a partition whose sum on one replica differs from the sum
// a majority of the shard's replicas agree on.
type divergence struct {
	Partition uint32
	SN        uint64
	Got, Want partSum
	Majority  []uint64 // the replicas holding Want
}

// comparison is what comparing a shard's replicas found.
type comparison struct {
	Partitions int
	Differ     []divergence // by node, then partition
	NoMajority []string     // one sentence per partition no majority agrees on
	Failed     []string     // replicas that have no sums, and why
}

// clean reports whether every replica agreed on every partition.
func (c comparison) clean() bool {
	return len(c.Differ) == 0 && len(c.NoMajority) == 0 && len(c.Failed) == 0
}

// compareSums compares the sums of a shard's replicas (every one of
// replicas, those in got having answered) partition by partition. A sum
// held by a majority of all the replicas is the shard's; a replica
// holding another differs. Replicas without sums count towards no
// majority.
func compareSums(shard uint64, replicas []uint64, got []replicaSums) comparison {
	need := len(replicas)/2 + 1
	var c comparison
	parts := map[uint32]bool{}
	for _, r := range got {
		if r.Err != "" {
			c.Failed = append(c.Failed, fmt.Sprintf("%s could not be checked on %s: %s", rgName(shard), snName(r.SN), r.Err))
			continue
		}
		for p := range r.Sums {
			parts[p] = true
		}
	}
	for _, p := range slices.Sorted(maps.Keys(parts)) {
		c.Partitions++
		holders := map[partSum][]uint64{}
		for _, r := range got {
			if r.Err == "" {
				s := r.Sums[p] // a partition missing on one replica sums as empty
				holders[s] = append(holders[s], r.SN)
			}
		}
		want, ok := majoritySum(holders, need)
		if !ok {
			c.NoMajority = append(c.NoMajority, noMajorityText(shard, p, holders, need))
			continue
		}
		for s, sns := range holders {
			if s == want {
				continue
			}
			for _, sn := range sns {
				c.Differ = append(c.Differ, divergence{Partition: p, SN: sn, Got: s, Want: want, Majority: holders[want]})
			}
		}
	}
	slices.SortFunc(c.Differ, func(a, b divergence) int {
		if a.SN != b.SN {
			return int(a.SN) - int(b.SN)
		}
		return int(a.Partition) - int(b.Partition)
	})
	return c
}

func majoritySum(holders map[partSum][]uint64, need int) (partSum, bool) {
	for s, sns := range holders {
		if len(sns) >= need {
			return s, true
		}
	}
	return partSum{}, false
}

func noMajorityText(shard uint64, p uint32, holders map[partSum][]uint64, need int) string {
	var each []string
	for s, sns := range holders {
		for _, sn := range sns {
			each = append(each, fmt.Sprintf("%s %s", snName(sn), s))
		}
	}
	slices.Sort(each)
	return fmt.Sprintf("%s partition %d: no %d replicas agree (%s); nothing repaired", rgName(shard), p, need, strings.Join(each, "; "))
}

// divergentNodes returns the nodes of c.Differ, in order.
func (c comparison) divergentNodes() []uint64 {
	var out []uint64
	for _, d := range c.Differ {
		if !slices.Contains(out, d.SN) {
			out = append(out, d.SN)
		}
	}
	return out
}

// maxListed bounds the partitions named per node; the rest are counted.
const maxListed = 5

// differText says which partitions differ on node sn, one sentence per
// partition, at most maxListed, then how many more.
func (c comparison) differText(shard, sn uint64) []string {
	var lines []string
	n := 0
	for _, d := range c.Differ {
		if d.SN != sn {
			continue
		}
		if n++; n > maxListed {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s partition %d differs on %s (%s vs %s on %s)",
			rgName(shard), d.Partition, snName(sn), d.Got, d.Want, snNames(d.Majority)))
	}
	if n > maxListed {
		lines = append(lines, fmt.Sprintf("%s: %d more partitions differ on %s", rgName(shard), n-maxListed, snName(sn)))
	}
	return lines
}

// agreeText is the sentence for a shard whose replicas all agree.
func agreeText(shard uint64, partitions int, replicas []uint64, index uint64) string {
	return fmt.Sprintf("%s: %d %s agree on %s at index %d", rgName(shard), partitions,
		plural(partitions, "partition", "partitions"), snNames(replicas), index)
}

func rgName(shard uint64) string { return topology.ShardName(topologyShard(shard)) }
