package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// snapshotBytes reads a ShardSnapshot of r whole.
func snapshotBytes(r *Raft) ([]byte, uint64, error) {
	x, err := ShardSnapshot(r)
	if err != nil {
		return nil, 0, err
	}
	defer x.Close()
	var buf bytes.Buffer
	if _, err := x.WriteTo(&buf); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), x.Applied(), nil
}

// groupSpans are the record spans testGroup's replicas serve.
func groupSpans() []storage.Span {
	return storage.ShardSpans(1)
}

func openEngine(t *testing.T, dir string) *storage.Engine {
	t.Helper()
	sc := storage.DefaultConfig(dir)
	sc.CacheBytes, sc.MinFreeBytes = 8<<20, 0
	e, err := storage.Open(sc)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func del(key string) *commandpb.Command {
	k, _ := keys.Parse(key)
	return &commandpb.Command{Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{
		{Op: &cairnpb.Operation_Delete{Delete: &cairnpb.DeleteOp{Key: &cairnpb.Key{Major: k.Major, Minor: k.Minor}}}},
	}}}}
}

func (g *testGroup) propose(r *Raft, cmd *commandpb.Command) uint64 {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := r.Propose(ctx, cmd, storage.Sync)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		g.t.Fatal(err)
	}
	_, idx, _ := storage.ParseVersion(res.Ops[0].GetNewVersion())
	return idx
}

func mustValue(t *testing.T, e *storage.Engine, key string) (string, uint64, bool) {
	t.Helper()
	k, _ := keys.Parse(key)
	rec, ok, err := e.GetIn(1, k, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "", 0, false
	}
	_, idx, _ := storage.ParseVersion(rec.Version)
	return string(rec.Value), idx, true
}

// TestRaftRestoreFromShardSnapshot: a shard snapshot taken on the leader,
// restored offline on every replica, brings back exactly the data as of the
// snapshot; the group then elects a leader, takes writes at indexes above
// every restored version, and its replicas converge.
func TestRaftRestoreFromShardSnapshot(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	for i := range 30 {
		g.propose(l, put(fmt.Sprintf("/b/-/%02d", i), "v1", 0))
	}
	g.propose(l, put("/t/-/before", "v1", time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.ReadReady(ctx, Consistency{Kind: Absolute, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	data, idx, err := snapshotBytes(l)
	if err != nil {
		t.Fatal(err)
	}

	// After the snapshot: overwrites, a delete, new records, a new TTL.
	var last uint64
	for i := range 10 {
		last = g.propose(l, put(fmt.Sprintf("/b/-/%02d", i), "v2", 0))
	}
	last = g.propose(l, del("/b/-/10"))
	for i := 30; i < 50; i++ {
		last = g.propose(l, put(fmt.Sprintf("/b/-/%02d", i), "v1", 0))
	}
	last = g.propose(l, put("/t/-/after", "v1", time.Hour))
	if last <= idx {
		t.Fatalf("a write after the snapshot at %d got index %d", idx, last)
	}

	for id := uint64(1); id <= 3; id++ {
		g.stop(id)
	}
	for id := uint64(1); id <= 3; id++ {
		e := openEngine(t, g.dirs[id])
		if err := RestoreShard(e, 1, []uint64{1, 2, 3}, groupSpans(), bytes.NewReader(data), idx); err != nil {
			t.Fatalf("restore on node %d: %v", id, err)
		}
		if a, err := e.ShardApplied(1); err != nil || a != idx+restoreGap {
			t.Fatalf("node %d restored at applied %d, %v; want %d", id, a, err, idx+restoreGap)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for id := uint64(1); id <= 3; id++ {
		g.start(id)
	}

	l = g.leader()
	if err := l.ReadReady(ctx, Consistency{Kind: Absolute, Timeout: 5 * time.Second}); err != nil {
		t.Fatalf("absolute read after the restore: %v", err)
	}
	for id := uint64(1); id <= 3; id++ {
		got, err := g.engines[id].ExportSpans(groupSpans())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("node %d after the restore: its data differs from the snapshot's", id)
		}
	}
	e := l.Engine()
	for key, want := range map[string]string{"/b/-/00": "v1", "/b/-/09": "v1", "/b/-/10": "v1", "/b/-/29": "v1", "/t/-/before": "v1"} {
		v, vi, ok := mustValue(t, e, key)
		if !ok || v != want || vi > idx {
			t.Fatalf("%s after the restore: %q (index %d, present %v); want %q at an index <= %d", key, v, vi, ok, want, idx)
		}
	}
	for _, key := range []string{"/b/-/30", "/b/-/49", "/t/-/after"} {
		if _, _, ok := mustValue(t, e, key); ok {
			t.Fatalf("%s, written after the snapshot, survived the restore", key)
		}
	}
	exp, err := e.ExpiredIn(1, time.Now().Add(2*time.Hour).UnixMilli(), 10)
	if err != nil || len(exp) != 1 {
		t.Fatalf("expiry index after the restore: %d entries, %v; want 1", len(exp), err)
	}

	next := g.propose(l, put("/b/-/new", "x", 0))
	if next <= idx {
		t.Fatalf("a write after the restore got index %d, not above the restored %d", next, idx)
	}
	var want []byte
	for id := uint64(1); id <= 3; id++ {
		r := g.net.get(id)
		waitApplied(t, r, next)
		got, err := r.Engine().ExportSpans(groupSpans())
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Fatalf("node %d diverges from node 1 after the restore", id)
		}
		if v, vi, ok := mustValue(t, r.Engine(), "/b/-/new"); !ok || v != "x" || vi != next {
			t.Fatalf("node %d: the new write reads %q at %d (present %v)", id, v, vi, ok)
		}
	}
}

// Two shards of a 4-partition store, for tests of one engine that hosts
// both.
var (
	shardParts = map[uint64][]keys.PartitionID{1: {0, 1}, 2: {2, 3}}
	spansOf    = map[uint64][]storage.Span{1: storage.ShardSpans(1), 2: storage.ShardSpans(2)}
)

// shardKeys returns n keys in the shard's partitions.
func shardKeys(shard uint64, n int) []string {
	var out []string
	for j := 0; len(out) < n; j++ {
		major := fmt.Sprintf("u%d", j)
		p := keys.PartitionOf(keys.Hash([]string{major}), 4)
		for _, q := range shardParts[shard] {
			if p == q {
				out = append(out, "/"+major+"/-/m")
			}
		}
	}
	return out
}

// fillShard files a log of n entries for shard from index from, each
// applied as a put into one of 50 keys of the shard, with the states a
// running group would have written.
func fillShard(t *testing.T, e *storage.Engine, shard, from, n uint64) {
	t.Helper()
	ks := shardKeys(shard, 50)
	for lo := from; lo < from+n; lo += 100 {
		b := e.NewShardBatch(shard, 77)
		for i := lo; i < min(lo+100, from+n); i++ {
			ent, _ := proto.Marshal(&raftpb.Entry{Index: proto.Uint64(i), Term: proto.Uint64(3), Data: []byte("x")})
			if err := b.PutLogEntry(shard, i, ent); err != nil {
				t.Fatal(err)
			}
			if r := b.Apply(i, put(ks[i%50], fmt.Sprint(i), 0)); r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		hs, _ := proto.Marshal(&raftpb.HardState{Term: proto.Uint64(3), Vote: proto.Uint64(2), Commit: proto.Uint64(from + n - 1)})
		cs, _ := proto.Marshal(&raftpb.ConfState{Voters: []uint64{1, 2, 3}})
		for kind, v := range map[byte][]byte{storage.ShardHardState: hs, storage.ShardConfState: cs,
			storage.ShardTruncated: make([]byte, 16)} {
			if err := b.PutShardState(shard, kind, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(storage.NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
}

func logLen(t *testing.T, e *storage.Engine, shard uint64) int {
	t.Helper()
	n := 0
	if err := e.LogEntries(shard, 0, ^uint64(0), func(uint64, []byte) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRestoreShardResetsRaftState: RestoreShard on an engine with a long
// log leaves no entry of it, writes a Raft state etcd raft starts from at
// the restore index, and touches no other shard.
func TestRestoreShardResetsRaftState(t *testing.T) {
	spans := spansOf[1]
	e := openEngine(t, t.TempDir())
	defer e.Close()
	fillShard(t, e, 1, 1, 600)
	fillShard(t, e, 2, 1, 10)
	data, idx, err := e.ExportShard(1, spans)
	if err != nil || idx != 600 {
		t.Fatalf("export at %d, %v; want 600", idx, err)
	}
	fillShard(t, e, 1, 601, 400) // the log goes on to 1000
	other, _ := e.ExportSpans(spansOf[2])
	if len(other) == 0 {
		t.Fatal("shard 2 holds no records")
	}

	if err := RestoreShard(e, 1, []uint64{1, 2, 3}, spans, bytes.NewReader(data), idx); err != nil {
		t.Fatal(err)
	}
	snap := idx
	idx = restartIndex(snap, 1000) // the log went on past the snapshot
	if idx != snap+restoreGap {
		t.Fatalf("restart index %d, want %d", idx, snap+restoreGap)
	}
	if n := logLen(t, e, 1); n != 0 {
		t.Fatalf("%d log entries left after the restore", n)
	}
	if n := logLen(t, e, 2); n != 10 {
		t.Fatalf("shard 2 has %d log entries after shard 1's restore; want 10", n)
	}
	if got, _ := e.ExportSpans(spans); !bytes.Equal(got, data) {
		t.Fatal("restored records differ from the snapshot")
	}
	if got, _ := e.ExportSpans(spansOf[2]); !bytes.Equal(got, other) {
		t.Fatal("shard 1's restore changed records outside its spans")
	}

	ls, err := openLogStore(e, 1, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := ls.FirstIndex()
	last, _ := ls.LastIndex()
	term, err := ls.Term(idx)
	if first != idx+1 || last != idx || err != nil || term != restoreTerm {
		t.Fatalf("log store: first %d last %d term(%d) %d %v; want %d %d %d", first, last, idx, term, err, idx+1, idx, restoreTerm)
	}
	if _, err := ls.Term(idx - 1); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("term below the restore index: %v, want ErrCompacted", err)
	}
	hs, cs, _ := ls.InitialState()
	if hs.GetTerm() != restoreTerm || hs.GetCommit() != idx || hs.GetVote() != 0 || len(cs.GetVoters()) != 3 {
		t.Fatalf("initial state %v %v", hs, cs)
	}
	if a, _ := e.ShardApplied(1); a != idx {
		t.Fatalf("applied %d, want %d", a, idx)
	}
	if a, _ := e.ShardApplied(2); a != 10 {
		t.Fatalf("shard 2 applied %d after shard 1's restore; want 10", a)
	}

	// etcd raft takes the state, and a single voter's first entry follows it.
	ls1, _ := openLogStore(e, 1, nil, false)
	ls1.conf.Voters = []uint64{1}
	rn, err := raft.NewRawNode(&raft.Config{ID: 1, ElectionTick: 10, HeartbeatTick: 1, Storage: ls1, Applied: idx,
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 16, Logger: raftLogger{testLogger(t)}})
	if err != nil {
		t.Fatalf("etcd raft refuses the restored state: %v", err)
	}
	if err := rn.Campaign(); err != nil {
		t.Fatal(err)
	}
	var entries []*raftpb.Entry
	for i := 0; i < 5 && rn.HasReady(); i++ { // the self-vote, then the entry
		rd := rn.Ready()
		entries = append(entries, rd.Entries...)
		b := e.NewShardBatch(1, 77)
		if err := ls1.append(b, rd.Entries); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(storage.NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
		for _, m := range rd.Messages {
			if m.GetTo() == 1 {
				_ = rn.Step(m)
			}
		}
		rn.Advance(rd)
	}
	if len(entries) != 1 || entries[0].GetIndex() != idx+1 || entries[0].GetTerm() != restoreTerm+1 {
		t.Fatalf("the new leader's first entries: %v; want one at index %d term %d", entries, idx+1, restoreTerm+1)
	}
}

// TestRestoreShardIndexFloor: the group restarts at no less than
// bootstrapIndex and than any version in the data.
func TestRestoreShardIndexFloor(t *testing.T) {
	spans := groupSpans()
	e := openEngine(t, t.TempDir())
	defer e.Close()
	if err := RestoreShard(e, 1, []uint64{1}, spans, bytes.NewReader(nil), 0); err != nil {
		t.Fatal(err)
	}
	if a, _ := e.ShardApplied(1); a != bootstrapIndex+restoreGap {
		t.Fatalf("empty restore at 0: applied %d, want %d", a, bootstrapIndex+restoreGap)
	}
	fillShard(t, e, 1, 1, 40)
	data, _ := e.ExportSpans(spans)
	if err := RestoreShard(e, 1, []uint64{1}, spans, bytes.NewReader(data), 10); err != nil {
		t.Fatal(err)
	}
	ls, err := openLogStore(e, 1, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	// fillShard rewrote the shard's state at indexes 1 to 40, so the node's
	// prior index is 40: one gap above the highest version.
	want := uint64(40 + restoreGap)
	if a, _ := e.ShardApplied(1); a != want || ls.truncIndex != want || ls.hard.GetCommit() != want {
		t.Fatalf("restore at 10 of data with versions up to 40: applied %d, truncated %d, commit %d; want %d",
			a, ls.truncIndex, ls.hard.GetCommit(), want)
	}
}

// TestRestartIndex: a restored group restarts above the snapshot and above
// everything the node had reached before; replicas whose priors differ
// within one gap agree.
func TestRestartIndex(t *testing.T) {
	for _, tc := range []struct{ index, prior, want uint64 }{
		{100, 0, 100 + restoreGap},                        // a node with no state for the shard
		{100, 50, 100 + restoreGap},                       // behind the snapshot
		{100, 100, 100 + restoreGap},                      // exactly at it
		{100, 5000, 100 + restoreGap},                     // writes after the snapshot
		{100, 100 + restoreGap, 100 + restoreGap},         // the same snapshot restored again, nothing written since
		{100, 100 + restoreGap + 7, 100 + 2*restoreGap},   // ... after more writes
		{100, 100 + 2*restoreGap - 1, 100 + 2*restoreGap}, // the last prior of a gap
		{100, 100 + 2*restoreGap, 100 + 2*restoreGap},     // restored a second time, nothing written since
		{100, 100 + 2*restoreGap + 1, 100 + 3*restoreGap}, // a third restore
	} {
		got := restartIndex(tc.index, tc.prior)
		if got != tc.want || got < tc.prior || got <= tc.index || got == tc.prior && (got-tc.index)%restoreGap != 0 {
			t.Errorf("restartIndex(%d, %d) = %d, want %d", tc.index, tc.prior, got, tc.want)
		}
	}
}

// TestRestoreShardRejectsBadInput: a failed restore changes nothing.
func TestRestoreShardRejectsBadInput(t *testing.T) {
	spans := spansOf[1]
	e := openEngine(t, t.TempDir())
	defer e.Close()
	fillShard(t, e, 1, 1, 40)
	data, _ := e.ExportSpans(spans)
	before, _ := e.ExportSpans(spans)
	for name, tc := range map[string]struct {
		voters []uint64
		spans  []storage.Span
		data   []byte
	}{
		"no voters":        {nil, spans, data},
		"duplicate voter":  {[]uint64{1, 1}, spans, data},
		"truncated data":   {[]uint64{1}, spans, data[:len(data)-3]},
		"key out of spans": {[]uint64{1}, spansOf[2], data},
	} {
		if err := RestoreShard(e, 1, tc.voters, tc.spans, bytes.NewReader(tc.data), 40); err == nil {
			t.Errorf("%s: restore succeeded", name)
		}
		if n := logLen(t, e, 1); n != 40 {
			t.Fatalf("%s: a failed restore left %d log entries, want 40", name, n)
		}
		if got, _ := e.ExportSpans(spans); !bytes.Equal(got, before) {
			t.Fatalf("%s: a failed restore changed records", name)
		}
	}
}

// TestRaftLoneRestoredReplicaIsNotCounted: a replica restored on its own
// while the group ran on restarts above the group's log and acknowledges
// entries it never had; the leader must not count it, or a write held by
// the leader alone would commit.
func TestRaftLoneRestoredReplicaIsNotCounted(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	for i := range 10 {
		g.propose(l, put(fmt.Sprintf("/b/-/%02d", i), "v1", 0))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.ReadReady(ctx, Consistency{Kind: Absolute, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	data, idx, err := snapshotBytes(l)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		g.propose(l, put(fmt.Sprintf("/c/-/%02d", i), "v1", 0))
	}
	lead := l.cfg.Node
	lone, other := lead%3+1, (lead+1)%3+1
	g.stop(lone)
	e := openEngine(t, g.dirs[lone])
	if err := RestoreShard(e, 1, []uint64{1, 2, 3}, groupSpans(), bytes.NewReader(data), idx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	g.start(lone)
	g.stop(other)

	wctx, wcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer wcancel()
	res, err := l.Propose(wctx, put("/d/-/only-on-the-leader", "v1", 0), storage.Sync)
	if err == nil && res.Err == nil {
		t.Fatalf("a write committed with only the leader and a replica restored alone (node %d) up", lone)
	}
	t.Logf("write without a real majority: %v %v (as it should)", err, res.Err)
}
