package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/bench/result"
)

// memBinding is an in-memory model store: records are field maps under
// their key, shared by all threads behind one lock. Scans return keys in
// sorted order.
type memBinding struct {
	mu   sync.Mutex
	recs map[string]map[string][]byte
}

func newMem() *memBinding { return &memBinding{recs: map[string]map[string][]byte{}} }

func (m *memBinding) NewDB(int) (DB, error) { return &memDB{m: m}, nil }
func (m *memBinding) Close() error          { return nil }

type memDB struct {
	m   *memBinding
	buf []ScanRecord
}

func (d *memDB) Read(_ context.Context, _ string, key []byte, fields []string, out *[]Field) Status {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	*out = (*out)[:0]
	r, ok := d.m.recs[string(key)]
	if !ok {
		return StatusNotFound
	}
	for _, n := range slices.Sorted(maps.Keys(r)) {
		if wanted(n, fields) {
			*out = append(*out, Field{Name: n, Value: bytes.Clone(r[n])})
		}
	}
	return StatusOK
}

func (d *memDB) Scan(_ context.Context, _ string, start []byte, count int, fields []string, out *[]ScanRecord) Status {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	*out = (*out)[:0]
	for _, k := range slices.Sorted(maps.Keys(d.m.recs)) {
		if k < string(start) || len(*out) == count {
			continue
		}
		rec := ScanRecord{Key: []byte(k)}
		for n, v := range d.m.recs[k] {
			if wanted(n, fields) {
				rec.Fields = append(rec.Fields, Field{Name: n, Value: bytes.Clone(v)})
			}
		}
		*out = append(*out, rec)
	}
	return StatusOK
}

func (d *memDB) write(key []byte, values []Field, mustExist bool) Status {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	r, ok := d.m.recs[string(key)]
	if !ok {
		if mustExist {
			return StatusNotFound
		}
		r = map[string][]byte{}
		d.m.recs[string(key)] = r
	}
	for _, f := range values {
		r[f.Name] = bytes.Clone(f.Value)
	}
	return StatusOK
}

func (d *memDB) Update(_ context.Context, _ string, key []byte, v []Field) Status {
	return d.write(key, v, true)
}
func (d *memDB) Insert(_ context.Context, _ string, key []byte, v []Field) Status {
	return d.write(key, v, false)
}
func (d *memDB) Delete(_ context.Context, _ string, key []byte) Status {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	if _, ok := d.m.recs[string(key)]; !ok {
		return StatusNotFound
	}
	delete(d.m.recs, string(key))
	return StatusOK
}
func (d *memDB) Cleanup() error { return nil }

// bench runs one phase in-process with args, returning the text summary and
// the result document.
func bench(t *testing.T, b Binding, phase Phase, args ...string) (string, *result.Run, error) {
	t.Helper()
	a, err := ParseArgs(phase, args)
	if err != nil {
		t.Fatalf("ParseArgs(%q): %v", args, err)
	}
	cfg, err := NewConfig(phase, a.WorkloadName(), a.Props)
	if err != nil {
		t.Fatalf("NewConfig(%q): %v", args, err)
	}
	cfg.binding = b
	var out, errOut bytes.Buffer
	r, err := Run(context.Background(), cfg, Env{Stdout: &out, Stderr: &errOut, Version: "test"})
	if testing.Verbose() {
		t.Logf("stderr:\n%s", errOut.String())
	}
	return out.String(), r, err
}

func opOf(r *result.Run, name string) *result.Op {
	for i := range r.Ops {
		if r.Ops[i].Name == name {
			return &r.Ops[i]
		}
	}
	return nil
}

func TestLoadInsertsYCSBKeys(t *testing.T) {
	m := newMem()
	_, r, err := bench(t, m, PhaseLoad, "-P", "../../workloads/workloada", "-p", "recordcount=100",
		"-p", "insertstart=10", "-p", "insertcount=50", "-threads", "3", "-p", "fieldcount=2", "-p", "fieldlength=7")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.recs) != 50 || r.Operations != 50 {
		t.Fatalf("loaded %d records in %d operations, want 50", len(m.recs), r.Operations)
	}
	for i := int64(10); i < 60; i++ {
		rec, ok := m.recs[KeyName(i, 1, false)]
		if !ok || len(rec) != 2 || len(rec["field0"]) != 7 || len(rec["field1"]) != 7 {
			t.Fatalf("record %d (%s): %v", i, KeyName(i, 1, false), rec)
		}
	}
	if ins := opOf(r, "INSERT"); ins == nil || ins.Returns["OK"] != 50 || ins.Count != 50 {
		t.Fatalf("INSERT op: %+v", ins)
	}
}

// TestWorkloadsVerify loads with dataintegrity and runs every shipped
// workload against the model store: all reads and scans verify. Then one
// record is corrupted and a read-only run must catch it.
func TestWorkloadsVerify(t *testing.T) {
	m := newMem()
	common := []string{"-p", "recordcount=300", "-p", "dataintegrity=true", "-p", "fieldlength=40", "-threads", "4"}
	if _, _, err := bench(t, m, PhaseLoad, append([]string{"-P", "../../workloads/workloada"}, common...)...); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"a", "b", "c", "d", "e", "f"} {
		text, r, err := bench(t, m, PhaseRun, append([]string{"-P", "../../workloads/workload" + w, "-p", "operationcount=2000"}, common...)...)
		if err != nil {
			t.Fatalf("workload %s: %v\n%s", w, err, text)
		}
		if r.Integrity == nil || r.Integrity.Mismatches != 0 || r.Integrity.Checked == 0 {
			t.Fatalf("workload %s: integrity %+v", w, r.Integrity)
		}
		var total int64
		for _, op := range r.Ops {
			if op.Name == "READ" || op.Name == "UPDATE" || op.Name == "INSERT" || op.Name == "SCAN" || op.Name == "READ-MODIFY-WRITE" {
				if op.Returns["ERROR"]+op.Returns["NOT_FOUND"] != 0 {
					t.Errorf("workload %s: %s returns %v", w, op.Name, op.Returns)
				}
				if op.Name != "READ" || w != "f" { // F's READs include those of its read-modify-writes
					total += op.Returns["OK"]
				}
			}
		}
		if w != "f" && total != 2000 {
			t.Errorf("workload %s: %d operations returned, want 2000", w, total)
		}
		if !strings.Contains(text, "[VERIFY], Return=OK,") {
			t.Errorf("workload %s: no [VERIFY] line in\n%s", w, text)
		}
	}

	key := KeyName(7, 1, false)
	m.recs[key]["field3"] = []byte("corrupted")
	text, r, err := bench(t, m, PhaseRun, append([]string{"-P", "../../workloads/workloadc", "-p", "operationcount=600",
		"-p", "requestdistribution=sequential"}, common[:6]...)...) // one thread
	if !errors.Is(err, ErrIntegrity) {
		t.Fatalf("run over a corrupted record: err %v, want ErrIntegrity", err)
	}
	// Sequential over 300 keys twice: the corrupted one is read twice.
	if r.Integrity.Mismatches != 2 || opOf(r, "READ").Returns["ERROR"] != 2 {
		t.Fatalf("integrity %+v, READ returns %v; want 2 mismatches reported as READ errors", r.Integrity, opOf(r, "READ").Returns)
	}
	if !strings.Contains(text, "[VERIFY], Return=UNEXPECTED_STATE, 2") {
		t.Errorf("no UNEXPECTED_STATE count in\n%s", text)
	}
}

func TestRunNullAndExport(t *testing.T) {
	file := filepath.Join(t.TempDir(), "results", "r.json") // results/ is made before the run
	text, r, err := bench(t, nullBinding{}, PhaseRun, "-P", "../../workloads/workloada", "-p", "recordcount=1000",
		"-p", "operationcount=20000", "-threads", "4", "-p", "exportfile="+file, "-db", "null")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[OVERALL], RunTime(ms), ", "[OVERALL], Throughput(ops/sec), ", "[READ], Operations, ",
		"[UPDATE], 99thPercentileLatency(us), ", "[CLEANUP], Operations, 4\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	read, upd := opOf(r, "READ"), opOf(r, "UPDATE")
	if read.Returns["OK"]+upd.Returns["OK"] != 20000 || r.Operations != 20000 {
		t.Fatalf("READ %v + UPDATE %v, operations %d; want 20000", read.Returns, upd.Returns, r.Operations)
	}
	got, err := result.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != "run" || got.DB != "null" || got.Workload != "workloada" || got.Threads != 4 ||
		got.Operations != 20000 || got.Properties["recordcount"] != "1000" || got.Machine.CPUs == 0 || len(got.Series) == 0 {
		t.Fatalf("loaded result: %+v", got)
	}
	if len(got.Ops) != len(r.Ops) {
		t.Fatalf("loaded %d ops, wrote %d", len(got.Ops), len(r.Ops))
	}
	for i, op := range got.Ops {
		h, err := op.Latency.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if h.TotalCount() != r.Ops[i].Count || op.Count != r.Ops[i].Count {
			t.Errorf("%s: histogram of %d values after the round trip, want %d", op.Name, h.TotalCount(), r.Ops[i].Count)
		}
	}
}

func TestRunTargetMeasuresIntended(t *testing.T) {
	text, r, err := bench(t, nullBinding{}, PhaseRun, "-P", "../../workloads/workloadc", "-p", "recordcount=100",
		"-p", "operationcount=200", "-threads", "2", "-target", "4000")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "[Intended-READ], Operations, 200") {
		t.Errorf("no Intended-READ measurement:\n%s", text)
	}
	if op := opOf(r, "READ"); op.Intended == nil || op.Intended.Count != 200 {
		t.Errorf("READ intended latency: %+v", op.Intended)
	}
	// 200 operations at 4000/s take at least 50 ms.
	if r.RuntimeMs < 45 {
		t.Errorf("run took %d ms; the target of 4000 ops/s was not applied", r.RuntimeMs)
	}
	text, _, err = bench(t, nullBinding{}, PhaseRun, "-P", "../../workloads/workloadc", "-p", "recordcount=100",
		"-p", "operationcount=50", "-target", "4000", "-p", "measurement.interval=intended")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "Intended-") || !strings.Contains(text, "[READ], Return=OK, 50") {
		t.Errorf("measurement.interval=intended should print intended latencies under plain names:\n%s", text)
	}
}

// TestMaxExecutionTime runs an unbounded operation count for one second,
// printing status lines every second.
func TestMaxExecutionTime(t *testing.T) {
	a, err := ParseArgs(PhaseRun, []string{"-P", "../../workloads/workloadb", "-p", "recordcount=100", "-db", "null",
		"-p", "operationcount=0", "-p", "maxexecutiontime=1", "-threads", "2", "-s", "-p", "status.interval=1", "-l", "L:"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(PhaseRun, "b", a.Props)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	r, err := Run(context.Background(), cfg, Env{Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	if r.RuntimeMs < 1000 || r.RuntimeMs > 3000 || r.Operations == 0 {
		t.Fatalf("unbounded run with maxexecutiontime=1 ran %d ms, %d operations", r.RuntimeMs, r.Operations)
	}
	var status []string
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.HasPrefix(l, "L:") {
			status = append(status, l)
		}
	}
	// At 0 s, maybe at 1 s, and at the end.
	if len(status) < 2 || !strings.Contains(status[0], " 0 sec: 0 operations; ") ||
		!strings.Contains(status[len(status)-1], fmt.Sprintf(" sec: %d operations; ", r.Operations)) {
		t.Errorf("status lines:\n%s", strings.Join(status, "\n"))
	}
	if !strings.Contains(errOut.String(), "Maximum time elapsed. Requesting stop for the workload.") {
		t.Errorf("no stop notice in stderr:\n%s", errOut.String())
	}
}

func TestExecuteHelpAndErrors(t *testing.T) {
	var out bytes.Buffer
	r, err := Execute(context.Background(), "run", []string{"-h"}, Env{Stdout: &out, Stderr: &out})
	if err != nil || r != nil || !strings.Contains(out.String(), "cairn bench load|run") {
		t.Fatalf("-h: %v %v\n%s", r, err, out.String())
	}
	if _, err := Execute(context.Background(), "walk", nil, Env{Stdout: &out, Stderr: &out}); !IsUsage(err) {
		t.Fatalf("phase walk: %v, want a usage error", err)
	}
	if _, err := Execute(context.Background(), "run", []string{"-p", "recordcount=10", "-p", "bogus=1"}, Env{Stdout: &out, Stderr: &out}); !IsUsage(err) {
		t.Fatalf("bogus property: %v, want a usage error", err)
	}
}

// An exportfile that cannot be written is refused before the run starts,
// not after it ends.
func TestExportFileCheckedFirst(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	text, _, err := bench(t, nullBinding{}, PhaseRun, "-P", "../../workloads/workloada", "-p", "recordcount=100",
		"-p", "operationcount=100", "-p", "exportfile="+filepath.Join(notDir, "r.json"), "-db", "null")
	if err == nil || !strings.Contains(err.Error(), "exportfile") || strings.Contains(text, "[OVERALL]") {
		t.Fatalf("exportfile under a regular file: %v, summary %q; want a refusal before the run", err, text)
	}
}

// On a terminal the run shows status lines without -s; -p status=false
// keeps it quiet.
func TestStatusOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		extra []string
		want  bool
	}{{nil, true}, {[]string{"-p", "status=false"}, false}} {
		args := append([]string{"-P", "../../workloads/workloada", "-p", "recordcount=100", "-p", "operationcount=100", "-db", "null"}, tc.extra...)
		var out, errOut bytes.Buffer
		if _, err := Execute(context.Background(), "run", args, Env{Stdout: &out, Stderr: &errOut, Version: "test", Terminal: true}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(errOut.String(), " sec: "); got != tc.want {
			t.Errorf("%q on a terminal: status lines %v, want %v:\n%s", tc.extra, got, tc.want, errOut.String())
		}
	}
}

// downDB is a store that stopped answering: every operation fails after a
// millisecond (its stand-in for a timeout).
type downDB struct{ memDB }

func (*downDB) Read(context.Context, string, []byte, []string, *[]Field) Status {
	time.Sleep(time.Millisecond)
	return StatusError
}

type downBinding struct{}

func (downBinding) NewDB(int) (DB, error) { return &downDB{}, nil }
func (downBinding) Close() error          { return nil }

// TestGiveUp: a run whose operations all fail stops after cairn.giveup; one
// whose reads all answer NOT_FOUND (the store answers) runs to its end.
func TestGiveUp(t *testing.T) {
	args := []string{"-P", "../../workloads/workloadc", "-p", "recordcount=100", "-p", "operationcount=0",
		"-p", "maxexecutiontime=3", "-p", "cairn.giveup=1s", "-threads", "2"}
	start := time.Now()
	_, r, err := bench(t, downBinding{}, PhaseRun, args...)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "gave up: no operation had an answer for") {
		t.Fatalf("a run with no answers: err %v, want a give-up", err)
	}
	if took >= 3*time.Second || r == nil || r.Operations == 0 {
		t.Errorf("a run with no answers ran %v (%v operations), want a stop after about 1 s", took, r)
	}
	_, r, err = bench(t, newMem(), PhaseRun, args...)
	if err != nil || r.RuntimeMs < 2500 {
		t.Fatalf("a run whose reads answer NOT_FOUND: err %v after %d ms, want none after 3 s", err, r.RuntimeMs)
	}
	if op := opOf(r, "READ"); op == nil || op.Returns["NOT_FOUND"] == 0 {
		t.Errorf("the run of an empty store read nothing NOT_FOUND: %+v", r.Ops)
	}
}
