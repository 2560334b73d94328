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

// expiryKey is 'x' shard(8 BE) expiry-ms(8 BE) storage-key: a shard's
// entries are together, oldest first. sk is a record's storage key, which
// starts 'r' shard(8).
//
//	+------+--------------+-----------------+------------------------------+
//	| 'x'  | shard (8 BE) | expiry-ms (8 BE)| storage key ('r' shard ...)  |
//	+------+--------------+-----------------+------------------------------+
func expiryKey(expMs int64, sk []byte) []byte {
	b := make([]byte, 0, expiryHeaderLen+len(sk))
	b = append(b, expirySpace)
	b = append(b, sk[1:9]...)
	b = binary.BigEndian.AppendUint64(b, uint64(expMs))
	return append(b, sk...)
}

// expiryHeaderLen is the length of an expiry entry's key before the
// record's storage key.
const expiryHeaderLen = 17

// expirySpan is the span of shard's expiry-index entries.
func expirySpan(shard uint64) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint64([]byte{expirySpace}, shard)
	if shard == ^uint64(0) {
		return lo, []byte{expirySpace + 1}
	}
	return lo, binary.BigEndian.AppendUint64([]byte{expirySpace}, shard+1)
}

// ExpiredBefore lists up to limit expiry-index entries of lite's shard (0)
// whose expiry is at or before nowMs, oldest first. Entries may be stale;
// applying an Expire command with them deletes only records that still
// carry that expiry.
func (e *Engine) ExpiredBefore(nowMs int64, limit int) ([]*commandpb.ExpiredRecord, error) {
	return e.ExpiredIn(0, nowMs, limit)
}

// ExpiredIn is ExpiredBefore for shard's records.
func (e *Engine) ExpiredIn(shard uint64, nowMs int64, limit int) ([]*commandpb.ExpiredRecord, error) {
	lower, _ := expirySpan(shard)
	upper := binary.BigEndian.AppendUint64(bytes.Clone(lower), uint64(nowMs)+1)
	db, l := e.acquire()
	defer e.release(l)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, e.readErr(err)
	}
	defer it.Close()
	var out []*commandpb.ExpiredRecord
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		k := it.Key()
		if len(k) < expiryHeaderLen+keys.HeaderLen {
			return nil, fmt.Errorf("%w: expiry key %x", ErrCorrupt, k)
		}
		out = append(out, &commandpb.ExpiredRecord{
			ExpirationMs: int64(binary.BigEndian.Uint64(k[9:17])),
			StorageKey:   bytes.Clone(k[expiryHeaderLen:]),
		})
	}
	return out, it.Error()
}

func (b *Batch) applyExpire(now int64, ex *commandpb.Expire) Result {
	var n int64
	for _, r := range ex.GetRecords() {
		if sk := r.GetStorageKey(); len(sk) < keys.HeaderLen || sk[0] != keys.RecordSpace || keys.ShardOf(sk) != b.shard {
			return Result{Err: fmt.Errorf("%w: expire names key %x, not a record of shard %d", ErrBadCommand, sk, b.shard)}
		}
		if r.GetExpirationMs() > now {
			continue // not yet expired at this command's time
		}
		if b.table != nil && !b.replaying && b.table.Serves(b.shard, keys.HashOf(r.GetStorageKey())) != nil {
			continue // a partition moving in or out: its expiries come with the source's log
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
	if err := b.serves(parent.Major); err != nil {
		return Result{Err: err}
	}
	depth := keys.Depth(md.GetDepth())
	if !depth.Valid() {
		depth = keys.ParentAndDescendants
	}
	s := Scan{Parent: parent, Range: RangeFromPB(md.GetRange()), Depth: depth, KeysOnly: true}
	recs, _, err := scan(b.b, s, now, multiGetSpan(b.shard, parent), multiGetMatcher(s))
	if err != nil {
		return Result{Err: err}
	}
	for _, r := range recs {
		if err := b.b.Delete(keys.Encode(b.shard, r.Key), nil); err != nil {
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
