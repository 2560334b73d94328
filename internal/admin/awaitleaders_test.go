package admin

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// fakeDescriber is a node that leads shard 1 from its handover-th Describe
// on (never when handover is 0).
type fakeDescriber struct {
	controlpb.UnimplementedControlServer
	mu       sync.Mutex
	handover int
	asked    int
}

func (f *fakeDescriber) Describe(context.Context, *controlpb.DescribeRequest) (*controlpb.NodeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	leads := f.handover > 0 && f.asked >= f.handover
	return &controlpb.NodeInfo{Shards: []*controlpb.ShardState{{Shard: 1, Running: true, IsLeader: leads}}}, nil
}

func (f *fakeDescriber) set(handover int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handover, f.asked = handover, 0
}

// TestAwaitLeadersWaitsForThePreferred: once every shard has a leader, the
// wait goes on until each is led by its preferred node (so a verify right
// after the plan finds no handover under way), but no longer than settle;
// a shard without a leader fails the wait at its deadline, named.
func TestAwaitLeadersWaitsForThePreferred(t *testing.T) {
	n1, n2 := &fakeDescriber{}, &fakeDescriber{}
	topo := &topology.Topology{Store: "kvstore", Seq: 1,
		Nodes:  []topology.Node{{ID: 1, Addr: "127.0.0.1:" + strconv.Itoa(serveControl(t, n1))}, {ID: 2, Addr: "127.0.0.1:" + strconv.Itoa(serveControl(t, n2))}},
		Shards: []topology.Shard{{ID: 1, Replicas: []topology.NodeID{1, 2}, Preferred: 2}}}
	s := connService(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// sn1 leads at once; sn2, the preferred, takes over at its 4th answer.
	// (sn1 keeps saying it leads: the wait follows the preferred node.)
	n1.set(1)
	n2.set(4)
	if err := s.awaitLeaders(ctx, topo, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n2.asked < 4 {
		t.Errorf("the wait ended after %d answers of the preferred node, before it led (its 4th)", n2.asked)
	}

	// The preferred node never takes over: the wait ends after settle.
	n1.set(1)
	n2.set(0)
	if err := s.awaitLeaders(ctx, topo, 300*time.Millisecond); err != nil {
		t.Fatalf("a preferred node that never leads: %v, want the wait to end after settle", err)
	}
	if n1.asked < 3 {
		t.Errorf("asked %d times; want the wait to go on for settle (300ms at 100ms a round)", n1.asked)
	}

	// No leader at all: the deadline ends the wait with the shard named.
	n1.set(0)
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if err := s.awaitLeaders(short, topo, time.Minute); err == nil || !strings.Contains(err.Error(), "no leader yet for shards [rg1]") {
		t.Fatalf("no leader: %v, want rg1 named", err)
	}
}
