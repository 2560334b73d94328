package admin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakeInstaller is a storage node's Control service that takes topologies
// (InstallTopology) and says which it runs (Describe); while down, it
// answers Unavailable, as a node that is not there.
type fakeInstaller struct {
	controlpb.UnimplementedControlServer
	mu   sync.Mutex
	down bool
	seq  uint64
}

func (f *fakeInstaller) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *fakeInstaller) runs() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

func (f *fakeInstaller) InstallTopology(_ context.Context, r *controlpb.InstallTopologyRequest) (*controlpb.NodeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, status.Error(codes.Unavailable, "connection refused")
	}
	t, err := topology.Decode(r.GetTopology())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	f.seq = max(f.seq, t.Seq)
	return &controlpb.NodeInfo{TopologySeq: f.seq}, nil
}

func (f *fakeInstaller) Describe(context.Context, *controlpb.DescribeRequest) (*controlpb.NodeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, status.Error(codes.Unavailable, "connection refused")
	}
	return &controlpb.NodeInfo{TopologySeq: f.seq}, nil
}

// TestPublishGoesOnWithoutADownNode: a topology publication (each move's
// new owner, in plan deploy-topology) installs the topology on the nodes
// that answer and records it even if a node is down, saying so in show
// events; the admin leader's poll of the nodes installs it on that node
// once it answers. With no node answering, nothing is recorded.
func TestPublishGoesOnWithoutADownNode(t *testing.T) {
	a, b := &fakeInstaller{seq: 1}, &fakeInstaller{seq: 1}
	ports := []int{serveControl(t, a), serveControl(t, b), closedPort(t)}
	var nodes []topology.Node
	var sns []SN
	for i, p := range ports {
		id := uint64(i + 1)
		nodes = append(nodes, topology.Node{ID: topology.NodeID(id), Addr: fmt.Sprintf("127.0.0.1:%d", p)})
		sns = append(sns, SN{ID: id, Host: "127.0.0.1", Port: p, Capacity: 1})
	}
	topo, err := topology.Build("kvstore", 6, nodes, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := startService(t, func(m *Meta) { m.Store, m.SNs, m.Deployed = "kvstore", sns, topo })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	moveTo := func(p int, to topology.ShardID) func(*topology.Topology) error {
		return func(t *topology.Topology) error { t.PartitionShard[p] = to; return nil }
	}
	deployed := func() (*Meta, uint64) {
		m, _, err := s.store.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m, m.Deployed.Seq
	}

	// sn3 is down: the publication goes on, and says so.
	if err := s.publish(ctx, moveTo(0, 2), ""); err != nil {
		t.Fatalf("publish with sn3 down: %v", err)
	}
	m, seq := deployed()
	if seq != 2 || a.runs() != 2 || b.runs() != 2 {
		t.Fatalf("after the publication: deployed %d, sn1 runs %d, sn2 runs %d; want 2 everywhere", seq, a.runs(), b.runs())
	}
	if last := m.Events[len(m.Events)-1].Text; !strings.Contains(last, "not installed yet on sn3") {
		t.Errorf("last event %q does not name sn3", last)
	}

	// sn2 goes down too: the next publication reaches sn1 only; once sn2
	// answers again, the admin's poll of the nodes brings it up to date.
	b.setDown(true)
	if err := s.publish(ctx, moveTo(1, 3), ""); err != nil {
		t.Fatalf("publish with sn2 and sn3 down: %v", err)
	}
	if _, seq := deployed(); seq != 3 || a.runs() != 3 || b.runs() != 2 {
		t.Fatalf("deployed %d, sn1 runs %d, sn2 runs %d; want 3, 3, 2", seq, a.runs(), b.runs())
	}
	b.setDown(false)
	s.pollIncidents()
	if b.runs() != 3 {
		t.Errorf("after the admin's poll sn2 runs topology %d, want the deployed 3", b.runs())
	}

	// No node answers: nothing is recorded, and the task is retried.
	a.setDown(true)
	b.setDown(true)
	if err := s.publish(ctx, moveTo(2, 1), ""); status.Code(err) != codes.Unavailable {
		t.Errorf("publish with every node down: %v, want Unavailable", err)
	}
	if _, seq := deployed(); seq != 3 {
		t.Errorf("deployed %d after a publication no node took, want 3", seq)
	}
}

// stuckMover is a storage node that leads shard 1 and, asked to move a
// partition, reports one step of progress and then nothing until the
// stream ends (a node that hangs on a move).
type stuckMover struct {
	controlpb.UnimplementedControlServer
	calls atomic.Int64
}

func (f *stuckMover) Describe(context.Context, *controlpb.DescribeRequest) (*controlpb.NodeInfo, error) {
	return &controlpb.NodeInfo{Shards: []*controlpb.ShardState{{Shard: 1, IsLeader: true}}}, nil
}

func (f *stuckMover) MovePartition(_ *controlpb.MovePartitionRequest, stream controlpb.Control_MovePartitionServer) error {
	f.calls.Add(1)
	if err := stream.Send(&controlpb.MoveProgress{Phase: "copy"}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return stream.Context().Err()
}

// TestMoveRoundEndsWhenStalled: a round of moves has no task timeout (a
// big partition's copy at -max-rate takes as long as it takes), but ends
// with an error, to be retried, once no move reported progress for
// moveStallTimeout.
func TestMoveRoundEndsWhenStalled(t *testing.T) {
	defer func(d time.Duration) { moveStallTimeout = d }(moveStallTimeout)
	moveStallTimeout = 300 * time.Millisecond
	f := &stuckMover{}
	port := serveControl(t, f)
	nodes := []topology.Node{{ID: 1, Addr: fmt.Sprintf("127.0.0.1:%d", port)}}
	topo, err := topology.Build("kvstore", 4, nodes, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	p0 := topo.PartitionsOf(1)[0]
	task := newTask("move-partitions", "move", map[string]string{"moves": fmt.Sprintf("%d:1:2", p0)})
	// PENDING, so that the service's executor leaves it to this test.
	plan := &Plan{ID: 1, Name: "deploy-topology", State: Pending, Tasks: []*Task{task}}
	s := startService(t, func(m *Meta) {
		m.Store, m.Deployed, m.NextPlan = "kvstore", topo, 2
		m.SNs = []SN{{ID: 1, Host: "127.0.0.1", Port: port, Capacity: 2}}
		m.Plans = []*Plan{plan}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err = s.taskMovePartitions(ctx, plan, task)
	if err == nil || !strings.Contains(err.Error(), "no move of the round reported progress") {
		t.Fatalf("a stalled round ended with %v, want a stall error", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the stalled round took %v to end", took)
	}
	if f.calls.Load() != 1 {
		t.Errorf("MovePartition called %d times, want 1", f.calls.Load())
	}
}
