package replica

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// BenchmarkRaftPropose measures the replicated write path of one shard with
// three replicas in one process (memNet stands in for the transport):
// concurrent blind puts, WRITE_NO_SYNC, acknowledged by a majority.
func BenchmarkRaftPropose(b *testing.B) {
	g := newGroupB(b)
	l := g.leader()
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := l.Propose(ctx, put("/b/"+strconv.FormatInt(i%100000, 10), "0123456789012345678901234567890123456789", 0), storage.WriteNoSync)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
