package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cairndb/cairn/internal/keys"
)

// setTable gives shard a real partition table (shardFill writes a dummy).
func setTable(t *testing.T, e *Engine, shard uint64, table *PartitionTable) {
	t.Helper()
	v, err := json.Marshal(table)
	if err != nil {
		t.Fatal(err)
	}
	b := e.NewShardBatch(shard, testOrigin)
	defer b.Close()
	if err := b.b.Set(shardKey(shard, shardTable), v, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(Sync); err != nil {
		t.Fatal(err)
	}
}

func exportOf(t *testing.T, e *Engine, shard uint64) []byte {
	t.Helper()
	data, _, err := e.ExportShard(shard, ShardDataSpans(shard))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestReshard builds shard 7 from some partitions of shards 1 and 2 and
// installs it: it holds exactly the kept records, with their values,
// versions and expiry entries, and the table given. Two sources keeping the
// same key, and data cut short, fail it with ErrCorrupt.
func TestReshard(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	src, dst := testEngine(t), testEngine(t)
	next := shardFill(t, src, 1, rng, 1, 150, 64)
	shardFill(t, src, 2, rng, next, 150, 64)
	const n = 4
	setTable(t, src, 1, &PartitionTable{N: n, Parts: map[uint32]*PartEntry{0: {State: PartOwned}, 1: {State: PartOwned}}})
	setTable(t, src, 2, &PartitionTable{N: n, Parts: map[uint32]*PartEntry{2: {State: PartOwned}, 3: {State: PartOwned}}})
	in := func(parts ...keys.PartitionID) func(uint64) bool {
		return func(h uint64) bool { p := keys.PartitionOf(h, n); return p == parts[0] || p == parts[len(parts)-1] }
	}
	table := &PartitionTable{N: n, Parts: map[uint32]*PartEntry{1: {State: PartOwned}, 2: {State: PartOwned, Versions: map[uint64]uint64{9: 5}, Since: 1}}}
	var data bytes.Buffer
	err := Reshard(&data, 7, table, []ReshardSource{
		{Data: bytes.NewReader(exportOf(t, src, 1)), Keep: in(1)},
		{Data: bytes.NewReader(exportOf(t, src, 2)), Keep: in(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := dst.NewImport(7, ShardDataSpans(7))
	if err != nil {
		t.Fatal(err)
	}
	defer imp.Close()
	if _, err := io.Copy(imp, &data); err != nil {
		t.Fatal(err)
	}
	if err := imp.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := imp.Install(InstallState{Applied: 1000, Reset: true}); err != nil {
		t.Fatal(err)
	}
	kept, ttl := 0, 0
	for shard := uint64(1); shard <= 2; shard++ {
		for i := range 150 {
			k, err := keys.Parse(fmt.Sprintf("/s%d/k%06d/-/m", shard, i))
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := src.GetIn(shard, k, 1)
			if err != nil {
				t.Fatal(err)
			}
			got, found, err := dst.GetIn(7, k, 1)
			if err != nil {
				t.Fatal(err)
			}
			p := keys.PartitionOf(keys.Hash(k.Major), n)
			keep := shard == 1 && p == 1 || shard == 2 && p == 2
			switch {
			case found != keep:
				t.Fatalf("%v (partition %d of shard %d) in shard 7: %v, want %v", k, p, shard, found, keep)
			case keep && (!bytes.Equal(got.Value, want.Value) || !bytes.Equal(got.Version, want.Version)):
				t.Fatalf("%v in shard 7: value or version differs from the source's", k)
			}
			if keep {
				kept++
				if i%3 == 0 {
					ttl++
				}
			}
		}
	}
	if kept == 0 {
		t.Fatal("no record kept: the test keeps nothing")
	}
	if exp, err := dst.ExpiredIn(7, 1<<40, 1000); err != nil || len(exp) != ttl {
		t.Fatalf("expiry entries in shard 7: %d (%v), want %d", len(exp), err, ttl)
	}
	if got, err := dst.LoadTable(7); err != nil || !reflect.DeepEqual(got, table) {
		t.Fatalf("shard 7's table: %+v (%v), want %+v", got, err, table)
	}

	one := exportOf(t, src, 1)
	err = Reshard(io.Discard, 7, table, []ReshardSource{
		{Data: bytes.NewReader(one), Keep: in(1)}, {Data: bytes.NewReader(one), Keep: in(1)}})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("two sources keeping one key: %v, want ErrCorrupt", err)
	}
	err = Reshard(io.Discard, 7, table, []ReshardSource{{Data: bytes.NewReader(one[:len(one)-3]), Keep: in(1)}})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("data cut short: %v, want ErrCorrupt", err)
	}
	if got, err := SnapshotTable(bytes.NewReader(exportOf(t, src, 2))); err != nil || got.N != n || len(got.Parts) != 2 {
		t.Fatalf("SnapshotTable of shard 2: %+v, %v", got, err)
	}
}
