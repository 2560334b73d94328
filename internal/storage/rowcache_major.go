package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// A major entry of the row cache holds every record under one major path,
// in key order:
//
//	+----------+--------+---------+-----+---------+-----+---------+-----+ ...
//	| uvarint  | major  | uvarint | key | uvarint | rec | uvarint | key | ...
//	| len      | prefix | len     |     | len     |     | len     |     |
//	+----------+--------+---------+-----+---------+-----+---------+-----+ ...
//	                     one record: its whole storage key, its stored bytes
//
// The prefix tells major paths whose hashes collide apart (the entry's key
// is the hash). Bytes that do not parse are a miss.

// majorEntry is a decoded major entry; its slices share the entry's bytes.
type majorEntry struct {
	keys, recs [][]byte
}

// decodeMajor parses b, a major entry, if it is prefix's. It counts the
// chunks first, so a hit makes one allocation for both slices.
func decodeMajor(b, prefix []byte) (*majorEntry, bool) {
	p, rest, ok := nextChunk(b)
	if !ok || !bytes.Equal(p, prefix) {
		return nil, false
	}
	chunks := 0
	for r := rest; len(r) > 0; chunks++ {
		if _, r, ok = nextChunk(r); !ok {
			return nil, false
		}
	}
	if chunks%2 != 0 {
		return nil, false // a key without its record
	}
	n := chunks / 2
	both := make([][]byte, 2*n)
	e := &majorEntry{keys: both[:n], recs: both[n:]}
	for i := range n {
		e.keys[i], rest, _ = nextChunk(rest)
		e.recs[i], rest, _ = nextChunk(rest)
	}
	return e, true
}

// nextChunk splits a uvarint-length-prefixed chunk off b.
func nextChunk(b []byte) (chunk, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, nil, false
	}
	return b[w : w+int(n)], b[w+int(n):], true
}

func appendChunk(b, chunk []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(chunk))), chunk...)
}

// majorEntry returns the row cache's entry for the major span sp, reading
// and caching it on a miss; nil (and no error) if the major path holds too
// much to cache.
func (e *Engine) majorEntry(r pebble.Reader, sp span) (*majorEntry, error) {
	ent, gen, hit := e.rows.getMajor(sp.lower)
	if hit {
		return ent, nil
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: sp.lower, UpperBound: sp.upper})
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	defer it.Close()
	enc := appendChunk(make([]byte, 0, 4096), sp.lower)
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		if enc = appendChunk(appendChunk(enc, it.Key()), v); len(enc) > e.rows.maxMajor {
			return nil, it.Error()
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	e.rows.putMajor(sp.lower, enc, gen)
	ent, _ = decodeMajor(enc, sp.lower)
	return ent, nil
}

// entryIter iterates a major entry's records as a scan's recordIter.
type entryIter struct {
	e *majorEntry
	i int
}

func (x *entryIter) valid() bool                  { return x.i >= 0 && x.i < len(x.e.keys) }
func (x *entryIter) First() bool                  { x.i = 0; return x.valid() }
func (x *entryIter) Last() bool                   { x.i = len(x.e.keys) - 1; return x.valid() }
func (x *entryIter) Next() bool                   { x.i++; return x.valid() }
func (x *entryIter) Prev() bool                   { x.i--; return x.valid() }
func (x *entryIter) Key() []byte                  { return x.e.keys[x.i] }
func (x *entryIter) ValueAndErr() ([]byte, error) { return x.e.recs[x.i], nil }
func (x *entryIter) Error() error                 { return nil }
