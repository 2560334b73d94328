package storage

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// The benchmarks below use cairn bench's data set: benchRecords records of
// benchValueBytes bytes (YCSB's 10 fields of 100 bytes in the value layout)
// under /usertable/<key>, with the block cache of cairn lite.
const (
	benchRecords    = 100_000
	benchValueBytes = 1082
)

func benchKey(i int) keys.Key {
	return keys.Key{Major: []string{"usertable", "user" + strconv.Itoa(i*7919+1)}}
}

// benchValue returns a record of printable random bytes, which compress
// about as cairn bench's values do.
func benchValue() []byte {
	r := rand.New(rand.NewPCG(3, 4))
	v := make([]byte, benchValueBytes)
	for i := range v {
		v[i] = ' ' + byte(r.IntN(64))
	}
	return v
}

// benchEngine opens an engine holding the benchmark data set. With flushed
// set the records are in sstables (as after a load and its compactions);
// otherwise they are in the memtable.
func benchEngine(b *testing.B, flushed bool) (*Engine, *applier) {
	b.Helper()
	cfg := DefaultConfig(b.TempDir())
	cfg.MinFreeBytes = 0
	if os.Getenv("CAIRN_BENCH_ROWS") == "off" { // the row cache's cost, for an A/B
		cfg.RowCacheBytes = 0
	}
	e, err := Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	a := &applier{t: b, e: e}
	value := benchValue()
	const group = 500
	for i := 0; i < benchRecords; i += group {
		bt := e.NewBatch(testOrigin)
		for j := i; j < min(i+group, benchRecords); j++ {
			a.next++
			k := benchKey(j)
			op := &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{
				Key: &cairnpb.Key{Major: k.Major}, Value: value}}}
			cmd := &commandpb.Command{NowMs: 1, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{op}}}}
			if r := bt.Apply(a.next, cmd); r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		if err := bt.Commit(NoSync); err != nil {
			b.Fatal(err)
		}
		bt.Close()
	}
	if flushed {
		if err := e.db.Load().Flush(); err != nil {
			b.Fatal(err)
		}
		if err := e.db.Load().Compact(b.Context(), []byte{keys.RecordSpace}, []byte{keys.RecordSpace + 1}, false); err != nil {
			b.Fatal(err)
		}
	}
	// Warm the block cache, as a server that has been serving would be.
	for i := range benchRecords {
		if _, ok, err := e.Get(benchKey(i), 2); err != nil || !ok {
			b.Fatalf("warm-up get %d: %v %v", i, ok, err)
		}
	}
	return e, a
}

// BenchmarkEngineGet is one point read of a 1 KB record chosen uniformly,
// the storage half of a YCSB read.
func BenchmarkEngineGet(b *testing.B) {
	for _, flushed := range []bool{false, true} {
		name := "memtable"
		if flushed {
			name = "sstables"
		}
		b.Run(name, func(b *testing.B) {
			e, _ := benchEngine(b, flushed)
			ks := make([]keys.Key, 1024)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range ks {
				ks[i] = benchKey(r.IntN(benchRecords))
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if _, ok, err := e.Get(ks[i%len(ks)], 2); err != nil || !ok {
					b.Fatalf("get: %v %v", ok, err)
				}
				i++
			}
		})
	}
}

// BenchmarkApplyPut is the apply loop's storage work for one YCSB update
// in the value layout: a put-if-version of a 1 KB record (which reads the
// old record through the batch), groupSize commands per commit.
func BenchmarkApplyPut(b *testing.B) {
	for _, groupSize := range []int{1, 8} {
		b.Run("group="+strconv.Itoa(groupSize), func(b *testing.B) {
			e, a := benchEngine(b, true)
			value := benchValue()
			r := rand.New(rand.NewPCG(1, 2))
			versions := make(map[int][]byte)
			b.ReportAllocs()
			b.ResetTimer()
			n := 0
			for n < b.N {
				bt := e.NewBatch(testOrigin)
				for j := 0; j < groupSize && n < b.N; j++ {
					i := r.IntN(benchRecords)
					k := benchKey(i)
					op := &cairnpb.PutOp{Key: &cairnpb.Key{Major: k.Major}, Value: value}
					if v, ok := versions[i]; ok {
						op.Condition, op.MatchVersion = cairnpb.Condition_CONDITION_IF_VERSION, v
					} else {
						op.Condition = cairnpb.Condition_CONDITION_IF_PRESENT
					}
					a.next++
					cmd := &commandpb.Command{NowMs: 2, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{
						Ops: []*cairnpb.Operation{{Op: &cairnpb.Operation_Put{Put: op}}}}}}
					res := bt.Apply(a.next, cmd)
					if res.Err != nil || !res.Ops[0].Success {
						b.Fatalf("apply: %+v", res)
					}
					versions[i] = res.Ops[0].NewVersion
					n++
				}
				if err := bt.Commit(NoSync); err != nil {
					b.Fatal(err)
				}
				bt.Close()
			}
		})
	}
}

// BenchmarkApplyInsert is the apply loop's storage work for one YCSB
// insert in the value layout: a blind put of a new 1 KB record, one
// command per commit (run with CAIRN_BENCH_ROWS=off for the row cache's
// cost).
func BenchmarkApplyInsert(b *testing.B) {
	e, a := benchEngine(b, true)
	value := benchValue()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		k := benchKey(benchRecords + i)
		bt := e.NewBatch(testOrigin)
		a.next++
		cmd := &commandpb.Command{NowMs: 2, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{
			Ops: []*cairnpb.Operation{{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: &cairnpb.Key{Major: k.Major}, Value: value}}}}}}}
		if res := bt.Apply(a.next, cmd); res.Err != nil {
			b.Fatalf("apply: %+v", res)
		}
		if err := bt.Commit(NoSync); err != nil {
			b.Fatal(err)
		}
		bt.Close()
	}
}
