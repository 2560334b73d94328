package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// ErrCorrupt marks data that failed a check: a block or record checksum,
// bytes that do not decode, a log damaged in its middle, files missing or
// short, or an engine behind its checkpoint. It is never retried: the same
// read fails the same way. The error names the file where it is known.
// (Declared in record.go.)

// markCorrupt records corruption found while running. The first report
// wins: it is written to the state file, writes are refused from then on,
// and Config.OnCorruption is called once. It returns the error to give the
// caller that found it.
func (e *Engine) markCorrupt(file, detail string) error {
	c := &Corruption{Time: time.Now().UTC(), File: file, Detail: detail}
	if e.corrupt.CompareAndSwap(nil, c) {
		e.log.Error("storage corruption found: this engine refuses writes from now on", "file", file, "detail", detail)
		e.stateMu.Lock()
		e.state.Corrupt = c
		if err := e.writeStateLocked(); err != nil {
			e.log.Error("recording the corruption in the state file failed", "err", err)
		}
		e.stateMu.Unlock()
		if fn := e.cfg.OnCorruption; fn != nil {
			go fn(corruptErr(c))
		}
	}
	return corruptErr(c)
}

// CorruptionError is the error of corruption found while running: it
// wraps ErrCorrupt and names the file (when known) and what is wrong.
type CorruptionError struct{ Corruption }

func (e *CorruptionError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("%v: %s: %s", ErrCorrupt, e.File, e.Detail)
	}
	return fmt.Sprintf("%v: %s", ErrCorrupt, e.Detail)
}

func (e *CorruptionError) Unwrap() error { return ErrCorrupt }

func corruptErr(c *Corruption) error { return &CorruptionError{*c} }

// Corrupt returns the corruption found while running, or nil.
func (e *Engine) Corrupt() *Corruption { return e.corrupt.Load() }

// Heals reports whether the engine's owner handles corruption found while
// running (Config.OnCorruption is set): a write refused for it is then
// that handler's business, not a fatal error.
func (e *Engine) Heals() bool { return e.cfg.OnCorruption != nil }

// readErr passes a read's error on, marking the engine corrupt when Pebble
// found corruption (a block checksum, say).
func (e *Engine) readErr(err error) error {
	if err == nil || !pebble.IsCorruptionError(err) {
		return err
	}
	if c := e.corrupt.Load(); c != nil {
		return corruptErr(c)
	}
	return e.markCorrupt(tableIn(err.Error()), pebbleDetail(err))
}

// tableIn finds the first sstable name (NNNNNN.sst) in a message, or "".
func tableIn(msg string) string {
	i := strings.Index(msg, ".sst")
	if i < 6 {
		return ""
	}
	j := i
	for j > 0 && msg[j-1] >= '0' && msg[j-1] <= '9' {
		j--
	}
	if i-j < 6 {
		return ""
	}
	return msg[j : i+4]
}

// Fatal records err as the engine's fault in the state file (with the
// file, operation and errno of the last failed write or fsync) and calls
// Config.Fatal. Replicas call it for a failed commit; Pebble's fatal log
// calls it for a failed WAL or MANIFEST write or sync.
func (e *Engine) Fatal(err error) {
	e.fatalMu.Lock() // the first fatal error is the one recorded; others wait
	f := e.recordFault(err)
	e.cfg.Fatal(errors.New(f.Error))
}

// recordFault writes err as the engine's fault into the state file (the
// first one recorded stays) and returns the fault recorded.
func (e *Engine) recordFault(err error) Fault {
	f := Fault{Time: time.Now().UTC(), Error: err.Error()}
	var io *IOError
	if !errors.As(err, &io) {
		io = e.io.last.Load()
	}
	if io != nil {
		f.Op, f.File, f.Errno = io.Op, io.Path, Errno(io.Err)
		if !strings.Contains(f.Error, io.Path) {
			f.Error += " (last failed file operation: " + io.Error() + ")"
		}
	}
	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	if e.state.Fault != nil {
		return *e.state.Fault
	}
	e.state.Fault = &f
	if werr := e.writeStateLocked(); werr != nil {
		e.log.Error("recording the storage fault in the state file failed", "err", werr)
	}
	return f
}

// fatalOnPanic turns a panic inside Pebble's write path (it panics when it
// cannot create the next WAL, say) into Fatal, so the fault is recorded
// and named like any failed write. Deferred by the engine's write calls.
func (e *Engine) fatalOnPanic() {
	r := recover()
	if r == nil {
		return
	}
	err, ok := r.(error)
	if !ok {
		err = fmt.Errorf("%v", r)
	}
	e.Fatal(fmt.Errorf("storage: write failed: %w", err))
}

// recheck verifies, at open, a file that an earlier run found corrupt: the
// engine is refused while it is still bad.
func (e *Engine) recheck(ro *pebble.DB, c *Corruption) error {
	levels, err := ro.SSTables()
	if err != nil {
		return e.refuse("listing its sstables: %v", err)
	}
	for _, tables := range levels {
		for _, t := range tables {
			name := fmt.Sprintf("%06d.sst", uint64(t.BackingSSTNum))
			if c.File != "" && !strings.HasSuffix(c.File, name) {
				continue
			}
			if err := e.verifyTable(context.Background(), name, nil, nil); err != nil {
				return e.refuse("%s, found corrupt at %s, is still corrupt: %v", name, c.Time.Format(time.RFC3339), err)
			}
		}
	}
	e.log.Warn("a file found corrupt by an earlier run reads correctly now (or is gone); opening", "file", c.File, "detail", c.Detail)
	return nil
}

// events is the engine's Pebble event listener: corruption, and the flush
// and compaction bookkeeping of space.go.
func (e *Engine) events() *pebble.EventListener {
	l := &pebble.EventListener{
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			e.markCorrupt(info.Path, fmt.Sprint(info.Details))
		},
		BackgroundError: func(err error) {
			e.log.Warn("background storage error (retried)", "err", err)
			e.space.wake()
		},
		FlushBegin:      func(pebble.FlushInfo) { e.space.flushBegin() },
		FlushEnd:        func(pebble.FlushInfo) { e.space.flushEnd() },
		CompactionBegin: func(info pebble.CompactionInfo) { e.space.compactionBegin(info) },
		CompactionEnd:   func(info pebble.CompactionInfo) { e.space.compactionEnd(info) },
	}
	l.EnsureDefaults(nil)
	return l
}
