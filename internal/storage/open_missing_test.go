package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairndb/cairn/api/cairnpb"
)

// TestOpenRefusesMissingTable: an sstable the MANIFEST names that is gone
// is refused as corruption naming it, not as an unexplained open failure
// (Pebble's own open reports it before the check of every table).
func TestOpenRefusesMissingTable(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig(dir)
	cfg.CacheBytes, cfg.MinFreeBytes = 8<<20, 0
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{t: t, e: e}
	a.apply(1, []*cairnpb.Operation{putOp("/a/-/b", "v", cairnpb.Condition_CONDITION_UNSPECIFIED, nil)}, Sync)
	if err := e.Close(); err != nil { // flushes: the record is in an sstable
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no sstable after a clean close")
	}
	if err := os.Remove(tables[0]); err != nil {
		t.Fatal(err)
	}
	_, err = Open(cfg)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), strings.TrimSuffix(filepath.Base(tables[0]), ".sst")) {
		t.Fatalf("open with %s gone: %v, want ErrCorrupt naming it", filepath.Base(tables[0]), err)
	}
	t.Logf("refused: %v", err)
}

// TestOpenAfterUnfinishedCreate: a crash while Pebble created the store can
// leave its MANIFEST marker without the MANIFEST. Nothing was written, so
// the store is created anew; with data next to it, the open refuses.
func TestOpenAfterUnfinishedCreate(t *testing.T) {
	for _, withData := range []bool{false, true} {
		dir := t.TempDir()
		db, err := pebble.Open(dir, &pebble.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if withData {
			if err := db.Set([]byte("k"), []byte("v"), pebble.Sync); err != nil {
				t.Fatal(err)
			}
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		manifests, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
		for _, m := range manifests {
			if err := os.Remove(m); err != nil {
				t.Fatal(err)
			}
		}
		cfg := DefaultConfig(dir)
		cfg.CacheBytes, cfg.MinFreeBytes = 8<<20, 0
		e, err := Open(cfg)
		switch {
		case withData && err == nil:
			e.Close()
			t.Fatal("a store with an sstable but no MANIFEST opened")
		case withData && !errors.Is(err, ErrCorrupt):
			t.Fatalf("a store with an sstable but no MANIFEST: %v, want ErrCorrupt", err)
		case withData:
			t.Logf("with data: refused: %v", err)
		case err != nil:
			t.Fatalf("a store whose creation was cut before its MANIFEST: %v, want a new store", err)
		default:
			if _, ok, err := e.StoreMeta(); err != nil || ok {
				t.Errorf("the re-created store has meta (%v, %v), want none", ok, err)
			}
			e.Close()
		}
	}
}
