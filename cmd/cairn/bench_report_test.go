package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cairndb/cairn/internal/bench/result"
)

func TestParseReportArgs(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    reportArgs
		wantErr string
	}{
		{args: []string{"a.json"}, want: reportArgs{files: []string{"a.json"}, out: "report.html"}},
		{args: []string{"a.json", "-o", "r.html", "b.json"},
			want: reportArgs{files: []string{"a.json", "b.json"}, out: "r.html"}},
		{args: []string{"--o", "r.html", "a.json"}, want: reportArgs{files: []string{"a.json"}, out: "r.html"}},
		{args: []string{"--out=r.html", "-title", "Nightly <b>", "a.json"},
			want: reportArgs{files: []string{"a.json"}, out: "r.html", title: "Nightly <b>"}},
		{args: []string{"-title=", "a.json"}, want: reportArgs{files: []string{"a.json"}, out: "report.html"}},
		{args: []string{"a.json", "--", "-odd.json"},
			want: reportArgs{files: []string{"a.json", "-odd.json"}, out: "report.html"}},
		{args: []string{"a.json", "--help", "-bogus"}, want: reportArgs{files: []string{"a.json"}, out: "report.html", help: true}},
		{args: []string{"a.json", "-o"}, wantErr: "option -o needs a value"},
		{args: []string{"-o="}, wantErr: "option -o needs a file name"},
		{args: []string{"-x", "a.json"}, wantErr: `unknown option "-x"`},
	} {
		got, err := parseReportArgs(tc.args)
		if tc.wantErr != "" {
			var ee *exitError
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ee) || ee.code != 2 {
				t.Errorf("parseReportArgs(%q) = %v, want a usage error with %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseReportArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

// writeResult writes a small valid result document to dir/name.
func writeResult(t *testing.T, dir, name, dist string) string {
	t.Helper()
	h := hdrhistogram.New(1, 10_000_000, 3)
	for i := range 1000 {
		if err := h.RecordValue(int64(50 + i%200)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := result.Summarize(h)
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Run{
		Format: result.Format, CairnVersion: "test", Phase: "run", DB: "null", Workload: "workloada",
		Started: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), RuntimeMs: 2000, Operations: 1000,
		ThroughputOpsSec: 500, Threads: 1,
		Properties: map[string]string{"requestdistribution": dist, "recordcount": "100"},
		Ops:        []result.Op{{Name: "READ", Count: 1000, Returns: map[string]int64{"OK": 1000}, Latency: l}},
		Series:     []result.Sample{{TMs: 1000, Operations: 500, OpsPerSec: 500}, {TMs: 2000, Operations: 1000, OpsPerSec: 500}},
	}
	p := filepath.Join(dir, name)
	if err := result.Save(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBenchReport(t *testing.T) {
	dir := t.TempDir()
	a := writeResult(t, dir, "a.json", "zipfian")
	writeResult(t, dir, "b.json", "uniform")
	out := filepath.Join(dir, "report.html")

	// A quoted glob is expanded, and a second run skips its own output.
	for range 2 {
		var stdout bytes.Buffer
		if err := benchReport([]string{filepath.Join(dir, "*"), "-o", out, "--title", "T"}, &stdout); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout.String(), "from 2 result files") {
			t.Errorf("stdout = %q, want it to count 2 files", stdout.String())
		}
	}
	page, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(page, []byte("<title>T</title>")) || bytes.Count(page, []byte("<svg")) < 3 {
		t.Fatalf("report: %v\n%.300s", err, page)
	}

	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int // exit status
	}{
		{"no inputs", []string{"-o", out}, "no result files given", 2},
		{"no match", []string{filepath.Join(dir, "nope-*.json")}, "no files match", 2},
		{"missing", []string{a, missing, "-o", out}, missing, 2},
		{"corrupt", []string{a, corrupt, "-o", out}, corrupt, 2},
		{"unwritable", []string{a, "-o", filepath.Join(dir, "no", "dir", "r.html")}, filepath.Join(dir, "no", "dir", "r.html"), 1},
		{"output is a directory", []string{a, "-o", dir}, dir, 1},
	} {
		err := benchReport(tc.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
			continue
		}
		code := 0
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if code != tc.code {
			t.Errorf("%s: exit code %d, want %d (%v)", tc.name, code, tc.code, err)
		}
	}
}
