package bench

import (
	"context"
	"errors"

	"github.com/cairndb/cairn/client"
)

// cond is the condition of a put.
type cond int

const (
	condNone      cond = iota // unconditional
	condIfPresent             // only over an existing record
	condIfVersion             // only over the record with this version
)

// kvStore is what the Cairn DB needs from a store, implemented over the
// public client (-db cairn) and over in-process server handlers (-db
// embedded). Methods are safe for concurrent use.
type kvStore interface {
	get(ctx context.Context, k client.Key) (client.Record, bool, error)
	// getLatest reads from the shard's leader (ABSOLUTE), so a following
	// put-if-version does not fail on a replica's stale version.
	getLatest(ctx context.Context, k client.Key) (client.Record, bool, error)
	// multiGet returns every record under a complete major path.
	multiGet(ctx context.Context, major []string) ([]client.Record, error)
	put(ctx context.Context, k client.Key, v []byte, c cond, match client.Version) (done bool, err error)
	// updateFields merges fs into the field record under k, if there is one.
	updateFields(ctx context.Context, k client.Key, fs []Field) (done bool, err error)
	// putAll writes the records atomically; the keys share one major path.
	putAll(ctx context.Context, ks []client.Key, vs [][]byte) error
	delete(ctx context.Context, k client.Key) (done bool, err error)
	multiDelete(ctx context.Context, major []string) (int, error)
	// scan yields the records under the partial major path parent whose next
	// component is at or after start, in the store's order, until yield
	// returns false; it fetches batch records per request.
	scan(ctx context.Context, parent []string, start string, batch int, yield func(client.Record) bool) error
}

// maxScanBatch is the largest page the server returns.
const maxScanBatch = 10000

// updateTries bounds the get + put-if-version rounds of a partial update in
// the value layout before it counts as an error.
const updateTries = 10

// cairnDB is one thread's DB over a kvStore, in either record layout:
//
//   - value (default): the record is one value under /<table>/<key>,
//     encoded as drawn in layout.go. A read is one get; an insert one put;
//     an update of every field one put-if-present; an update of some fields
//     one put that merges them into the stored record on the server
//     (cairn.update=merge, the default), or a get and a put-if-version,
//     retried on a lost race (cairn.update=rmw).
//   - minor: one record per field under /<table>/<key>/-/<field>, as Oracle
//     NoSQL's YCSB binding stores them. A read is one multi-get of the major
//     path (one get for a single field); an insert or update one atomic
//     execute of puts.
type cairnDB struct {
	kv     kvStore
	minor  bool
	rmw    bool // cairn.update=rmw
	names  []string
	nfield int
	log    *errLog

	major  [2]string
	enc    []byte
	fields []Field
	merged []Field
	keys   []client.Key
	vals   [][]byte
}

func newCairnDB(kv kvStore, cfg *Config, log *errLog) *cairnDB {
	return &cairnDB{kv: kv, minor: cfg.Cairn.Layout == "minor", rmw: cfg.Cairn.Update == "rmw", names: cfg.FieldNames(),
		nfield: cfg.FieldCount, log: log}
}

func (d *cairnDB) majorPath(table string, key []byte) []string {
	d.major[0], d.major[1] = table, string(key)
	return d.major[:]
}

// updated is the status of a one-request update: done, not found, or failed.
func (d *cairnDB) updated(key []byte, done bool, err error) Status {
	switch {
	case err != nil:
		return d.fail("update", key, err)
	case !done:
		return StatusNotFound
	}
	return StatusOK
}

func (d *cairnDB) fail(op string, key []byte, err error) Status {
	d.log.printf("cairn: %s %s: %v", op, key, err)
	d.log.failed(err)
	return StatusError
}

// wanted reports whether name is selected by fields (nil: all).
func wanted(name string, fields []string) bool {
	if fields == nil {
		return true
	}
	for _, f := range fields {
		if f == name {
			return true
		}
	}
	return false
}

// filter appends the fields of in selected by fields to out.
func filter(out, in []Field, fields []string) []Field {
	for _, f := range in {
		if wanted(f.Name, fields) {
			out = append(out, f)
		}
	}
	return out
}

func (d *cairnDB) Read(ctx context.Context, table string, key []byte, fields []string, out *[]Field) Status {
	*out = (*out)[:0]
	major := d.majorPath(table, key)
	if !d.minor {
		rec, found, err := d.kv.get(ctx, client.Key{Major: major})
		if err != nil {
			return d.fail("read", key, err)
		}
		if !found {
			return StatusNotFound
		}
		if d.fields, err = decodeRecord(rec.Value, d.names, d.fields[:0]); err != nil {
			return d.fail("read", key, err)
		}
		*out = filter(*out, d.fields, fields)
		return StatusOK
	}
	if len(fields) == 1 {
		rec, found, err := d.kv.get(ctx, client.Key{Major: major, Minor: fields[:1]})
		if err != nil {
			return d.fail("read", key, err)
		}
		if !found {
			return StatusNotFound
		}
		*out = append(*out, Field{Name: fields[0], Value: rec.Value})
		return StatusOK
	}
	recs, err := d.kv.multiGet(ctx, major)
	if err != nil {
		return d.fail("read", key, err)
	}
	if len(recs) == 0 {
		return StatusNotFound
	}
	for _, rec := range recs {
		if len(rec.Key.Minor) != 1 {
			continue
		}
		if name := intern([]byte(rec.Key.Minor[0]), d.names); wanted(name, fields) {
			*out = append(*out, Field{Name: name, Value: rec.Value})
		}
	}
	return StatusOK
}

func (d *cairnDB) Insert(ctx context.Context, table string, key []byte, values []Field) Status {
	major := d.majorPath(table, key)
	if d.minor {
		return d.putFields(ctx, "insert", key, major, values)
	}
	d.enc = appendRecord(d.enc[:0], values)
	if _, err := d.kv.put(ctx, client.Key{Major: major}, d.enc, condNone, nil); err != nil {
		return d.fail("insert", key, err)
	}
	return StatusOK
}

func (d *cairnDB) Update(ctx context.Context, table string, key []byte, values []Field) Status {
	major := d.majorPath(table, key)
	if d.minor {
		return d.putFields(ctx, "update", key, major, values)
	}
	k := client.Key{Major: major}
	if len(values) == d.nfield {
		d.enc = appendRecord(d.enc[:0], values)
		done, err := d.kv.put(ctx, k, d.enc, condIfPresent, nil)
		return d.updated(key, done, err)
	}
	if !d.rmw {
		done, err := d.kv.updateFields(ctx, k, values)
		return d.updated(key, done, err)
	}
	for range updateTries {
		rec, found, err := d.kv.getLatest(ctx, k)
		if err != nil {
			return d.fail("update", key, err)
		}
		if !found {
			return StatusNotFound
		}
		if d.fields, err = decodeRecord(rec.Value, d.names, d.fields[:0]); err != nil {
			return d.fail("update", key, err)
		}
		d.merged = mergeFields(d.merged[:0], d.fields, values)
		d.enc = appendRecord(d.enc[:0], d.merged)
		done, err := d.kv.put(ctx, k, d.enc, condIfVersion, rec.Version)
		if err != nil {
			return d.fail("update", key, err)
		}
		if done {
			return StatusOK
		}
	}
	return d.fail("update", key, errors.New("the record changed under every one of 10 read-and-write attempts"))
}

// mergeFields appends old with each field replaced by its new value, then
// the new fields old did not have.
func mergeFields(out, old, upd []Field) []Field {
	for _, f := range old {
		for _, u := range upd {
			if u.Name == f.Name {
				f.Value = u.Value
				break
			}
		}
		out = append(out, f)
	}
	for _, u := range upd {
		found := false
		for _, f := range old {
			if f.Name == u.Name {
				found = true
				break
			}
		}
		if !found {
			out = append(out, u)
		}
	}
	return out
}

// putFields writes each field as its own record, atomically.
func (d *cairnDB) putFields(ctx context.Context, op string, key []byte, major []string, values []Field) Status {
	d.keys, d.vals = d.keys[:0], d.vals[:0]
	for i := range values {
		d.keys = append(d.keys, client.Key{Major: major, Minor: []string{values[i].Name}})
		d.vals = append(d.vals, values[i].Value)
	}
	if err := d.kv.putAll(ctx, d.keys, d.vals); err != nil {
		return d.fail(op, key, err)
	}
	return StatusOK
}

func (d *cairnDB) Delete(ctx context.Context, table string, key []byte) Status {
	major := d.majorPath(table, key)
	var done bool
	var err error
	if d.minor {
		var n int
		n, err = d.kv.multiDelete(ctx, major)
		done = n > 0
	} else {
		done, err = d.kv.delete(ctx, client.Key{Major: major})
	}
	switch {
	case err != nil:
		return d.fail("delete", key, err)
	case !done:
		return StatusNotFound
	}
	return StatusOK
}

// Scan returns the first count records the store iterator yields under
// /<table> from startKey on. Cairn, like Oracle NoSQL, orders records only
// within a partition, so these are not the count keys that follow startKey
// in key order (see the package doc).
func (d *cairnDB) Scan(ctx context.Context, table string, startKey []byte, count int, fields []string, out *[]ScanRecord) Status {
	*out = (*out)[:0]
	batch := count
	if d.minor {
		batch = count * d.nfield
	}
	batch = min(max(batch, 1), maxScanBatch)
	var derr error
	err := d.kv.scan(ctx, []string{table}, string(startKey), batch, func(rec client.Record) bool {
		if len(rec.Key.Major) < 2 {
			return true
		}
		name := rec.Key.Major[1]
		if !d.minor {
			fs, err := decodeRecord(rec.Value, d.names, nil)
			if err != nil {
				derr = err
				return false
			}
			*out = append(*out, ScanRecord{Key: []byte(name), Fields: filter(nil, fs, fields)})
			return len(*out) < count
		}
		n := len(*out)
		if n == 0 || string((*out)[n-1].Key) != name {
			if n == count {
				return false
			}
			*out = append(*out, ScanRecord{Key: []byte(name)})
			n++
		}
		if len(rec.Key.Minor) == 1 {
			if f := intern([]byte(rec.Key.Minor[0]), d.names); wanted(f, fields) {
				(*out)[n-1].Fields = append((*out)[n-1].Fields, Field{Name: f, Value: rec.Value})
			}
		}
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return d.fail("scan", startKey, err)
	}
	return StatusOK
}

func (d *cairnDB) Cleanup() error { return nil }
