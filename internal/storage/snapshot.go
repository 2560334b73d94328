package storage

import (
	"bytes"
	"encoding/binary"
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

// expiryIn calls fn with every expiry-index entry of the records in spans
// (see expiryRanges).
func expiryIn(r pebble.Reader, spans []Span, fn func(k, v []byte)) error {
	for _, x := range expiryRanges(spans) {
		err := each(r, x.Start, x.End, func(k, v []byte) {
			if expiryInSpans(spans, k) {
				fn(k, v)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// expiryRanges returns the ranges of expiry-index entries that may index
// records in spans: the entries of the shards the spans start in (all
// entries if a span starts before any shard), each shard's once.
func expiryRanges(spans []Span) []Span {
	var ranges []Span
	for _, s := range spans {
		if len(s.Start) == 0 || s.Start[0] > keys.RecordSpace {
			continue // not records: no expiry entries
		}
		if len(s.Start) < 9 || s.Start[0] != keys.RecordSpace {
			return []Span{{[]byte{expirySpace}, []byte{expirySpace + 1}}}
		}
		lo, hi := expirySpan(keys.ShardOf(s.Start))
		if !slices.ContainsFunc(ranges, func(x Span) bool { return bytes.Equal(x.Start, lo) }) {
			ranges = append(ranges, Span{lo, hi})
		}
	}
	return ranges
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
// entry) in spans, read from one consistent view of the engine, in memory:
// for small spans and tests. A shard's snapshot streams (NewExport).
func (e *Engine) ExportSpans(spans []Span) ([]byte, error) {
	data, _, err := e.ExportShard(0, spans)
	return data, err
}

// ExportShard is ExportSpans for a replicated shard that also returns the
// shard's applied index, read from the same view: the data is exactly the
// shard's state after applying the command at that index, however far the
// shard has moved on meanwhile. It holds the data in memory (see
// NewExport).
func (e *Engine) ExportShard(shard uint64, spans []Span) (data []byte, applied uint64, err error) {
	x, err := e.NewExport(shard, spans)
	if err != nil {
		return nil, 0, err
	}
	defer x.Close()
	var buf bytes.Buffer
	if _, err := x.WriteTo(&buf); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), x.Applied(), nil
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
// entries) with the snapshot data, within the batch. The batch holds the
// data in memory: for small spans, and for deleting a shard (nil data). A
// shard's snapshot streams into an Import instead.
func (b *Batch) ImportSpans(spans []Span, data []byte) error {
	var partial []Span // spans whose expiry entries must be picked out
	for _, s := range spans {
		if err := b.b.DeleteRange(s.Start, s.End, nil); err != nil {
			return err
		}
		if !wholeShard(s) {
			partial = append(partial, s)
			continue
		}
		lo, hi := expirySpan(keys.ShardOf(s.Start))
		if err := b.b.DeleteRange(lo, hi, nil); err != nil {
			return err
		}
	}
	var stale [][]byte
	if err := expiryIn(b.b, partial, func(k, _ []byte) { stale = append(stale, bytes.Clone(k)) }); err != nil {
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

// wholeShard reports whether s is all of one shard's records.
func wholeShard(s Span) bool {
	if len(s.Start) != 9 || s.Start[0] != keys.RecordSpace {
		return false
	}
	lo, hi := keys.ShardSpan(keys.ShardOf(s.Start))
	return bytes.Equal(s.Start, lo) && bytes.Equal(s.End, hi)
}

func readChunk(b []byte) ([]byte, []byte, error) {
	n, m := binary.Uvarint(b)
	if m <= 0 || uint64(len(b)-m) < n {
		return nil, nil, fmt.Errorf("%w: truncated snapshot data", ErrCorrupt)
	}
	return b[m : m+int(n)], b[m+int(n):], nil
}
