package storage

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// TestEstimatePartitionBytes: once flushed, a partition's records count in
// its own estimate, about their size, and a partition without records
// counts at most a data block that straddles its bound.
func TestEstimatePartitionBytes(t *testing.T) {
	e := testEngine(t)
	const shard, n = 1, 4
	want := map[keys.PartitionID]int{0: 100, 1: 20} // 1 KB records
	for i := 0; want[0]+want[1] > 0; i++ {
		major := fmt.Sprintf("u%d", i)
		p := keys.PartitionOf(keys.Hash([]string{major}), n)
		if want[p] == 0 {
			continue
		}
		want[p]--
		v := make([]byte, 1000)
		_, _ = rand.Read(v) // incompressible
		b := e.NewShardBatch(shard, testOrigin)
		b.Apply(uint64(i+1), &commandpb.Command{NowMs: 1, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{
			Ops: []*cairnpb.Operation{putOp("/"+major, string(v), cairnpb.Condition_CONDITION_UNSPECIFIED, nil)}}}})
		err := b.Commit(NoSync)
		b.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.Load().Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := e.EstimatePartitionBytes(shard, []keys.PartitionID{0, 1, 2, 3}, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("estimates: %v", got)
	// A data block (4 KB) that straddles a partition's bound may count on
	// both sides, so a partition without records may show up to one block.
	if got[0] < 90_000 || got[0] > 200_000 || got[1] < 18_000 || got[1] > 40_000 || got[2] > 8_000 || got[3] > 8_000 {
		t.Errorf("estimates %v: want about 100 KB for partition 0, 20 KB for 1, at most a block for 2 and 3", got)
	}
	if _, err := e.EstimatePartitionBytes(shard, []keys.PartitionID{4}, n); err == nil || !strings.Contains(err.Error(), "partition 4 of 4 does not exist") {
		t.Errorf("partition out of range: %v", err)
	}
	_ = e.Close()
	if _, err := e.EstimatePartitionBytes(shard, []keys.PartitionID{0}, n); err == nil {
		t.Error("estimate on a closed engine succeeded")
	}
}
