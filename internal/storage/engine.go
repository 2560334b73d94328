package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// Config configures an Engine.
type Config struct {
	// Dir is the directory holding the Pebble files. Required.
	Dir string
	// CacheBytes sizes Pebble's block cache, in bytes. Default 256 MiB.
	CacheBytes int64
	// MemTableBytes sizes each memtable, in bytes. Default 64 MiB.
	MemTableBytes int64
	// MinFreeBytes: writes that add data are refused with ErrDiskFull while
	// the file system has less free space than this, in bytes. Default 64 MiB.
	MinFreeBytes int64
	// Logger receives Pebble's log lines (info as debug). Default slog.Default().
	Logger *slog.Logger
	// FS is the file system the engine's files go through. Default
	// files.Default (the operating system's).
	FS files.FS
}

// DefaultConfig returns the defaults for dir.
func DefaultConfig(dir string) Config {
	return Config{Dir: dir, CacheBytes: 256 << 20, MemTableBytes: 64 << 20, MinFreeBytes: 64 << 20}
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("storage: Dir is required")
	case c.CacheBytes < 1<<20:
		return fmt.Errorf("storage: CacheBytes %d is below 1 MiB", c.CacheBytes)
	case c.MemTableBytes < 1<<20:
		return fmt.Errorf("storage: MemTableBytes %d is below 1 MiB", c.MemTableBytes)
	case c.MinFreeBytes < 0:
		return fmt.Errorf("storage: MinFreeBytes %d is negative", c.MinFreeBytes)
	}
	return nil
}

// Engine is one node's Pebble instance.
type Engine struct {
	cfg     Config
	db      *pebble.DB
	fs      *walFS
	log     *slog.Logger
	lowDisk atomic.Bool
	space   *spaceWatcher
}

// Open opens (creating if needed) the engine in cfg.Dir.
func Open(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FS == nil {
		cfg.FS = files.Default
	}
	if err := cfg.FS.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	e := &Engine{cfg: cfg, fs: &walFS{FS: cfg.FS}, log: cfg.Logger}
	cache := pebble.NewCache(cfg.CacheBytes)
	defer cache.Unref()
	opts := &pebble.Options{
		FS:                 e.fs,
		Cache:              cache,
		MemTableSize:       uint64(cfg.MemTableBytes),
		FormatMajorVersion: pebble.FormatColumnarBlocks,
		Logger:             pebbleLogger{cfg.Logger},
	}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(cfg.Dir, opts)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("storage: %s is locked by another process (is another cairn running on this root?): %w", cfg.Dir, err)
	} else if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", cfg.Dir, err)
	}
	e.db = db
	e.space = startSpaceWatcher(cfg.Dir, cfg.MinFreeBytes, &e.lowDisk, cfg.Logger)
	return e, nil
}

// Close stops background work and closes Pebble. Unflushed NoSync writes may
// be lost only if the process dies before Close returns.
func (e *Engine) Close() error {
	e.space.stop()
	if err := e.db.Flush(); err != nil {
		e.log.Warn("flush on close failed", "err", err)
	}
	return e.db.Close()
}

// LowDisk reports whether free space is below MinFreeBytes.
func (e *Engine) LowDisk() bool { return e.lowDisk.Load() }

// Metrics returns Pebble's metrics, for the metrics endpoint and debugging.
func (e *Engine) Metrics() *pebble.Metrics { return e.db.Metrics() }

// pebbleLogger routes Pebble's logging to slog. Pebble's info lines (WAL
// recovery, compactions) are debug-level for Cairn.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is called by Pebble for unrecoverable errors such as a failed WAL
// fsync. Cairn never retries those: log and exit.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error("fatal storage error: "+fmt.Sprintf(format, args...), "component", "pebble")
	os.Exit(70)
}
