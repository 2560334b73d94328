package report

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cairndb/cairn/internal/bench/result"
)

// synth describes a synthetic run for tests.
type synth struct {
	phase, db, workload, dist string
	records, threads          int
	throughput                float64
	ops                       map[string]float64 // operation -> median latency µs
	target                    float64            // > 0 adds intended latencies
	integrity                 *result.Integrity
	samples                   int // status samples, 10 s apart
	seed                      uint64
}

// synthLatency makes a histogram of n latencies around median µs: log-normal
// with a heavy tail, from a fixed seed.
func synthLatency(t testing.TB, rng *rand.Rand, n int, median float64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for range n {
		v := median * math.Exp(0.45*rng.NormFloat64())
		if rng.IntN(1000) == 0 {
			v *= 15 + 30*rng.Float64()
		}
		if err := h.RecordValue(int64(math.Max(1, v))); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// build turns s into a result.Run.
func (s synth) build(t testing.TB) *result.Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 1))
	db := s.db
	if db == "" {
		db = "cairn"
	}
	r := &result.Run{
		Format: result.Format, CairnVersion: "v0.3.0-test", Phase: s.phase, DB: db, Workload: s.workload,
		Started:   time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(s.seed) * time.Minute),
		RuntimeMs: int64(s.samples) * 10_000, Threads: s.threads, TargetOpsSec: s.target,
		ThroughputOpsSec: s.throughput,
		Properties: map[string]string{
			"requestdistribution": s.dist, "recordcount": strconv.Itoa(s.records),
			"threadcount": strconv.Itoa(s.threads), "fieldcount": "10", "fieldlength": "100",
			"operationcount": "1000000", "workload": "site.ycsb.workloads.CoreWorkload",
			"exportfile": "/results/" + s.phase + strconv.FormatUint(s.seed, 10) + ".json",
		},
		Machine: result.Machine{Hostname: "bench-1", OS: "linux", Arch: "amd64", CPUs: 16,
			CPUModel: "AMD EPYC 7B13", MemBytes: 64 << 30, GoVersion: "go1.26.8"},
		Integrity: s.integrity,
	}
	if s.target > 0 {
		r.Properties["target"] = strconv.FormatFloat(s.target, 'f', -1, 64)
	}
	for _, name := range slices.Sorted(maps.Keys(s.ops)) {
		h := synthLatency(t, rng, 20_000, s.ops[name])
		l, err := result.Summarize(h)
		if err != nil {
			t.Fatal(err)
		}
		op := result.Op{Name: name, Count: l.Count, Returns: map[string]int64{"OK": l.Count}, Latency: l}
		if s.target > 0 {
			ih := synthLatency(t, rng, 20_000, s.ops[name]*1.8)
			il, err := result.Summarize(ih)
			if err != nil {
				t.Fatal(err)
			}
			op.Intended = &il
		}
		r.Ops = append(r.Ops, op)
		r.Operations += l.Count
	}
	var total int64
	for i := 1; i <= s.samples; i++ {
		v := s.throughput * (1 + 0.06*math.Sin(float64(i)/2+float64(s.seed)) + 0.02*rng.NormFloat64())
		if i == 1 {
			v *= 0.8 // warm-up
		}
		total += int64(v * 10)
		r.Series = append(r.Series, result.Sample{TMs: int64(i) * 10_000, Operations: total, OpsPerSec: v})
	}
	return r
}

// fixture is a realistic set of inputs: two load runs differing in record
// count, and four run-phase runs of workloads a and b over three
// distributions and two record counts, one with a target rate (intended
// latencies) and data-integrity checks with mismatches.
func fixture(t testing.TB) []Input {
	t.Helper()
	specs := []synth{
		{phase: "load", workload: "workloada", dist: "zipfian", records: 1000, threads: 8, throughput: 42_000,
			ops: map[string]float64{"INSERT": 180}, samples: 6, seed: 1},
		{phase: "load", workload: "workloada", dist: "zipfian", records: 10000, threads: 8, throughput: 38_500,
			ops: map[string]float64{"INSERT": 210}, samples: 9, seed: 2},
		{phase: "run", workload: "workloada", dist: "zipfian", records: 1000, threads: 8, throughput: 61_200,
			ops: map[string]float64{"READ": 95, "UPDATE": 240}, samples: 12, seed: 3,
			integrity: &result.Integrity{Checked: 30_000, Mismatches: 0}},
		{phase: "run", workload: "workloada", dist: "uniform", records: 1000, threads: 8, throughput: 55_800,
			ops: map[string]float64{"READ": 120, "UPDATE": 260}, samples: 12, seed: 4},
		{phase: "run", workload: "workloada", dist: "zipfian", records: 10000, threads: 8, throughput: 20_000,
			ops: map[string]float64{"READ": 140, "UPDATE": 330}, samples: 12, seed: 5, target: 20_000,
			integrity: &result.Integrity{Checked: 25_000, Mismatches: 3}},
		{phase: "run", workload: "workloadb", dist: "latest", records: 1000, threads: 8, throughput: 97_300,
			ops: map[string]float64{"READ": 70, "UPDATE": 210}, samples: 12, seed: 6},
	}
	var inputs []Input
	for _, s := range specs {
		inputs = append(inputs, Input{Path: "results/" + s.phase + "-" + strconv.FormatUint(s.seed, 10) + ".json", Run: s.build(t)})
	}
	return inputs
}
