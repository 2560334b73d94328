package storage

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// sstFile is one sstable an import writes.
type sstFile struct {
	path   string
	w      *sstable.Writer
	closed bool
}

// createSST creates an sstable at path in the format the engine writes.
func (e *Engine) createSST(path string) (*sstFile, error) {
	f, err := e.fs.Create(path, "cairn-snapshot-import")
	if err != nil {
		return nil, err
	}
	db, l := e.acquire()
	format := db.TableFormat()
	e.release(l)
	opts := e.options(false)
	opts.EnsureDefaults()
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), opts.MakeWriterOptions(0, format))
	return &sstFile{path: path, w: w}, nil
}

func (f *sstFile) set(k, v []byte) error {
	if err := f.w.Set(k, v); err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return nil
}

func (f *sstFile) deleteRange(lo, hi []byte) error {
	if err := f.w.DeleteRange(lo, hi); err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return nil
}

// close finishes the table, fsyncs and closes the file.
func (f *sstFile) close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	if err := f.w.Close(); err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return nil
}

// abort closes the file of a table that will not be used.
func (f *sstFile) abort() {
	if !f.closed {
		f.closed = true
		_ = f.w.Close()
	}
}
