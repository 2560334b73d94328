package node

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
)

// startLite starts a lite node on root on a free port.
func startLite(t *testing.T, root string) (*Lite, error) {
	t.Helper()
	cfg := DefaultLiteConfig(root)
	cfg.Port, cfg.CacheBytes, cfg.MinFreeBytes = 0, 8<<20, 0
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	n, err := StartLite(context.Background(), cfg)
	if err == nil {
		t.Cleanup(func() { _ = n.Close() })
	}
	return n, err
}

// liteWithRecords starts lite on a new root, writes n records and stops it
// twice (so the current MANIFEST holds several records); it returns the root.
func liteWithRecords(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	for round := range 2 {
		l, err := startLite(t, root)
		if err != nil {
			t.Fatal(err)
		}
		kv := dial(t, l.Addr())
		for i := range n {
			key := &cairnpb.Key{Major: []string{"lite", string(rune('a' + round)), string(rune('a' + i%26))}}
			if _, err := kv.Put(context.Background(), &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: key, Value: []byte("v")}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestLiteRefusesCorruptStoreWithAdvice: lite has no peer to rebuild from,
// so a corrupt engine is refused with what is wrong (the file) and what to
// do, and nothing is moved or changed.
func TestLiteRefusesCorruptStoreWithAdvice(t *testing.T) {
	root := liteWithRecords(t, 30)
	data := filepath.Join(root, "data")
	manifest := currentManifest(t, data)
	flipMiddle(t, manifest)
	before, _ := os.ReadFile(manifest)
	_, err := startLite(t, root)
	if !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("start: %v, want ErrCorrupt", err)
	}
	for _, want := range []string{
		"the store in " + root + " cannot be proven whole", filepath.Base(manifest), "nothing was changed",
		"Restore " + root + " from a copy taken while the store was stopped (or from a snapshot)",
		"or move " + data + " and " + filepath.Join(root, storeFile) + " aside to start an empty store",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	after, _ := os.ReadFile(manifest)
	if string(before) != string(after) || len(asideOf(t, data)) != 0 {
		t.Errorf("a refused start changed the root")
	}
}

// TestLiteNoticesLostData: ROOT/store.json outlives a lost data directory,
// so lite refuses to create an empty store in its place; a root from before
// store.json gets one on its next start.
func TestLiteNoticesLostData(t *testing.T) {
	root := liteWithRecords(t, 5)
	marker := filepath.Join(root, storeFile)
	var m storeMarker
	if err := files.ReadJSON(files.Default, marker, &m); err != nil || m.Store != "kvstore" || m.Partitions != 10 || m.Created.IsZero() {
		t.Fatalf("%s: %+v, %v; want store kvstore with 10 partitions and its creation time", marker, m, err)
	}

	// A root made before store.json existed gets one.
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	l, err := startLite(t, root)
	if err != nil {
		t.Fatalf("start without %s: %v", storeFile, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := files.ReadJSON(files.Default, marker, &m); err != nil || m.Store != "kvstore" {
		t.Fatalf("%s after a start on an old root: %+v, %v", marker, m, err)
	}

	// The data directory is lost: lite refuses, naming both.
	data := filepath.Join(root, "data")
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	_, err = startLite(t, root)
	for _, want := range []string{data + " is empty but " + marker + ` says store "kvstore" (10 partitions, created `,
		"the data was lost; restore " + data + " from a copy, or remove " + marker + " to start an empty store"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("start after the data was lost: %v; want %q", err, want)
		}
	}
	// As it says: without store.json it starts an empty store.
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if _, err := startLite(t, root); err != nil {
		t.Fatalf("start after removing %s: %v", storeFile, err)
	}
}
