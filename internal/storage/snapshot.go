package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cockroachdb/pebble/v2"
)

// Span is a range [Start, End) of record keys.
type Span struct{ Start, End []byte }

func (s Span) contains(k []byte) bool {
	return bytes.Compare(k, s.Start) >= 0 && bytes.Compare(k, s.End) < 0
}

// PartitionSpans returns the record-key spans of the given partitions of a
// store with n partitions in shard's records, adjacent partitions merged, in
// key order.
func PartitionSpans(shard uint64, parts []keys.PartitionID, n uint32) []Span {
	ps := slices.Clone(parts)
	slices.Sort(ps)
	var out []Span
	for _, p := range ps {
		start, end := keys.PartitionSpan(shard, p, n)
		if len(out) > 0 && bytes.Equal(out[len(out)-1].End, start) {
			out[len(out)-1].End = end
			continue
		}
		out = append(out, Span{start, end})
	}
	return out
}

// expiryIn calls fn with every expiry-index entry of the records in spans:
// it reads the entries of the shards the spans start in (all entries if a
// span starts before any shard).
func expiryIn(r pebble.Reader, spans []Span, fn func(k, v []byte)) error {
	var ranges []Span
	for _, s := range spans {
		if len(s.Start) == 0 || s.Start[0] > keys.RecordSpace {
			continue // not records: no expiry entries
		}
		if len(s.Start) < 9 || s.Start[0] != keys.RecordSpace {
			ranges = []Span{{[]byte{expirySpace}, []byte{expirySpace + 1}}}
			break
		}
		lo, hi := expirySpan(keys.ShardOf(s.Start))
		if !slices.ContainsFunc(ranges, func(x Span) bool { return bytes.Equal(x.Start, lo) }) {
			ranges = append(ranges, Span{lo, hi})
		}
	}
	for _, x := range ranges {
		err := each(r, x.Start, x.End, func(k, v []byte) {
			if len(k) > expiryHeaderLen && inSpans(spans, k[expiryHeaderLen:]) {
				fn(k, v)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ShardSpans returns the one span of all of shard's records.
func ShardSpans(shard uint64) []Span {
	lo, hi := keys.ShardSpan(shard)
	return []Span{{lo, hi}}
}

// ShardDataSpans returns every span of shard's replicated data, which a
// snapshot of the shard carries and an install replaces: its records (and
// with them their expiry-index entries, see ExportSpans) and its partition
// table.
func ShardDataSpans(shard uint64) []Span {
	t := shardKey(shard, shardTable)
	return append(ShardSpans(shard), Span{t, append(bytes.Clone(t), 0)})
}

func inSpans(spans []Span, k []byte) bool {
	for _, s := range spans {
		if s.contains(k) {
			return true
		}
	}
	return false
}

// Snapshot data is a sequence of key/value pairs, records first, then the
// expiry-index entries of those records:
//
//	+-----------------+-----+-------------------+-------+----
//	| uvarint len(k)  |  k  | uvarint len(v)    |   v   | ...
//	+-----------------+-----+-------------------+-------+----

// ExportSpans returns the snapshot data of every record (and expiry-index
// entry) in spans, read from one consistent view of the engine.
func (e *Engine) ExportSpans(spans []Span) ([]byte, error) {
	db, l := e.acquire()
	defer e.release(l)
	snap := db.NewSnapshot()
	defer snap.Close()
	data, err := exportSpans(snap, spans)
	return data, e.readErr(err)
}

// ExportShard is ExportSpans for a replicated shard that also returns the
// shard's applied index, read from the same view: the data is exactly the
// shard's state after applying the command at that index, however far the
// shard has moved on meanwhile.
func (e *Engine) ExportShard(shard uint64, spans []Span) (data []byte, applied uint64, err error) {
	db, l := e.acquire()
	defer e.release(l)
	snap := db.NewSnapshot()
	defer snap.Close()
	v, closer, err := snap.Get(shardKey(shard, shardApplied))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, 0, fmt.Errorf("storage: shard %d applied index: %w", shard, err)
	default:
		if len(v) != 8 {
			closer.Close()
			return nil, 0, fmt.Errorf("%w: shard %d applied index of %d bytes", ErrCorrupt, shard, len(v))
		}
		applied = binary.BigEndian.Uint64(v)
		closer.Close()
	}
	data, err = exportSpans(snap, spans)
	return data, applied, e.readErr(err)
}

func exportSpans(r pebble.Reader, spans []Span) ([]byte, error) {
	var out []byte
	add := func(k, v []byte) {
		out = binary.AppendUvarint(out, uint64(len(k)))
		out = append(out, k...)
		out = binary.AppendUvarint(out, uint64(len(v)))
		out = append(out, v...)
	}
	for _, s := range spans {
		if err := each(r, s.Start, s.End, func(k, v []byte) { add(k, v) }); err != nil {
			return nil, err
		}
	}
	err := expiryIn(r, spans, add)
	return out, err
}

// SnapshotMaxIndex returns the highest index found in the versions of the
// records in snapshot data (0 if it holds none), whatever their origin. A
// shard restored from data must give new writes higher indexes than this.
func SnapshotMaxIndex(data []byte) (uint64, error) {
	var top uint64
	for len(data) > 0 {
		k, rest, err := readChunk(data)
		if err != nil {
			return 0, err
		}
		v, rest, err := readChunk(rest)
		if err != nil {
			return 0, err
		}
		data = rest
		if len(k) == 0 || k[0] != keys.RecordSpace {
			continue
		}
		rv, err := decodeRecord(v)
		if err != nil {
			return 0, fmt.Errorf("snapshot record %x: %w", k, err)
		}
		top = max(top, binary.BigEndian.Uint64(rv.version[8:]))
	}
	return top, nil
}

func each(r pebble.Reader, lo, hi []byte, fn func(k, v []byte)) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		fn(it.Key(), v)
	}
	return it.Error()
}

// ImportSpans replaces everything in spans (records and their expiry-index
// entries) with the snapshot data, within the batch.
func (b *Batch) ImportSpans(spans []Span, data []byte) error {
	for _, s := range spans {
		if err := b.b.DeleteRange(s.Start, s.End, nil); err != nil {
			return err
		}
	}
	var stale [][]byte
	if err := expiryIn(b.b, spans, func(k, _ []byte) { stale = append(stale, bytes.Clone(k)) }); err != nil {
		return err
	}
	for _, k := range stale {
		if err := b.b.Delete(k, nil); err != nil {
			return err
		}
	}
	for len(data) > 0 {
		k, rest, err := readChunk(data)
		if err != nil {
			return err
		}
		v, rest, err := readChunk(rest)
		if err != nil {
			return err
		}
		if !(len(k) > 0 && (k[0] != expirySpace && inSpans(spans, k) || k[0] == expirySpace && len(k) > expiryHeaderLen && inSpans(spans, k[expiryHeaderLen:]))) {
			return fmt.Errorf("%w: snapshot key %x outside the shard", ErrCorrupt, k)
		}
		if err := b.b.Set(k, v, nil); err != nil {
			return err
		}
		data = rest
	}
	return nil
}

func readChunk(b []byte) ([]byte, []byte, error) {
	n, m := binary.Uvarint(b)
	if m <= 0 || uint64(len(b)-m) < n {
		return nil, nil, fmt.Errorf("%w: truncated snapshot data", ErrCorrupt)
	}
	return b[m : m+int(n)], b[m+int(n):], nil
}
