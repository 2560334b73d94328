package cli_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/cli"
)

// TestExportInterrupted: an export whose context ends (SIGINT) stops,
// says so with the cause, and leaves neither the file nor its .partial.
func TestExportInterrupted(t *testing.T) {
	kv, _ := startKV(t)
	if err := kv.Put(context.Background(), cli.PutArgs{Key: "/a/-/b", Value: "v", HasValue: true}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "x.jsonl")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	err := kv.Export(ctx, cli.ExportArgs{File: file, Store: "kvstore"})
	if err == nil || !strings.Contains(err.Error(), "interrupt signal received; the export stopped after 0 records, and "+file+" was not written") {
		t.Fatalf("export with its context canceled: %v", err)
	}
	for _, f := range []string{file, file + ".partial"} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s after a stopped export: %v, want none", f, err)
		}
	}
	// A .partial left behind (a killed export) is named, and kept.
	if err := os.WriteFile(file+".partial", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = kv.Export(context.Background(), cli.ExportArgs{File: file})
	if cli.ExitCode(err) != cli.ExitBadInput || !strings.Contains(err.Error(), file+".partial exists") {
		t.Fatalf("export beside a .partial file: %v, want bad input naming it", err)
	}
	if _, err := os.Stat(file + ".partial"); err != nil {
		t.Errorf("the .partial file is gone: %v", err)
	}
}

// TestImportInterrupted: an import whose context ends stops with the
// cause and the count written.
func TestImportInterrupted(t *testing.T) {
	kv, _ := startKV(t)
	file := filepath.Join(t.TempDir(), "in.jsonl")
	lines := `{"format":"cairn-export","version":1,"store":"kvstore"}` + "\n" +
		`{"key":"/a/-/b","value":"v"}` + "\n" + `{"end":true,"records":1}` + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	err := kv.Import(ctx, cli.ImportArgs{File: file})
	if err == nil || !strings.Contains(err.Error(), "interrupt signal received; 0 records were written before the import stopped") {
		t.Fatalf("import with its context canceled: %v", err)
	}
}
