package client

import (
	"context"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/api/fieldrec"
)

// Field is one named value of a field record: a value format the server
// understands (drawn in api/fieldrec), so that a write can change some
// fields of a record in one round trip, without reading it.
type Field = fieldrec.Field

// EncodeFields returns fs as a field record, to store with Put.
func EncodeFields(fs []Field) []byte { return fieldrec.Append(nil, fs) }

// DecodeFields returns the fields of a field record (a Record's Value).
// The values alias b.
func DecodeFields(b []byte) ([]Field, error) { return fieldrec.Decode(b, nil, nil) }

// MergeFields writes fs into the field record under k in one round trip:
// each field replaces the stored field of its name, and the others are
// appended. With no record under k, the record becomes fs. A stored value
// that is not a field record fails with kind not_field_record, and a merged
// record over the store's max_value_bytes with limit_exceeded; then nothing
// is written. Options act as for Put (TTL, durability); so does the version
// returned.
func (c *Client) MergeFields(ctx context.Context, k Key, fs []Field, opts ...Option) (Version, error) {
	opts = append(opts[:len(opts):len(opts)], WithReturn(0))
	r, err := c.putOp(ctx, k, &cairnpb.PutOp{Value: fieldrec.Append(nil, fs), MergeFields: true}, opts)
	return r.Version, err
}

// UpdateFields is MergeFields for a record that exists: with none under k,
// Result.Done is false, no error, and nothing is written. This is YCSB's
// update.
func (c *Client) UpdateFields(ctx context.Context, k Key, fs []Field, opts ...Option) (Result, error) {
	return c.putOp(ctx, k, &cairnpb.PutOp{
		Value: fieldrec.Append(nil, fs), MergeFields: true, Condition: cairnpb.Condition_CONDITION_IF_PRESENT,
	}, opts)
}
