package topology

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/keys"
)

// TestElasticRandom runs random sequences of elastic operations over
// pools that grow and shrink, and checks after each that the result
// validates, Compare accepts it over the one before, no shard id is
// reused, and: Redistribute and Contract spread the partitions evenly
// with the fewest moves; Rebalance, Contract and ChangeRepFactor leave no
// capacity violation (ChangeRepFactor: none it did not find) and every
// zone its replication factor.
func TestElasticRandom(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -topology.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	done := make(map[string]int)
	defer func() { t.Logf("operations done: %v", done) }()
	for round := range 60 {
		rf := 1 + rng.IntN(3)
		zones := []ZoneRF{{"z", rf}}
		next := 1
		pool := func(k int) []Node {
			var out []Node
			for range k {
				out = append(out, capNodes(next, "z", 1+rng.IntN(3))...)
				next++
			}
			return out
		}
		nodes := pool(rf + rng.IntN(4))
		cur, err := Place("kvstore", uint32(10+rng.IntN(60)), nodes, zones)
		if err != nil {
			t.Fatalf("round %d: place: %v", round, err)
		}
		used := map[ShardID]bool{}
		for _, s := range cur.Shards {
			used[s.ID] = true
		}
		for step := range 12 {
			var got *Topology
			var op string
			switch rng.IntN(6) {
			case 0:
				op, nodes = "redistribute", append(nodes, pool(1+rng.IntN(3))...)
				got, err = Redistribute(cur, nodes, zones)
			case 1:
				op = "contract"
				if len(nodes) > rf {
					i := rng.IntN(len(nodes))
					nodes = slices.Delete(slices.Clone(nodes), i, i+1)
				}
				got, err = Contract(cur, nodes, zones)
			case 2:
				op = "rebalance"
				i := rng.IntN(len(nodes))
				nodes = slices.Clone(nodes)
				nodes[i].Capacity = 1 + rng.IntN(3)
				got, err = Rebalance(cur, nodes, zones)
			case 3:
				op, nodes = "change-repfactor", append(nodes, pool(2)...)
				if rf < len(nodes) {
					got, err = ChangeRepFactor(cur, nodes, zones, "z", rf+1)
					if err == nil {
						rf++
						zones = []ZoneRF{{"z", rf}}
					}
				}
			case 4:
				op = "split"
				if cur.Partitions < 2000 {
					got, err = SplitPartitions(cur, cur.Partitions*uint32(2+rng.IntN(2)))
				}
			case 5:
				op = "move-partition"
				got, err = MovePartition(cur, keys.PartitionID(rng.IntN(int(cur.Partitions))), cur.Shards[rng.IntN(len(cur.Shards))].ID)
			}
			if err != nil || got == nil {
				continue // refusals are checked by the table tests
			}
			where := func() string { return fmt.Sprintf("%s, round %d step %d", op, round, step) }
			if err := got.Validate(); err != nil {
				t.Fatalf("%s: %v", where(), err)
			}
			c, err := Compare(cur, got)
			if err != nil {
				t.Fatalf("%s: compare: %v", where(), err)
			}
			for _, s := range c.NewShards {
				if used[s.ID] {
					t.Fatalf("%s: shard id %d reused", where(), s.ID)
				}
				used[s.ID] = true
			}
			r := got.Check()
			if op == "redistribute" || op == "contract" {
				for _, f := range r.Violations {
					// Redistribute keeps the replicas of nodes already over
					// a lowered capacity, and adds none there.
					if f.Rule != RuleCapacity || op != "redistribute" || hostedOn(got, f.Subject) != hostedOn(cur, f.Subject) {
						t.Fatalf("%s: %s", where(), f)
					}
				}
				if want := fewestMoves(cur.PartitionShard, got); len(c.Moves) != want {
					t.Fatalf("%s: %d moves, want %d", where(), len(c.Moves), want)
				}
			}
			if op == "rebalance" || op == "contract" || op == "change-repfactor" {
				for _, f := range r.Violations {
					// ChangeRepFactor only adds, on nodes with room.
					if f.Rule == RuleCapacity && (op != "change-repfactor" || hostedOn(got, f.Subject) != hostedOn(cur, f.Subject)) {
						t.Fatalf("%s: %s", where(), f)
					}
				}
				for _, s := range got.Shards {
					if len(s.Replicas) < rf {
						t.Fatalf("%s: %s has %d replicas, rf %d", where(), ShardName(s.ID), len(s.Replicas), rf)
					}
				}
			}
			done[op]++
			cur = got
		}
	}
}

// fewestMoves is the lower bound on partitions to move to spread owner
// evenly over got's shards: all of the removed shards', plus each kept
// shard's excess over its target, with the larger targets for the shards
// owning most.
func fewestMoves(owner []ShardID, got *Topology) int {
	count := make(map[ShardID]int)
	for _, s := range owner {
		count[s]++
	}
	var sizes []int
	for _, s := range got.Shards {
		sizes = append(sizes, count[s.ID])
		delete(count, s.ID)
	}
	moves := 0
	for _, n := range count {
		moves += n
	}
	slices.SortFunc(sizes, func(a, b int) int { return cmp.Compare(b, a) })
	q, r := len(owner)/len(sizes), len(owner)%len(sizes)
	for i, n := range sizes {
		target := q
		if i < r {
			target++
		}
		moves += max(0, n-target)
	}
	return moves
}

// hostedOn counts the replicas on the node named sn ("sn3").
func hostedOn(t *Topology, sn string) int {
	for _, n := range t.Nodes {
		if NodeName(n.ID) == sn {
			return len(t.ShardsOn(n.ID))
		}
	}
	return -1
}
