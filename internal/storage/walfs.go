package storage

import (
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// walFS wraps the engine's FS so that a commit can write Pebble's WAL to the
// OS without fsyncing it (SyncMode WriteNoSync). While skip is set, Sync on a
// WAL file returns at once; the data was already handed to the OS by the
// write that precedes every WAL sync. Only the apply loop sets skip, around
// one commit, and no other commit runs at the same time.
type walFS struct {
	vfs.FS
	skip atomic.Bool
}

func isWAL(name string) bool { return strings.HasSuffix(name, ".log") }

func (fs *walFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !isWAL(name) {
		return f, err
	}
	return &walFile{File: f, fs: fs}, nil
}

func (fs *walFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs *walFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs *walFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

type walFile struct {
	vfs.File
	fs *walFS
}

func (f *walFile) Sync() error {
	if f.fs.skip.Load() {
		return nil
	}
	return f.File.Sync()
}

func (f *walFile) SyncData() error {
	if f.fs.skip.Load() {
		return nil
	}
	return f.File.SyncData()
}

func (f *walFile) SyncTo(length int64) (bool, error) {
	if f.fs.skip.Load() {
		return false, nil
	}
	return f.File.SyncTo(length)
}
