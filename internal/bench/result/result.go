// Package result defines the JSON document one `cairn bench load|run`
// writes (-p exportfile=FILE) and `cairn bench report` reads. It is the
// contract between the benchmark runner and the report: add fields, never
// change the meaning of one. Format is bumped on an incompatible change.
//
// # Document
//
//	{
//	  "format": 1,
//	  "cairn_version": "...", "phase": "load" | "run", "db": "cairn" | "embedded" | "null",
//	  "workload": "workloada",            // -P file base name, or the "workload" property
//	  "started": RFC3339, "runtime_ms": 12345,
//	  "operations": 100000, "throughput_ops_sec": 8100.2,
//	  "threads": 16, "target_ops_sec": 0,
//	  "properties": {"recordcount": "100000", ...},   // every property in force
//	  "machine": {...},
//	  "ops": [ {"name": "READ", "count": ..., "returns": {"OK": n, "ERROR": n, "NOT_FOUND": n},
//	            "latency": {...}, "intended": {...} | absent} ],
//	  "series": [ {"t_ms": 10000, "operations": 81000, "ops_per_sec": 8100} ],
//	  "integrity": {"checked": n, "mismatches": n} | absent
//	}
//
// Latencies are in microseconds. Latency.Histogram is the full HDR histogram
// in HdrHistogram's V2 compressed encoding, base64 (standard, padded); its
// values are microseconds.
package result

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Format is the document format this package writes.
const Format = 1

// Run is one benchmark phase's results.
type Run struct {
	Format           int               `json:"format"`
	CairnVersion     string            `json:"cairn_version"`
	Phase            string            `json:"phase"`
	DB               string            `json:"db"`
	Workload         string            `json:"workload"`
	Started          time.Time         `json:"started"`
	RuntimeMs        int64             `json:"runtime_ms"`
	Operations       int64             `json:"operations"`
	ThroughputOpsSec float64           `json:"throughput_ops_sec"`
	Threads          int               `json:"threads"`
	TargetOpsSec     float64           `json:"target_ops_sec"`
	Properties       map[string]string `json:"properties"`
	Machine          Machine           `json:"machine"`
	Ops              []Op              `json:"ops"`
	Series           []Sample          `json:"series"`
	Integrity        *Integrity        `json:"integrity,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	Hostname  string `json:"hostname"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	MemBytes  int64  `json:"mem_bytes"`
	GoVersion string `json:"go_version"`
}

// Op is one operation type's results (READ, UPDATE, INSERT, SCAN,
// READ-MODIFY-WRITE, DELETE, CLEANUP).
type Op struct {
	Name    string           `json:"name"`
	Count   int64            `json:"count"`
	Returns map[string]int64 `json:"returns"`
	Latency Latency          `json:"latency"`
	// Intended measures from each operation's intended start time (only with
	// a target throughput); nil otherwise.
	Intended *Latency `json:"intended,omitempty"`
}

// Latency summarises a latency histogram, in microseconds.
type Latency struct {
	Count     int64   `json:"count"`
	AvgUs     float64 `json:"avg_us"`
	MinUs     int64   `json:"min_us"`
	MaxUs     int64   `json:"max_us"`
	P50Us     int64   `json:"p50_us"`
	P90Us     int64   `json:"p90_us"`
	P95Us     int64   `json:"p95_us"`
	P99Us     int64   `json:"p99_us"`
	P999Us    int64   `json:"p999_us"`
	Histogram string  `json:"histogram"`
}

// Sample is one status-interval reading: cumulative operations at t_ms
// after the start, and the throughput over the interval that ended there.
type Sample struct {
	TMs        int64   `json:"t_ms"`
	Operations int64   `json:"operations"`
	OpsPerSec  float64 `json:"ops_per_sec"`
}

// Integrity counts data-integrity checks (dataintegrity=true).
type Integrity struct {
	Checked    int64 `json:"checked"`
	Mismatches int64 `json:"mismatches"`
}

// Summarize fills a Latency from an HDR histogram of microseconds.
func Summarize(h *hdrhistogram.Histogram) (Latency, error) {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return Latency{}, fmt.Errorf("result: encode histogram: %w", err)
	}
	return Latency{
		Count: h.TotalCount(), AvgUs: h.Mean(), MinUs: h.Min(), MaxUs: h.Max(),
		P50Us: h.ValueAtQuantile(50), P90Us: h.ValueAtQuantile(90), P95Us: h.ValueAtQuantile(95),
		P99Us: h.ValueAtQuantile(99), P999Us: h.ValueAtQuantile(99.9),
		Histogram: base64.StdEncoding.EncodeToString(enc),
	}, nil
}

// Decode decodes the full histogram.
func (l Latency) Decode() (*hdrhistogram.Histogram, error) {
	b, err := base64.StdEncoding.DecodeString(l.Histogram)
	if err != nil {
		return nil, fmt.Errorf("result: histogram is not base64: %w", err)
	}
	h, err := hdrhistogram.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("result: histogram does not decode: %w", err)
	}
	return h, nil
}

// Save writes r as indented JSON.
func Save(path string, r *Run) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Load reads a document written by Save, checking its format.
func Load(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("result: %s is not a cairn bench result: %w", path, err)
	}
	if r.Format != Format {
		return nil, fmt.Errorf("result: %s has format %d, this cairn reads format %d", path, r.Format, Format)
	}
	return &r, nil
}
