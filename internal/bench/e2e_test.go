package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/bench/result"
	"github.com/cairndb/cairn/internal/node"
)

// startLite starts a lite node on 127.0.0.1 with a free port and its own
// root, stopped when the test ends.
func startLite(t *testing.T) *node.Lite {
	t.Helper()
	cfg := node.DefaultLiteConfig(t.TempDir())
	cfg.Port = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	n, err := node.StartLite(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}

// execute runs "cairn bench PHASE ARGS" in-process.
func execute(t *testing.T, phase string, args ...string) (string, *result.Run, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	r, err := Execute(context.Background(), phase, args, Env{Stdout: &out, Stderr: &errOut, Version: "test"})
	if err != nil && !errors.Is(err, ErrIntegrity) {
		t.Logf("stderr:\n%s", errOut.String())
	}
	return out.String(), r, err
}

// checkClean fails unless every operation succeeded and, if the phase
// reads, every read verified.
func checkClean(t *testing.T, what, text string, r *result.Run, err error, reads bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, text)
	}
	for _, op := range r.Ops {
		if strings.HasSuffix(op.Name, "-FAILED") || op.Returns["ERROR"] != 0 || op.Returns["NOT_FOUND"] != 0 {
			t.Errorf("%s: %s: count %d, returns %v", what, op.Name, op.Count, op.Returns)
		}
	}
	if r.Integrity == nil || (reads && r.Integrity.Checked == 0) || r.Integrity.Mismatches != 0 {
		t.Errorf("%s: integrity %+v, want checks and no mismatches", what, r.Integrity)
	}
}

// TestEndToEnd loads and runs workloads with dataintegrity against a real
// lite node over gRPC (-db cairn) and against an in-process store (-db
// embedded), in both record layouts: no errors, no mismatches.
func TestEndToEnd(t *testing.T) {
	lite := startLite(t)
	for _, tc := range []struct {
		name, db string
		layout   string
		records  string
		runs     []string
	}{
		{"cairn-value", "cairn", "value", "2000", []string{"a", "e", "f"}},
		{"cairn-minor", "cairn", "minor", "500", []string{"a", "e"}},
		{"embedded-value", "embedded", "value", "2000", []string{"a", "d"}},
		{"embedded-minor", "embedded", "minor", "500", []string{"a", "f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			common := []string{"-db", tc.db, "-p", "recordcount=" + tc.records, "-p", "dataintegrity=true",
				"-p", "cairn.layout=" + tc.layout, "-threads", "8",
				"-p", "cairn.hosts=" + lite.Addr(), "-p", "cairn.root=" + t.TempDir()}
			if tc.db == "cairn" {
				common = append(common, "-p", "table=t_"+tc.layout) // one node serves both layouts
			}
			text, r, err := execute(t, "load", append([]string{"-P", "../../workloads/workloada"}, common...)...)
			checkClean(t, "load", text, r, err, false)
			for _, w := range tc.runs {
				ops := "5000"
				if w == "e" {
					ops = "300"
				}
				text, r, err := execute(t, "run", append([]string{"-P", "../../workloads/workload" + w, "-p", "operationcount=" + ops,
					"-p", "maxscanlength=20"}, common...)...)
				checkClean(t, "run workload"+w, text, r, err, true)
				if w == "e" {
					if op := opOf(r, "SCAN"); op == nil || op.Returns["OK"] == 0 {
						t.Errorf("workload e: SCAN %+v", op)
					}
				}
			}
		})
	}
}

// TestCorruptionDetected overwrites one loaded record's field through the
// client; a read-only run that reads it must count the mismatch, report it
// as [VERIFY] UNEXPECTED_STATE and READ errors, and fail with ErrIntegrity.
func TestCorruptionDetected(t *testing.T) {
	lite := startLite(t)
	common := []string{"-db", "cairn", "-p", "cairn.hosts=" + lite.Addr(), "-p", "recordcount=50",
		"-p", "dataintegrity=true"}
	if _, _, err := execute(t, "load", append([]string{"-P", "../../workloads/workloadc", "-threads", "4"}, common...)...); err != nil {
		t.Fatal(err)
	}

	c, err := client.Open(context.Background(), client.Config{Hosts: []string{lite.Addr()}, Store: "kvstore"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := KeyName(7, 1, false)
	k := client.Key{Major: []string{"usertable", key}}
	rec, found, err := c.Get(context.Background(), k)
	if err != nil || !found {
		t.Fatalf("get %s: found %v, %v", key, found, err)
	}
	fields, err := decodeRecord(rec.Value, nil, nil)
	if err != nil || len(fields) != 10 {
		t.Fatalf("stored record of %s: %d fields, %v", key, len(fields), err)
	}
	fields[4].Value = bytes.ToUpper(fields[4].Value) // same length, different bytes
	if _, err := c.Put(context.Background(), k, appendRecord(nil, fields)); err != nil {
		t.Fatal(err)
	}

	// Sequential keys, one thread, 100 reads: every key twice.
	text, r, err := execute(t, "run", append([]string{"-P", "../../workloads/workloadc", "-p", "operationcount=100",
		"-p", "requestdistribution=sequential"}, common...)...)
	if !errors.Is(err, ErrIntegrity) {
		t.Fatalf("run over a corrupted record: %v, want ErrIntegrity\n%s", err, text)
	}
	if r.Integrity == nil || r.Integrity.Checked != 100 || r.Integrity.Mismatches != 2 {
		t.Fatalf("integrity %+v, want 100 checked, 2 mismatches", r.Integrity)
	}
	if read := opOf(r, "READ"); read.Returns["ERROR"] != 2 || read.Returns["OK"] != 98 {
		t.Errorf("READ returns %v, want 98 OK and 2 ERROR", read.Returns)
	}
	if !strings.Contains(text, "[VERIFY], Return=UNEXPECTED_STATE, 2\n") {
		t.Errorf("summary lacks the VERIFY mismatch count:\n%s", text)
	}
}
