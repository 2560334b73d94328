package files

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// FS is the file system Cairn's files go through (Pebble's vfs.FS).
type FS = vfs.FS

// Default is the operating system's file system.
var Default FS = vfs.Default

// IsNotExist reports whether err says a file does not exist, on
// vfs.Default, vfs.MemFS and the FS of WithFaults alike.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// ReadFile returns the contents of the file at path. An error names path.
func ReadFile(fs FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, withPath("open", path, err)
	}
	b, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil {
		return nil, withPath("read", path, err)
	}
	return b, nil
}

// WriteAtomic replaces the file at path with data: a temporary file in the
// same directory is written, fsynced, closed and renamed over path, then
// the directory is fsynced (see the package doc). On a failure before the
// rename the temporary file is removed and path is left as it was; on a
// failed directory sync the new content is in place but maybe not durable.
// data is not changed (it is copied: Pebble's MemFS scribbles over written
// buffers in race builds, to catch reuse).
func WriteAtomic(fs FS, path string, data []byte) error {
	return writeAtomic(fs, path, bytes.Clone(data))
}

// writeAtomic is WriteAtomic of a buffer the caller gives up.
func writeAtomic(fs FS, path string, data []byte) error {
	tmp, err := WriteTemp(fs, path, func(w io.Writer) error { _, err := w.Write(data); return err })
	if err != nil {
		return err
	}
	return CommitTemp(fs, tmp, path)
}

// WriteTemp is the first half of WriteAtomic, for data that is streamed or
// must be checked before it replaces path: it creates a temporary file
// that is to replace path (PATH.<random>.tmp, in path's directory), fills
// it with write, fsyncs and closes it, and returns its name. On any
// failure the temporary file is removed.
func WriteTemp(fs FS, path string, write func(io.Writer) error) (string, error) {
	tmp := tempName(path)
	if err := writeSynced(fs, tmp, path, write); err != nil {
		_ = fs.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// writeSynced creates path, fills it with write, fsyncs and closes it.
// An error of write is said to be writing target, unless it names it.
func writeSynced(fs FS, path, target string, write func(io.Writer) error) error {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return withPath("create", path, err)
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return withPath("write", target, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return withPath("fsync", path, err)
	}
	if err := f.Close(); err != nil {
		return withPath("close", path, err)
	}
	return nil
}

// CommitTemp is the second half of WriteAtomic: it renames tmp (from
// WriteTemp) over path and fsyncs the directory. A failed rename removes
// tmp and leaves path as it was; a failed directory sync leaves the new
// content in place, perhaps not durable.
func CommitTemp(fs FS, tmp, path string) error {
	if err := fs.Rename(tmp, path); err != nil {
		_ = fs.Remove(tmp)
		return withPath("rename "+tmp+" to", path, err)
	}
	if err := syncDir(fs, fs.PathDir(path)); err != nil {
		return fmt.Errorf("%s was replaced but may not survive a crash: %w", path, err)
	}
	return nil
}

// syncDir fsyncs the directory dir, making the creations, renames and
// removals of files in it durable.
func syncDir(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return withPath("open directory", dir, err)
	}
	err = d.Sync()
	_ = d.Close()
	if err != nil {
		return withPath("fsync directory", dir, err)
	}
	return nil
}

// tempName returns a fresh name for a temporary file that will replace
// path: PATH.<16 hex digits>.tmp, in path's directory.
func tempName(path string) string {
	return fmt.Sprintf("%s.%016x%s", path, rand.Uint64(), tempSuffix)
}

const tempSuffix = ".tmp"

// tempTarget returns NAME for a base name NAME.<16 hex digits>.tmp made by
// tempName, or "" for any other name.
func tempTarget(base string) string {
	rest, ok := strings.CutSuffix(base, tempSuffix)
	if !ok || len(rest) < 18 || rest[len(rest)-17] != '.' || !isHex(rest[len(rest)-16:]) {
		return ""
	}
	return rest[:len(rest)-17]
}

// withPath makes err name path once: errors of the OS and of MemFS already
// do (*fs.PathError); others get "op path: " in front.
func withPath(op, path string, err error) error {
	if strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}
