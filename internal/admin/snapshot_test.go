package admin

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakeCopier is a storage node's Control service whose CopySnapshot
// answers reply or err, and records the requests.
type fakeCopier struct {
	controlpb.UnimplementedControlServer
	reply *controlpb.CopySnapshotReply
	err   error
	got   chan *controlpb.CopySnapshotRequest
}

func (f *fakeCopier) CopySnapshot(_ context.Context, r *controlpb.CopySnapshotRequest) (*controlpb.CopySnapshotReply, error) {
	f.got <- r
	return f.reply, f.err
}

// startCopier serves f on a free port and returns the port.
func startCopier(t *testing.T, f *fakeCopier) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	controlpb.RegisterControlServer(srv, f)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().(*net.TCPAddr).Port
}

// TestCopySnapshotShard: the shard's files go from its leader to every
// other replica's node; a node that did not answer Describe is not asked,
// and a failed or wrong copy is recorded as missing, with the reason, and
// reported by snapshot create and snapshot list.
func TestCopySnapshotShard(t *testing.T) {
	good := &fakeCopier{reply: &controlpb.CopySnapshotReply{Bytes: 100, Crc32C: "0a0b0c0d", Path: "/r2/snapshots/s1"}, got: make(chan *controlpb.CopySnapshotRequest, 1)}
	wrong := &fakeCopier{reply: &controlpb.CopySnapshotReply{Bytes: 100, Crc32C: "ffffffff"}, got: make(chan *controlpb.CopySnapshotRequest, 1)}
	refusing := &fakeCopier{err: status.Error(codes.DataLoss, "copy refused: crc32c 1, expected 2"), got: make(chan *controlpb.CopySnapshotRequest, 1)}
	ports := map[uint64]int{1: 1, 2: startCopier(t, good), 3: startCopier(t, wrong), 4: startCopier(t, refusing), 5: 1}
	m := &Meta{Store: "kvstore", Deployed: &topology.Topology{Store: "kvstore", Seq: 1}}
	for id := uint64(1); id <= 5; id++ {
		m.SNs = append(m.SNs, SN{ID: id, Host: "127.0.0.1", Port: ports[id]})
	}
	m.Deployed.Shards = []topology.Shard{{ID: 1, Replicas: []topology.NodeID{1, 2, 3, 4, 5}}}
	infos := map[uint64]*controlpb.NodeInfo{1: {}, 2: {}, 3: {}, 4: {}} // sn5 did not answer
	s := connService(t)
	p := SnapshotShard{Shard: 1, SN: 1, Index: 7, Bytes: 100, CRC32C: "0a0b0c0d", Path: "/r1/snapshots/s1"}
	s.copySnapshotShard(context.Background(), m, infos, "s1", &p)

	want := &controlpb.CopySnapshotRequest{Store: "kvstore", Name: "s1", Shard: 1, From: "127.0.0.1:1"}
	if r := <-good.got; r.GetStore() != want.Store || r.GetName() != want.Name || r.GetShard() != want.Shard || r.GetFrom() != want.From {
		t.Errorf("sn2 was asked %v, want %v", r, want)
	}
	if len(p.Copies) != 1 || p.Copies[0].SN != 2 || p.Copies[0].Path != "/r2/snapshots/s1" {
		t.Errorf("copies %+v, want sn2's only", p.Copies)
	}
	wantMissing := map[uint64]string{
		3: "the copy has 100 bytes, crc32c ffffffff; expected 100, 0a0b0c0d",
		4: "copy refused: crc32c 1, expected 2",
		5: "unreachable (it did not answer when the snapshot began)",
	}
	if len(p.Missing) != len(wantMissing) {
		t.Fatalf("missing %+v, want sn3, sn4, sn5", p.Missing)
	}
	for _, c := range p.Missing {
		if c.Error != wantMissing[c.SN] {
			t.Errorf("sn%d missing because %q, want %q", c.SN, c.Error, wantMissing[c.SN])
		}
	}

	snap := Snapshot{Name: "s1", TopologySeq: 1, Shards: []SnapshotShard{p}}
	text := createdText(m, snap)
	for _, w := range []string{
		"Created snapshot named s1 on all 1 shards, with 3 missing copies",
		"rg1: index 7, 100 bytes, crc32c 0a0b0c0d, taken on sn1 in /r1/snapshots/s1, copied to sn2; not copied to sn3: the copy has",
		"; not copied to sn5: unreachable",
		"sn3 lacks rg1 (on sn1, sn2): restore it with --from",
		"sn5 lacks rg1 (on sn1, sn2)",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("snapshot create says\n%s\nwhich lacks %q", text, w)
		}
	}
	if got, want := copiesSummary(m, snap), "missing copies: rg1 on sn3, rg1 on sn4, rg1 on sn5 (restore there needs --from)"; got != want {
		t.Errorf("snapshot list says %q, want %q", got, want)
	}
}

// TestSnapshotCopiesSummary: snapshot list says whether every replica's
// node holds its shards, including for a snapshot taken before copies.
func TestSnapshotCopiesSummary(t *testing.T) {
	m, _ := threeNodeMeta(nil)
	copies := func(ids ...uint64) []SnapshotCopy {
		var cs []SnapshotCopy
		for _, id := range ids {
			cs = append(cs, SnapshotCopy{SN: id, Path: "/r" + strconv.FormatUint(id, 10)})
		}
		return cs
	}
	for _, tc := range []struct {
		name   string
		shards []SnapshotShard
		want   string
	}{
		{"all copied", []SnapshotShard{{Shard: 1, SN: 1, Copies: copies(2, 3)}, {Shard: 2, SN: 2, Copies: copies(1, 3)}},
			"copies on every replica's node"},
		{"sn3 was down", []SnapshotShard{{Shard: 1, SN: 1, Copies: copies(2), Missing: []SnapshotCopy{{SN: 3, Error: "unreachable"}}},
			{Shard: 2, SN: 2, Copies: copies(1), Missing: []SnapshotCopy{{SN: 3, Error: "unreachable"}}}},
			"missing copies: rg1 on sn3, rg2 on sn3 (restore there needs --from)"},
		{"taken before copies", []SnapshotShard{{Shard: 1, SN: 1}, {Shard: 2, SN: 2}},
			"missing copies: rg1 on sn2, rg1 on sn3, rg2 on sn1, rg2 on sn3 (restore there needs --from)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := copiesSummary(m, Snapshot{Name: "s", TopologySeq: 1, Shards: tc.shards}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSnapshotMayHold: snapshot remove reports an unreachable node only if
// it may hold files: it took a shard, holds a copy, or failed a copy part
// way; not if it was down when the snapshot began.
func TestSnapshotMayHold(t *testing.T) {
	snap := Snapshot{Shards: []SnapshotShard{
		{Shard: 1, SN: 1, Copies: []SnapshotCopy{{SN: 2}}, Missing: []SnapshotCopy{{SN: 3, Error: notAsked}, {SN: 4, Error: "copy refused: crc32c"}}},
		{Shard: 2, SN: 2, Missing: []SnapshotCopy{{SN: 3, Error: notAsked}}},
	}}
	for id, want := range map[uint64]bool{1: true, 2: true, 3: false, 4: true, 5: false} {
		if got := mayHold(snap, id); got != want {
			t.Errorf("mayHold(sn%d) = %v, want %v", id, got, want)
		}
	}
}

// TestSnapshotNotesAndMovingPlans: snapshot list says when a restore will
// re-shard, and a snapshot waits for a running deploy-topology.
func TestSnapshotNotesAndMovingPlans(t *testing.T) {
	m, _ := threeNodeMeta(nil)
	if got := reshardNote(m, Snapshot{TopologySeq: m.Deployed.Seq}); got != "" {
		t.Errorf("a snapshot of the deployed topology: note %q, want none", got)
	}
	if got := reshardNote(m, Snapshot{TopologySeq: m.Deployed.Seq - 1}); !strings.Contains(got, "restore re-shards it") {
		t.Errorf("a snapshot of an older topology: note %q, want it to say restore re-shards it", got)
	}
	m.Plans = []*Plan{{ID: 4, Name: "deploy-topology", State: Succeeded}, {ID: 5, Name: "deploy-sn", State: Running}}
	if p := movingPlan(m); p != nil {
		t.Errorf("movingPlan = plan %d with no deploy-topology running", p.ID)
	}
	m.Plans = append(m.Plans, &Plan{ID: 6, Name: "deploy-topology", State: Running})
	if p := movingPlan(m); p == nil || p.ID != 6 {
		t.Errorf("movingPlan = %v, want plan 6", p)
	}
}

// fakeExporter is a node whose SnapshotShard answers UNAVAILABLE (an
// election under way) until its count of refusals runs out, then exports,
// or keeps refusing with err.
type fakeExporter struct {
	controlpb.UnimplementedControlServer
	mu      sync.Mutex
	refuse  int   // UNAVAILABLE answers left before it exports
	err     error // when set, the answer after the refusals
	answers int
}

func (f *fakeExporter) SnapshotShard(_ context.Context, r *controlpb.SnapshotShardRequest) (*controlpb.SnapshotShardReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers++
	if f.refuse > 0 {
		f.refuse--
		return nil, status.Error(codes.Unavailable, "shard 1: replica: not the leader, and no leader is known yet (an election is under way)")
	}
	if f.err != nil {
		return nil, f.err
	}
	return &controlpb.SnapshotShardReply{Index: 42, Bytes: 10, Crc32C: "00000001", Path: "/r/snapshots/s1"}, nil
}

// TestSnapshotShardWaitsForElection: a shard whose replicas all say an
// election is under way is asked again until one exports it; a refusal of
// another kind ends the snapshot at once.
func TestSnapshotShardWaitsForElection(t *testing.T) {
	a, b := &fakeExporter{refuse: 3}, &fakeExporter{refuse: 3}
	m := &Meta{Store: "kvstore", Deployed: &topology.Topology{Store: "kvstore", Seq: 1,
		Shards: []topology.Shard{{ID: 1, Replicas: []topology.NodeID{1, 2}}}}}
	m.SNs = []SN{{ID: 1, Host: "127.0.0.1", Port: serveControl(t, a)}, {ID: 2, Host: "127.0.0.1", Port: serveControl(t, b)}}
	s := connService(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	part, err := s.snapshotShard(ctx, m, nil, "s1", 1)
	if err != nil || part.Index != 42 || part.SN != 1 {
		t.Fatalf("after an election: %+v, %v; want sn1's export at index 42", part, err)
	}
	if a.answers != 4 || b.answers != 3 {
		t.Errorf("asked sn1 %d and sn2 %d times, want 4 and 3 (three rounds of refusals, then sn1 exports)", a.answers, b.answers)
	}

	a.refuse, b.refuse = 1, 1
	a.err = status.Error(codes.FailedPrecondition, "shard 1: no running replica of shard 1 here")
	b.err = a.err
	a.answers, b.answers = 0, 0
	if _, err := s.snapshotShard(ctx, m, nil, "s1", 1); err == nil || !strings.Contains(err.Error(), "no running replica") {
		t.Fatalf("refused for another reason: %v, want that reason", err)
	}
	if a.answers != 2 || b.answers != 2 {
		t.Errorf("asked sn1 %d and sn2 %d times, want 2 each: one round of UNAVAILABLE, then one refused for good", a.answers, b.answers)
	}
}
