package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// benchWorker returns a worker for workload A (run phase) over the null DB.
func benchWorker(b *testing.B, extra ...string) *worker {
	b.Helper()
	a, err := ParseArgs(PhaseRun, append([]string{"-P", "../../workloads/workloada", "-db", "null",
		"-p", "recordcount=100000", "-p", "operationcount=1000000"}, extra...))
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := NewConfig(PhaseRun, "workloada", a.Props)
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewWorkload(cfg)
	if err != nil {
		b.Fatal(err)
	}
	k := newWorker(w, nullDB{}, 0, &threadStats{mode: cfg.Measure}, time.Now())
	k.ctx, k.stop, k.log = context.Background(), new(atomic.Bool), newErrLog(nil)
	return k
}

// BenchmarkWorkloadAOpNull is the per-operation cost of the generator side
// of workload A: choose the operation and key, build the key and values,
// time the call and record it. It is the ceiling of one client thread.
func BenchmarkWorkloadAOpNull(b *testing.B) {
	k := benchWorker(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := k.doTransaction(); err != nil {
			b.Fatal(err)
		}
		k.st.done.Add(1)
	}
}

// BenchmarkWorkloadAOpNullIntegrity is the same with dataintegrity=true:
// deterministic values built, every read checked.
func BenchmarkWorkloadAOpNullIntegrity(b *testing.B) {
	k := benchWorker(b, "-p", "dataintegrity=true")
	k.db = echoDB{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := k.doTransaction(); err != nil {
			b.Fatal(err)
		}
	}
	if k.st.mismatch != 0 {
		b.Fatalf("%d mismatches", k.st.mismatch)
	}
}

// echoDB answers every read with the deterministic record of the key, so
// that verification succeeds without a store.
type echoDB struct{ nullDB }

func (echoDB) Read(_ context.Context, _ string, key []byte, fields []string, out *[]Field) Status {
	if cap(*out) < len(fields) {
		*out = make([]Field, 0, len(fields))
	}
	*out = (*out)[:0]
	for i, f := range fields {
		*out = append(*out, Field{Name: f, Value: appendDeterministic(echoBuf[i][:0], key, f, 100)})
	}
	return StatusOK
}

var echoBuf [10][256]byte

// BenchmarkRecordEncodeDecode is the value layout's cost per record.
func BenchmarkRecordEncodeDecode(b *testing.B) {
	fields := make([]Field, 10)
	names := make([]string, 10)
	for i := range fields {
		names[i] = "field" + string(rune('0'+i))
		fields[i] = Field{Name: names[i], Value: make([]byte, 100)}
	}
	var enc []byte
	out := make([]Field, 0, 10)
	b.ReportAllocs()
	for range b.N {
		enc = appendRecord(enc[:0], fields)
		var err error
		if out, err = decodeRecord(enc, names, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
