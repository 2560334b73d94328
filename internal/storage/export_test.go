package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// shardFill writes n records (values of size bytes, random from rng; one in
// three with a TTL, so with an expiry-index entry) and a partition table
// into shard, one command per commit from index first on, and returns the
// next index.
func shardFill(t testing.TB, e *Engine, shard uint64, rng *rand.Rand, first uint64, n, size int) uint64 {
	t.Helper()
	idx := first
	for i := range n {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		op := putOp(fmt.Sprintf("/s%d/k%06d/-/m", shard, i), string(v), cairnpb.Condition_CONDITION_UNSPECIFIED, nil)
		if i%3 == 0 {
			op.GetPut().TtlMs = int64(1000 + i)
		}
		b := e.NewShardBatch(shard, testOrigin)
		cmd := &commandpb.Command{NowMs: 1, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{op}}}}
		if r := b.Apply(idx, cmd); r.Err != nil {
			t.Fatal(r.Err)
		}
		if i == 0 {
			if err := b.b.Set(shardKey(shard, shardTable), []byte(fmt.Sprintf("table of shard %d", shard)), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
		idx++
	}
	return idx
}

// readAll streams an export, checking each chunk's bound.
func readAll(t testing.TB, x *Export) (data []byte, chunks int) {
	t.Helper()
	r, err := x.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			return data, chunks
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(c) == 0 {
			t.Fatal("an empty chunk")
		}
		if len(c) > ChunkBytes {
			if _, _, rest, ok, _ := cutPair(c); !ok || len(rest) > 0 {
				t.Fatalf("a chunk of %d bytes holds more than one pair", len(c))
			}
		}
		data = append(data, c...)
		chunks++
	}
}

// TestExportStreams: an export streams exactly what ExportShard returns
// (records, expiry entries and partition table of its shard only), in
// chunks of at most ChunkBytes, from a view that later writes do not move;
// Size counts it; Close stops readers mid-stream.
func TestExportStreams(t *testing.T) {
	e := testEngine(t)
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	next := shardFill(t, e, 2, rng, 1, 300, 10<<10)
	shardFill(t, e, 3, rng, 1, 50, 100)
	want, applied, err := e.ExportShard(2, ShardDataSpans(2))
	if err != nil || applied != next-1 {
		t.Fatalf("ExportShard: applied %d, %v; want %d", applied, err, next-1)
	}
	x, err := e.NewExport(2, ShardDataSpans(2))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	shardFill(t, e, 2, rng, next, 10, 10) // after the export: not in it
	got, chunks := readAll(t, x)
	if !bytes.Equal(got, want) || x.Applied() != applied {
		t.Fatalf("streamed %d bytes at %d, want %d bytes at %d", len(got), x.Applied(), len(want), applied)
	}
	if min := len(want) / ChunkBytes; chunks < min || chunks > min+1 {
		t.Fatalf("%d chunks for %d bytes", chunks, len(want))
	}
	if n, err := x.Size(); err != nil || n != int64(len(want)) {
		t.Fatalf("Size = %d, %v; want %d", n, err, len(want))
	}
	var tables, expiries int
	for rest := got; len(rest) > 0; {
		k, _, r, _, _ := cutPair(rest)
		rest = r
		switch {
		case k[0] == shardSpace:
			tables++
		case k[0] == expirySpace:
			expiries++
		case k[0] != 'r' || !bytes.Equal(k[1:9], []byte{0, 0, 0, 0, 0, 0, 0, 2}):
			t.Fatalf("key %x is not shard 2's", k)
		}
	}
	if tables != 1 || expiries != 100 {
		t.Fatalf("%d partition tables and %d expiry entries, want 1 and 100", tables, expiries)
	}

	r, err := x.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if _, err := r.Next(); !errors.Is(err, ErrExportClosed) {
		t.Fatalf("Next after Close: %v, want ErrExportClosed", err)
	}
	r.Close()
	if _, err := x.NewReader(); !errors.Is(err, ErrExportClosed) {
		t.Fatalf("NewReader after Close: %v", err)
	}
}

// TestExportLargePair: a pair larger than ChunkBytes travels alone.
func TestExportLargePair(t *testing.T) {
	e := testEngine(t)
	rng := rand.New(rand.NewPCG(1, 2))
	shardFill(t, e, 1, rng, 1, 3, 2<<20)
	x, err := e.NewExport(1, ShardDataSpans(1))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	want, _, _ := e.ExportShard(1, ShardDataSpans(1))
	got, chunks := readAll(t, x)
	if !bytes.Equal(got, want) || chunks != 4 { // three records; table and expiry entry together
		t.Fatalf("%d chunks, equal %v", chunks, bytes.Equal(got, want))
	}
}
