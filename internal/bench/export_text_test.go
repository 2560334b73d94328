package bench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func histOf(values ...int64) *hdrhistogram.Histogram {
	h := newHist()
	for _, v := range values {
		_ = h.RecordValue(v)
	}
	return h
}

func spread(from, to, step int64) []int64 {
	var out []int64
	for v := from; v <= to; v += step {
		out = append(out, v)
	}
	return out
}

// TestWriteTextGolden pins the YCSB text format: line order, names,
// Java-style doubles, percentiles, return codes, FAILED and Intended
// measurements.
func TestWriteTextGolden(t *testing.T) {
	for name, s := range map[string]*Summary{
		"workloada": {
			RuntimeMs: 10110, Operations: 1000, GCCount: 3, GCPauseMs: 12,
			Percentiles: []float64{50, 95, 99, 99.9},
			Measurements: []Measurement{
				{Name: "READ", Hist: histOf(spread(100, 5000, 10)...), Returns: []StatusCount{{"OK", 491}, {"NOT_FOUND", 9}}},
				{Name: "READ-FAILED", Hist: histOf(40, 41, 42, 43, 44, 45, 46, 47, 48)},
				{Name: "UPDATE", Hist: histOf(spread(1000, 250_000, 500)...), Returns: []StatusCount{{"OK", 499}, {"ERROR", 1}}},
				{Name: "UPDATE-FAILED", Hist: histOf(5_000_000)},
				{Name: "CLEANUP", Hist: histOf(0, 1, 2, 3)},
			},
		},
		"intended": {
			RuntimeMs: 2000, Operations: 200, Percentiles: []float64{95, 99},
			Measurements: []Measurement{
				{Name: "READ", Hist: histOf(spread(10, 2000, 10)...), Returns: []StatusCount{{"OK", 200}}},
				{Name: "VERIFY", Hist: histOf(1, 1, 2), Returns: []StatusCount{{"OK", 199}, {"UNEXPECTED_STATE", 1}}},
				{Name: "Intended-READ", Hist: histOf(spread(10, 20000, 100)...)},
			},
		},
		"empty": {RuntimeMs: 0, Operations: 0, Percentiles: []float64{50}},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, s); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "text_"+name+".golden")
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, b.Bytes(), want)
			}
		})
	}
}
