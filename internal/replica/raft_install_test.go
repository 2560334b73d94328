package replica

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// recordsOf counts the records of shard 1 under /prefix in r's engine.
func recordsOf(t *testing.T, r *Raft, prefix string) int {
	t.Helper()
	recs, _, err := r.Engine().MultiGet(storage.Scan{Shard: 1, Parent: keys.New([]string{prefix}), Depth: keys.ParentAndDescendants}, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// TestRaftSnapshotCrashReopen: a follower's engine loses power at each
// file operation of a snapshot's import and install (the import files'
// writes, Pebble's link, and their removal once ingested). Reopened on
// what the crash left, the replica holds either its old state, and the
// leader sends the snapshot again, or the installed one, and either way it
// catches up and holds every record; raft never refuses the state it
// reopens with.
func TestRaftSnapshotCrashReopen(t *testing.T) {
	const victim = 3
	mem := vfs.NewCrashableMem()
	var (
		mu     sync.Mutex
		clones []*vfs.MemFS
	)
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if strings.Contains(op.Path, "/ingest/") {
			mu.Lock()
			clones = append(clones, mem.CrashClone(vfs.CrashCloneCfg{}))
			mu.Unlock()
		}
		return nil
	})
	g := newGroupOn(t, 20, 10*time.Millisecond, map[uint64]vfs.FS{victim: errorfs.Wrap(mem, inj)})
	l := g.leader()
	if lid, _ := l.Leader(); lid == victim {
		l.TransferLeadership(1)
		waitFor(t, func() bool { lead, _ := g.net.get(1).Leader(); return lead != victim && lead != 0 }, "leadership off the victim")
		l = g.leader()
	}
	var last []byte
	write := func(from, to int) uint64 {
		for i := from; i < to; i++ {
			v, err := g.write(l, fmt.Sprintf("/a/-/%03d", i), "v")
			if err != nil {
				t.Fatal(err)
			}
			last = v
		}
		_, idx, _ := storage.ParseVersion(last)
		return idx
	}
	idx := write(0, 20)
	waitApplied(t, g.net.get(victim), idx)
	before := g.net.get(victim).AppliedIndex()
	g.stop(victim)
	idx = write(20, 200) // the victim misses these: past the leader's log
	g.start(victim)      // catches up by snapshot
	waitApplied(t, g.net.get(victim), idx)
	g.stop(victim)
	mu.Lock()
	points := clones
	mu.Unlock()
	if len(points) < 4 {
		t.Fatalf("only %d file operations in the snapshot's import", len(points))
	}
	// Each crash point restarts the whole group, so the leader remembers
	// no acknowledgement that the crash took back.
	for id := uint64(1); id <= 3; id++ {
		g.stop(id)
	}
	var olds, news int
	for _, i := range samples(len(points), 8) {
		g.fs[victim] = points[i]
		for id := uint64(1); id <= 3; id++ {
			g.start(id)
		}
		r := g.net.get(victim)
		switch a := r.AppliedIndex(); {
		case a == before:
			olds++
		case a == idx:
			news++
			if n := recordsOf(t, r, "a"); n != 200 {
				t.Fatalf("crash point %d: reopened at the snapshot's index %d with %d records, want 200", i, a, n)
			}
		default:
			t.Fatalf("crash point %d: reopened at applied %d, neither the old %d nor the snapshot's %d", i, a, before, idx)
		}
		waitApplied(t, r, idx)
		if n := recordsOf(t, r, "a"); n != 200 {
			t.Fatalf("crash point %d: caught up to %d with %d records, want 200", i, idx, n)
		}
		for id := uint64(1); id <= 3; id++ {
			g.stop(id)
		}
	}
	t.Logf("%d crash points, %d tried: %d reopened with the old state (and got the snapshot again), %d with the snapshot installed", len(points), olds+news, olds, news)
	if olds == 0 || news == 0 {
		t.Fatalf("crash points: %d old, %d installed; want both", olds, news)
	}
}

// samples returns up to k indexes spread evenly over [0, n), the first and
// the last included.
func samples(n, k int) []int {
	if n <= k {
		k = n
	}
	out := make([]int, 0, k)
	for i := range k {
		j := 0
		if k > 1 {
			j = i * (n - 1) / (k - 1)
		}
		out = append(out, j)
	}
	return out
}

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
	}
}

// stalledStream is a SnapshotStream that hands out data, then blocks until
// its context ends.
type stalledStream struct {
	data []byte
	size int64
	ctx  context.Context
}

func (s *stalledStream) Size() int64              { return s.size }
func (s *stalledStream) Context() context.Context { return s.ctx }
func (s *stalledStream) Next() ([]byte, error) {
	if len(s.data) > 0 {
		p := s.data
		s.data = nil
		return p, nil
	}
	<-s.ctx.Done()
	return nil, s.ctx.Err()
}

// TestReceiveSnapshotRefusals: a replica refuses a snapshot whose header is
// not its own, one while another is being received, one the disk has no
// room for, and one while it waits to be readmitted; a refused or broken
// receive leaves no import files behind.
func TestReceiveSnapshotRefusals(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	lid, _ := l.Leader()
	f := g.net.get(lid%3 + 1)
	md := &raftpb.SnapshotMetadata{Index: proto.Uint64(50), Term: proto.Uint64(9), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}
	snap := func(h snapHeader) *raftpb.Message {
		return &raftpb.Message{Type: raftpb.MsgSnap.Enum(), From: proto.Uint64(lid), To: proto.Uint64(f.cfg.Node), Term: proto.Uint64(f.term.Load()),
			Snapshot: &raftpb.Snapshot{Data: h.encode(), Metadata: md}}
	}
	bg := context.Background()
	for name, m := range map[string]*raftpb.Message{
		"another shard":  snap(snapHeader{shard: 2, index: 50, id: 1}),
		"another index":  snap(snapHeader{shard: 1, index: 49, id: 1}),
		"not a header":   {Type: raftpb.MsgSnap.Enum(), Snapshot: &raftpb.Snapshot{Data: []byte("the data itself"), Metadata: md}},
		"header cut off": {Type: raftpb.MsgSnap.Enum(), Snapshot: &raftpb.Snapshot{Data: snapHeader{1, 50, 1}.encode()[:20], Metadata: md}},
	} {
		if err := f.ReceiveSnapshot(m, &stalledStream{ctx: bg}); !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("%s: %v, want ErrBadSnapshot", name, err)
		}
	}
	stale := snap(snapHeader{1, 50, 6})
	stale.Term = proto.Uint64(f.term.Load() - 1)
	if err := f.ReceiveSnapshot(stale, &stalledStream{ctx: bg}); !errors.Is(err, errStaleSnapshot) {
		t.Errorf("a snapshot of an older term: %v, want errStaleSnapshot", err)
	}
	// One receive stalls mid-stream: a second is refused meanwhile.
	ctx, cancel := context.WithCancel(bg)
	errc := make(chan error, 1)
	go func() {
		errc <- f.ReceiveSnapshot(snap(snapHeader{1, 50, 7}), &stalledStream{data: []byte{3, 'a', 'b'}, size: 100, ctx: ctx})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !f.claimedInbound() {
		if time.Now().After(deadline) {
			t.Fatal("the first receive never started")
		}
		time.Sleep(time.Millisecond)
	}
	if err := f.ReceiveSnapshot(snap(snapHeader{1, 50, 8}), &stalledStream{ctx: bg}); err == nil || !strings.Contains(err.Error(), "already receiving") {
		t.Fatalf("a second receive: %v", err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the stalled receive ended with %v", err)
	}
	if names, _ := f.Engine().FS().List(f.Engine().Dir() + "/ingest"); len(names) != 0 {
		t.Fatalf("a broken receive left import files: %v", names)
	}
	// No room: more than any disk holds.
	if err := f.ReceiveSnapshot(snap(snapHeader{1, 50, 9}), &stalledStream{size: 1 << 56, ctx: bg}); !errors.Is(err, storage.ErrDiskFull) {
		t.Fatalf("a snapshot without room: %v, want ErrDiskFull", err)
	}
	// Waiting to be readmitted.
	g.stop(f.cfg.Node)
	g.startWith(f.cfg.Node, true)
	f = g.net.get(f.cfg.Node)
	if err := f.ReceiveSnapshot(snap(snapHeader{1, 50, 10}), &stalledStream{ctx: bg}); !errors.Is(err, ErrRejoining) {
		t.Fatalf("a snapshot before readmission: %v, want ErrRejoining", err)
	}
}

// claimedInbound reports whether a receive is under way (tests).
func (r *Raft) claimedInbound() bool {
	r.inMu.Lock()
	defer r.inMu.Unlock()
	return r.inBusy
}
