package storage

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// ChunkBytes is the most snapshot data an ExportReader puts in one chunk
// (1 MiB), unless one key/value pair alone is larger: that pair is then a
// chunk of its own (a record is at most 4 MiB of value and 10 KiB of key).
const ChunkBytes = 1 << 20

// ErrExportClosed is returned by an ExportReader (and Export.Size) whose
// Export was closed: the replica that held it closed, or gave it up.
var ErrExportClosed = errors.New("storage: export closed")

// Export is a shard's data at one moment, held open: a Pebble snapshot
// taken when it was made, together with the shard's applied index read
// from that same snapshot, so the data is exactly the shard's state after
// the command at Applied. Any number of ExportReaders stream it, each from
// the start, in chunks of at most ChunkBytes in the snapshot data format
// (snapshot.go), while the engine moves on: no reader holds more than one
// chunk, whatever the shard's size.
//
// While an Export is open Pebble keeps every file it reads (compactions
// cannot free their space): close it as soon as its readers are done.
// Close every Export before the engine. NewReader, Size and Close are safe
// from any goroutine; each ExportReader belongs to one goroutine at a time.
// Close may run while readers stream: their next call fails with
// ErrExportClosed.
type Export struct {
	e       *Engine
	shard   uint64
	spans   []Span
	passes  []pass
	applied uint64

	mu      sync.Mutex
	snap    *pebble.Snapshot // nil once closed
	locked  bool             // holds the engine's swap lock (read-only engine)
	readers map[*ExportReader]struct{}
	size    int64 // -1 until Size has counted
}

// NewExport opens an export of spans (records, their expiry-index entries,
// and other spans of shard's data, as ShardDataSpans lists them) and reads
// shard's applied index (0 if it has none) from the same view. The spans
// must be sorted and disjoint; the data then comes out in key order (all
// spans lie below the expiry space, whose entries come last).
func (e *Engine) NewExport(shard uint64, spans []Span) (*Export, error) {
	db, l := e.acquire()
	snap := db.NewSnapshot()
	x := &Export{e: e, shard: shard, spans: spans, passes: passesOf(spans), snap: snap, locked: l,
		readers: make(map[*ExportReader]struct{}), size: -1}
	applied, _, err := getUint64(snap, shardKey(shard, shardApplied))
	if err != nil {
		x.Close()
		return nil, fmt.Errorf("storage: shard %d applied index: %w", shard, e.readErr(err))
	}
	x.applied = applied
	return x, nil
}

// Shard returns the shard whose applied index the export holds.
func (x *Export) Shard() uint64 { return x.shard }

// Applied returns the shard's applied index in the export's view.
func (x *Export) Applied() uint64 { return x.applied }

// Close releases the snapshot and the readers' iterators; later calls do
// nothing.
func (x *Export) Close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.snap == nil {
		return
	}
	for r := range x.readers {
		r.closeLocked()
	}
	_ = x.snap.Close()
	x.snap = nil
	x.e.release(x.locked)
}

// Size returns the length of the export's data in bytes: the first call
// reads all of it once (holding nothing), later calls return the count.
func (x *Export) Size() (int64, error) {
	x.mu.Lock()
	known := x.size
	x.mu.Unlock()
	if known >= 0 {
		return known, nil
	}
	r, err := x.NewReader()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	for {
		c, err := r.step(func(k, v []byte) int { return framedLen(k, v) })
		n += int64(c)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return 0, err
		}
	}
	x.mu.Lock()
	x.size = n
	x.mu.Unlock()
	return n, nil
}

// WriteTo writes the export's data to w, one chunk at a time, all through
// one buffer: w must not keep what it is given.
func (x *Export) WriteTo(w io.Writer) (int64, error) {
	r, err := x.NewReader()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	var buf []byte
	for {
		c, err := r.nextInto(buf)
		buf = c
		if errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
		m, err := w.Write(c)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
}

// NewReader returns a reader of the export's data from its start.
func (x *Export) NewReader() (*ExportReader, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.snap == nil {
		return nil, fmt.Errorf("shard %d: %w", x.shard, ErrExportClosed)
	}
	it, err := x.snap.NewIter(nil)
	if err != nil {
		return nil, x.e.readErr(err)
	}
	r := &ExportReader{x: x, it: it, next: -1}
	x.readers[r] = struct{}{}
	return r, nil
}

// ExportReader streams an Export's data in chunks.
type ExportReader struct {
	x     *Export
	it    *pebble.Iterator // nil once closed
	next  int              // the pass the iterator is in; -1 before the first
	valid bool             // the iterator is at a key of pass next
	err   error
}

// Next returns the next chunk of the data (a fresh buffer the caller may
// keep) and io.EOF after the last. A chunk holds whole pairs: at most
// ChunkBytes, or one larger pair.
func (r *ExportReader) Next() ([]byte, error) { return r.nextInto(nil) }

// nextInto is Next appending to buf (whose capacity it reuses).
func (r *ExportReader) nextInto(buf []byte) ([]byte, error) {
	buf = buf[:0]
	_, err := r.step(func(k, v []byte) int {
		if buf == nil {
			buf = make([]byte, 0, max(ChunkBytes, framedLen(k, v)))
		}
		buf = appendPair(buf, k, v)
		return framedLen(k, v)
	})
	if errors.Is(err, io.EOF) && len(buf) > 0 {
		return buf, nil
	}
	return buf, err
}

// Close releases the reader's iterator; later calls do nothing.
func (r *ExportReader) Close() {
	r.x.mu.Lock()
	defer r.x.mu.Unlock()
	r.closeLocked()
}

func (r *ExportReader) closeLocked() {
	if r.it == nil {
		return
	}
	_ = r.it.Close()
	r.it = nil
	delete(r.x.readers, r)
	if r.err == nil {
		r.err = fmt.Errorf("shard %d: %w", r.x.shard, ErrExportClosed)
	}
}

// step hands pairs to take, which returns each one's framed length, until
// they add up to ChunkBytes (a pair that would take the total past it is
// left for the next step, unless it is the first). It returns the total,
// and io.EOF once the data is exhausted. It holds the export's lock, so
// Close never pulls the iterator from under it.
func (r *ExportReader) step(take func(k, v []byte) int) (int, error) {
	x := r.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	total := 0
	for {
		if !r.valid {
			if err := r.it.Error(); err != nil {
				r.err = x.e.readErr(err)
				return total, r.err
			}
			if r.next+1 >= len(x.passes) {
				return total, io.EOF
			}
			r.next++
			p := x.passes[r.next]
			r.it.SetBounds(p.lo, p.hi)
			r.valid = r.it.First()
			continue
		}
		k := r.it.Key()
		if f := x.passes[r.next].keep; f != nil && !f(x.spans, k) {
			r.valid = r.it.Next()
			continue
		}
		v, err := r.it.ValueAndErr()
		if err != nil {
			r.err = x.e.readErr(err)
			return total, r.err
		}
		if total > 0 && total+framedLen(k, v) > ChunkBytes {
			return total, nil
		}
		total += take(k, v)
		r.valid = r.it.Next()
	}
}

// pass is one key range an export reads, and which of its keys it keeps
// (nil: all).
type pass struct {
	lo, hi []byte
	keep   func(spans []Span, k []byte) bool
}

// passesOf lists the ranges that hold the data of spans: the spans
// themselves, then the expiry-index entries of the records in them (see
// expiryIn).
func passesOf(spans []Span) []pass {
	var out []pass
	for _, s := range spans {
		out = append(out, pass{lo: s.Start, hi: s.End})
	}
	for _, x := range expiryRanges(spans) {
		out = append(out, pass{lo: x.Start, hi: x.End, keep: expiryInSpans})
	}
	return out
}

// expiryInSpans reports whether expiry-index entry k indexes a record in
// spans.
func expiryInSpans(spans []Span, k []byte) bool {
	return len(k) > expiryHeaderLen && inSpans(spans, k[expiryHeaderLen:])
}
