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

// merge returns the field record stored with update's fields merged in
// (api/fieldrec), bounded by the command's max_merged_bytes.
func (b *Batch) merge(stored, update []byte) ([]byte, error) {
	merged, err := fieldrec.Merge(nil, stored, update)
	if err != nil {
		if errors.Is(err, fieldrec.ErrMalformed) {
			return nil, fmt.Errorf("%w (%v)", ErrNotFieldRecord, err)
		}
		return nil, err
	}
	if b.maxMerged > 0 && int64(len(merged)) > b.maxMerged {
		return nil, fmt.Errorf("%w: merged record: %w", ErrBadCommand,
			&keys.LimitError{Limit: "max_value_bytes", Max: int(b.maxMerged), Seen: len(merged)})
	}
	return merged, nil
}
