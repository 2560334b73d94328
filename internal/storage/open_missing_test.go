package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
