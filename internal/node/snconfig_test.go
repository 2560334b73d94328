package node

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/storage/files"
)

// TestWriteInitConflict: a second sn init with other values is refused with
// a message naming each setting that differs; the same values are accepted.
func TestWriteInitConflict(t *testing.T) {
	root := t.TempDir()
	first := InitConfig{Host: "127.0.0.1", Port: 5000, Capacity: 2}
	if _, existed, err := WriteInit(files.Default, root, first); err != nil || existed {
		t.Fatalf("first WriteInit: existed %v, %v", existed, err)
	}
	if _, existed, err := WriteInit(files.Default, root, first); err != nil || !existed {
		t.Fatalf("same values again: existed %v, %v; want accepted", existed, err)
	}
	again := first
	again.Capacity, again.Port, again.StorageDirs = 4, 5001, []string{"/d1"}
	_, _, err := WriteInit(files.Default, root, again)
	var ce *InitConflictError
	if !errors.Is(err, ErrInitConflict) || !errors.As(err, &ce) {
		t.Fatalf("WriteInit with other values = %v, want an *InitConflictError", err)
	}
	want := []string{"port: 5000 in the file, 5001 given", "capacity: 2 in the file, 4 given",
		"storagedir: none (ROOT/data) in the file, /d1 given"}
	if strings.Join(ce.Diffs, "|") != strings.Join(want, "|") {
		t.Errorf("Diffs %q, want %q", ce.Diffs, want)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, filepath.Join(root, InitFile)+" already holds") || strings.Contains(msg, "node:") ||
		!strings.Contains(msg, "capacity: 2 in the file, 4 given") {
		t.Errorf("message %q; want the file, each difference, and no package prefix", msg)
	}
}
