package storage

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairndb/cairn/internal/latency"
)

// walFS wraps the engine's FS so that Pebble's WAL is fsynced only when a
// write asked for it:
//
//   - A SYNC commit raises needSync for the span of its commit. Pebble
//     satisfies its sync request with an fsync that starts after the request
//     was queued, so that fsync sees needSync > 0 and is real.
//   - Every other WAL fsync (WRITE_NO_SYNC commits, Pebble's own) returns at
//     once. The data was already handed to the OS by the write() that
//     precedes every WAL sync in Pebble's flush loop, so a process crash
//     cannot lose it; an OS crash can lose it, as WRITE_NO_SYNC allows.
//   - Closing a WAL file (Pebble rotating to a new one) fsyncs it first if a
//     sync was skipped, so only the newest WAL can ever have a torn tail and
//     recovery after power loss reads it as a torn tail, not as corruption.
//
// Concurrent commits of several shards share the engine freely: none of
// this depends on one commit at a time, and Pebble groups their syncs.
type walFS struct {
	vfs.FS
	needSync atomic.Int32
	syncTime latency.Histogram // the fsyncs performed and their durations, for tests and metrics
}

// syncs is how many fsyncs reached the disk.
func (fs *walFS) syncs() uint64 { return fs.syncTime.Snapshot().Count() }

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
	fs    *walFS
	dirty atomic.Bool // a sync was skipped since the last real one
}

func (f *walFile) skip() bool {
	if f.fs.needSync.Load() > 0 {
		return false
	}
	f.dirty.Store(true)
	return true
}

// real marks a sync that reaches the disk; the caller defers
// f.timed(time.Now()) around it, which counts it.
func (f *walFile) real() { f.dirty.Store(false) }

// timed counts a real sync and its duration, from start to now.
func (f *walFile) timed(start time.Time) { f.fs.syncTime.Since(start) }

func (f *walFile) Sync() error {
	if f.skip() {
		return nil
	}
	f.real()
	defer f.timed(time.Now())
	return f.File.Sync()
}

func (f *walFile) SyncData() error {
	if f.skip() {
		return nil
	}
	f.real()
	defer f.timed(time.Now())
	return f.File.SyncData()
}

func (f *walFile) SyncTo(length int64) (bool, error) {
	if f.skip() {
		return false, nil
	}
	f.real()
	defer f.timed(time.Now())
	return f.File.SyncTo(length)
}

func (f *walFile) Close() error {
	if f.dirty.Load() {
		start := time.Now()
		err := f.File.Sync()
		f.timed(start)
		if err != nil {
			_ = f.File.Close()
			return err
		}
	}
	return f.File.Close()
}
