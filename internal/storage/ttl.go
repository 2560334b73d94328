package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cockroachdb/pebble/v2"
)

const expirySpace = 'x'

// expiryKey is 'x' expiry-ms(8 BE) storage-key.
func expiryKey(expMs int64, sk []byte) []byte {
	b := make([]byte, 0, 9+len(sk))
	b = append(b, expirySpace)
	b = binary.BigEndian.AppendUint64(b, uint64(expMs))
	return append(b, sk...)
}

// ExpiredBefore lists up to limit expiry-index entries whose expiry is at or
// before nowMs, oldest first. Entries may be stale; applying an Expire
// command with them deletes only records that still carry that expiry.
func (e *Engine) ExpiredBefore(nowMs int64, limit int) ([]*commandpb.ExpiredRecord, error) {
	return e.ExpiredIn(nil, nowMs, limit)
}

// ExpiredIn is ExpiredBefore restricted to records in spans (nil: all).
func (e *Engine) ExpiredIn(spans []Span, nowMs int64, limit int) ([]*commandpb.ExpiredRecord, error) {
	upper := binary.BigEndian.AppendUint64([]byte{expirySpace}, uint64(nowMs)+1)
	db, l := e.acquire()
	defer e.release(l)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{expirySpace}, UpperBound: upper})
	if err != nil {
		return nil, e.readErr(err)
	}
	defer it.Close()
	var out []*commandpb.ExpiredRecord
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		k := it.Key()
		if len(k) < 9 {
			return nil, fmt.Errorf("%w: expiry key %x", ErrCorrupt, k)
		}
		if spans != nil && !inSpans(spans, k[9:]) {
			continue
		}
		out = append(out, &commandpb.ExpiredRecord{
			ExpirationMs: int64(binary.BigEndian.Uint64(k[1:9])),
			StorageKey:   bytes.Clone(k[9:]),
		})
	}
	return out, it.Error()
}

func (b *Batch) applyExpire(now int64, ex *commandpb.Expire) Result {
	var n int64
	for _, r := range ex.GetRecords() {
		if r.GetExpirationMs() > now {
			continue // not yet expired at this command's time
		}
		raw, closer, err := b.b.Get(r.GetStorageKey())
		if err == nil {
			v, derr := decodeRecord(raw)
			match := derr == nil && v.expMs == r.GetExpirationMs()
			closer.Close()
			if match {
				if err := b.b.Delete(r.GetStorageKey(), nil); err != nil {
					return Result{Err: err}
				}
				n++
			}
		} else if !errors.Is(err, pebble.ErrNotFound) {
			return Result{Err: err}
		}
		if err := b.b.Delete(expiryKey(r.GetExpirationMs(), r.GetStorageKey()), nil); err != nil {
			return Result{Err: err}
		}
	}
	return Result{Deleted: n}
}

func (b *Batch) applyMultiDelete(now int64, md *commandpb.MultiDelete) Result {
	parent := keyFromPB(md.GetParent())
	if len(parent.Major) == 0 {
		return Result{Err: fmt.Errorf("%w: multi-delete needs a complete major path", ErrBadCommand)}
	}
	depth := keys.Depth(md.GetDepth())
	if !depth.Valid() {
		depth = keys.ParentAndDescendants
	}
	s := Scan{Parent: parent, Range: RangeFromPB(md.GetRange()), Depth: depth, KeysOnly: true}
	recs, _, err := scan(b.b, s, now, multiGetSpan(parent), multiGetMatcher(s))
	if err != nil {
		return Result{Err: err}
	}
	for _, r := range recs {
		if err := b.b.Delete(keys.Encode(r.Key), nil); err != nil {
			return Result{Err: err}
		}
	}
	return Result{Deleted: int64(len(recs))}
}

// RangeFromPB converts a wire key range; nil stays nil.
func RangeFromPB(r *cairnpb.KeyRange) *keys.Range {
	if r == nil {
		return nil
	}
	return &keys.Range{
		Start: r.GetStart(), HasStart: r.GetHasStart(), StartInclusive: r.GetStartInclusive(),
		End: r.GetEnd(), HasEnd: r.GetHasEnd(), EndInclusive: r.GetEndInclusive(),
		Prefix: r.GetPrefix(), HasPrefix: r.GetHasPrefix(),
	}
}
