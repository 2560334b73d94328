package storage

import (
	"errors"
	"fmt"

	"github.com/cairndb/cairn/api/fieldrec"
	"github.com/cairndb/cairn/internal/keys"
)

// ErrNotFieldRecord is the Result.Err of a merge_fields put over a stored
// value that is not a field record. Like every ErrBadCommand it is
// deterministic: each replica holds the same value and refuses alike.
var ErrNotFieldRecord = fmt.Errorf("%w: merge_fields over a stored value that is not a field record", ErrBadCommand)

// mergeRecord returns the record of version and expMs whose value is the
// field record stored with update's fields merged in (api/fieldrec),
// bounded by the command's max_merged_bytes. The merge writes straight
// after the record's header: one buffer, sized for the largest result.
func (b *Batch) mergeRecord(version []byte, expMs int64, stored, update []byte) ([]byte, error) {
	rec := encodeRecord(make([]byte, 0, recordHeaderLen+len(stored)+len(update)), version, expMs, nil)
	head := len(rec)
	rec, err := fieldrec.Merge(rec, stored, update)
	if err != nil {
		if errors.Is(err, fieldrec.ErrMalformed) {
			return nil, fmt.Errorf("%w (%v)", ErrNotFieldRecord, err)
		}
		return nil, err
	}
	if merged := len(rec) - head; b.maxMerged > 0 && int64(merged) > b.maxMerged {
		return nil, fmt.Errorf("%w: merged record: %w", ErrBadCommand,
			&keys.LimitError{Limit: "max_value_bytes", Max: int(b.maxMerged), Seen: merged})
	}
	return rec, nil
}
