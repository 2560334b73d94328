package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ExportArgs are export's arguments.
type ExportArgs struct {
	Parent string // a possibly partial major path; "" for the whole store
	File   string // --file; "" or "-" for stdout
	Batch  int    // --batch: records per scan request
	Store  string // the store's name, for the header
}

// Export writes the records of the store, or of the major paths under
// Parent, to an export file (exportfile.go). To a named file it writes
// FILE.partial and renames it to FILE after the end line is synced, so
// FILE exists only once it is whole; it refuses a FILE that exists.
// Progress goes to kv.Progress.
func (kv *KV) Export(ctx context.Context, a ExportArgs) (err error) {
	p, err := ParseParent(a.Parent)
	if err != nil {
		return err
	}
	if a.Batch < 0 {
		return Usagef("--batch: %d is negative", a.Batch)
	}
	w, finish, err := exportOutput(a.File, kv.Out)
	if err != nil {
		return err
	}
	defer func() { err = finish(err) }()
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	start := time.Now()
	head := exportLine{Format: exportFormat, Version: exportVersion, Store: a.Store, Started: start.UTC().Format(time.RFC3339)}
	if p != nil {
		head.Parent = p.String()
	}
	if err := enc.Encode(head); err != nil {
		return err
	}
	prog := kv.progress("export", start)
	var n int64
	for rec, err := range kv.Client.StoreIterator(ctx, a.Batch, p, nil, 0) {
		if err != nil {
			if ctx.Err() != nil {
				err = context.Cause(ctx) // "interrupt signal received", not the client's "context canceled"
			}
			return &stopped{err: err, note: fmt.Sprintf("the export stopped after %d records, and %s", n, unfinished(a.File))}
		}
		if err := enc.Encode(exportRecord(rec)); err != nil {
			return err
		}
		if n++; n%256 == 0 {
			prog.tick(n, 0)
		}
	}
	if err := enc.Encode(exportEnd{End: true, Records: n, Ended: time.Now().UTC().Format(time.RFC3339)}); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	prog.done(fmt.Sprintf("%d records exported to %s", n, outputName(a.File)), n)
	return nil
}

// unfinished says what became of an export's output when it failed.
func unfinished(file string) string {
	if file == "" || file == "-" {
		return "what it printed has no end line, so import refuses it"
	}
	return file + " was not written"
}

func outputName(file string) string {
	if file == "" || file == "-" {
		return "stdout"
	}
	return file
}

// exportOutput opens where an export goes. finish closes it: on success
// it syncs FILE.partial and renames it to FILE; on failure it removes
// FILE.partial.
func exportOutput(file string, stdout io.Writer) (io.Writer, func(error) error, error) {
	if file == "" || file == "-" {
		return stdout, func(err error) error { return err }, nil
	}
	if _, err := os.Lstat(file); err == nil {
		return nil, nil, Usagef("--file %s exists: export does not overwrite a file; remove it or name another", file)
	}
	partial := file + ".partial"
	f, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, nil, Usagef("--file: %s exists: an export to %s is running, or one was killed; remove it if none runs", partial, file)
	}
	if err != nil {
		return nil, nil, Usagef("--file: %v", err)
	}
	finish := func(err error) error {
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(partial, file)
		}
		if err == nil {
			err = syncDir(filepath.Dir(file))
		}
		if err != nil {
			_ = os.Remove(partial)
		}
		return err
	}
	return f, finish, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, os.ErrInvalid) {
		return nil // a file system without directory fsync
	}
	return err
}
