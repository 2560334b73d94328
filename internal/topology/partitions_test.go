package topology

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/keys"
)

func TestMovePartition(t *testing.T) {
	two := mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), []ZoneRF{{"z", 3}})
	for _, tc := range []struct {
		name      string
		p         keys.PartitionID
		to        ShardID
		wantError string
	}{
		{"to another shard", 37, 2, ""},
		{"no such partition", 100, 2, "there is no partition 100: the store has 100 partitions, 0 to 99"},
		{"no such shard", 37, 3, "there is no shard rg3 in this topology; its shards are rg1, rg2"},
		{"already there", 37, 1, "partition 37 belongs to rg1 already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MovePartition(two, tc.p, tc.to)
			if tc.wantError != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := Compare(two, got)
			if err != nil {
				t.Fatal(err)
			}
			if want := []Move{{tc.p, two.ShardFor(tc.p), tc.to}}; !slices.Equal(c.Moves, want) || two.ShardFor(tc.p) == tc.to {
				t.Errorf("moves %v, want %v (and the original unchanged)", c.Moves, want)
			}
		})
	}
}

// TestSplitPartitions: split 100 -> 200 keeps every owner (child c belongs
// to c/2's shard), moves nothing, and is described as a split.
func TestSplitPartitions(t *testing.T) {
	two := mustPlace(t, 100, capNodes(1, "z", 2, 2, 2), []ZoneRF{{"z", 3}})
	for _, tc := range []struct {
		name      string
		count     uint32
		wantError string
	}{
		{"double", 200, ""},
		{"ten times", 1000, ""},
		{"the same", 100, "100 partitions cannot be split into 100: each partition splits into equal parts, so give a multiple of 100, at least 200"},
		{"not a multiple", 150, "give a multiple of 100, at least 200"},
		{"fewer", 50, "give a multiple of 100"},
		{"too many", 100 << 20, "more than the 1048576 a store may have"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SplitPartitions(two, tc.count)
			if tc.wantError != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f := tc.count / 100
			for c, s := range got.PartitionShard {
				if s != two.PartitionShard[c/int(f)] {
					t.Fatalf("child %d belongs to %s, its parent %d to %s", c, ShardName(s), c/int(f), ShardName(two.PartitionShard[c/int(f)]))
				}
			}
			ch := checkClean(t, two, got)
			if ch.Split != tc.count || len(ch.Moves) != 0 || two.Partitions != 100 {
				t.Errorf("changes %+v", ch)
			}
			if d := Diff(two, got); len(d) != 1 || !strings.HasPrefix(d[0], "split the 100 partitions into ") {
				t.Errorf("diff %q", d)
			}
		})
	}
}

// TestSplitKeepsKeysInTheirParent is why a split re-hashes no key:
// partition p of n is exactly the union of its f children of n*f, so a
// hash's child divided by f is its parent.
func TestSplitKeepsKeysInTheirParent(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -topology.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	edges := []uint64{0, 1, 1<<63 - 1, 1 << 63, 1<<64 - 1}
	for i := range 20000 {
		n := uint32(rng.IntN(5000) + 1)
		f := uint32(rng.IntN(16) + 2)
		h := rng.Uint64()
		if i < len(edges) {
			h = edges[i]
		}
		if p := keys.PartitionOf(h, n); keys.PartitionOf(h, n*f)/keys.PartitionID(f) != p {
			t.Fatalf("hash %#x: partition %d of %d, but %d of %d", h, p, n, keys.PartitionOf(h, n*f), n*f)
		}
		p := keys.PartitionID(rng.IntN(int(n)))
		start, _ := keys.PartitionStart(p, n)
		child, _ := keys.PartitionStart(p*keys.PartitionID(f), n*f)
		if start != child {
			t.Fatalf("partition %d of %d starts at %#x, its first child of %d at %#x", p, n, start, n*f, child)
		}
	}
}

func TestSpreadPartitions(t *testing.T) {
	blocks := func(sizes ...int) []ShardID { // shard i+1 owns sizes[i] partitions, in blocks
		var out []ShardID
		for i, n := range sizes {
			for range n {
				out = append(out, ShardID(i+1))
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		owner  []ShardID
		shards []ShardID
		moves  int
		sizes  map[ShardID]int
	}{
		{"even already", blocks(5, 5), []ShardID{1, 2}, 0, map[ShardID]int{1: 5, 2: 5}},
		{"two new shards", blocks(6, 6), []ShardID{1, 2, 3, 4}, 6, map[ShardID]int{1: 3, 2: 3, 3: 3, 4: 3}},
		{"the fullest keep the larger share", blocks(4, 3, 3), []ShardID{1, 2, 3, 4}, 2, map[ShardID]int{1: 3, 2: 3, 3: 2, 4: 2}},
		{"a removed shard's partitions", blocks(2, 2, 2, 2), []ShardID{1, 2}, 4, map[ShardID]int{1: 4, 2: 4}},
		{"uneven remainder", blocks(7, 0, 0), []ShardID{1, 2, 3}, 4, map[ShardID]int{1: 3, 2: 2, 3: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := spreadPartitions(tc.owner, tc.shards)
			moves := 0
			size := make(map[ShardID]int)
			for p, s := range got {
				size[s]++
				if s != tc.owner[p] {
					moves++
				}
			}
			if moves != tc.moves || len(size) != len(tc.sizes) {
				t.Errorf("%d moves, sizes %v; want %d, %v", moves, size, tc.moves, tc.sizes)
			}
			for s, n := range tc.sizes {
				if size[s] != n {
					t.Errorf("%s owns %d, want %d (all: %v)", ShardName(s), size[s], n, got)
				}
			}
		})
	}
}
