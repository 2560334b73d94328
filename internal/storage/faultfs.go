package storage

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"
)

// IOError is a failed write, fsync or file creation in the engine's
// directory, naming the operation, the file and the errno. The engine's FS
// wraps every such failure in one, so a fatal error's message says which
// file failed and how.
type IOError struct {
	Op   string // "write", "fsync", "create", "rename", "close", "preallocate"
	Path string
	Err  error
}

func (e *IOError) Error() string {
	if n := Errno(e.Err); n != "" {
		return fmt.Sprintf("%s %s: %v (%s)", e.Op, e.Path, e.Err, n)
	}
	return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
}

func (e *IOError) Unwrap() error { return e.Err }

// Errno names the errno in err ("EIO", "ENOSPC"), or "" if it holds none.
func Errno(err error) string {
	var n syscall.Errno
	if errors.As(err, &n) {
		return unix.ErrnoName(n)
	}
	return ""
}

// ioFS annotates the write-side errors of an FS with IOError and remembers
// the last one, which the engine records as its fault when a failure turns
// fatal. Reads and lookups pass through untouched (Pebble tests their
// errors for "not exist").
type ioFS struct {
	vfs.FS
	last atomic.Pointer[IOError]
	// budget, when set, admits the bytes a compaction or a flush writes
	// (space.go).
	budget func(n int64, flush bool) error
	// fatal is called, before the error is returned, for a failure that
	// Pebble cannot survive (a WAL's or the MANIFEST's), and does not
	// return once the engine is running: Pebble might otherwise call
	// Fatalf, or panic (it does when it cannot create or close a WAL).
	fatal func(*IOError)
}

// fatalFile reports whether a failed write to name is one Pebble cannot
// survive.
func fatalFile(name string) bool {
	base := name[strings.LastIndexByte(name, '/')+1:]
	return strings.HasSuffix(base, ".log") || strings.HasPrefix(base, "MANIFEST-") || strings.HasPrefix(base, "marker.")
}

func (fs *ioFS) fail(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var already *IOError
	if errors.As(err, &already) {
		return err
	}
	e := &IOError{Op: op, Path: path, Err: err}
	fs.last.Store(e)
	if fs.fatal != nil && fatalFile(path) {
		fs.fatal(e)
	}
	return e
}

func (fs *ioFS) file(name string, f vfs.File, err error, op string) (vfs.File, error) {
	if err != nil {
		return nil, fs.fail(op, name, err)
	}
	return &ioFile{File: f, fs: fs, name: name}, nil
}

func (fs *ioFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	out, err := fs.file(name, f, err, "create")
	if err == nil && fs.budget != nil {
		switch c {
		case "pebble-compaction", "pebble-blob-file-rewrite":
			out.(*ioFile).budget = func(n int64) error { return fs.budget(n, false) }
		case "pebble-memtable-flush":
			out.(*ioFile).budget = func(n int64) error { return fs.budget(n, true) }
		}
	}
	return out, err
}

func (fs *ioFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.file(newname, f, err, "reuse")
}

func (fs *ioFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	if err != nil {
		return nil, err // may be "not exist", which callers test
	}
	return &ioFile{File: f, fs: fs, name: name}, nil
}

func (fs *ioFS) Rename(oldname, newname string) error {
	return fs.fail("rename", newname, fs.FS.Rename(oldname, newname))
}

func (fs *ioFS) Unwrap() vfs.FS { return fs.FS }

type ioFile struct {
	vfs.File
	fs   *ioFS
	name string
	// budget admits each write of a compaction's or a flush's output
	// (space.go), so neither takes the disk below its share of the margin.
	budget func(n int64) error
}

func (f *ioFile) Write(p []byte) (int, error) {
	if f.budget != nil {
		if err := f.budget(int64(len(p))); err != nil {
			return 0, &IOError{Op: "write", Path: f.name, Err: err}
		}
	}
	n, err := f.File.Write(p)
	return n, f.fs.fail("write", f.name, err)
}

func (f *ioFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.fs.fail("write", f.name, err)
}

// Preallocate does nothing for a WAL. Pebble asks for 110% of a memtable
// (70 MiB by default) for each new WAL: space the free-space account
// (space.go) would see as taken although only the WAL may use it, and more
// than a small or nearly full disk has. A recycled WAL keeps its size, so
// steady-state appends do not grow files anyway. Other files' requests pass
// through; a failure is annotated but never a fault: preallocation is a
// hint, Pebble ignores its failure, and a write that then finds no room
// fails on its own.
func (f *ioFile) Preallocate(off, n int64) error {
	if strings.HasSuffix(f.name, ".log") {
		return nil
	}
	if err := f.File.Preallocate(off, n); err != nil {
		return &IOError{Op: "preallocate", Path: f.name, Err: err}
	}
	return nil
}

func (f *ioFile) Sync() error { return f.fs.fail("fsync", f.name, f.File.Sync()) }

func (f *ioFile) SyncData() error { return f.fs.fail("fsync", f.name, f.File.SyncData()) }

func (f *ioFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.fs.fail("fsync", f.name, err)
}

func (f *ioFile) Close() error { return f.fs.fail("close", f.name, f.File.Close()) }
