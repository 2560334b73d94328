package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"slices"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/topology"
)

// DefaultBatchSize is the page size iterators use when given batchSize <= 0.
const DefaultBatchSize = 100

// MultiGetIterator returns the records under parent selected by r and d in
// key order (dir Reverse: descending), fetching batchSize records per
// request. Each page is a separate read, so the iteration as a whole is not
// one snapshot. An error is yielded once, as the last element. Breaking out
// of the loop stops the fetching.
func (c *Client) MultiGetIterator(ctx context.Context, dir Direction, batchSize int, parent Key, r *KeyRange, d Depth, opts ...Option) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		c.multiGetPages(ctx, dir, batchSize, parent, r, d, false, opts, yield)
	}
}

// MultiGetKeysIterator is MultiGetIterator returning keys only.
func (c *Client) MultiGetKeysIterator(ctx context.Context, dir Direction, batchSize int, parent Key, r *KeyRange, d Depth, opts ...Option) iter.Seq2[Key, error] {
	return func(yield func(Key, error) bool) {
		c.multiGetPages(ctx, dir, batchSize, parent, r, d, true, opts, keysOf(yield))
	}
}

// StoreIterator returns the records of the whole store (parent nil), or of
// the major paths that start with parent's major path, selected by r and d.
// parent is a possibly partial major path with no minor path. The order
// across partitions is unspecified. It pages like MultiGetIterator; on a
// replicated store it reads one shard after another, each shard's pages
// from one replica (its leader, for Absolute).
func (c *Client) StoreIterator(ctx context.Context, batchSize int, parent *Key, r *KeyRange, d Depth, opts ...Option) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		c.storeScanPages(ctx, batchSize, parent, r, d, false, opts, yield)
	}
}

// StoreKeysIterator is StoreIterator returning keys only.
func (c *Client) StoreKeysIterator(ctx context.Context, batchSize int, parent *Key, r *KeyRange, d Depth, opts ...Option) iter.Seq2[Key, error] {
	return func(yield func(Key, error) bool) {
		c.storeScanPages(ctx, batchSize, parent, r, d, true, opts, keysOf(yield))
	}
}

func (c *Client) multiGetPages(ctx context.Context, dir Direction, batchSize int, parent Key, r *KeyRange, d Depth, keysOnly bool, opts []Option, yield func(Record, error) bool) {
	if err := checkScan(&parent, r); err != nil {
		yield(Record{}, err)
		return
	}
	o := c.cfg.resolve(opts)
	req := &cairnpb.MultiGetRequest{
		Parent: parent.toPB(), Range: r.toPB(), Depth: cairnpb.Depth(d),
		Direction: cairnpb.Direction(dir), KeysOnly: keysOnly,
		BatchSize: pageSize(batchSize), Consistency: o.consistency.toPB(),
	}
	var stick topology.NodeID
	pages(yield, func(resume []byte) ([]*cairnpb.Record, []byte, error) {
		req.Resume = resume
		resp, err := c.multiGetPage(ctx, o, req, &stick)
		return resp.GetRecords(), resp.GetResume(), err
	})
}

func (c *Client) storeScanPages(ctx context.Context, batchSize int, parent *Key, r *KeyRange, d Depth, keysOnly bool, opts []Option, yield func(Record, error) bool) {
	if err := checkScan(parent, r); err != nil {
		yield(Record{}, err)
		return
	}
	o := c.cfg.resolve(opts)
	req := storeScanRequest(o, batchSize, parent, r, d, keysOnly)
	for _, s := range c.scanShards() {
		req.Shard = uint64(s)
		var stick topology.NodeID
		more := pages(yield, func(resume []byte) ([]*cairnpb.Record, []byte, error) {
			req.Resume = resume
			resp, err := c.storeScanPage(ctx, o, req, &stick)
			return resp.GetRecords(), resp.GetResume(), err
		})
		if !more {
			return
		}
	}
}

// storeScanRequest is a store scan's request, less its shard and resume
// token.
func storeScanRequest(o options, batchSize int, parent *Key, r *KeyRange, d Depth, keysOnly bool) *cairnpb.StoreScanRequest {
	req := &cairnpb.StoreScanRequest{
		Range: r.toPB(), Depth: cairnpb.Depth(d), KeysOnly: keysOnly,
		BatchSize: pageSize(batchSize), Consistency: o.consistency.toPB(),
	}
	if parent != nil {
		req.Parent = parent.toPB()
	}
	return req
}

// scanShards lists the shards a store scan reads, in order: cairn lite's
// one shard (0), or each shard of a replicated store's topology, each
// scanned with its own resume token and replica.
func (c *Client) scanShards() []topology.ShardID {
	if c.cl == nil {
		return []topology.ShardID{0}
	}
	var shards []topology.ShardID
	for _, s := range c.cl.topology().Shards {
		shards = append(shards, s.ID)
	}
	slices.Sort(shards)
	return shards
}

// scanShardsWith returns the shards to scan, refreshing the topology once
// if it lacks shard (a cursor made by a client with a newer topology).
func (c *Client) scanShardsWith(ctx context.Context, shard topology.ShardID) []topology.ShardID {
	shards := c.scanShards()
	if c.cl == nil || slices.Contains(shards, shard) {
		return shards
	}
	c.refreshTopology(ctx, c.cl.topology().Seq)
	return c.scanShards()
}

// pages yields the records of successive pages until a page has no resume
// token, fetch fails, or yield returns false. It reports whether the
// iteration may go on: false after an error or when yield said stop.
func pages(yield func(Record, error) bool, fetch func(resume []byte) ([]*cairnpb.Record, []byte, error)) bool {
	var resume []byte
	for {
		recs, next, err := fetch(resume)
		if err != nil {
			yield(Record{}, err)
			return false
		}
		for _, p := range recs {
			if !yield(recordFromPB(p), nil) {
				return false
			}
		}
		if len(next) == 0 {
			return true
		}
		if len(recs) == 0 && bytes.Equal(next, resume) {
			// A server bug would otherwise make this loop forever.
			yield(Record{}, &Error{Code: codes.Internal, Action: ActionNone,
				Msg: "server returned an empty page with an unchanged resume token"})
			return false
		}
		resume = next
	}
}

// keysOf adapts a key consumer to a record consumer.
func keysOf(yield func(Key, error) bool) func(Record, error) bool {
	return func(r Record, err error) bool { return yield(r.Key, err) }
}

// pageSize maps a caller's batch size to the wire's: <= 0 is the default.
func pageSize(n int) int32 {
	if n <= 0 {
		return DefaultBatchSize
	}
	return int32(min(n, math.MaxInt32))
}

// StoreScanPage reads one page of a store scan, for callers that keep the
// scan's place themselves between calls (the HTTP API does, across
// requests). It returns the records of the page and the cursor of the
// next one: nil after the last page. A nil cursor starts the scan. The
// cursor is opaque:
//
//	shard (8 bytes, big endian) | the shard's resume token (empty: its start)
//
// A page ends where one shard's page ends; a shard with nothing to return
// is skipped. As with StoreIterator, the pages are separate reads.
func (c *Client) StoreScanPage(ctx context.Context, cursor []byte, batchSize int, parent *Key, r *KeyRange, d Depth, keysOnly bool, opts ...Option) ([]Record, []byte, error) {
	if err := checkScan(parent, r); err != nil {
		return nil, nil, err
	}
	shards := c.scanShards()
	shard, resume := shards[0], []byte(nil)
	if cursor != nil {
		if len(cursor) < 8 {
			return nil, nil, &Error{Code: codes.InvalidArgument, Kind: "malformed_cursor", Action: ActionFixInput,
				Msg: "the scan cursor is not one a page returned"}
		}
		shard, resume = topology.ShardID(binary.BigEndian.Uint64(cursor)), cursor[8:]
		if shards = c.scanShardsWith(ctx, shard); !slices.Contains(shards, shard) {
			return nil, nil, &Error{Code: codes.InvalidArgument, Kind: "malformed_cursor", Action: ActionFixInput,
				Msg: fmt.Sprintf("the scan cursor names shard %d, which the store does not have: it is not a cursor a page returned, "+
					"or the store has lost that shard since (start the scan again without a cursor)", shard)}
		}
	}
	o := c.cfg.resolve(opts)
	req := storeScanRequest(o, batchSize, parent, r, d, keysOnly)
	for {
		req.Shard, req.Resume = uint64(shard), resume
		var stick topology.NodeID
		resp, err := c.storeScanPage(ctx, o, req, &stick)
		if err != nil {
			return nil, nil, err
		}
		recs := make([]Record, len(resp.GetRecords()))
		for i, p := range resp.GetRecords() {
			recs[i] = recordFromPB(p)
		}
		if next := resp.GetResume(); len(next) > 0 {
			return recs, append(binary.BigEndian.AppendUint64(nil, uint64(shard)), next...), nil
		}
		i, _ := slices.BinarySearch(shards, shard+1)
		if i == len(shards) {
			return recs, nil, nil
		}
		shard, resume = shards[i], nil
		if len(recs) > 0 {
			return recs, binary.BigEndian.AppendUint64(nil, uint64(shard)), nil
		}
	}
}
