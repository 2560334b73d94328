package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/transport/transportpb"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// memNet delivers Raft traffic between replicas in one process. It is the
// test's stand-in for internal/transport; a cut node neither sends nor
// receives.
type memNet struct {
	mu    sync.Mutex
	nodes map[uint64]*Raft
	cut   map[uint64]bool
	// votes counts the (pre-)vote requests each node sent, commitOnly
	// the appends without entries (raft_commit.go).
	votes, commitOnly map[uint64]int
	// appends counts the appends with entries each node sent, entries
	// their entries, and acks the accepting MsgAppResps (raft_propose.go,
	// raft_acks.go).
	appends, entries, acks map[uint64]int
	snaps                  sync.WaitGroup // snapshot sends under way
	snapsSent              atomic.Int64   // snapshot sends begun
	// snapRead, if set, runs on the receiver once it has read a
	// snapshot's last chunk, before it hands the snapshot to its loop.
	snapRead func(to *Raft)
}

// tally records the vote requests and the commit-only appends among msgs,
// sent by from.
func (n *memNet) tally(from uint64, msgs []*raftpb.Message) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range msgs {
		if t := m.GetType(); t == raftpb.MsgPreVote || t == raftpb.MsgVote {
			n.votes[from]++
		}
		if commitOnly(m) {
			if n.commitOnly == nil {
				n.commitOnly = map[uint64]int{}
			}
			n.commitOnly[from]++
		}
		if n.appends == nil {
			n.appends, n.entries, n.acks = map[uint64]int{}, map[uint64]int{}, map[uint64]int{}
		}
		if m.GetType() == raftpb.MsgApp && len(m.GetEntries()) > 0 {
			n.appends[from]++
			n.entries[from] += len(m.GetEntries())
		}
		if accepting(m) {
			n.acks[from]++
		}
	}
}

// sent returns the appends with entries node id has sent, their entries,
// and the accepting MsgAppResps it has sent.
func (n *memNet) sent(id uint64) (appends, entries, acks int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.appends[id], n.entries[id], n.acks[id]
}

// commitOnlySent returns how many appends without entries node id has sent.
func (n *memNet) commitOnlySent(id uint64) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.commitOnly[id]
}

// voteRequests returns how many vote requests node id has sent.
func (n *memNet) voteRequests(id uint64) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.votes[id]
}

func (n *memNet) get(id uint64) *Raft {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cut[id] {
		return nil
	}
	return n.nodes[id]
}

type memSender struct {
	net  *memNet
	from uint64
}

func (s memSender) Send(_ uint64, msgs []*raftpb.Message) {
	if s.net.get(s.from) == nil {
		return
	}
	s.net.tally(s.from, msgs)
	for _, m := range msgs {
		to := s.net.get(m.GetTo())
		switch {
		case to == nil:
		case m.GetType() == raftpb.MsgSnap:
			s.net.snaps.Add(1)
			s.net.snapsSent.Add(1)
			go s.sendSnapshot(to, proto.Clone(m).(*raftpb.Message))
		default:
			to.Step(proto.Clone(m).(*raftpb.Message))
		}
	}
}

// sendSnapshot does what the transport does with a MsgSnap, on a goroutine
// of its own: streams its data from the sender's export into the
// receiver's ReceiveSnapshot, then reports the outcome to the sender.
func (s memSender) sendSnapshot(to *Raft, m *raftpb.Message) {
	defer s.net.snaps.Done()
	from := s.net.get(s.from)
	if from == nil {
		return
	}
	err := func() error {
		src, err := from.SnapshotData(m)
		if err != nil {
			return err
		}
		defer src.Close()
		size, err := src.Size()
		if err != nil {
			return err
		}
		s.net.mu.Lock()
		read := s.net.snapRead
		s.net.mu.Unlock()
		return to.ReceiveSnapshot(m, &memStream{src: src, size: size, read: func() {
			if read != nil {
				read(to)
			}
		}})
	}()
	if err != nil {
		from.log.Info("test snapshot send failed", "to", m.GetTo(), "err", err)
	}
	from.ReportSnapshot(m.GetTo(), err == nil)
}

// memStream is a SnapshotStream straight from a SnapshotSource.
type memStream struct {
	src  *SnapshotSource
	size int64
	read func() // once, at the end of the data
}

func (m *memStream) Size() int64 { return m.size }
func (m *memStream) Next() ([]byte, error) {
	b, err := m.src.Next()
	if errors.Is(err, io.EOF) && m.read != nil {
		m.read()
		m.read = nil
	}
	return b, err
}
func (m *memStream) Context() context.Context { return context.Background() }

func (s memSender) SendNotice(_ uint64, to uint64, n *transportpb.CommitNotice) {
	if s.net.get(s.from) == nil {
		return
	}
	if r := s.net.get(to); r != nil {
		r.Notice(n)
	}
}

type testGroup struct {
	t       testing.TB
	net     *memNet
	dirs    map[uint64]string
	engines map[uint64]*storage.Engine
	logKeep uint64
	tick    time.Duration
	// logSlack is every replica's LogSlack (0: the default).
	logSlack uint64
	// preferred is every replica's preferred leader; minFree overrides a
	// node's free-space margin (0: none).
	preferred uint64
	minFree   map[uint64]int64
	// fs, if set for a node, holds its engine (default: the disk).
	fs map[uint64]vfs.FS
	// onCorrupt, if set for a node, is its engine's corruption handler.
	onCorrupt map[uint64]func(error)
	// linger is every replica's CommitLinger (0: the default).
	linger time.Duration
}

func newGroup(t *testing.T, logKeep uint64) *testGroup { return newGroupTB(t, logKeep) }

// newGroupB uses production timing: under a saturating benchmark, 10ms
// ticks would let elections fire.
func newGroupB(b *testing.B) *testGroup {
	tick := 100 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("CAIRN_BENCH_TICK")); err == nil {
		tick = d
	}
	return newGroupTick(b, 0, tick)
}

func newGroupTB(t testing.TB, logKeep uint64) *testGroup {
	return newGroupTick(t, logKeep, 10*time.Millisecond)
}

func newGroupTick(t testing.TB, logKeep uint64, tick time.Duration) *testGroup {
	return newGroupOn(t, logKeep, tick, nil)
}

// newGroupOn starts a group whose nodes in fs keep their engines there.
func newGroupOn(t testing.TB, logKeep uint64, tick time.Duration, fs map[uint64]vfs.FS) *testGroup {
	return newGroupLinger(t, logKeep, tick, fs, 0)
}

// newGroupLinger is newGroupOn with every replica's CommitLinger.
func newGroupLinger(t testing.TB, logKeep uint64, tick time.Duration, fs map[uint64]vfs.FS, linger time.Duration) *testGroup {
	g := &testGroup{t: t, net: &memNet{nodes: map[uint64]*Raft{}, cut: map[uint64]bool{}, votes: map[uint64]int{}},
		dirs: map[uint64]string{}, engines: map[uint64]*storage.Engine{}, logKeep: logKeep, tick: tick, fs: fs, linger: linger}
	for id := uint64(1); id <= 3; id++ {
		g.dirs[id] = t.TempDir()
		if fs[id] != nil {
			g.dirs[id] = fmt.Sprintf("/n%d", id)
		}
		g.start(id)
	}
	t.Cleanup(func() {
		for id := range g.engines {
			g.stop(id)
		}
		g.net.snaps.Wait() // they fail fast once their replicas are closed
	})
	return g
}

func (g *testGroup) start(id uint64) { g.startWith(id, false) }

func (g *testGroup) startWith(id uint64, rejoin bool) {
	sc := storage.DefaultConfig(g.dirs[id])
	sc.CacheBytes, sc.MinFreeBytes, sc.OnCorruption = 8<<20, g.minFree[id], g.onCorrupt[id]
	if fs := g.fs[id]; fs != nil {
		sc.FS = fs
	}
	e, err := storage.Open(sc)
	if err != nil {
		g.t.Fatal(err)
	}
	meta, _ := e.Init("test", 4)
	r, err := OpenRaft(e, meta, RaftConfig{
		Shard: 1, Node: id, Voters: []uint64{1, 2, 3}, Origin: 77, Preferred: g.preferred, Rejoin: rejoin,
		Spans:        storage.ShardSpans(1),
		Partitions:   []keys.PartitionID{0, 1, 2, 3},
		TickInterval: g.tick, LogKeep: g.logKeep, LogSlack: g.logSlack, CommitLinger: g.linger,
		Sender: memSender{g.net, id}, Logger: testLogger(g.t),
		Fatal: func(err error) { g.t.Errorf("fatal on node %d: %v", id, err) },
	})
	if err != nil {
		g.t.Fatal(err)
	}
	g.net.mu.Lock()
	g.net.nodes[id] = r
	g.net.mu.Unlock()
	g.engines[id] = e
}

func (g *testGroup) stop(id uint64) {
	g.net.mu.Lock()
	r := g.net.nodes[id]
	delete(g.net.nodes, id)
	g.net.mu.Unlock()
	if r != nil {
		r.Close()
	}
	if e := g.engines[id]; e != nil {
		_ = e.Close()
		delete(g.engines, id)
	}
}

// leader waits for a leader that every live replica agrees on.
func (g *testGroup) leader() *Raft {
	g.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var lead uint64
		agree := true
		g.net.mu.Lock()
		for id, r := range g.net.nodes {
			if g.net.cut[id] {
				continue
			}
			l, _ := r.Leader()
			if lead == 0 {
				lead = l
			}
			agree = agree && l != 0 && l == lead
		}
		r := g.net.nodes[lead]
		g.net.mu.Unlock()
		if agree && r != nil && !g.net.cut[lead] {
			return r
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
	g.t.Fatal("no leader elected within 10s")
	return nil
}

// follower returns a node that does not lead l's group: 1, or 2 if 1 leads.
func follower(l *Raft) uint64 {
	if lid, _ := l.Leader(); lid == 1 {
		return 2
	}
	return 1
}

func (g *testGroup) write(r *Raft, key, value string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := r.Propose(ctx, put(key, value, 0), storage.Sync)
	if err != nil {
		return nil, err
	}
	return res.Ops[0].NewVersion, res.Err
}

// writeConcurrently runs writers goroutines of each SYNC writes on r and
// returns r's applied index after the last.
func (g *testGroup) writeConcurrently(r *Raft, writers, each int) uint64 {
	g.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := g.write(r, fmt.Sprintf("/w%d/-/%d", w, i), "v"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.t.Fatal(err)
	}
	return r.AppliedIndex()
}

func waitApplied(t *testing.T, r *Raft, index uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.waitFor(ctx, func() bool { return r.AppliedIndex() >= index }, "catch-up"); err != nil {
		t.Fatal(err)
	}
}

func TestRaftReplicatesAndFailsOver(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	for i := range 20 {
		if _, err := g.write(l, fmt.Sprintf("/k/-/%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := l.Leader()
	g.stop(old)
	l2 := g.leader()
	if id, _ := l2.Leader(); id == old {
		t.Fatal("the stopped node is still leader")
	}
	v, err := g.write(l2, "/k/-/after", "v")
	if err != nil {
		t.Fatalf("write after failover: %v", err)
	}
	if err := l2.ReadReady(context.Background(), Consistency{Kind: Absolute, Timeout: 5 * time.Second}); err != nil {
		t.Fatalf("absolute read on the new leader: %v", err)
	}
	for i := range 20 {
		if _, ok, _ := l2.Engine().GetIn(1, keys.New([]string{"k"}, fmt.Sprint(i)), time.Now().UnixMilli()); !ok {
			t.Fatalf("write %d lost in failover", i)
		}
	}
	g.start(old)
	_, idx, _ := storage.ParseVersion(v)
	waitApplied(t, g.net.get(old), idx)
}

func TestRaftFollowerReads(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	v, err := g.write(l, "/f", "1")
	if err != nil {
		t.Fatal(err)
	}
	lid, _ := l.Leader()
	var f *Raft
	for id := uint64(1); id <= 3; id++ {
		if id != lid {
			f = g.net.get(id)
		}
	}
	if err := f.ReadReady(context.Background(), Consistency{Kind: AtVersion, Version: v, Timeout: 5 * time.Second}); err != nil {
		t.Fatalf("version read on a follower: %v", err)
	}
	var nl *NotLeaderError
	if err := f.ReadReady(context.Background(), Consistency{Kind: Absolute}); !errors.As(err, &nl) || nl.Leader != lid {
		t.Fatalf("absolute read on a follower: %v, want NotLeaderError{%d}", err, lid)
	}
	if err := f.ReadReady(context.Background(), Consistency{Kind: TimeLag, Lag: time.Second, Timeout: 5 * time.Second}); err != nil {
		t.Fatalf("time-lag read on a connected follower: %v", err)
	}
	fid := f.cfg.Node
	g.net.mu.Lock()
	g.net.cut[fid] = true
	g.net.mu.Unlock()
	const lag = 20 * time.Millisecond
	for deadline := time.Now().Add(5 * time.Second); ; { // until the last notice is older than the lag
		if n := f.notice.Load(); n != nil && time.Since(n.at) > lag {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cut-off follower keeps receiving notices")
		}
		<-time.After(time.Millisecond)
	}
	err = f.ReadReady(context.Background(), Consistency{Kind: TimeLag, Lag: lag, Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrConsistency) {
		t.Fatalf("time-lag read on a cut-off follower: %v, want ErrConsistency", err)
	}
	if err := f.ReadReady(context.Background(), Consistency{Kind: NoneRequired}); err != nil {
		t.Fatalf("none-required read on a cut-off follower: %v", err)
	}
}

// TestRaftSnapshotCatchUp: a replica that missed more than the leader keeps
// in its log catches up through a snapshot.
func TestRaftSnapshotCatchUp(t *testing.T) {
	g := newGroup(t, 20)
	l := g.leader()
	victim := follower(l)
	g.stop(victim)
	var last []byte
	for i := range 200 {
		v, err := g.write(l, fmt.Sprintf("/s/-/%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = v
	}
	g.start(victim) // behind the leader's truncated log: needs a snapshot
	_, idx, _ := storage.ParseVersion(last)
	r := g.net.get(victim)
	waitApplied(t, r, idx)
	recs, _, err := r.Engine().MultiGet(storage.Scan{Shard: 1, Parent: keys.New([]string{"s"}), Depth: keys.ParentAndDescendants}, time.Now().UnixMilli())
	if err != nil || len(recs) != 200 {
		t.Fatalf("rejoined replica holds %d records, %v; want 200", len(recs), err)
	}
}

// testLogger shows the replicas' info lines (elections, snapshots) with -v.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// TestRaftWipedReplicaRejoins: a replica whose data is gone comes back
// silent, the leader readmits it, and it catches up through a snapshot.
func TestRaftWipedReplicaRejoins(t *testing.T) {
	g := newGroup(t, 20)
	l := g.leader()
	victim := follower(l)
	var last []byte
	for i := range 100 {
		v, err := g.write(l, fmt.Sprintf("/w/-/%03d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = v
	}
	g.stop(victim)
	g.dirs[victim] = t.TempDir() // wiped
	g.startWith(victim, true)
	r := g.net.get(victim)
	if !r.Rejoining() {
		t.Fatal("a wiped replica started as a member")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Readmit(ctx, victim); err != nil {
		t.Fatalf("readmit: %v", err)
	}
	r.Admit()
	for i := range 20 { // writes keep working during and after the rejoin
		v, err := g.write(l, fmt.Sprintf("/w/-/x%02d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = v
	}
	_, idx, _ := storage.ParseVersion(last)
	waitApplied(t, r, idx)
	recs, _, err := r.Engine().MultiGet(storage.Scan{Shard: 1, Parent: keys.New([]string{"w"}), Depth: keys.ParentAndDescendants}, time.Now().UnixMilli())
	if err != nil || len(recs) != 120 {
		t.Fatalf("rejoined replica holds %d records, %v; want 120", len(recs), err)
	}
	if v := r.Voters(); len(v) != 3 {
		t.Fatalf("rejoined replica sees voters %v", v)
	}
}

// TestRaftRejoinedReplicaIgnoresStaleHeartbeat: a heartbeat the leader
// built from the progress of a replica before it lost its data (on its
// way while the replica was readmitted: the transport and the rejoin RPC
// do not keep one order) commits beyond the rejoined replica's empty log.
// etcd raft would panic on it ("tocommit(N) is out of range
// [lastIndex(0)]"); the replica drops it as a lost heartbeat and catches up.
func TestRaftRejoinedReplicaIgnoresStaleHeartbeat(t *testing.T) {
	g := newGroup(t, 20)
	l := g.leader()
	lid, term := l.Leader()
	victim := follower(l)
	for i := range 50 {
		if _, err := g.write(l, fmt.Sprintf("/h/-/%03d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	stale := l.AppliedIndex()
	g.stop(victim)
	g.dirs[victim] = t.TempDir() // lost
	g.startWith(victim, true)
	r := g.net.get(victim)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Readmit(ctx, victim); err != nil {
		t.Fatalf("readmit: %v", err)
	}
	r.Admit()
	r.Step(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(lid), To: proto.Uint64(victim),
		Term: proto.Uint64(term), Commit: proto.Uint64(stale)})
	var last []byte
	for i := range 20 {
		v, err := g.write(l, fmt.Sprintf("/h/-/x%02d", i), "v")
		if err != nil {
			t.Fatal(err)
		}
		last = v
	}
	_, idx, _ := storage.ParseVersion(last)
	waitApplied(t, r, idx)
}
