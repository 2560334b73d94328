package storage

import (
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/coocood/freecache"
)

// The row cache keeps stored records in front of Pebble for the two read
// shapes that dominate: a point get and a multi-get of a whole major path
// (RocksDB's row cache, for Cairn's keys). A hit skips Pebble's memtable and
// sstable seeks. The entries live in a freecache.Cache: its ring buffers
// and index hold no pointers, so a large cache costs the garbage collector
// nothing to scan (a map of entries on the heap cost more in GC than it
// saved: docs/design/20261127_row_cache.md; its size counts in the heap,
// so the engine raises the memory limit by it: rowcache_mem.go), and a put
// no longer than the entry it replaces overwrites it in place, so updates
// leave no dead copies behind to push live entries out. A hit copies the
// entry out. Entries come from reads that missed and from commits
// (write-through, for a put that is its batch's only write under its major
// path; see end).
//
//	get entry    key: the record's storage key      value: the record's stored bytes
//	             ('r' shard hash major 00 02 minor)
//	major entry  key: "M" shard(8) hash(8)          value: rowcache_major.go
//
// A major entry is looked up by its major path's hash and carries the whole
// major prefix, so two major paths whose hashes collide only miss.
//
// Stripes. Commits and readers meet in the stripe chosen by the major
// path's hash (storage key bytes 9..17), so a record and its major path's
// entry share a stripe. Invariant: a read never returns bytes older than
// those of a commit that became visible before the read started. The
// protocol that keeps it (the design doc argues it):
//
//	commit:  before: pending++ in each stripe it writes
//	         after, under the stripe's lock: gen++, replace the get entry
//	         (a committed put) or drop it, apply the writes to the major
//	         entry (a committed batch of known puts and deletions; see
//	         mergeMajor) or drop it, pending--
//	reader:  g := gen; look up; a hit counts only if the stripe is quiet
//	         (pending == 0 and gen == g); on a miss read Pebble and insert,
//	         under the stripe's lock, only if the stripe is still quiet for g
//
// Range deletions and ingestions (partition moves, snapshots, dropped
// shards) write unknown keys, so they do the same for every stripe and
// empty the cache.
type rowCache struct {
	fc      *freecache.Cache
	stripes []cacheStripe
	// maxEntry bounds an entry's key and value together: freecache refuses
	// an entry above a quarter of its segment (the cache's 256th part), so
	// a larger put must drop the old entry instead. maxMajor bounds a major
	// entry's value; larger major paths are not cached.
	maxEntry, maxMajor int
	release            func() // gives the cache's bytes back to the memory limit (rowcache_mem.go)
	hits               atomic.Int64
	misses             atomic.Int64
}

const (
	rowCacheStripes = 64
	// freecache's entry header, and its number of segments.
	fcHeader   = 24
	fcSegments = 256
	// maxEntryBytes and maxMajorBytes are maxEntry and maxMajor in a cache
	// of 64 MiB or more (segments of 256 KiB); a smaller one caches smaller
	// entries only.
	maxEntryBytes = 64<<10 - fcHeader
	maxMajorBytes = 60 << 10
)

type cacheStripe struct {
	mu      sync.Mutex // orders a commit's end against fills
	gen     atomic.Uint64
	pending atomic.Int64
	// majors and gets are set (under mu) once a major entry or a get entry
	// is cached in the stripe, and cleared when the cache empties: until
	// then a write has no entry of that kind to replace or drop.
	majors, gets bool
	_            [32]byte // keep stripes' locks on separate cache lines
}

// quiet reports whether a hit read after gen was g may be used: no commit
// in the stripe is in flight, and none ended since.
func (s *cacheStripe) quiet(g uint64) bool {
	return s.pending.Load() == 0 && s.gen.Load() == g
}

// newRowCache returns a cache of about limit bytes (at least 32 MiB), or
// nil for limit 0.
func newRowCache(limit int64) *rowCache {
	if limit <= 0 {
		return nil
	}
	fit := int(limit/fcSegments/4) - fcHeader // freecache's largest key and value
	return &rowCache{fc: freecache.NewCache(int(limit)), stripes: make([]cacheStripe, rowCacheStripes),
		maxEntry: min(maxEntryBytes, fit), maxMajor: min(maxMajorBytes, fit-keys.HeaderLen),
		release: reserveHeap(limit)}
}

// close gives the cache's memory back (Engine.Close); nil-safe. The cache
// must not be used after.
func (c *rowCache) close() {
	if c != nil {
		c.release()
	}
}

// stripe returns the stripe of a record key or of a major prefix (both begin
// with the 17-byte header).
func (c *rowCache) stripe(sk []byte) *cacheStripe {
	if len(sk) < keys.HeaderLen {
		return &c.stripes[0]
	}
	return &c.stripes[keys.HashOf(sk)%rowCacheStripes]
}

// setMajorKey sets mk to the key of sk's major entry: "M" and the rest of
// the record header.
func setMajorKey(mk *[keys.HeaderLen]byte, sk []byte) {
	mk[0] = 'M'
	copy(mk[1:], sk[1:keys.HeaderLen])
}

// getRecord returns a copy of the cached stored bytes of sk, or the
// stripe's gen to pass to putRecord after reading Pebble.
func (c *rowCache) getRecord(sk []byte) (rec []byte, gen uint64, ok bool) {
	s := c.stripe(sk)
	gen = s.gen.Load() // before the lookup: a miss reads Pebble after it
	if rec, err := c.fc.Get(sk); err == nil && s.quiet(gen) {
		c.hits.Add(1)
		return rec, 0, true
	}
	c.misses.Add(1)
	return nil, gen, false
}

// putRecord caches rec as sk's stored bytes if nothing wrote to the stripe
// since gen was read.
func (c *rowCache) putRecord(sk, rec []byte, gen uint64) {
	c.stripe(sk).add(c, sk, rec, gen, false)
}

// getMajor returns the cached major entry for prefix (a major prefix), or
// the stripe's gen to pass to putMajor.
func (c *rowCache) getMajor(prefix []byte) (e *majorEntry, gen uint64, ok bool) {
	s := c.stripe(prefix)
	gen = s.gen.Load()
	var mk [keys.HeaderLen]byte
	setMajorKey(&mk, prefix)
	if b, err := c.fc.Get(mk[:]); err == nil && s.quiet(gen) {
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
	var mk [keys.HeaderLen]byte
	setMajorKey(&mk, prefix)
	c.stripe(prefix).add(c, mk[:], enc, gen, true)
}

func (s *cacheStripe) add(c *rowCache, k, v []byte, gen uint64, major bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.quiet(gen) {
		return // a write raced the read: its bytes may be stale
	}
	s.majors = s.majors || major
	s.gets = s.gets || !major
	c.set(k, v)
}

// set caches v under k, or drops k's entry if freecache refuses v (too
// large): an old entry must never outlive a write it missed.
func (c *rowCache) set(k, v []byte) {
	if c.fc.Set(k, v, 0) != nil {
		c.fc.Del(k)
	}
}

// has reports whether k has an entry, without copying it.
func (c *rowCache) has(k []byte) bool {
	_, err := c.fc.TTL(k)
	return err == nil
}

// touched lists what one batch writes, for begin and end.
type touched struct {
	all   bool // a range deletion or ingestion: every stripe
	items []touchItem
	buf   [2]touchItem // items' first home: most batches write one or two records
}

// touchItem is one written record: its stripe, the two entries it ends,
// and, for a put, the bytes it stores (set); gone marks a deletion. A write
// that is neither (a merge operand) leaves the record's bytes unknown.
type touchItem struct {
	stripe    int
	rec       []byte
	major     [keys.HeaderLen]byte
	val       []byte
	set, gone bool
}

// How a batch wrote a record, for note.
type wrote int

const (
	wrotePut     wrote = iota // val is its stored bytes
	wroteDelete               // it is gone
	wroteUnknown              // written, bytes unknown
)

// note adds record key sk (and its major entry) to t, written as how says;
// keys outside the record space are ignored.
func (t *touched) note(sk, val []byte, how wrote) {
	if t.all || len(sk) < keys.HeaderLen || sk[0] != keys.RecordSpace {
		return
	}
	i := int(keys.HashOf(sk) % rowCacheStripes)
	t.items = append(t.items, touchItem{stripe: i, rec: sk, val: val, set: how == wrotePut, gone: how == wroteDelete})
	setMajorKey(&t.items[len(t.items)-1].major, sk)
}

// run returns the end of the run of items from j that share item j's
// major path (a batch lists a command's writes together), so they share a
// stripe and a major entry.
func (t *touched) run(j int) int {
	k := j + 1
	for k < len(t.items) && t.items[k].major == t.items[j].major {
		k++
	}
	return k
}

// begin runs before the commit of t's writes: from now until end, hits in
// the stripes it touches are refused and no fill is admitted.
func (c *rowCache) begin(t *touched) {
	if t.all {
		for i := range c.stripes {
			c.stripes[i].pending.Add(1)
		}
		return
	}
	for j := 0; j < len(t.items); {
		k := t.run(j)
		c.stripes[t.items[j].stripe].pending.Add(int64(k - j))
		j = k
	}
}

// end runs after the commit, committed or not. A committed put's bytes
// replace the key's entry (write-through): they are the key's latest, since
// one key's commits are serial (one apply goroutine per shard, and a key
// belongs to one shard), and a fill of older bytes either came before (and
// is replaced) or finds gen changed. A put that is not cached yet is
// admitted only if it is the batch's only write under its major path (a
// value read back by a get); puts of several records of one major path (a
// record stored as fields) are read back by a multi-get, which the major
// entry serves, so admitting each would cost a Set and serve nothing. The
// puts are walked in batch order, so a key's last write wins. gen moves
// before pending falls, so a hit that sees the stripe quiet again also sees
// the new gen.
func (c *rowCache) end(t *touched, committed bool) {
	if t.all {
		c.endAll()
		return
	}
	for j := 0; j < len(t.items); {
		k := t.run(j)
		s := &c.stripes[t.items[j].stripe]
		s.mu.Lock()
		s.gen.Add(1)
		if s.majors {
			c.endMajor(t.items[j].major[:], t.items[j:k], committed)
		}
		for i := j; i < k; i++ {
			c.endItem(s, &t.items[i], committed, k-j == 1)
		}
		s.pending.Add(int64(j - k))
		s.mu.Unlock()
		j = k
	}
}

// endItem replaces or drops its get entry after its commit, admitting an
// uncached put only if admit (under the stripe's lock).
func (c *rowCache) endItem(s *cacheStripe, it *touchItem, committed, admit bool) {
	put := committed && it.set && len(it.rec)+len(it.val) <= c.maxEntry
	switch {
	case put && admit:
		s.gets = true
		c.set(it.rec, it.val)
	case !s.gets || !c.has(it.rec):
		// nothing cached: nothing to replace or drop
	case put:
		c.set(it.rec, it.val)
	default:
		c.fc.Del(it.rec)
	}
}

// endAll ends a write of unknown keys: every entry goes.
func (c *rowCache) endAll() {
	for i := range c.stripes {
		c.stripes[i].mu.Lock()
		c.stripes[i].gen.Add(1)
		c.stripes[i].majors, c.stripes[i].gets = false, false
	}
	c.fc.Clear()
	for i := range c.stripes {
		c.stripes[i].pending.Add(-1)
		c.stripes[i].mu.Unlock()
	}
}

// rowCacheStats is the row cache's entries and use since the engine opened.
type rowCacheStats struct {
	Entries      int64
	Hits, Misses int64
}

func (c *rowCache) stats() rowCacheStats {
	return rowCacheStats{Entries: c.fc.EntryCount(), Hits: c.hits.Load(), Misses: c.misses.Load()}
}
