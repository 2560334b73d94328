package storage

import (
	"bytes"
	"fmt"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cockroachdb/pebble/v2"
)

// PartitionChunks reads partition p (of n) of shard's records from the
// view in key order and calls fn with chunks of at most about maxBytes:
// each key without its shard ('r' hash major ..., as Ingest takes it) and
// the record's bytes as stored, version included. The slices are fn's to
// keep. It returns the bytes read; fn's error stops it.
func (v *View) PartitionChunks(shard uint64, p keys.PartitionID, n uint32, maxBytes int, fn func(ks, vs [][]byte) error) (int64, error) {
	lo, hi := keys.PartitionSpan(shard, p, n)
	it, err := v.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, fmt.Errorf("storage: copying partition %d: %w", p, v.e.readErr(err))
	}
	defer it.Close()
	var ks, vs [][]byte
	var size int
	var total int64
	flush := func() error {
		if len(ks) == 0 {
			return nil
		}
		err := fn(ks, vs)
		ks, vs, size = nil, nil, 0
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		val, err := it.ValueAndErr()
		if err != nil {
			return total, fmt.Errorf("storage: copying partition %d: %w", p, v.e.readErr(err))
		}
		k := it.Key()
		ks = append(ks, append([]byte{keys.RecordSpace}, k[9:]...))
		vs = append(vs, bytes.Clone(val))
		size += len(k) + len(val)
		total += int64(len(k) + len(val))
		if size >= maxBytes {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := it.Error(); err != nil {
		return total, fmt.Errorf("storage: copying partition %d: %w", p, v.e.readErr(err))
	}
	return total, flush()
}
