package replica

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
)

// checksumAll runs checksum id through the leader and returns every
// live replica's result once all are done.
func (g *testGroup) checksumAll(t *testing.T, id uint64, rate int64) (uint64, map[uint64]ChecksumResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	index, err := g.leader().Checksum(ctx, id, rate)
	if err != nil {
		t.Fatalf("checksum %d: %v", id, err)
	}
	out := map[uint64]ChecksumResult{}
	for node := uint64(1); node <= 3; node++ {
		r := g.net.get(node)
		if err := r.waitFor(ctx, func() bool { res, ok := r.ChecksumResult(id); return ok && res.Done }, "checksum"); err != nil {
			t.Fatalf("node %d: checksum %d at index %d: %v", node, id, index, err)
		}
		res, _ := r.ChecksumResult(id)
		if res.Err != nil || res.Index != index || len(res.Sums) != 4 {
			t.Fatalf("node %d: checksum %d: %+v, want 4 sums at index %d", node, id, res, index)
		}
		out[node] = res
	}
	return index, out
}

// snapshotRecords reads every record of the shard from an engine.
func snapshotRecords(t *testing.T, e *storage.Engine) []storage.Record {
	t.Helper()
	recs, _, err := e.StoreScan(storage.Scan{Depth: keys.ParentAndDescendants}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func sameRecords(a, b []storage.Record) bool {
	return slices.EqualFunc(a, b, func(x, y storage.Record) bool {
		return x.Key.String() == y.Key.String() && string(x.Value) == string(y.Value) &&
			string(x.Version) == string(y.Version) && x.ExpiresMs == y.ExpiresMs
	})
}

// TestChecksumLeavesDataAndAgrees: the checksum command changes no record
// or version on any replica, gives equal sums on identical replicas, and a
// replica changed directly in its engine differs in exactly the changed
// key's partition.
func TestChecksumLeavesDataAndAgrees(t *testing.T) {
	seed := testSeedReplica(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	g := newGroup(t, 0)
	l := g.leader()
	var last []byte
	for i := range 60 {
		v, err := g.write(l, fmt.Sprintf("/c%d/-/m", rng.IntN(40)), fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		last = v
	}
	_, idx, _ := storage.ParseVersion(last)
	for node := uint64(1); node <= 3; node++ {
		waitApplied(t, g.net.get(node), idx)
	}
	before := snapshotRecords(t, g.engines[1])
	index, first := g.checksumAll(t, 1, 1<<20)
	if index <= idx {
		t.Fatalf("checksum applied at %d, not after the last write at %d", index, idx)
	}
	for node := uint64(1); node <= 3; node++ {
		if got := snapshotRecords(t, g.engines[node]); !sameRecords(got, before) {
			t.Fatalf("node %d: records or versions changed by the checksum", node)
		}
		if !slices.Equal(first[node].Sums, first[1].Sums) {
			t.Fatalf("node %d sums %+v, node 1 %+v", node, first[node].Sums, first[1].Sums)
		}
	}
	if again, err := l.Checksum(context.Background(), 1, 0); err != nil || again != index {
		t.Fatalf("checksum 1 again: index %d, %v; want the first index %d", again, err, index)
	}

	// Change one record on a follower behind Raft's back.
	lid, _ := l.Leader()
	victim := uint64(3)
	if victim == lid {
		victim = 2
	}
	g.stop(victim)
	k := keys.New([]string{"c7"}, "m")
	part := keys.PartitionOf(keys.Hash(k.Major), 4)
	diverge(t, g.dirs[victim], "/c7/-/m")
	g.start(victim)
	_, second := g.checksumAll(t, 2, 0)
	for node := uint64(1); node <= 3; node++ {
		for i, s := range second[node].Sums {
			differs := s != second[lid].Sums[i]
			if want := node == victim && s.Partition == part; differs != want {
				t.Errorf("node %d partition %d: differs=%v, want %v (changed partition %d on node %d)", node, s.Partition, differs, want, part, victim)
			}
		}
	}
}

// diverge rewrites key's record in the engine at dir without a command:
// the applied index stays.
func diverge(t *testing.T, dir, key string) {
	t.Helper()
	sc := storage.DefaultConfig(dir)
	sc.CacheBytes, sc.MinFreeBytes = 8<<20, 0
	e, err := storage.Open(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	applied, err := e.ShardApplied(1)
	if err != nil {
		t.Fatal(err)
	}
	b := e.NewShardBatch(1, 77)
	defer b.Close()
	cmd := put(key, "diverged", 0)
	cmd.NowMs = 1
	if res := b.Apply(applied, cmd); res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := b.Commit(storage.Sync); err != nil {
		t.Fatal(err)
	}
}

var seedFlag = flag.Uint64("seed", 0, "seed for randomized tests (0: from the clock)")

// testSeedReplica returns the seed of a randomized test and logs how to
// rerun it.
func testSeedReplica(t *testing.T) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./internal/replica/ -run '^%s$' -count=1 -seed=%d)", seed, t.Name(), seed)
	return seed
}
