package storage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cockroachdb/pebble/v2"
)

// ErrBadResume is returned (wrapped) for a resume token that does not belong
// to the scan it is passed to.
var ErrBadResume = errors.New("storage: resume token does not match this scan")

// ErrTooLarge is returned (wrapped) when an unpaged read would return more
// than Scan.MaxBytes; use a paged read instead.
var ErrTooLarge = errors.New("storage: result too large")

// Get returns the live record for k at nowMs in lite's shard (0).
func (e *Engine) Get(k keys.Key, nowMs int64) (Record, bool, error) {
	return e.GetIn(0, k, nowMs)
}

// GetIn returns the live record for k at nowMs in shard's records.
func (e *Engine) GetIn(shard uint64, k keys.Key, nowMs int64) (Record, bool, error) {
	db, l := e.acquire()
	defer e.release(l)
	sk := keys.Encode(shard, k)
	var gen uint64
	if e.rows != nil {
		rec, g, hit := e.rows.getRecord(sk)
		if hit {
			return liveRecord(rec, k, nowMs, true)
		}
		gen = g
	}
	raw, closer, err := db.Get(sk)
	if errors.Is(err, pebble.ErrNotFound) {
		return Record{}, false, nil
	} else if err != nil {
		return Record{}, false, fmt.Errorf("storage: get: %w", e.readErr(err))
	}
	defer closer.Close()
	if e.rows != nil {
		e.rows.putRecord(sk, raw, gen)
	}
	return liveRecord(raw, k, nowMs, false)
}

// liveRecord decodes stored bytes raw of k into a Record, or reports it
// absent if it expired by nowMs. The Record keeps raw's bytes if shared
// (raw is this read's own copy out of the row cache), else copies them
// (raw is Pebble's, valid only until its closer runs).
func liveRecord(raw []byte, k keys.Key, nowMs int64, shared bool) (Record, bool, error) {
	v, err := decodeRecord(raw)
	if err != nil {
		return Record{}, false, err
	}
	if !liveAt(v.expMs, nowMs) {
		return Record{}, false, nil
	}
	if shared {
		return v.share(k, true), true, nil
	}
	return v.clone(k, true), true, nil
}

// Scan describes a multi-get or a store scan.
type Scan struct {
	// Parent is, for MultiGet, a complete major path and an optional minor
	// path; for StoreScan, an optional partial major path (Minor empty).
	Parent keys.Key
	// Range restricts the component right after Parent (nil: all).
	Range *keys.Range
	// Depth selects parent, children and/or descendants. Required.
	Depth keys.Depth
	// Reverse iterates in descending key order (MultiGet only).
	Reverse bool
	// KeysOnly leaves Record.Value nil.
	KeysOnly bool
	// Limit bounds the records returned; 0 means no bound.
	Limit int
	// MaxScanned bounds the keys visited by one call; 0 means no bound. A
	// call that stops on it returns a resume token, maybe with no records.
	MaxScanned int
	// MaxBytes bounds the keys and values returned. When Limit is 0 it is an
	// error (ErrTooLarge) to exceed it; otherwise the page ends early.
	MaxBytes int
	// Resume continues after the key a previous call returned as resume.
	Resume []byte
	// Shard is whose records are read (0: lite's).
	Shard uint64
	// Spans restricts a store scan to these record spans (a shard's
	// partitions), in order; nil means all of Shard's records.
	Spans []Span
}

// MultiGet reads records under one complete major path, in key order.
func (e *Engine) MultiGet(s Scan, nowMs int64) ([]Record, []byte, error) {
	db, l := e.acquire()
	defer e.release(l)
	sp := multiGetSpan(s.Shard, s.Parent)
	if e.rows != nil && s.Resume == nil && len(s.Parent.Minor) == 0 {
		ent, err := e.majorEntry(db, sp)
		if err != nil {
			return nil, nil, e.readErr(err)
		}
		if ent != nil {
			return scanIter(&entryIter{e: ent, i: -1}, s, nowMs, multiGetMatcher(s))
		}
	}
	recs, resume, err := scan(db, s, nowMs, sp, multiGetMatcher(s))
	return recs, resume, e.readErr(err)
}

// multiGetDecoder decodes the keys of a multi-get's span: every one starts
// with the parent's major prefix, so only the minor path is decoded and the
// major path is the parent's (keys.DecodeMinor).
func multiGetDecoder(s Scan) decoder {
	n := len(keys.MajorPrefix(s.Shard, s.Parent.Major))
	major := s.Parent.Major
	return func(sk []byte) (keys.Key, error) { return keys.DecodeMinor(sk, n, major) }
}

// StoreScan reads records across the whole store or under a partial major
// path, in storage (hash) order.
func (e *Engine) StoreScan(s Scan, nowMs int64) ([]Record, []byte, error) {
	s.Reverse = false
	spans := s.Spans
	if spans == nil {
		lo, hi := keys.ShardSpan(s.Shard)
		spans = []Span{{lo, hi}}
	}
	first := 0
	if s.Resume != nil {
		first = slices.IndexFunc(spans, func(sp Span) bool { return sp.contains(s.Resume) })
		if first < 0 {
			return nil, nil, ErrBadResume
		}
	}
	db, l := e.acquire()
	defer e.release(l)
	var out []Record
	for i := first; i < len(spans); i++ {
		page := s
		if i > first {
			page.Resume = nil
		}
		if page.Limit > 0 {
			page.Limit -= len(out)
		}
		recs, resume, err := scan(db, page, nowMs, span{spans[i].Start, spans[i].End}, storeMatcher(s))
		if err != nil {
			return nil, nil, e.readErr(err)
		}
		out = append(out, recs...)
		if resume != nil {
			return out, resume, nil
		}
		if s.Limit > 0 && len(out) >= s.Limit && i+1 < len(spans) {
			// Full exactly at a span's end: resume at the next span's start.
			return out, spans[i+1].Start, nil
		}
	}
	return out, nil, nil
}

type span struct{ lower, upper []byte }

func multiGetSpan(shard uint64, parent keys.Key) span {
	p := keys.AppendMinor(keys.MajorPrefix(shard, parent.Major), parent.Minor)
	return span{p, prefixEnd(p)}
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// A matcher decodes a scan's keys and selects the records it returns.
type matcher struct {
	dec   decoder
	match func(k keys.Key) bool
}

type decoder func(sk []byte) (keys.Key, error)

// multiGetMatcher selects by (Parent, Range, Depth). Every key of the span
// has the parent's major path, so matching the minor paths is matching the
// whole paths, without building them.
func multiGetMatcher(s Scan) matcher {
	parent := s.Parent.Minor
	return matcher{dec: multiGetDecoder(s), match: func(k keys.Key) bool { return keys.Match(parent, k.Minor, s.Range, s.Depth) }}
}

// storeMatcher selects records whose major path extends Parent.Major. A
// range applies to the major component right after the parent, so records
// whose major path is exactly the parent fall outside any non-full range.
func storeMatcher(s Scan) matcher {
	parent := s.Parent.Major
	return matcher{dec: keys.Decode, match: func(k keys.Key) bool {
		if len(k.Major) < len(parent) || (!s.Range.IsFull() && len(k.Major) == len(parent)) {
			return false
		}
		return keys.Match(parent, k.Path(), s.Range, s.Depth)
	}}
}

func scan(r pebble.Reader, s Scan, nowMs int64, sp span, match matcher) ([]Record, []byte, error) {
	it, err := openScan(r, s, sp)
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	return scanIter(it, s, nowMs, match)
}

// recordIter is what a scan reads: a Pebble iterator, or a row cache entry
// (entryIter).
type recordIter interface {
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	Key() []byte
	ValueAndErr() ([]byte, error)
	Error() error
}

// scanIter runs scan s over it, which is already bounded to s's span.
func scanIter(it recordIter, s Scan, nowMs int64, match matcher) ([]Record, []byte, error) {
	first, next := it.First, it.Next
	if s.Reverse {
		first, next = it.Last, it.Prev
	}
	var out []Record
	if s.Limit > 0 {
		out = make([]Record, 0, min(s.Limit, 16))
	}
	size, scanned := 0, 0
	for ok := first(); ok; ok = next() {
		sk := it.Key()
		scanned++
		rec, ok, err := readMatch(it, sk, nowMs, match, !s.KeysOnly)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			out = append(out, rec)
			size += len(sk) + len(rec.Value)
			if s.MaxBytes > 0 && size > s.MaxBytes && s.Limit == 0 {
				return nil, nil, fmt.Errorf("%w: over %d bytes; read it in pages (an iterator)", ErrTooLarge, s.MaxBytes)
			}
		}
		full := s.Limit > 0 && (len(out) >= s.Limit || (s.MaxBytes > 0 && size >= s.MaxBytes))
		if full || (s.MaxScanned > 0 && scanned >= s.MaxScanned) {
			last := bytes.Clone(sk)
			if more := next(); !more {
				return out, nil, it.Error() // nothing left: no resume token
			}
			return out, last, nil
		}
	}
	return out, nil, it.Error()
}

// openScan opens an iterator over sp, narrowed by the resume token: the
// token is the last key a previous page consumed, and this page starts
// strictly after it (before it, in reverse).
func openScan(r pebble.Reader, s Scan, sp span) (*pebble.Iterator, error) {
	lower, upper := sp.lower, sp.upper
	if s.Resume != nil {
		if bytes.Compare(s.Resume, lower) < 0 || (upper != nil && bytes.Compare(s.Resume, upper) >= 0) {
			return nil, ErrBadResume
		}
		if s.Reverse {
			upper = s.Resume
		} else {
			lower = append(bytes.Clone(s.Resume), 0)
		}
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return it, nil
}

// readMatch decodes the iterator's current record if its key matches and it
// is live at nowMs.
func readMatch(it recordIter, sk []byte, nowMs int64, match matcher, withValue bool) (Record, bool, error) {
	k, err := match.dec(sk)
	if err != nil {
		return Record{}, false, err
	}
	if !match.match(k) {
		return Record{}, false, nil
	}
	raw, err := it.ValueAndErr()
	if err != nil {
		return Record{}, false, fmt.Errorf("storage: %w", err)
	}
	v, err := decodeRecord(raw)
	if err != nil || !liveAt(v.expMs, nowMs) {
		return Record{}, false, err
	}
	if _, shared := it.(*entryIter); shared {
		return v.share(k, withValue), true, nil
	}
	return v.clone(k, withValue), true, nil
}
