package server_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/storage"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The benchmarks read and write cairn bench's records: benchRecords values
// of 1082 bytes (YCSB's 10 fields of 100 bytes in the value layout) under
// /usertable/<key>, from 16 goroutines, as cairn bench -threads 16 does.
const (
	benchRecords    = 10_000
	benchValueBytes = 1082
	benchThreads    = 16
)

func benchMajor(i int) []string { return []string{"usertable", "user" + strconv.Itoa(i*7919+1)} }

// reportCPU starts measuring this process's CPU time (user and system, all
// threads) and returns the function that reports it per operation as
// cpu-ns/op. On a shared, noisy machine it moves much less than ns/op: other
// processes take wall time from the benchmark, not CPU time.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type putter func(ctx context.Context, req *cairnpb.PutRequest) (*cairnpb.WriteResponse, error)

func loadBench(b *testing.B, put putter) {
	b.Helper()
	value := make([]byte, benchValueBytes)
	for i := range value {
		value[i] = ' ' + byte(i%64)
	}
	for i := range benchRecords {
		req := &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: &cairnpb.Key{Major: benchMajor(i)}, Value: value}}
		if _, err := put(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// startBenchLite starts a lite node with cfg's StreamWorkers and GCPercent
// over a loaded store and returns a client of it.
func startBenchLite(b *testing.B, workers, gcPercent int) cairnpb.KVClient {
	b.Helper()
	old := debug.SetGCPercent(100)
	b.Cleanup(func() { debug.SetGCPercent(old) })
	cfg := node.DefaultLiteConfig(b.TempDir())
	cfg.Port, cfg.MinFreeBytes = 0, 0
	cfg.StreamWorkers, cfg.GCPercent = workers, gcPercent
	cfg.Logger = slog.New(slog.DiscardHandler)
	lite, err := node.StartLite(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = lite.Close() })
	conn, err := grpc.NewClient(lite.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	kv := cairnpb.NewKVClient(conn)
	loadBench(b, func(ctx context.Context, req *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
		return kv.Put(ctx, req)
	})
	return kv
}

// liteVariants are the server settings compared: before (a goroutine per
// request, Go's default GC percent), each fix alone, and after (cairn
// lite's defaults). The GC percent is process-wide, so it applies to the
// client half of the benchmark too.
var liteVariants = []struct {
	name          string
	workers, gcPc int
}{
	{"workers=0,gc=100", 0, 100},
	{"workers=128,gc=100", 128, 100},
	{"workers=0,gc=800", 0, 800},
	{"workers=128,gc=800", 128, 800},
}

// BenchmarkServerGet is a YCSB read over gRPC on loopback: client and
// server in this process, 16 goroutines. ns/op is wall time per read with
// 16 in flight; allocs/op counts both sides.
func BenchmarkServerGet(b *testing.B) {
	for _, v := range liteVariants {
		b.Run(v.name, func(b *testing.B) {
			kv := startBenchLite(b, v.workers, v.gcPc)
			b.SetParallelism((benchThreads + 1) / 2) // GOMAXPROCS is 2 on the reference machine
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(rand.Uint64(), 1))
				for pb.Next() {
					resp, err := kv.Get(context.Background(), &cairnpb.GetRequest{Key: &cairnpb.Key{Major: benchMajor(r.IntN(benchRecords))}})
					if err != nil || !resp.GetFound() {
						b.Errorf("get: %v %v", resp, err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkServerPut is a YCSB update of a whole record over gRPC on
// loopback (a put-if-present), as BenchmarkServerGet.
func BenchmarkServerPut(b *testing.B) {
	for _, v := range liteVariants {
		b.Run(v.name, func(b *testing.B) {
			kv := startBenchLite(b, v.workers, v.gcPc)
			value := make([]byte, benchValueBytes)
			b.SetParallelism((benchThreads + 1) / 2)
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(rand.Uint64(), 2))
				for pb.Next() {
					resp, err := kv.Put(context.Background(), &cairnpb.PutRequest{Op: &cairnpb.PutOp{
						Key: &cairnpb.Key{Major: benchMajor(r.IntN(benchRecords))}, Value: value,
						Condition: cairnpb.Condition_CONDITION_IF_PRESENT}})
					if err != nil || !resp.GetResult().GetSuccess() {
						b.Errorf("put: %v %v", resp, err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkServerGetHandler is the KV handler's Get called directly, as
// cairn bench -db embedded does: validation, routing, the read and the
// response, without gRPC.
func BenchmarkServerGetHandler(b *testing.B) {
	cfg := storage.DefaultConfig(filepath.Join(b.TempDir(), "data"))
	cfg.MinFreeBytes = 0
	e, err := storage.Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	meta, err := e.Init("kvstore", 10)
	if err != nil {
		b.Fatal(err)
	}
	rc := replica.DefaultConfig()
	rc.Logger = slog.New(slog.DiscardHandler)
	rep, err := replica.OpenLocal(e, meta, rc)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rep.Close)
	srv, err := server.New(rep, server.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	loadBench(b, srv.Put)
	ks := make([]*cairnpb.Key, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range ks {
		ks[i] = &cairnpb.Key{Major: benchMajor(r.IntN(benchRecords))}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		resp, err := srv.Get(ctx, &cairnpb.GetRequest{Key: ks[i%len(ks)]})
		if err != nil || !resp.GetFound() {
			b.Fatalf("get: %v %v", resp, err)
		}
		i++
	}
}
