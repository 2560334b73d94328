package storage

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
)

// TestEstimatePartitionBytes: once flushed, a partition's records count in
// its own estimate, about their size, and a partition past every record
// counts nothing.
func TestEstimatePartitionBytes(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	const n = 4
	want := map[keys.PartitionID]int{0: 100, 1: 10} // 1 KB records
	for i := 0; want[0]+want[1] > 0; i++ {
		major := fmt.Sprintf("u%d", i)
		p := keys.PartitionOf(keys.Hash([]string{major}), n)
		if want[p] == 0 {
			continue
		}
		want[p]--
		v := make([]byte, 1000)
		_, _ = rand.Read(v) // incompressible
		a.apply(1, []*cairnpb.Operation{putOp("/"+major, string(v), cairnpb.Condition_CONDITION_UNSPECIFIED, nil)}, NoSync)
	}
	if err := e.db.Load().Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := e.EstimatePartitionBytes(1, []keys.PartitionID{0, 1, 2, 3}, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("estimates: %v", got)
	if got[0] < 90_000 || got[0] > 200_000 || got[1] <= 0 || got[1] >= got[0] || got[2] != 0 || got[3] != 0 {
		t.Errorf("estimates %v: want about 100 KB for partition 0, less but some for 1, none for 2 and 3", got)
	}
	if _, err := e.EstimatePartitionBytes(1, []keys.PartitionID{4}, n); err == nil || !strings.Contains(err.Error(), "partition 4 of 4 does not exist") {
		t.Errorf("partition out of range: %v", err)
	}
	_ = e.Close()
	if _, err := e.EstimatePartitionBytes(1, []keys.PartitionID{0}, n); err == nil {
		t.Error("estimate on a closed engine succeeded")
	}
}
