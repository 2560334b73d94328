package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
)

func TestInitRefusesMismatch(t *testing.T) {
	e := testEngine(t)
	m, err := e.Init("kvstore", 10)
	if err != nil || m.Origin == 0 {
		t.Fatalf("init: %+v, %v", m, err)
	}
	if again, err := e.Init("kvstore", 10); err != nil || again != m {
		t.Fatalf("re-init: %+v, %v; want %+v", again, err, m)
	}
	for _, tc := range []struct {
		name string
		n    uint32
	}{{"other", 10}, {"kvstore", 11}} {
		if _, err := e.Init(tc.name, tc.n); !errors.Is(err, ErrStoreMismatch) {
			t.Errorf("Init(%q, %d) = %v, want ErrStoreMismatch", tc.name, tc.n, err)
		}
	}
}

// TestWriteNoSyncReachesTheOS checks the WRITE_NO_SYNC contract: once Commit
// returns, the WAL record is in the file (the OS has it), though no fsync ran.
func TestWriteNoSyncReachesTheOS(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	marker := "write-no-sync-marker-7f3a"
	a.apply(1, []*cairnpb.Operation{putOp("/w", marker, 0, nil)}, WriteNoSync)
	if !walContains(t, e.cfg.Dir, marker) {
		t.Fatal("after a WriteNoSync commit the WAL file does not hold the record")
	}
}

// TestOnlySyncCommitsFsync: WRITE_NO_SYNC commits skip the WAL fsync; SYNC
// commits perform one.
func TestOnlySyncCommitsFsync(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	before := e.fs.syncs()
	for range 5 {
		a.apply(1, []*cairnpb.Operation{putOp("/w", "x", 0, nil)}, WriteNoSync)
	}
	if got := e.fs.syncs() - before; got != 0 {
		t.Fatalf("%d fsyncs for WRITE_NO_SYNC commits, want 0", got)
	}
	a.apply(1, []*cairnpb.Operation{putOp("/w", "y", 0, nil)}, Sync)
	if got := e.fs.syncs() - before; got < 1 {
		t.Fatal("a SYNC commit did not fsync the WAL")
	}
	if e.fs.needSync.Load() != 0 {
		t.Fatal("needSync left raised after the commit")
	}
}

func walContains(t *testing.T, dir, s string) bool {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no WAL files in %s: %v", dir, err)
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// TestScanPaging checks that a store scan that stops on MaxScanned resumes
// where it stopped, and that paged multi-gets in both directions return
// exactly the unpaged result.
func TestScanPaging(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	for _, k := range []string{"/p/-/a", "/p/-/b", "/p/-/b/c", "/p/-/c", "/p/-/d", "/q", "/r", "/s/t"} {
		a.apply(1, []*cairnpb.Operation{putOp(k, k, 0, nil)}, NoSync)
	}
	all, _, err := e.StoreScan(Scan{Depth: keys.ParentAndDescendants}, 1)
	if err != nil || len(all) != 8 {
		t.Fatalf("full scan: %d records, %v", len(all), err)
	}
	var got []Record
	var resume []byte
	for pages := 0; ; pages++ {
		page, next, err := e.StoreScan(Scan{Depth: keys.ParentAndDescendants, Limit: 100, MaxScanned: 3, Resume: resume}, 1)
		if err != nil || pages > 10 {
			t.Fatalf("page %d: %v", pages, err)
		}
		got = append(got, page...)
		if next == nil {
			break
		}
		resume = next
	}
	if len(got) != len(all) {
		t.Fatalf("paged scan returned %d records, want %d", len(got), len(all))
	}
	parent := keys.New([]string{"p"})
	for _, reverse := range []bool{false, true} {
		whole, _, _ := e.MultiGet(Scan{Parent: parent, Depth: keys.ParentAndDescendants, Reverse: reverse}, 1)
		var paged []string
		resume = nil
		for {
			page, next, err := e.MultiGet(Scan{Parent: parent, Depth: keys.ParentAndDescendants, Reverse: reverse, Limit: 2, Resume: resume}, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page {
				paged = append(paged, r.Key.String())
			}
			if next == nil {
				break
			}
			resume = next
		}
		if len(paged) != len(whole) || len(whole) != 5 {
			t.Fatalf("reverse=%v: paged %v, whole %d", reverse, paged, len(whole))
		}
		for i := range whole {
			if whole[i].Key.String() != paged[i] {
				t.Fatalf("reverse=%v: paged %v differs from whole at %d", reverse, paged, i)
			}
		}
	}
	if _, _, err := e.MultiGet(Scan{Parent: parent, Depth: keys.ParentAndDescendants, Resume: []byte("zz")}, 1); !errors.Is(err, ErrBadResume) {
		t.Fatalf("foreign resume token: %v", err)
	}
}

func TestCorruptRecordIsReported(t *testing.T) {
	e := testEngine(t)
	k := keys.New([]string{"c"})
	if err := e.db.Load().Set(keys.Encode(0, k), []byte{0x09, 1, 2}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Get(k, 1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("get of a corrupt record: %v, want ErrCorrupt", err)
	}
}

// TestOldFormatIsRefused: an engine whose store meta says format 1 (records
// filed without their shard) is refused with ErrOldFormat, naming the
// format and what to do, never read as if its keys were format 2.
func TestOldFormatIsRefused(t *testing.T) {
	e := testEngine(t)
	if err := e.db.Load().Set(metaStoreKey, []byte(`{"name":"old","partitions":10,"origin":5,"format":1}`), nil); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.StoreMeta()
	if !errors.Is(err, ErrOldFormat) || !strings.Contains(err.Error(), "storage format 1") || !strings.Contains(err.Error(), "cairn kv --json scan") {
		t.Fatalf("StoreMeta of a format-1 store: %v, want ErrOldFormat naming format 1 and the way out", err)
	}
	if _, err := e.Init("old", 10); !errors.Is(err, ErrOldFormat) {
		t.Fatalf("Init over a format-1 store: %v, want ErrOldFormat", err)
	}
}
