package storage

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDroppedSpaceIsReclaimed: dropping a shard's data (as after its
// partitions moved away) gives the space back within seconds: the engine
// compacts the dropped span instead of waiting for the LSM to reach it.
func TestDroppedSpaceIsReclaimed(t *testing.T) {
	e := testEngine(t)
	s := newShardLog(t, e, 1, 0x11)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 128 {
		val := make([]byte, 64<<10)
		for j := range val {
			val[j] = byte(rng.Uint32())
		}
		s.must(opsCmd(putOp(fmt.Sprintf("/k%03d/-/m", i), string(val), 0, nil)))
	}
	if err := e.db.Load().Flush(); err != nil {
		t.Fatal(err)
	}
	tables := func() int64 { return int64(e.Metrics().Total().TablesSize) }
	before := tables()
	if before < 4<<20 {
		t.Fatalf("%d bytes of tables after 8 MiB of puts; the test wants them on disk", before)
	}
	if err := e.DropShard(1, ShardDataSpans(1)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.reclaimed.Load() == 0 || tables() > before/8 {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the drop: %d compactions, %d bytes of tables (were %d)", e.reclaimed.Load(), tables(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("tables: %d bytes before the drop, %d after its compaction", before, tables())
}
