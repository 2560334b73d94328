package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

func allParts(n uint32) []keys.PartitionID {
	out := make([]keys.PartitionID, n)
	for i := range out {
		out[i] = keys.PartitionID(i)
	}
	return out
}

func sums(t *testing.T, e *Engine, n uint32) []PartitionSum {
	t.Helper()
	v := e.NewView()
	defer v.Close()
	s, err := v.PartitionSums(context.Background(), 0, allParts(n), n, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPartitionSums: two engines that applied the same commands (a Checksum
// among them, which changes nothing) have equal sums; one record changed
// directly in one engine changes exactly its partition's sum; a view keeps
// the state it was taken at.
func TestPartitionSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 0))
	const n = 8
	a, b := &applier{t: t, e: testEngine(t)}, &applier{t: t, e: testEngine(t)}
	for i := range 200 {
		ops := []*cairnpb.Operation{putOp(fmt.Sprintf("/k%d/-/m", rng.IntN(100)), fmt.Sprint(i), 0, nil)}
		a.apply(1000, ops, NoSync)
		b.apply(1000, ops, NoSync)
	}
	for _, ap := range []*applier{a, b} {
		cmd := &commandpb.Command{NowMs: 1000, Body: &commandpb.Command_Checksum{Checksum: &commandpb.Checksum{Id: 7}}}
		bt := ap.e.NewBatch(testOrigin)
		ap.next++
		if r := bt.Apply(ap.next, cmd); r.Err != nil || len(r.Ops) != 0 {
			t.Fatalf("checksum command: %+v", r)
		}
		if err := bt.Commit(NoSync); err != nil {
			t.Fatal(err)
		}
		bt.Close()
	}
	sa, sb := sums(t, a.e, n), sums(t, b.e, n)
	var records int64
	for i := range sa {
		if sa[i] != sb[i] {
			t.Fatalf("partition %d: %+v vs %+v on identical engines", i, sa[i], sb[i])
		}
		records += sa[i].Records
	}
	if records == 0 {
		t.Fatal("no records hashed")
	}

	view := b.e.NewView()
	defer view.Close()
	k := keys.New([]string{"k5"}, "m")
	changed := keys.PartitionOf(keys.Hash(k.Major), n)
	b.apply(1000, []*cairnpb.Operation{putOp("/k5/-/m", "changed", 0, nil)}, NoSync)
	sb = sums(t, b.e, n)
	for i := range sa {
		if (sa[i] != sb[i]) != (keys.PartitionID(i) == changed) {
			t.Errorf("partition %d (changed: %d): %+v vs %+v", i, changed, sa[i], sb[i])
		}
	}
	old, err := view.PartitionSums(context.Background(), 0, allParts(n), n, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sa {
		if old[i] != sa[i] {
			t.Errorf("partition %d: the view taken before the change sums %+v, want %+v", i, old[i], sa[i])
		}
	}
}

func TestPartitionSumsCancelled(t *testing.T) {
	a := &applier{t: t, e: testEngine(t)}
	for i := range 50 {
		a.apply(1000, []*cairnpb.Operation{putOp(fmt.Sprintf("/c%d/-/m", i), string(make([]byte, 4000)), 0, nil)}, NoSync)
	}
	v := a.e.NewView()
	defer v.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.PartitionSums(ctx, 0, allParts(4), 4, 1000, nil); err == nil {
		t.Fatal("a cancelled checksum returned no error")
	}
}
