package transport

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// counter is a Handler that only counts and wakes a waiter.
type counter struct {
	n       atomic.Int64
	mu      sync.Mutex
	target  int64
	reached chan struct{}
}

func (c *counter) HandleRaft(ShardID, *raftpb.Message) {
	n := c.n.Add(1)
	c.mu.Lock()
	if c.reached != nil && n >= c.target {
		close(c.reached)
		c.reached = nil
	}
	c.mu.Unlock()
}
func (c *counter) HandleSnapshot(ShardID, *raftpb.Message, *SnapshotData) error { return nil }
func (c *counter) HandleNotice(ShardID, NodeID, *transportpb.CommitNotice)      {}

func (c *counter) HandleRejoin(context.Context, ShardID, NodeID) *transportpb.RejoinResponse {
	return &transportpb.RejoinResponse{}
}

// waitAtLeast blocks until n messages have arrived in total.
func (c *counter) waitAtLeast(b *testing.B, n int64) {
	c.mu.Lock()
	if c.n.Load() >= n {
		c.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	c.target, c.reached = n, ch
	c.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		b.Fatalf("stalled at %d of %d messages", c.n.Load(), n)
	}
}

// BenchmarkSend measures Raft messages per second from one transport to
// another over loopback: Send calls of 16 messages (one Ready of one
// shard), rotating over 64 shards, with at most half a queue in flight so
// nothing is dropped. It reports msgs/s and allocations per message.
//
//	go test -run '^$' -bench BenchmarkSend -benchtime 200000x ./internal/transport/
func BenchmarkSend(b *testing.B) {
	for _, size := range []int{0, 1024} {
		b.Run(fmt.Sprintf("entry=%dB", size), func(b *testing.B) {
			benchmarkSend(b, size)
		})
	}
}

func benchmarkSend(b *testing.B, entryBytes int) {
	bk := newBook()
	n1 := startNode(b, 1, bk, nil)
	recv := &counter{}
	n2 := startNode(b, 2, bk, nil)
	n2.tr.h = recv
	const perSend, shards = 16, 64
	msgs := make([]*raftpb.Message, perSend)
	for i := range msgs {
		if entryBytes == 0 {
			msgs[i] = msg(raftpb.MsgHeartbeat, 1, 2, 0)
		} else {
			msgs[i] = msg(raftpb.MsgApp, 1, 2, uint64(i))
			msgs[i].Entries = []*raftpb.Entry{{Data: make([]byte, entryBytes)}}
		}
	}
	// Connect outside the timed region.
	n1.tr.Send(1, msgs[:1])
	recv.waitAtLeast(b, 1)
	base := recv.n.Load()
	batches := n2.tr.batchesRecv.Load()
	window := int64(n1.tr.cfg.QueueLen / 2)

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	sent := int64(0)
	for i := 0; sent < int64(b.N); i++ {
		k := min(perSend, b.N-int(sent))
		if sent+int64(k)-window > 0 {
			recv.waitAtLeast(b, base+sent+int64(k)-window)
		}
		n1.tr.Send(ShardID(i%shards+1), msgs[:k])
		sent += int64(k)
	}
	recv.waitAtLeast(b, base+int64(b.N))
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(b.N)/float64(n2.tr.batchesRecv.Load()-batches), "msgs/batch")
	if d := n1.cb.unreachableCount(2); d != 0 {
		b.Fatalf("%d drops", d)
	}
}
