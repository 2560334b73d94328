package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// FS is the file system an engine (and every Cairn file) goes through:
// vfs.Default on disk, a vfs.MemFS or an errorfs in tests.
type FS = files.FS

// Config configures an Engine.
type Config struct {
	// Dir is the directory holding the Pebble files. Required.
	Dir string
	// FS holds Dir. Default files.Default (the operating system's).
	FS FS
	// CacheBytes sizes Pebble's block cache, in bytes. Default 256 MiB.
	CacheBytes int64
	// RowCacheBytes sizes the row cache (rowcache.go), which keeps records
	// for point gets and whole-major-path multi-gets in front of Pebble.
	// Default 128 MiB; 0 turns it off, else at least 32 MiB.
	RowCacheBytes int64
	// MemTableBytes sizes each memtable, in bytes. Default 64 MiB.
	MemTableBytes int64
	// MinFreeBytes is the free-space margin, in bytes: a write that adds
	// data is admitted only if, after it, the file system keeps this much
	// free beyond what flushing and running compactions will need (see
	// space.go). Default 64 MiB.
	MinFreeBytes int64
	// CheckpointInterval is how often the engine records its applied
	// indexes as durable in the state file (state.go); an open that finds
	// an index below its checkpoint is refused. Default 30s; negative: only
	// at Close.
	CheckpointInterval time.Duration
	// BootID returns an id of the running kernel boot (default: the Linux
	// boot id, "" where unknown). A change since the engine last opened
	// means the machine restarted, so unsynced pages may be missing.
	BootID func() string
	// NoPeers is set for an engine that no peer can rebuild (lite). Such
	// an engine opens, with a warning, once its files prove whole, where an
	// engine with peers is refused (and its node rebuilds from them): after
	// a fatal I/O error of its last run (a Fault: only unsynced writes can
	// be missing), and after a reboot with a hole in its newest WAL (power
	// loss can persist a later unsynced page without an earlier one; the
	// writes after the hole were never synced, and are dropped).
	NoPeers bool
	// OnCorruption is called once, on its own goroutine, when corruption is
	// found while the engine runs (a read, a compaction or a scrub). The
	// engine refuses writes from then on. Default: nothing more.
	OnCorruption func(error)
	// Fatal is called for an unrecoverable error (a failed WAL or MANIFEST
	// write or fsync) after the fault is recorded in the state file. It
	// must not return; default: log and exit with status 70.
	Fatal func(error)
	// Logger receives Pebble's log lines (info as debug). Default slog.Default().
	Logger *slog.Logger

	// tune adjusts Pebble's options (this package's tests only).
	tune func(*pebble.Options)
}

// DefaultRowCacheBytes is the row cache's default size, and
// MinRowCacheBytes its smallest (freecache's 256 segments of 128 KiB, whose
// entries are then at most 32 KiB; 64 MiB and more cache entries up to 64 KiB).
const (
	DefaultRowCacheBytes = 128 << 20
	MinRowCacheBytes     = 32 << 20
)

// DefaultConfig returns the defaults for dir.
func DefaultConfig(dir string) Config {
	return Config{Dir: dir, CacheBytes: 256 << 20, RowCacheBytes: DefaultRowCacheBytes, MemTableBytes: 64 << 20, MinFreeBytes: 64 << 20,
		CheckpointInterval: 30 * time.Second}
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("storage: Dir is required")
	case c.CacheBytes < 1<<20:
		return fmt.Errorf("storage: CacheBytes %d is below 1 MiB", c.CacheBytes)
	case c.RowCacheBytes != 0 && c.RowCacheBytes < MinRowCacheBytes:
		return fmt.Errorf("storage: row cache size %d is below its minimum of 32 MiB (0 turns it off)", c.RowCacheBytes)
	case c.MemTableBytes < 1<<20:
		return fmt.Errorf("storage: MemTableBytes %d is below 1 MiB", c.MemTableBytes)
	case c.MinFreeBytes < 0:
		return fmt.Errorf("storage: MinFreeBytes %d is negative", c.MinFreeBytes)
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.FS == nil {
		c.FS = files.Default
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.BootID == nil {
		c.BootID = linuxBootID
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = 30 * time.Second
	}
	if c.Fatal == nil {
		log := c.Logger
		c.Fatal = func(err error) {
			log.Error("fatal storage error; exiting without retrying", "err", err)
			os.Exit(70)
		}
	}
}

// Engine is one node's Pebble instance.
type Engine struct {
	cfg   Config
	io    *ioFS  // annotates write errors (faultfs.go)
	fs    *walFS // what Pebble uses
	log   *slog.Logger
	cache *pebble.Cache
	rows  *rowCache // nil: off
	wrote writeCounts

	// db is the open Pebble. While ro is set (the engine started on a full
	// disk and Pebble is open read-only), readers hold swapMu's read lock,
	// so reopen can replace db once space returns (see acquire).
	db     atomic.Pointer[pebble.DB]
	ro     atomic.Bool
	swapMu sync.RWMutex

	space   *space
	corrupt atomic.Pointer[Corruption]

	stateMu sync.Mutex // guards state and writes of the state file
	state   engineState
	dropMu  sync.Mutex // orders checkpoints and DropShard

	// armed is set once Pebble is open for writing: from then on a failed
	// WAL or MANIFEST write is recorded as a fault (faultfs.go).
	armed atomic.Bool

	stop chan struct{}
	// reclaim queues the spans of dropped partitions for compaction
	// (reclaim.go); reclaimed counts the compactions done.
	reclaim   chan Span
	reclaimed atomic.Int64
	bg        sync.WaitGroup
	closeErr  error
	closed    sync.Once
	fatalMu   sync.Mutex
}

// Open opens (creating if needed) the engine in cfg.Dir. It first proves
// that the files are whole (open.go) and changes nothing on disk before
// that; a store that cannot be proven whole is refused with an error
// wrapping ErrCorrupt (naming the file and what is wrong) or ErrFaulted.
func Open(cfg Config) (_ *Engine, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	defer func() { // Pebble panics on some failed writes while opening
		if r := recover(); r != nil {
			err = fmt.Errorf("storage: open %s failed: %v", cfg.Dir, r)
		}
	}()
	cfg.setDefaults()
	if err := cfg.FS.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, stop: make(chan struct{}), reclaim: make(chan Span, reclaimQueue)}
	e.io = &ioFS{FS: cfg.FS}
	e.io.budget = func(n int64, flush bool) error { return e.space.outputWrite(n, flush) }
	e.io.fatal = func(err *IOError) {
		if !e.armed.Load() {
			return // opening: Pebble's open returns the error itself
		}
		e.log.Error("a write Pebble cannot survive failed; recording the fault", "err", err)
		// Fatal here, in the goroutine that saw the failure, rather than
		// when Pebble hands the error on: on some paths it panics instead
		// (closing a WAL it rotates during an ingest), and that panic can
		// end the process with Go's exit status 2 before any recover.
		e.Fatal(err)
	}
	e.fs = &walFS{FS: e.io}
	e.cache = pebble.NewCache(cfg.CacheBytes)
	e.rows = newRowCache(cfg.RowCacheBytes)
	e.space = newSpace(e, cfg.MinFreeBytes)
	if err := e.open(); err != nil {
		e.cache.Unref()
		e.rows.close()
		return nil, err
	}
	if !e.ro.Load() {
		e.removeStaleImports()
	}
	e.bg.Add(3)
	go e.checkpointLoop()
	go e.spaceLoop()
	go e.reclaimLoop()
	return e, nil
}

// options returns Pebble's options; readOnly opens without writing.
func (e *Engine) options(readOnly bool) *pebble.Options {
	opts := &pebble.Options{
		FS:                 e.fs,
		Cache:              e.cache,
		MemTableSize:       uint64(e.cfg.MemTableBytes),
		FormatMajorVersion: pebble.FormatColumnarBlocks,
		Logger:             pebbleLogger{e},
		ReadOnly:           readOnly,
		EventListener:      e.events(),
	}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	if e.cfg.tune != nil {
		e.cfg.tune(opts)
	}
	return opts
}

// acquire returns the open Pebble for a read or a batch; release(locked)
// must follow. Only while the engine is read-only does it lock, so the
// writable engine's reads cost one atomic load.
func (e *Engine) acquire() (*pebble.DB, bool) {
	if e.ro.Load() {
		e.swapMu.RLock()
		return e.db.Load(), true
	}
	return e.db.Load(), false
}

func (e *Engine) release(locked bool) {
	if locked {
		e.swapMu.RUnlock()
	}
}

// Close stops background work, flushes, records a final checkpoint and a
// clean stop, and closes Pebble. NoSync writes may be lost only if the
// process dies before Close returns.
func (e *Engine) Close() error {
	e.closed.Do(func() {
		close(e.stop)
		e.bg.Wait()
		if e.rows != nil {
			st := e.rows.stats()
			e.log.Info("row cache at close", "hits", st.Hits, "misses", st.Misses, "entries", st.Entries)
		}
		defer e.rows.close()
		e.closeErr = e.closeDB()
		e.cache.Unref()
	})
	return e.closeErr
}

func (e *Engine) closeDB() error {
	db := e.db.Load()
	if e.ro.Load() {
		return db.Close()
	}
	if err := db.Flush(); err != nil {
		e.log.Warn("flush on close failed", "err", err)
		return errors.Join(err, db.Close())
	}
	if err := e.checkpoint(true); err != nil {
		e.log.Warn("recording a clean stop failed", "err", err)
	}
	return db.Close()
}

// Metrics returns Pebble's metrics, for debugging and tests (the metrics
// endpoint takes Stats).
func (e *Engine) Metrics() *pebble.Metrics {
	db, l := e.acquire()
	defer e.release(l)
	return db.Metrics()
}

// Dir returns the engine's directory.
func (e *Engine) Dir() string { return e.cfg.Dir }

// FS returns the file system the engine's directory is on.
func (e *Engine) FS() FS { return e.cfg.FS }

// pebbleLogger routes Pebble's logging to slog. Pebble's info lines (WAL
// recovery, compactions) are debug-level for Cairn.
type pebbleLogger struct{ e *Engine }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.e.log.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.e.log.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is called by Pebble for unrecoverable errors such as a failed WAL
// fsync. Cairn never retries those: record the fault and exit.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.e.Fatal(fmt.Errorf(format, args...))
}

func beUint64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// linuxBootID is the kernel's random boot id, or "" where there is none.
func linuxBootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// Health is an engine's state for operators (ping, verify, Describe).
type Health struct {
	// State is "ok", "low-disk" (puts refused: the free-space margin is
	// reached), "read-only" (started on a full disk; writable again once
	// space is freed) or "corrupt" (corruption found: writes refused).
	State  string
	Detail string
	// AvailBytes is the free space at the last check (-1: unknown), and
	// MinFreeBytes the margin.
	AvailBytes, MinFreeBytes int64
}

// Health returns the engine's state now.
func (e *Engine) Health() Health {
	e.space.mu.Lock()
	h := Health{State: "ok", AvailBytes: e.space.free, MinFreeBytes: e.cfg.MinFreeBytes}
	if h.AvailBytes >= 0 {
		h.AvailBytes -= e.space.since
	}
	e.space.mu.Unlock()
	switch c := e.corrupt.Load(); {
	case c != nil:
		h.State, h.Detail = "corrupt", corruptErr(c).Error()
	case e.ro.Load():
		h.State, h.Detail = "read-only", "started on a full disk: serving reads only until space is freed"
	case e.space.low():
		h.State, h.Detail = "low-disk", "free space is at the margin: puts are refused, reads and deletes work"
	}
	return h
}

// ReadOnly reports whether the engine serves reads only (it started on a
// full disk); replicas then neither tick nor step.
func (e *Engine) ReadOnly() bool { return e.ro.Load() }
