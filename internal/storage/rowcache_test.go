package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// rowCacheEngine opens an engine with a row cache of limit bytes (0: off).
func rowCacheEngine(t testing.TB, limit int64) *Engine {
	t.Helper()
	cfg := DefaultConfig(t.TempDir())
	cfg.CacheBytes, cfg.MinFreeBytes, cfg.RowCacheBytes = 8<<20, 0, limit
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// TestRowCacheMatchesPebble applies one random stream of writes to an
// engine with a row cache and to one without, and requires every read to
// agree.
func TestRowCacheMatchesPebble(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	cached, plain := rowCacheEngine(t, MinRowCacheBytes), rowCacheEngine(t, 0)
	apps := []*applier{{t: t, e: cached}, {t: t, e: plain}}
	key := func() string { return fmt.Sprintf("/m%d/-/n%d", rng.IntN(6), rng.IntN(5)) }
	for step := range 3000 {
		now := int64(1_000_000 + step)
		var body any
		switch r := rng.IntN(10); {
		case r < 5:
			val := strconv.Itoa(step)
			if rng.IntN(20) == 0 { // too large for a cache entry
				val += strings.Repeat("x", 70<<10)
			}
			op := putOp(key(), val, cairnpb.Condition_CONDITION_UNSPECIFIED, nil)
			if rng.IntN(4) == 0 {
				op.GetPut().TtlMs = int64(rng.IntN(20))
			}
			body = []*cairnpb.Operation{op}
		case r < 7:
			body = []*cairnpb.Operation{delOp(key())}
		case r < 8:
			body = &commandpb.MultiDelete{Parent: pbKey(fmt.Sprintf("/m%d", rng.IntN(6))), Depth: cairnpb.Depth_DEPTH_PARENT_AND_DESCENDANTS}
		case r < 9:
			rangeDelete(t, apps, rng.IntN(6))
			continue
		default:
			compareReads(t, apps, rng, now)
			continue
		}
		bodies := []any{body}
		for rng.IntN(3) == 0 { // more commands in the same batch, reading its writes
			bodies = append(bodies, []*cairnpb.Operation{putOp(key(), "g"+strconv.Itoa(step), cairnpb.Condition_CONDITION_IF_PRESENT, nil)})
		}
		var got [2]string
		for i, a := range apps {
			got[i] = fmt.Sprint(applyGroup(t, a, now, bodies))
		}
		if got[0] != got[1] {
			t.Fatalf("step %d: results differ: cached %s, Pebble %s", step, got[0], got[1])
		}
		compareReads(t, apps, rng, now)
	}
	if st := cached.rows.stats(); st.Hits == 0 {
		t.Fatalf("the row cache served no read: %+v", st)
	}
}

// applyGroup applies bodies as consecutive commands in one batch, and
// returns their results.
func applyGroup(t *testing.T, a *applier, now int64, bodies []any) []string {
	t.Helper()
	b := a.e.NewBatch(testOrigin)
	defer b.Close()
	var out []string
	for _, body := range bodies {
		a.next++
		r := b.Apply(a.next, commandOf(now, body))
		out = append(out, fmt.Sprint(r.Ops, r.Aborted, r.Deleted, r.Err))
	}
	if err := b.Commit(NoSync); err != nil {
		t.Fatal(err)
	}
	return out
}

// rangeDelete deletes major path /m{i}'s records with a range deletion in
// both engines' batches, as a partition move's clear does.
func rangeDelete(t *testing.T, apps []*applier, i int) {
	t.Helper()
	p := keys.MajorPrefix(0, []string{fmt.Sprintf("m%d", i)})
	for _, a := range apps {
		b := a.e.NewBatch(testOrigin)
		if err := b.b.DeleteRange(p, prefixEnd(p), nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
}

func compareReads(t *testing.T, apps []*applier, rng *rand.Rand, now int64) {
	t.Helper()
	for range 3 {
		k := keys.New([]string{fmt.Sprintf("m%d", rng.IntN(6))}, fmt.Sprintf("n%d", rng.IntN(5)))
		var got [2]string
		for i, a := range apps {
			r, ok, err := a.e.Get(k, now)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = fmt.Sprintf("%v %q %x", ok, r.Value, r.Version)
		}
		if got[0] != got[1] {
			t.Fatalf("get %v: cached %s, Pebble %s", k, got[0], got[1])
		}
		s := Scan{Parent: keys.New([]string{k.Major[0]}), Depth: keys.Depth(1 + rng.IntN(4))}
		s.Reverse, s.KeysOnly, s.Limit = rng.IntN(2) == 0, rng.IntN(3) == 0, rng.IntN(4)
		for i, a := range apps {
			recs, resume, err := a.e.MultiGet(s, now)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = fmt.Sprint(describe(recs), resume)
		}
		if got[0] != got[1] {
			t.Fatalf("multi-get %+v: cached %s, Pebble %s", s, got[0], got[1])
		}
	}
}

func describe(recs []Record) string {
	var b bytes.Buffer
	for _, r := range recs {
		fmt.Fprintf(&b, "%v=%q@%x/%d ", r.Key, r.Value, r.Version, r.ExpiresMs)
	}
	return b.String()
}

// TestRowCacheNeverGoesBack races readers with a writer: once a write's
// commit has returned, no read that starts afterwards may return an older
// value, through a get or a multi-get.
func TestRowCacheNeverGoesBack(t *testing.T) {
	e := rowCacheEngine(t, MinRowCacheBytes)
	a := &applier{t: t, e: e}
	const writes = 3000
	var committed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	k := keys.New([]string{"hot"}, "v")
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for committed.Load() < writes {
				floor := committed.Load()
				v, err := readCounter(e, k, r%2 == 0)
				if err != nil || v < floor {
					errs <- fmt.Errorf("read %d after write %d committed (err %v)", v, floor, err)
					return
				}
			}
		}()
	}
	for i := int64(1); i <= writes; i++ {
		a.apply(1, []*cairnpb.Operation{putOp("/hot/-/v", strconv.FormatInt(i, 10), cairnpb.Condition_CONDITION_UNSPECIFIED, nil)}, NoSync)
		committed.Store(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// readCounter reads k's value as a number, by a get or a multi-get.
func readCounter(e *Engine, k keys.Key, get bool) (int64, error) {
	var val []byte
	if get {
		r, ok, err := e.Get(k, 1)
		if err != nil || !ok {
			return 0, err
		}
		val = r.Value
	} else {
		recs, _, err := e.MultiGet(Scan{Parent: keys.New(k.Major), Depth: keys.ParentAndDescendants}, 1)
		if err != nil || len(recs) == 0 {
			return 0, err
		}
		val = recs[0].Value
	}
	return strconv.ParseInt(string(val), 10, 64)
}

// TestRowCacheProtocol steps one key through the stripe protocol: no hit
// while a commit is in flight, a committed put replaces the entry, a fill
// that raced a commit is refused, and a failed commit caches nothing.
func TestRowCacheProtocol(t *testing.T) {
	c := newRowCache(MinRowCacheBytes)
	defer c.close()
	sk := keys.Encode(0, keys.New([]string{"a"}, "b"))
	want := func(step, val string) {
		t.Helper()
		rec, _, ok := c.getRecord(sk)
		if got := map[bool]string{true: string(rec), false: "(miss)"}[ok]; got != val {
			t.Fatalf("%s: got %s, want %s", step, got, val)
		}
	}
	commit := func(val string, set bool) *touched {
		var tw touched
		tw.note(sk, []byte(val), map[bool]wrote{true: wrotePut, false: wroteDelete}[set])
		c.begin(&tw)
		return &tw
	}
	_, g, _ := c.getRecord(sk)
	c.putRecord(sk, []byte("old"), g)
	want("filled", "old")

	tw := commit("new", true)
	want("commit in flight", "(miss)")
	_, raced, _ := c.getRecord(sk) // a fill that read Pebble during the commit
	c.end(tw, true)
	c.putRecord(sk, []byte("old"), raced)
	want("committed put", "new")

	c.end(commit("lost", true), false)
	want("failed commit", "(miss)")

	_, g, _ = c.getRecord(sk)
	c.putRecord(sk, []byte("small"), g)
	c.end(commit(strings.Repeat("v", 70<<10), true), true) // too large to cache
	want("committed put too large to cache", "(miss)")

	_, before, _ := c.getRecord(sk)
	c.end(commit("", false), true) // a delete ends between a fill's read and its insert
	c.putRecord(sk, []byte("stale"), before)
	want("fill after a delete", "(miss)")

	_, g, _ = c.getRecord(sk)
	c.putRecord(sk, []byte("again"), g)
	all := &touched{all: true}
	c.begin(all)
	want("range deletion in flight", "(miss)")
	c.end(all, true)
	want("range deletion", "(miss)")
}

// TestRowCacheWriteAdmission: a commit admits a put that is the batch's
// only write under its major path; puts of several records under one major
// path (a record stored as fields, read back by a multi-get that the major
// entry serves) only replace entries already cached.
func TestRowCacheWriteAdmission(t *testing.T) {
	c := newRowCache(MinRowCacheBytes)
	defer c.close()
	rec := func(major, minor string) []byte { return keys.Encode(0, keys.New([]string{major}, minor)) }
	cached := func(sk []byte) string {
		got, _, ok := c.getRecord(sk)
		return map[bool]string{true: string(got), false: "(miss)"}[ok]
	}
	val := map[string]string{}
	commit := func(puts ...[]byte) {
		var tw touched
		for _, sk := range puts {
			tw.note(sk, []byte(val[string(sk)]), wrotePut)
		}
		c.begin(&tw)
		c.end(&tw, true)
	}
	lone, f1, f2, other := rec("a", "x"), rec("b", "1"), rec("b", "2"), rec("c", "z")
	for sk, v := range map[*[]byte]string{&lone: "vx", &f1: "v1", &f2: "v2", &other: "vz"} {
		val[string(*sk)] = v
	}
	commit(lone)
	commit(f1, f2, other) // two fields of b, then c's only write
	if got := cached(lone); got != "vx" {
		t.Fatalf("a lone put: cached %s, want vx", got)
	}
	if got := cached(other); got != "vz" {
		t.Fatalf("a batch's only put under its major path: cached %s, want vz", got)
	}
	if a, b := cached(f1), cached(f2); a != "(miss)" || b != "(miss)" {
		t.Fatalf("puts of two fields of one major path were admitted: %s %s", a, b)
	}
	_, g, _ := c.getRecord(f1)
	c.putRecord(f1, []byte("read"), g) // a read fills it
	commit(f1, f2)
	if a, b := cached(f1), cached(f2); a != "v1" || b != "(miss)" {
		t.Fatalf("a cached field is replaced, an uncached one not admitted: got %s %s, want v1 (miss)", a, b)
	}
}

// TestDecodeMajorRefusesDamage: a major entry cut anywhere, or another
// major path's, reads as a miss, never as records.
func TestDecodeMajorRefusesDamage(t *testing.T) {
	prefix := keys.MajorPrefix(0, []string{"m"})
	enc := appendChunk(nil, prefix)
	for i := range 3 {
		k := append(bytes.Clone(prefix), byte('a'+i))
		enc = appendChunk(appendChunk(enc, k), []byte("record"))
	}
	e, ok := decodeMajor(enc, prefix)
	if !ok || len(e.keys) != 3 || len(e.recs) != 3 || string(e.recs[2]) != "record" {
		t.Fatalf("whole entry: %v %+v", ok, e)
	}
	for cut := range len(enc) {
		if e, ok := decodeMajor(enc[:cut], prefix); ok && cut < len(enc) && len(e.keys) == 3 {
			t.Fatalf("an entry cut at %d of %d read as whole", cut, len(enc))
		}
	}
	if _, ok := decodeMajor(enc[:len(enc)-len("record")-1], prefix); ok {
		t.Fatal("a key without its record read as an entry")
	}
	if _, ok := decodeMajor(enc, keys.MajorPrefix(0, []string{"other"})); ok {
		t.Fatal("another major path's entry was accepted")
	}
}

// TestRowCacheEntryBound: a put larger than the cache can hold drops the
// key's entry instead of leaving the older bytes cached, at the smallest
// size (entries up to 32 KiB) and at 64 MiB (up to 64 KiB).
func TestRowCacheEntryBound(t *testing.T) {
	for _, size := range []int64{MinRowCacheBytes, 64 << 20} {
		c := newRowCache(size)
		defer c.close()
		sk := keys.Encode(0, keys.New([]string{"m"}, "k"))
		commit := func(v []byte) {
			var tw touched
			tw.note(sk, v, wrotePut)
			c.begin(&tw)
			c.end(&tw, true)
		}
		fits := bytes.Repeat([]byte("f"), c.maxEntry-len(sk))
		commit(fits)
		if got, _, ok := c.getRecord(sk); !ok || !bytes.Equal(got, fits) {
			t.Fatalf("cache of %d: a put of %d bytes (its largest) is not cached", size, len(fits))
		}
		commit(append(fits, 'x'))
		if _, _, ok := c.getRecord(sk); ok {
			t.Fatalf("cache of %d: a put one byte too large left the older entry cached", size)
		}
	}
	c := newRowCache(64 << 20)
	defer c.close()
	if c.maxEntry != maxEntryBytes || c.maxMajor != maxMajorBytes {
		t.Fatalf("64 MiB: entries up to %d and majors up to %d; want %d and %d", c.maxEntry, c.maxMajor, maxEntryBytes, maxMajorBytes)
	}
}

// TestRowCacheUpdatesKeepLiveEntries: updates that keep a record's size
// overwrite its entry in place, so rewriting a few hot records many times
// over the cache's size does not push the other records out.
func TestRowCacheUpdatesKeepLiveEntries(t *testing.T) {
	c := newRowCache(MinRowCacheBytes)
	defer c.close()
	val := bytes.Repeat([]byte("v"), 1000)
	commit := func(sk []byte) {
		var tw touched
		tw.note(sk, val, wrotePut)
		c.begin(&tw)
		c.end(&tw, true)
	}
	rec := func(i int) []byte { return keys.Encode(0, keys.New([]string{fmt.Sprintf("r%05d", i)}, "f")) }
	for i := range 5000 { // 5 MB of records
		commit(rec(i))
	}
	for i := range 100_000 { // 100 MB of updates, three times the cache
		commit(rec(i % 10))
	}
	miss := 0
	for i := range 5000 {
		if _, _, ok := c.getRecord(rec(i)); !ok {
			miss++
		}
	}
	if miss > 0 {
		t.Fatalf("%d of 5000 records fell out of a 32 MiB cache holding 5 MB, under updates of 10 of them", miss)
	}
}

// TestRowCacheMemoryLimit: an open row cache raises the process's soft
// memory limit by its size (plus the headroom while any is open), and
// closing it takes that back.
func TestRowCacheMemoryLimit(t *testing.T) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set: the row cache leaves the limit alone")
	}
	caches := func() int64 {
		memLimit.Lock()
		defer memLimit.Unlock()
		if got, want := debug.SetMemoryLimit(-1), memLimit.caches+gcHeadroom; memLimit.caches > 0 && got != want {
			t.Fatalf("memory limit %d with %d bytes of row caches open; want %d", got, memLimit.caches, want)
		}
		return memLimit.caches
	}
	before := caches()
	c := newRowCache(MinRowCacheBytes)
	if got := caches(); got != before+MinRowCacheBytes {
		t.Fatalf("row caches %d after opening one of %d (were %d)", got, int64(MinRowCacheBytes), before)
	}
	c.close()
	c.close() // twice: once only
	if got := caches(); got != before {
		t.Fatalf("row caches %d after closing it; want %d", got, before)
	}
}

// TestRowCacheMajorWriteThrough: a committed write under a cached major
// path updates its major entry in place (puts replace or insert records,
// deletions remove them), so the next multi-get hits; a failed commit or a
// write whose bytes are unknown drops the entry; writes under another major
// path whose hash collides leave it alone.
func TestRowCacheMajorWriteThrough(t *testing.T) {
	c := newRowCache(MinRowCacheBytes)
	defer c.close()
	prefix := keys.MajorPrefix(0, []string{"m"})
	rec := func(minor string) []byte { return keys.Encode(0, keys.New([]string{"m"}, minor)) }
	fill := func(pairs ...string) {
		enc := appendChunk(nil, prefix)
		for i := 0; i < len(pairs); i += 2 {
			enc = appendChunk(appendChunk(enc, rec(pairs[i])), []byte(pairs[i+1]))
		}
		_, g, _ := c.getMajor(prefix)
		c.putMajor(prefix, enc, g)
	}
	entry := func() string {
		e, _, ok := c.getMajor(prefix)
		if !ok {
			return "(miss)"
		}
		var b strings.Builder
		for i := range e.keys {
			k, err := keys.Decode(e.keys[i])
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s=%s ", k.Minor[0], e.recs[i])
		}
		return b.String()
	}
	commit := func(ok bool, writes ...touchItem) {
		var tw touched
		for _, w := range writes {
			how := wroteUnknown
			if w.set {
				how = wrotePut
			} else if w.gone {
				how = wroteDelete
			}
			tw.note(w.rec, w.val, how)
		}
		c.begin(&tw)
		c.end(&tw, ok)
	}
	put := func(sk []byte, v string) touchItem { return touchItem{rec: sk, val: []byte(v), set: true} }
	del := func(sk []byte) touchItem { return touchItem{rec: sk, gone: true} }

	fill("b", "1", "d", "2")
	commit(true, put(rec("d"), "3"), put(rec("a"), "0"), put(rec("c"), "x"), del(rec("b")), put(rec("e"), "4"), del(rec("zz")))
	if got, want := entry(), "a=0 c=x d=3 e=4 "; got != want {
		t.Fatalf("after puts and deletions: entry %q, want %q", got, want)
	}
	other := keys.Encode(0, keys.New([]string{"n"}, "a"))
	copy(other[1:keys.HeaderLen], prefix[1:keys.HeaderLen]) // another major path under the same hash
	commit(true, put(other, "stranger"))
	if got, want := entry(), "a=0 c=x d=3 e=4 "; got != want {
		t.Fatalf("after a write under a colliding major path: entry %q, want %q", got, want)
	}
	commit(false, put(rec("a"), "lost"))
	if got := entry(); got != "(miss)" {
		t.Fatalf("a failed commit left the entry: %q", got)
	}
	fill("a", "1")
	commit(true, touchItem{rec: rec("a")}) // a merge operand: bytes unknown
	if got := entry(); got != "(miss)" {
		t.Fatalf("a write of unknown bytes left the entry: %q", got)
	}
	fill("a", "1")
	commit(true, put(rec("a"), strings.Repeat("v", c.maxMajor)))
	if got := entry(); got != "(miss)" {
		t.Fatalf("an entry grown past the bound stayed: %d bytes", len(got))
	}
}
