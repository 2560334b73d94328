package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// shardImage is everything a shard holds in an engine: its data as
// ExportShard returns it, its applied index, its Raft states and how many
// log entries it has.
type shardImage struct {
	data    []byte
	applied uint64
	states  map[byte]string
	logs    int
}

func imageOf(t testing.TB, e *Engine, shard uint64) shardImage {
	t.Helper()
	data, applied, err := e.ExportShard(shard, ShardDataSpans(shard))
	if err != nil {
		t.Fatal(err)
	}
	im := shardImage{data: data, applied: applied, states: map[byte]string{}}
	for _, k := range []byte{ShardHardState, ShardTruncated, ShardConfState} {
		if v, ok, err := e.ShardState(shard, k); err != nil {
			t.Fatal(err)
		} else if ok {
			im.states[k] = string(v)
		}
	}
	if err := e.LogEntries(shard, 0, ^uint64(0), func(uint64, []byte) bool { im.logs++; return true }); err != nil {
		t.Fatal(err)
	}
	return im
}

func (a shardImage) equal(b shardImage) bool {
	if !bytes.Equal(a.data, b.data) || a.applied != b.applied || a.logs != b.logs || len(a.states) != len(b.states) {
		return false
	}
	for k, v := range a.states {
		if b.states[k] != v {
			return false
		}
	}
	return true
}

// withRaftState gives shard a log and Raft states, committed with Sync.
func withRaftState(t testing.TB, e *Engine, shard uint64, tag string) {
	t.Helper()
	b := e.NewShardBatch(shard, testOrigin)
	defer b.Close()
	for i := uint64(1); i <= 20; i++ {
		if err := b.PutLogEntry(shard, i, []byte(tag)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []byte{ShardHardState, ShardTruncated, ShardConfState} {
		if err := b.PutShardState(shard, k, []byte(tag+string(k))); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(Sync); err != nil {
		t.Fatal(err)
	}
}

// importInto streams src's export of shard into dst, cutting the data at
// random places, and finishes the import.
func importInto(t testing.TB, src, dst *Engine, shard uint64, rng *rand.Rand) *Import {
	t.Helper()
	x, err := src.NewExport(shard, ShardDataSpans(shard))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	in, err := dst.NewImport(shard, ShardDataSpans(shard))
	if err != nil {
		t.Fatal(err)
	}
	r, err := x.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		c, err := r.Next()
		if err != nil {
			break
		}
		for len(c) > 0 {
			n := 1 + rng.IntN(len(c))
			if _, err := in.Write(c[:n]); err != nil {
				t.Fatal(err)
			}
			c = c[n:]
		}
	}
	if err := in.Finish(); err != nil {
		t.Fatal(err)
	}
	return in
}

// installState is the state the tests install with.
func installState(applied uint64) InstallState {
	return InstallState{Applied: applied, States: map[byte][]byte{
		ShardTruncated: []byte("new-t"), ShardConfState: []byte("new-c"), ShardHardState: []byte("new-h"),
	}}
}

// TestImportInstall: an import replaces the shard's data (stale records,
// expiry entries and partition table gone), its applied index, the states
// given and its whole log; other shards are untouched.
func TestImportInstall(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	src, dst := testEngine(t), testEngine(t)
	next := shardFill(t, src, 2, rng, 1, 200, 5<<10)
	shardFill(t, dst, 2, rng, 1, 300, 1<<10) // other keys and values: all must go
	shardFill(t, dst, 3, rng, 1, 40, 100)
	withRaftState(t, dst, 2, "old")
	withRaftState(t, dst, 3, "three")
	b := dst.NewShardBatch(2, testOrigin)
	if err := b.b.Set(shardKey(2, shardTable), []byte("a stale table"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	three := imageOf(t, dst, 3)

	in := importInto(t, src, dst, 2, rng)
	if in.MaxIndex() != next-1 || in.Pairs() == 0 {
		t.Fatalf("MaxIndex %d, want %d (%d pairs)", in.MaxIndex(), next-1, in.Pairs())
	}
	st := installState(next - 1)
	delete(st.States, ShardHardState) // a state not given is kept
	if err := in.Install(st); err != nil {
		t.Fatal(err)
	}
	got := imageOf(t, dst, 2)
	want := imageOf(t, src, 2)
	want.states = map[byte]string{ShardTruncated: "new-t", ShardConfState: "new-c", ShardHardState: "old" + string(ShardHardState)}
	if !got.equal(want) {
		t.Fatalf("after install: %d bytes at %d, states %v, %d log entries; want %d bytes at %d, states %v, no log",
			len(got.data), got.applied, got.states, got.logs, len(want.data), want.applied, want.states)
	}
	if now := imageOf(t, dst, 3); !now.equal(three) {
		t.Fatal("installing shard 2 changed shard 3")
	}
	if names, _ := dst.fs.List(dst.fs.PathJoin(dst.cfg.Dir, ingestDir)); len(names) != 0 {
		t.Fatalf("import files left behind: %v", names)
	}
	// A reset deletes every state first.
	in = importInto(t, src, dst, 2, rng)
	if err := in.Install(InstallState{Applied: 9, States: map[byte][]byte{ShardTruncated: []byte("t")}, Reset: true}); err != nil {
		t.Fatal(err)
	}
	if got := imageOf(t, dst, 2); len(got.states) != 1 || got.applied != 9 {
		t.Fatalf("after a reset install: states %v at %d", got.states, got.applied)
	}
}

// TestImportRefusesCorruption: data that is not the shard's, out of order,
// or cut short fails the import with ErrCorrupt and changes nothing.
func TestImportRefusesCorruption(t *testing.T) {
	e := testEngine(t)
	rng := rand.New(rand.NewPCG(3, 4))
	shardFill(t, e, 2, rng, 1, 20, 100)
	good, _, err := e.ExportShard(2, ShardDataSpans(2))
	if err != nil {
		t.Fatal(err)
	}
	k0, v0, rest, _, _ := cutPair(good)
	k1, v1, _, _, _ := cutPair(rest)
	other := bytes.Clone(k0)
	other[8]++ // shard 3
	expOther := append(append([]byte{expirySpace}, 0, 0, 0, 0, 0, 0, 0, 3), make([]byte, 8)...)
	expOther = append(expOther, k0...) // filed under shard 3, for a record of shard 2
	tests := []struct {
		name string
		data []byte
	}{
		{"another shard's record", appendPair(nil, other, v0)},
		{"out of order", appendPair(appendPair(nil, k1, v1), k0, v0)},
		{"a key twice", appendPair(appendPair(nil, k0, v0), k0, v0)},
		{"cut short", good[:len(good)-3]},
		{"not a record", appendPair(nil, k0, []byte{9, 9})},
		{"expiry entry of another shard", appendPair(nil, expOther, nil)},
		{"huge length", binary.AppendUvarint(nil, 1<<40)},
		{"the log", appendPair(nil, logKey(2, 7), []byte("entry"))},
		{"a Raft state", appendPair(nil, shardKey(2, ShardHardState), []byte("h"))},
	}
	before := imageOf(t, e, 2)
	for _, tc := range tests {
		in, err := e.NewImport(2, ShardDataSpans(2))
		if err != nil {
			t.Fatal(err)
		}
		_, err = in.Write(tc.data)
		if err == nil {
			err = in.Finish()
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
		if ierr := in.Install(installState(100)); ierr == nil {
			t.Errorf("%s: Install after a failed write succeeded", tc.name)
		}
		if now := imageOf(t, e, 2); !now.equal(before) {
			t.Fatalf("%s: the refused import changed the shard", tc.name)
		}
	}
	if names, _ := e.fs.List(e.fs.PathJoin(e.cfg.Dir, ingestDir)); len(names) != 0 {
		t.Fatalf("refused imports left files: %v", names)
	}
	if _, err := e.NewImport(2, []Span{{[]byte("r"), []byte("s")}}); err == nil {
		t.Fatal("an import of partial spans was accepted")
	}
}

// TestImportCrash: a crash at any moment of an install (power lost at
// every file operation from the first import file to Ingest's return)
// leaves the shard as it was or installed, all of it: never new data under
// an old applied index or log; the next open removes what the import left.
func TestImportCrash(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 5))
	src := testEngine(t)
	next := shardFill(t, src, 2, rng, 1, 60, 2<<10)

	mem := vfs.NewCrashableMem()
	var (
		mu     sync.Mutex
		armed  bool
		clones []*vfs.MemFS
	)
	inj := errorfs.InjectorFunc(func(errorfs.Op) error {
		mu.Lock()
		defer mu.Unlock()
		if armed {
			clones = append(clones, mem.CrashClone(vfs.CrashCloneCfg{}))
		}
		return nil
	})
	dst, err := Open(memConfig(errorfs.Wrap(mem, inj)))
	if err != nil {
		t.Fatal(err)
	}
	shardFill(t, dst, 2, rng, 1, 30, 1<<10)
	withRaftState(t, dst, 2, "old") // Sync: the old state is durable
	old := imageOf(t, dst, 2)
	mu.Lock()
	armed = true
	mu.Unlock()
	in := importInto(t, src, dst, 2, rng)
	if err := in.Install(installState(next - 1)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	armed = false
	clones = append(clones, mem.CrashClone(vfs.CrashCloneCfg{}))
	mu.Unlock()
	installed := imageOf(t, dst, 2)
	if installed.equal(old) {
		t.Fatal("the install changed nothing")
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	var olds, news int
	for i, fs := range clones {
		e, err := Open(memConfig(fs))
		if err != nil {
			t.Fatalf("crash at operation %d: open: %v", i, err)
		}
		switch got := imageOf(t, e, 2); {
		case got.equal(old):
			olds++
		case got.equal(installed):
			news++
		default:
			_ = e.Close()
			t.Fatalf("crash at operation %d of %d: neither the old state nor the installed one: %d bytes at %d, states %v, %d log entries",
				i, len(clones), len(got.data), got.applied, got.states, got.logs)
		}
		if names, _ := fs.List(fs.PathJoin(faultDir, ingestDir)); len(names) != 0 {
			_ = e.Close()
			t.Fatalf("crash at operation %d: the open left import files %v", i, names)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d crash points: %d old, %d installed", len(clones), olds, news)
	if olds == 0 || news == 0 {
		t.Fatalf("the crash points saw %d old and %d installed states; want both", olds, news)
	}
}

// BenchmarkSnapshotStream: a 64 MiB shard (records of 64 KiB) exported in
// chunks and imported into another engine, installed in one ingestion.
// b.SetBytes makes the MB/s its snapshot throughput.
func BenchmarkSnapshotStream(b *testing.B) {
	src := testEngine(b)
	rng := rand.New(rand.NewPCG(1, 1))
	shardFill(b, src, 2, rng, 1, 1024, 64<<10)
	x, err := src.NewExport(2, ShardDataSpans(2))
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	size, err := x.Size()
	if err != nil {
		b.Fatal(err)
	}
	dst := testEngine(b)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		in, err := dst.NewImport(2, ShardDataSpans(2))
		if err != nil {
			b.Fatal(err)
		}
		r, err := x.NewReader()
		if err != nil {
			b.Fatal(err)
		}
		for {
			c, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			if _, err := in.Write(c); err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
		if err := in.Finish(); err != nil {
			b.Fatal(err)
		}
		if err := in.Install(installState(uint64(i + 1))); err != nil {
			b.Fatal(err)
		}
	}
}
