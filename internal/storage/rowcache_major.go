package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

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

// endMajor ends a commit's run of writes under one major entry's key mk
// (under the stripe's lock): a committed run is applied to the cached
// entry, if there is one, so the records a multi-get reads stay cached
// across updates; anything else drops it. This keeps the entry equal to
// the major path's committed records for the same reason a get entry's
// write-through does (rowCache.end): the entry was filled while no commit
// was pending in the stripe, and every commit since has applied its writes
// to it, in commit order, since one major path's commits are serial.
func (c *rowCache) endMajor(mk []byte, run []touchItem, committed bool) {
	if !committed {
		c.fc.Del(mk)
		return
	}
	old, err := c.fc.Get(mk)
	if err != nil {
		return // nothing cached
	}
	if enc, ok := mergeMajor(old, run); ok && len(enc) <= c.maxMajor {
		c.set(mk, enc)
	} else {
		c.fc.Del(mk)
	}
}

// mergeMajor returns the major entry enc with run's writes applied in
// order: a put sets its record's stored bytes, a deletion removes it.
// Writes under another major path (whose hash collides with the entry's)
// do not touch it. ok is false if enc does not parse or a write's bytes
// are unknown (a merge operand): the entry must then be dropped.
func mergeMajor(enc []byte, run []touchItem) (out []byte, ok bool) {
	prefix, _, ok := nextChunk(enc)
	if !ok {
		return nil, false
	}
	e, ok := decodeMajor(enc, prefix)
	if !ok {
		return nil, false
	}
	ks, rs := slices.Clip(e.keys), slices.Clip(e.recs) // they share one array: an insert must not spill into the other
	for i := range run {
		it := &run[i]
		if !bytes.HasPrefix(it.rec, prefix) {
			continue
		}
		j, found := slices.BinarySearchFunc(ks, it.rec, bytes.Compare)
		switch {
		case it.set && found:
			rs[j] = it.val
		case it.set:
			ks, rs = slices.Insert(ks, j, it.rec), slices.Insert(rs, j, it.val)
		case !it.gone:
			return nil, false
		case found:
			ks, rs = slices.Delete(ks, j, j+1), slices.Delete(rs, j, j+1)
		}
	}
	n := len(enc)
	for i := range run {
		n += len(run[i].rec) + len(run[i].val) + 2*binary.MaxVarintLen32
	}
	out = appendChunk(make([]byte, 0, n), prefix)
	for i := range ks {
		out = appendChunk(appendChunk(out, ks[i]), rs[i])
	}
	return out, true
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
