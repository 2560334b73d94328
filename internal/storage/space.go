package storage

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// ErrDiskFull is returned (wrapped in a *DiskFullError) for a write refused
// because the disk has no room for it beyond the free-space margin.
// Nothing was written; retry after space is freed.
var ErrDiskFull = errors.New("storage: disk full")

// DiskFullError says how much room a refused write needed and what there was.
type DiskFullError struct {
	Avail int64 // bytes free now
	Need  int64 // bytes that had to be free: Margin + Headroom + the write's
	// Margin is the free-space margin the write had to leave (for a delete,
	// the part it may not use), and Headroom what flushing the unflushed
	// bytes and running compactions will take.
	Margin, Headroom int64
	ReadOnly         bool // the engine started on a full disk and serves reads only
}

func (e *DiskFullError) Error() string {
	if e.ReadOnly {
		return fmt.Sprintf("%v: the store started on a disk too full to open for writing and is read-only until space is freed (%s free, %s needed)",
			ErrDiskFull, mib(e.Avail), mib(e.Need))
	}
	return fmt.Sprintf("%v: %s free, and this write needs %s (the margin of %s, %s to flush and compact, %s for the write itself); delete records or free disk space, then retry",
		ErrDiskFull, mib(e.Avail), mib(e.Need), mib(e.Margin), mib(e.Headroom), mib(e.Need-e.Margin-e.Headroom))
}

// mib renders a byte count for people.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func (e *DiskFullError) Unwrap() error { return ErrDiskFull }

// WriteKind is how much of the free-space margin a write may use.
type WriteKind int

const (
	// AddsData (puts, appends of a follower's Raft log) must leave the
	// whole margin free, plus room to flush what is unflushed and for the
	// outputs of running compactions.
	AddsData WriteKind = iota
	// Reclaims (deletes, TTL expiry, Raft's votes and empty entries) may
	// use the lower three quarters of the margin: they free space later,
	// or are tiny and needed to keep a shard alive.
	Reclaims
)

// space keeps the engine's free-space account. Writes reserve room before
// they are admitted, so no acknowledged write is the one that fills the
// disk:
//
//	avail = free at the last statfs - bytes admitted since
//	need  = 2 x the write (its WAL record now, its sstable at the flush)
//	floor = margin + unflushed + compaction inputs   (AddsData)
//	      = margin / 4                                (Reclaims)
//	admitted iff avail - need >= floor
//
// statfs runs every pollInterval, after each flush and compaction, and at
// the first admission after staleBytes were admitted on the last reading.
// When the margin left is under twice the unflushed bytes, a flush is
// asked for, so the WAL's bytes are freed before they are needed.
type space struct {
	e   *Engine
	min int64

	mu         sync.Mutex
	free       int64 // -1: the FS cannot tell (MemFS): admit everything
	since      int64
	unflushed  int64
	flushing   int64
	compacting map[int]int64
	compactSum int64
	refused    bool // the last AddsData write was refused (for logging)
	flushAsked bool

	wakeup chan struct{}
	flush  chan struct{}
}

const pollInterval = 250 * time.Millisecond

func newSpace(e *Engine, min int64) *space {
	s := &space{e: e, min: min, free: -1, compacting: make(map[int]int64),
		wakeup: make(chan struct{}, 1), flush: make(chan struct{}, 1)}
	s.poll()
	return s
}

// statfs returns the bytes available to the process, ok false where the
// file system cannot tell.
func (s *space) statfs() (int64, bool) {
	u, err := s.e.cfg.FS.GetDiskUsage(s.e.cfg.Dir)
	if err != nil {
		return 0, false
	}
	return int64(u.AvailBytes), true
}

func (s *space) poll() {
	free, ok := s.statfs()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setFreeLocked(free, ok)
}

// staleBytes bounds how much the engine admits on one reading of the free
// space: past it, the next admission reads it again (a statfs costs about
// a microsecond). Another process filling the disk, or writes that take
// more room than admitted (a leader logs a put, then applies it: two WAL
// records), are then seen within a MiB, not only at the next poll.
const staleBytes = 1 << 20

// setFreeLocked records a reading of the free space (ok false: the file
// system cannot tell).
func (s *space) setFreeLocked(free int64, ok bool) {
	if !ok {
		s.free = -1
		return
	}
	s.free, s.since = free, 0
	// Hysteresis: puts are admitted again (and a replica may lead again)
	// only with a quarter of the margin to spare, so a node at the edge
	// does not flap between refusing and taking puts.
	if s.refused && free-s.floor(AddsData) > max(s.min/4, 1<<20) {
		s.refused = false
		s.e.log.Info("free disk space is above the margin again: writes are admitted", "free_bytes", free, "min_free_bytes", s.min)
	}
}

func (s *space) floor(k WriteKind) int64 {
	if k == Reclaims {
		return s.min / 4
	}
	return s.min + s.unflushed + s.compactSum
}

// admit reserves room for a write of n bytes.
func (s *space) admit(n int64, k WriteKind) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free < 0 {
		return nil
	}
	if s.since >= staleBytes {
		if s.setFreeLocked(s.statfs()); s.free < 0 {
			return nil
		}
	}
	avail, need := s.free-s.since, 2*n
	floor := s.floor(k)
	if k == AddsData && s.refused {
		floor += max(s.min/4, 1<<20) // hysteresis: see poll
	}
	if avail-need < floor {
		if k == AddsData && !s.refused {
			s.refused = true
			s.e.log.Warn("free disk space is below the margin: puts are refused until space is freed",
				"free_bytes", avail, "min_free_bytes", s.min, "unflushed_bytes", s.unflushed, "compaction_bytes", s.compactSum)
		}
		s.askFlush()
		margin := s.min / 4
		if k == AddsData {
			margin = s.min
		}
		return &DiskFullError{Avail: avail, Need: need + floor, Margin: margin, Headroom: floor - margin}
	}
	s.since += n
	s.unflushed += n
	if avail-need-s.min < 2*s.unflushed {
		s.askFlush()
	}
	return nil
}

// low reports whether puts are refused: the last one was (until a poll
// finds a MiB of room again), or a 64 KiB put would be now.
func (s *space) low() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.free >= 0 && (s.refused || s.free-s.since-(128<<10) < s.floor(AddsData))
}

func (s *space) askFlush() {
	if s.flushAsked || s.unflushed == 0 {
		return
	}
	s.flushAsked = true
	select {
	case s.flush <- struct{}{}:
	default:
	}
}

func (s *space) wake() {
	select {
	case s.wakeup <- struct{}{}:
	default:
	}
}

func (s *space) flushBegin() {
	s.mu.Lock()
	s.flushing = s.unflushed
	s.mu.Unlock()
}

func (s *space) flushEnd() {
	s.mu.Lock()
	s.unflushed = max(0, s.unflushed-s.flushing)
	s.flushing, s.flushAsked = 0, false
	s.mu.Unlock()
	s.wake()
}

func (s *space) compactionBegin(info pebble.CompactionInfo) {
	var in int64
	for _, l := range info.Input {
		for _, t := range l.Tables {
			in += int64(t.Size)
		}
	}
	s.mu.Lock()
	s.compacting[info.JobID] = in
	s.compactSum += in
	s.mu.Unlock()
}

func (s *space) compactionEnd(info pebble.CompactionInfo) {
	s.mu.Lock()
	s.compactSum -= s.compacting[info.JobID]
	delete(s.compacting, info.JobID)
	s.mu.Unlock()
	s.wake()
}

// spaceLoop polls free space, flushes when asked, and reopens a read-only
// engine for writing once the disk has room.
func (e *Engine) spaceLoop() {
	defer e.bg.Done()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		case <-e.space.wakeup:
		case <-e.space.flush:
			if !e.ro.Load() {
				if _, err := e.db.Load().AsyncFlush(); err != nil {
					e.log.Warn("flush for space failed", "err", err)
				}
			}
			continue
		}
		e.space.poll()
		if e.ro.Load() {
			if _, _, full := e.tooFullToOpen(); !full {
				if err := e.reopen(); err != nil {
					e.log.Warn("reopening the engine for writing failed; still read-only", "err", err)
				}
			}
		}
	}
}

// Admit reserves room for a write of about n bytes of kind k, or refuses
// it: ErrDiskFull (a *DiskFullError) when the disk has no room, ErrCorrupt
// once corruption was found. Call it before a write is queued.
func (e *Engine) Admit(n int64, k WriteKind) error {
	if c := e.corrupt.Load(); c != nil {
		return fmt.Errorf("%w; this store refuses writes until it is repaired", corruptErr(c))
	}
	if e.ro.Load() {
		need, avail, _ := e.tooFullToOpen()
		return &DiskFullError{Avail: avail, Need: need, ReadOnly: true}
	}
	return e.space.admit(n, k)
}

// HasRoom reports whether n more bytes fit above the quarter of the margin
// that only the WAL's and the MANIFEST's own bookkeeping may use (nothing
// is reserved). A replica checks it before it takes a Ready: entries
// already in its log are applied, and so written again, whatever the disk
// has meanwhile become.
func (e *Engine) HasRoom(n int64) bool {
	s := e.space
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.free < 0 || s.free-s.since-n >= s.min/4
}

// Roomy reports whether the engine takes puts with half the margin to
// spare: a replica takes leadership (or campaigns at full pace) only then,
// so a node hovering at its margin is not handed leadership only to refuse
// the puts that follow.
func (e *Engine) Roomy() bool {
	if e.ro.Load() || e.corrupt.Load() != nil {
		return false
	}
	s := e.space
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.free < 0 || !s.refused && s.free-s.since-s.floor(AddsData) >= max(s.min/2, 1<<20)
}

// LowDisk reports whether puts are being refused for lack of space (or the
// engine is read-only).
func (e *Engine) LowDisk() bool { return e.ro.Load() || e.space.low() }

// reopen replaces the read-only Pebble with a writable one, once space
// returned. Readers wait for the swap (acquire); writes were refused.
func (e *Engine) reopen() error {
	e.swapMu.Lock()
	defer e.swapMu.Unlock()
	ro := e.db.Load()
	e.stateMu.Lock()
	st := e.state
	e.stateMu.Unlock()
	if err := ro.Close(); err != nil {
		return err
	}
	if err := e.openWritable(st, true); err != nil {
		back, rerr := pebble.Open(e.cfg.Dir, e.options(true))
		if rerr != nil {
			e.Fatal(fmt.Errorf("storage: reopening %s read-only after a failed writable open (%v): %w", e.cfg.Dir, err, rerr))
		}
		e.db.Store(back)
		return err
	}
	e.ro.Store(false)
	e.log.Info("the disk has room again: the engine is writable", "dir", e.cfg.Dir)
	return nil
}

// outputWait bounds how long a compaction's or a flush's write waits for
// room before it fails: Pebble retries a failed compaction at once, so
// failing fast would spin.
const outputWait = time.Second

// outputWrite admits n bytes of a compaction's or a flush's output. A
// compaction may use the upper half of the margin; a flush (which frees
// its WAL once done) the upper three quarters; neither the last quarter,
// which the WAL, the MANIFEST and Raft's own state need. Without room it
// waits up to outputWait, then fails the write with ENOSPC; Pebble drops
// the output and tries again later, and the data stays in the WAL.
func (s *space) outputWrite(n int64, flush bool) error {
	floor, what := s.min/2, "a compaction's output would take the disk below half"
	if flush {
		floor, what = s.min/4, "a flush's output would take the disk below a quarter"
	}
	deadline := time.Now().Add(outputWait)
	for {
		s.mu.Lock()
		ok := s.free < 0 || s.free-s.since-n >= floor
		if ok {
			s.since += n
		}
		s.mu.Unlock()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s of the free-space margin (%s free needed): %w", what, mib(floor), syscall.ENOSPC)
		}
		time.Sleep(100 * time.Millisecond) // then look again: a flush or compaction may have freed space
		s.poll()
	}
}
