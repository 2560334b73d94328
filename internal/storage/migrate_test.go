package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// shardLog applies commands to one shard of an engine, one commit each,
// keeping the shard's table between batches as a replica does.
type shardLog struct {
	t      *testing.T
	e      *Engine
	shard  uint64
	origin uint64
	index  uint64
	table  *PartitionTable
	cmds   map[uint64]*commandpb.Command // what was applied at each index
}

func newShardLog(t *testing.T, e *Engine, shard, origin uint64) *shardLog {
	return &shardLog{t: t, e: e, shard: shard, origin: origin, cmds: map[uint64]*commandpb.Command{}}
}

func (s *shardLog) apply(cmd *commandpb.Command) Result {
	s.t.Helper()
	b := s.e.NewShardBatch(s.shard, s.origin)
	defer b.Close()
	b.SetTable(s.table)
	s.index++
	r := b.Apply(s.index, cmd)
	if err := b.Commit(Sync); err != nil {
		s.t.Fatal(err)
	}
	s.table = b.Table()
	s.cmds[s.index] = cmd
	return r
}

func (s *shardLog) must(cmd *commandpb.Command) Result {
	s.t.Helper()
	r := s.apply(cmd)
	if r.Err != nil {
		s.t.Fatalf("shard %d, index %d: %v", s.shard, s.index, r.Err)
	}
	return r
}

func opsCmd(ops ...*cairnpb.Operation) *commandpb.Command {
	return &commandpb.Command{NowMs: 1, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: ops}}}
}

// keyIn returns the i-th key /k<j>/-/m whose major path falls in partition p of n.
func keyIn(p keys.PartitionID, n uint32, i int) string {
	for j, found := 0, 0; ; j++ {
		major := fmt.Sprintf("k%d", j)
		if keys.PartitionOf(keys.Hash([]string{major}), n) == p {
			if found == i {
				return "/" + major + "/-/m"
			}
			found++
		}
	}
}

// TestMoveCommands walks a partition through a whole move between two
// shards of one engine, with writes during the copy and after the
// handoff: the target ends with the source's records byte for byte
// (versions included), the source refuses the partition from the
// Transfer on, the target serves it from Activate on, and the drop
// leaves the source's other partitions alone. Seeded: -seed.
func TestMoveCommands(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	e := testEngine(t)
	const n, p = 4, keys.PartitionID(2)
	src, dst := newShardLog(t, e, 1, 0x11), newShardLog(t, e, 2, 0x22)
	src.must(&commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: n, Partitions: []uint32{0, 1, 2, 3}}}})
	dst.must(&commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: n}}})
	put := func(s *shardLog, key, v string) Result { return s.apply(opsCmd(putOp(key, v, 0, nil))) }
	for i := range 40 {
		put(src, keyIn(keys.PartitionID(i%n), n, i/n), fmt.Sprint("v", i))
	}
	if r := put(dst, keyIn(p, n, 0), "x"); !errors.Is(r.Err, ErrNotServed) {
		t.Fatalf("put on the target before the move: %v, want ErrNotServed", r.Err)
	}
	dst.must(&commandpb.Command{Body: &commandpb.Command_MigrateIn{MigrateIn: &commandpb.MigrateIn{Partition: uint32(p), FromShard: 1, Attempt: 1}}})
	src.must(&commandpb.Command{Body: &commandpb.Command_MigrateOut{MigrateOut: &commandpb.MigrateOut{Partition: uint32(p), ToShard: 2}}})
	if r := put(dst, keyIn(p, n, 0), "x"); !errors.Is(r.Err, ErrMoving) {
		t.Fatalf("put on the target while INCOMING: %v, want ErrMoving", r.Err)
	}
	// Copy from a view at the source's index I0, in small chunks.
	view := e.NewView()
	through, _ := view.ShardApplied(1)
	var chunks []*commandpb.Ingest
	if _, err := view.PartitionChunks(1, p, n, 64, func(ks, vs [][]byte) error {
		chunks = append(chunks, &commandpb.Ingest{Partition: uint32(p), Attempt: 1, Keys: ks, Values: vs})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	view.Close()
	if len(chunks) < 2 {
		t.Fatalf("%d chunks; the test wants several", len(chunks))
	}
	chunks[len(chunks)-1].Last, chunks[len(chunks)-1].Through = true, through
	// Writes while copying, on p and elsewhere, including a conditional one.
	for i := range 20 {
		put(src, keyIn(keys.PartitionID(rng.IntN(n)), n, rng.IntN(12)), fmt.Sprint("w", i))
	}
	for _, c := range chunks {
		dst.must(&commandpb.Command{Body: &commandpb.Command_Ingest{Ingest: c}})
	}
	replay := func(from, to uint64) {
		rp := &commandpb.Replay{Partition: uint32(p), Attempt: 1, SrcOrigin: src.origin}
		for i := from; i <= to; i++ {
			if Touches(src.cmds[i], uint32(p), n) {
				rp.Entries = append(rp.Entries, &commandpb.Replayed{SrcIndex: i, Command: src.cmds[i]})
			}
			if i%7 == 0 || i == to { // a few proposals, the last a watermark
				rp.Entries = append(rp.Entries, &commandpb.Replayed{SrcIndex: i})
				dst.must(&commandpb.Command{Body: &commandpb.Command_Replay{Replay: rp}})
				rp = &commandpb.Replay{Partition: uint32(p), Attempt: 1, SrcOrigin: src.origin}
			}
		}
	}
	replay(through+1, src.index)
	replay(through+1, src.index) // again: each is applied once
	r := src.must(&commandpb.Command{Body: &commandpb.Command_Transfer{Transfer: &commandpb.Transfer{Partition: uint32(p), ToShard: 2}}})
	_ = r
	it := src.index
	if r := put(src, keyIn(p, n, 1), "late"); !errors.Is(r.Err, ErrNotServed) {
		t.Fatalf("put on the source after the transfer: %v, want ErrNotServed naming shard 2", r.Err)
	} else if pe := new(PartitionError); !errors.As(r.Err, &pe) || pe.Peer != 2 {
		t.Fatalf("the refusal %v does not name shard 2", r.Err)
	}
	early := dst.apply(&commandpb.Command{Body: &commandpb.Command_Activate{Activate: &commandpb.Activate{Partition: uint32(p), Attempt: 1, FromShard: 1, Through: it + 5}}})
	if !errors.Is(early.Err, ErrMoveState) {
		t.Fatalf("activate before the replay caught up: %v, want ErrMoveState", early.Err)
	}
	dst.must(&commandpb.Command{Body: &commandpb.Command_Activate{Activate: &commandpb.Activate{Partition: uint32(p), Attempt: 1, FromShard: 1, Through: it,
		Versions: map[uint64]uint64{src.origin: it}}}})
	if err := dst.table.ServesPartition(2, uint32(p)); err != nil {
		t.Fatalf("target after Activate: %v", err)
	}
	// The target holds exactly the source's records of p, versions included.
	if a, b := partitionRecords(t, e, 1, p, n), partitionRecords(t, e, 2, p, n); !bytes.Equal(a, b) || len(a) == 0 {
		t.Fatalf("target's partition %d (%d bytes) differs from the source's (%d bytes)", p, len(b), len(a))
	}
	// A putIfVersion with a version read on the source succeeds on the target.
	k := keyIn(p, n, 0)
	kk, _ := keys.Parse(k)
	rec, ok, err := e.GetIn(1, kk, 1)
	if err != nil || !ok {
		t.Fatalf("source record %s: %v %v", k, ok, err)
	}
	if r := dst.must(opsCmd(putOp(k, "cas", cairnpb.Condition_CONDITION_IF_VERSION, rec.Version))); !r.Ops[0].GetSuccess() {
		t.Fatal("putIfVersion with the version read before the move failed on the target")
	}
	if since, ok := dst.table.VersionSince(src.origin, through); !ok || since == 0 {
		t.Fatalf("VersionSince(source origin, %d) = %d, %v", through, since, ok)
	}
	others := partitionRecords(t, e, 1, 0, n)
	src.must(&commandpb.Command{Body: &commandpb.Command_DropPartition{DropPartition: &commandpb.DropPartition{Partition: uint32(p)}}})
	if left := partitionRecords(t, e, 1, p, n); len(left) != 0 {
		t.Fatalf("source keeps %d bytes of partition %d after the drop", len(left), p)
	}
	if !bytes.Equal(others, partitionRecords(t, e, 1, 0, n)) {
		t.Fatal("the drop changed another partition")
	}
}

// TestMigrateInRestartsOnNewAttempt: a newer attempt clears what an older
// one copied; chunks of the older attempt are refused.
func TestMigrateInRestartsOnNewAttempt(t *testing.T) {
	e := testEngine(t)
	const n, p = 2, 1
	dst := newShardLog(t, e, 2, 0x22)
	dst.must(&commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: n}}})
	in := func(a uint64) {
		dst.must(&commandpb.Command{Body: &commandpb.Command_MigrateIn{MigrateIn: &commandpb.MigrateIn{Partition: p, FromShard: 1, Attempt: a}}})
	}
	in(1)
	k := ownless(keys.Encode(1, mustParse(keyIn(p, n, 0))))
	rec := encodeRecord(nil, MakeVersion(0x11, 5), 0, []byte("v"))
	dst.must(&commandpb.Command{Body: &commandpb.Command_Ingest{Ingest: &commandpb.Ingest{Partition: p, Attempt: 1, Keys: [][]byte{k}, Values: [][]byte{rec}}}})
	if len(partitionRecords(t, e, 2, p, n)) == 0 {
		t.Fatal("ingest wrote nothing")
	}
	in(2)
	if got := partitionRecords(t, e, 2, p, n); len(got) != 0 {
		t.Fatalf("attempt 2 kept %d bytes of attempt 1's copy", len(got))
	}
	r := dst.apply(&commandpb.Command{Body: &commandpb.Command_Ingest{Ingest: &commandpb.Ingest{Partition: p, Attempt: 1, Keys: [][]byte{k}, Values: [][]byte{rec}}}})
	if !errors.Is(r.Err, ErrMoveState) {
		t.Fatalf("a chunk of attempt 1 under attempt 2: %v, want ErrMoveState", r.Err)
	}
	in(1) // an older attempt changes nothing
	if e := dst.table.Parts[p]; e.Attempt != 2 {
		t.Fatalf("attempt %d, want 2", e.Attempt)
	}
}

// TestSplitKeepsOwners: a split maps each partition to its children, and
// every key is served by the same shard before and after.
func TestSplitKeepsOwners(t *testing.T) {
	e := testEngine(t)
	s := newShardLog(t, e, 1, 0x11)
	s.must(&commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: 4, Partitions: []uint32{1, 3}}}})
	before := s.table
	split := &commandpb.Command{Body: &commandpb.Command_Split{Split: &commandpb.Split{FromN: 4, Factor: 2}}}
	s.must(split)
	s.must(split) // a retried split does not split twice
	if s.table.N != 8 || len(s.table.Parts) != 4 {
		t.Fatalf("after the split: n=%d, %d entries; want 8, 4", s.table.N, len(s.table.Parts))
	}
	rng := rand.New(rand.NewPCG(testSeed(t), 2))
	for range 10000 {
		h := rng.Uint64()
		if (before.Serves(1, h) == nil) != (s.table.Serves(1, h) == nil) {
			t.Fatalf("hash %x: served before the split %v, after %v", h, before.Serves(1, h), s.table.Serves(1, h))
		}
	}
}

func mustParse(s string) keys.Key {
	k, err := keys.Parse(s)
	if err != nil {
		panic(err)
	}
	return k
}

// ownless drops a storage key's shard, as Ingest takes it.
func ownless(sk []byte) []byte { return append([]byte{keys.RecordSpace}, sk[9:]...) }

// partitionRecords returns shard's records of partition p, framed, keys
// without their shard.
func partitionRecords(t *testing.T, e *Engine, shard uint64, p keys.PartitionID, n uint32) []byte {
	t.Helper()
	v := e.NewView()
	defer v.Close()
	var out []byte
	if _, err := v.PartitionChunks(shard, p, n, 1<<20, func(ks, vs [][]byte) error {
		for i := range ks {
			out = append(append(out, ks[i]...), vs[i]...)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
