package replica

import (
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// exports are the storage exports a leader serves its snapshots from, by
// id (raft_snapshot.go). The latest one (raft's snapCache) stays open while
// idle for a while; any other closes as soon as no send reads it. The loop
// adds and expires; transport goroutines acquire and release; Close closes
// them all, under the sends (whose next read then fails).
type exports struct {
	mu     sync.Mutex
	closed bool
	latest uint64
	byID   map[uint64]*export
}

type export struct {
	x    *storage.Export
	refs int       // sends reading it
	idle time.Time // since when no send reads it
}

// add files x under id as the latest export; the one before closes unless
// a send reads it. It reports false (and closes x) once closed.
func (s *exports) add(id uint64, x *storage.Export) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		x.Close()
		return false
	}
	if s.byID == nil {
		s.byID = make(map[uint64]*export)
	}
	prev := s.latest
	s.byID[id] = &export{x: x, idle: time.Now()}
	s.latest = id
	s.dropIfUnused(prev)
	return true
}

// latestIs reports whether id is the latest export, still open.
func (s *exports) latestIs(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed && s.latest == id && s.byID[id] != nil
}

// acquire returns the export filed under id for a send, or nil if gone.
func (s *exports) acquire(id uint64) *storage.Export {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if s.closed || e == nil {
		return nil
	}
	e.refs++
	return e.x
}

// release ends a send of export id.
func (s *exports) release(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil {
		return
	}
	e.refs--
	e.idle = time.Now()
	if id != s.latest {
		s.dropIfUnused(id)
	}
}

// expire closes the latest export, id, if no send has read it for idle,
// and reports whether it did.
func (s *exports) expire(id uint64, idle time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil || s.latest != id {
		return e == nil
	}
	if e.refs > 0 || time.Since(e.idle) < idle {
		return false
	}
	s.latest = 0
	s.dropIfUnused(id)
	return true
}

// dropIfUnused closes export id unless a send reads it. s.mu is held.
func (s *exports) dropIfUnused(id uint64) {
	if e := s.byID[id]; e != nil && e.refs == 0 {
		e.x.Close()
		delete(s.byID, id)
	}
}

// open returns the number of exports open (tests).
func (s *exports) open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// close closes every export, read or not; sends fail on their next read.
func (s *exports) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, e := range s.byID {
		e.x.Close()
		delete(s.byID, id)
	}
}
