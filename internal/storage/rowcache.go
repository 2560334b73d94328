package storage

import (
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/fastcache"
	"github.com/cairndb/cairn/internal/keys"
)

// The row cache keeps stored records in front of Pebble for the two read
// shapes that dominate: a point get and a multi-get of a whole major path
// (RocksDB's row cache, for Cairn's keys). A hit skips Pebble's memtable and
// sstable seeks. The entries live in a fastcache.Cache: its memory is
// outside the Go heap and holds no pointers, so a large cache costs the
// garbage collector nothing (a map of entries on the heap cost more in GC
// than it saved, docs/benchmarks.md). A hit copies the entry out.
//
// Entries:
//
//	get entry    key: the record's storage key      value: the record's stored bytes
//	             ('r' shard hash major 00 02 minor)
//	major entry  key: "M" shard(8) hash(8)          value: see encodeMajor
//
// A major entry is looked up by its major path's hash and carries the whole
// major prefix, so two major paths whose hashes collide only miss.
//
// Stripes. Writers and filling readers meet in the stripe chosen by the
// major path's hash (storage key bytes 9..17), so a record and its major
// path's entry share a stripe. Invariant: once Batch.Commit returns, no
// entry holds bytes older than what that commit wrote. The protocol that
// keeps it:
//
//	writer (Batch.Commit): for each record the batch writes,
//	    before the commit: pending++, drop its get entry and major entry
//	    after the commit:  gen++, drop them again, pending--
//	reader on a miss: note the stripe's gen, read Pebble, then insert
//	    (under the stripe's lock) only if pending == 0 and gen is unchanged
//
// A reader's Pebble read that raced a commit either saw the write or is
// refused at insert (pending or a new gen); an entry inserted before the
// commit is dropped by it. A hit takes no stripe lock: between a commit's
// first drop and its end no entry of its keys can exist, and before the
// first drop the commit is not visible yet. Range deletions and ingestions
// (partition moves, snapshots, dropped shards) touch unknown keys, so they
// do the same for every stripe and empty the cache.
type rowCache struct {
	fc      *fastcache.Cache
	stripes []cacheStripe
	hits    atomic.Int64
	misses  atomic.Int64
}

const (
	rowCacheStripes = 64
	// maxMajorEntry bounds a major entry (fastcache keeps entries under
	// 64 KiB); larger major paths are not cached.
	maxMajorEntry = 60 << 10
)

type cacheStripe struct {
	mu      sync.Mutex
	gen     atomic.Uint64
	pending int
	_       [40]byte // keep stripes' locks on separate cache lines
}

// newRowCache returns a cache of about limit bytes (at least 32 MiB), or
// nil for limit 0.
func newRowCache(limit int64) *rowCache {
	if limit <= 0 {
		return nil
	}
	return &rowCache{fc: fastcache.New(int(limit)), stripes: make([]cacheStripe, rowCacheStripes)}
}

// stripe returns the stripe of a record key or of a major prefix (both begin
// with the 17-byte header).
func (c *rowCache) stripe(sk []byte) *cacheStripe {
	if len(sk) < keys.HeaderLen {
		return &c.stripes[0]
	}
	return &c.stripes[keys.HashOf(sk)%rowCacheStripes]
}

// majorKey is a major entry's key: "M" and the record header.
func majorKey(sk []byte) []byte {
	b := make([]byte, keys.HeaderLen)
	b[0] = 'M'
	copy(b[1:], sk[1:keys.HeaderLen])
	return b
}

// getRecord returns a copy of the cached stored bytes of sk, or the
// stripe's gen to pass to putRecord after reading Pebble.
func (c *rowCache) getRecord(sk []byte) (rec []byte, gen uint64, ok bool) {
	s := c.stripe(sk)
	gen = s.gen.Load() // before the lookup: a miss reads Pebble after it
	if rec, ok := c.fc.HasGet(nil, sk); ok {
		c.hits.Add(1)
		return rec, 0, true
	}
	c.misses.Add(1)
	return nil, gen, false
}

// putRecord caches rec as sk's stored bytes if nothing wrote to the stripe
// since gen was read.
func (c *rowCache) putRecord(sk, rec []byte, gen uint64) {
	c.stripe(sk).add(c.fc, sk, rec, gen)
}

// getMajor returns the cached major entry for prefix (a major prefix), or
// the stripe's gen to pass to putMajor.
func (c *rowCache) getMajor(prefix []byte) (e *majorEntry, gen uint64, ok bool) {
	s := c.stripe(prefix)
	gen = s.gen.Load()
	if b, ok := c.fc.HasGet(nil, majorKey(prefix)); ok {
		if e, ok := decodeMajor(b, prefix); ok {
			c.hits.Add(1)
			return e, 0, true
		}
	}
	c.misses.Add(1)
	return nil, gen, false
}

// putMajor caches e's encoding for prefix.
func (c *rowCache) putMajor(prefix, enc []byte, gen uint64) {
	c.stripe(prefix).add(c.fc, majorKey(prefix), enc, gen)
}

func (s *cacheStripe) add(fc *fastcache.Cache, k, v []byte, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending > 0 || s.gen.Load() != gen {
		return // a write raced the read: its bytes may be stale
	}
	fc.Set(k, v)
}

// touched lists what one batch writes, for begin and end.
type touched struct {
	all   bool // a range deletion or ingestion: every stripe
	items []touchItem
}

// touchItem is one written record: its stripe, the two entries it ends,
// and, for a put, the bytes it stores (set).
type touchItem struct {
	stripe     int
	rec, major []byte
	val        []byte
	set        bool
}

// note adds record key sk (and its major entry) to t, as a put of val if
// set, else as a deletion; keys outside the record space are ignored.
func (t *touched) note(sk, val []byte, set bool) {
	if t.all || len(sk) < keys.HeaderLen || sk[0] != keys.RecordSpace {
		return
	}
	i := int(keys.HashOf(sk) % rowCacheStripes)
	t.items = append(t.items, touchItem{stripe: i, rec: sk, major: majorKey(sk), val: val, set: set})
}

// begin runs before the commit of t's writes.
func (c *rowCache) begin(t *touched) {
	c.each(t, func(s *cacheStripe, it *touchItem) {
		s.pending++
		c.drop(it)
	})
}

// end runs after the commit, committed or not. A committed put's bytes
// are cached (write-through): they are the key's latest, since one key's
// commits are serial (one apply goroutine per shard, and a key belongs to
// one shard), and any reader that read older bytes finds gen changed. The
// puts are walked in batch order, so a key's last write wins.
func (c *rowCache) end(t *touched, committed bool) {
	c.each(t, func(s *cacheStripe, it *touchItem) {
		s.gen.Add(1)
		c.drop(it)
		if committed && it != nil && it.set {
			c.fc.Set(it.rec, it.val)
		}
		s.pending--
	})
}

func (c *rowCache) each(t *touched, f func(s *cacheStripe, it *touchItem)) {
	if t.all {
		for i := range c.stripes {
			s := &c.stripes[i]
			s.mu.Lock()
			f(s, nil)
			s.mu.Unlock()
		}
		return
	}
	for j := range t.items {
		it := &t.items[j]
		s := &c.stripes[it.stripe]
		s.mu.Lock()
		f(s, it)
		s.mu.Unlock()
	}
}

// drop removes it's entries, or every entry when it is nil.
func (c *rowCache) drop(it *touchItem) {
	if it == nil {
		c.fc.Reset()
		return
	}
	c.fc.Del(it.rec)
	c.fc.Del(it.major)
}

// RowCacheStats is the row cache's size and use since the engine opened.
type RowCacheStats struct {
	Bytes, Entries int64
	Hits, Misses   int64
}

func (c *rowCache) stats() RowCacheStats {
	var fs fastcache.Stats
	c.fc.UpdateStats(&fs)
	return RowCacheStats{Bytes: int64(fs.BytesSize), Entries: int64(fs.EntriesCount), Hits: c.hits.Load(), Misses: c.misses.Load()}
}
