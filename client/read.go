package client

import (
	"context"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/topology"
)

// Get reads the record under k. found is false, with no error, if there is
// none (or it has expired).
func (c *Client) Get(ctx context.Context, k Key, opts ...Option) (rec Record, found bool, err error) {
	if err := checkKey("key", k); err != nil {
		return Record{}, false, err
	}
	o := c.cfg.resolve(opts)
	req := &cairnpb.GetRequest{Key: k.toPB(), Consistency: o.consistency.toPB()}
	err = c.call(ctx, o, readRoute(k.Major, o.consistency), func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error {
		req.Header = h
		resp, err := kv.Get(ctx, req)
		if err == nil {
			found = resp.GetFound()
			if found {
				rec = recordFromPB(resp.GetRecord())
			}
		}
		return err
	})
	return rec, found, err
}

// MultiGet reads the records under parent selected by r and d, in key order.
// parent must have a complete major path (and may have a minor path); all
// the records share it, so the read is one snapshot of one partition.
func (c *Client) MultiGet(ctx context.Context, parent Key, r *KeyRange, d Depth, opts ...Option) ([]Record, error) {
	return c.multiGet(ctx, parent, r, d, false, opts)
}

// MultiGetKeys is MultiGet returning keys only.
func (c *Client) MultiGetKeys(ctx context.Context, parent Key, r *KeyRange, d Depth, opts ...Option) ([]Key, error) {
	recs, err := c.multiGet(ctx, parent, r, d, true, opts)
	if err != nil {
		return nil, err
	}
	ks := make([]Key, len(recs))
	for i, rec := range recs {
		ks[i] = rec.Key
	}
	return ks, nil
}

// multiGet asks for everything at once (batch size 0). Should the server
// still answer in pages, it follows the resume token.
func (c *Client) multiGet(ctx context.Context, parent Key, r *KeyRange, d Depth, keysOnly bool, opts []Option) ([]Record, error) {
	if err := checkScan(&parent, r); err != nil {
		return nil, err
	}
	o := c.cfg.resolve(opts)
	req := &cairnpb.MultiGetRequest{
		Parent: parent.toPB(), Range: r.toPB(), Depth: cairnpb.Depth(d),
		KeysOnly: keysOnly, Consistency: o.consistency.toPB(),
	}
	var out []Record
	var stick topology.NodeID
	for {
		resp, err := c.multiGetPage(ctx, o, req, &stick)
		if err != nil {
			return nil, err
		}
		for _, rec := range resp.GetRecords() {
			out = append(out, recordFromPB(rec))
		}
		if len(resp.GetResume()) == 0 {
			return out, nil
		}
		req.Resume = resp.GetResume()
	}
}

// multiGetPage reads one page. stick keeps a multi-page read on one replica
// of a replicated store (see route.stick).
func (c *Client) multiGetPage(ctx context.Context, o options, req *cairnpb.MultiGetRequest, stick *topology.NodeID) (*cairnpb.MultiGetResponse, error) {
	var resp *cairnpb.MultiGetResponse
	rt := readRoute(req.GetParent().GetMajor(), o.consistency)
	rt.stick = stick
	err := c.call(ctx, o, rt, func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error {
		req.Header = h
		var err error
		resp, err = kv.MultiGet(ctx, req)
		return err
	})
	return resp, err
}

// storeScanPage reads one page of the scan of shard req.Shard (0: the whole
// store, for cairn lite).
func (c *Client) storeScanPage(ctx context.Context, o options, req *cairnpb.StoreScanRequest, stick *topology.NodeID) (*cairnpb.StoreScanResponse, error) {
	var resp *cairnpb.StoreScanResponse
	rt := shardRoute(topology.ShardID(req.GetShard()), o.consistency, stick)
	err := c.call(ctx, o, rt, func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error {
		req.Header = h
		var err error
		resp, err = kv.StoreScan(ctx, req)
		return err
	})
	return resp, err
}

// MultiDelete deletes the records under parent selected by r and d,
// atomically, and returns how many it deleted. parent must have a complete
// major path.
func (c *Client) MultiDelete(ctx context.Context, parent Key, r *KeyRange, d Depth, opts ...Option) (int, error) {
	if err := checkScan(&parent, r); err != nil {
		return 0, err
	}
	o := c.cfg.resolve(opts)
	req := &cairnpb.MultiDeleteRequest{
		Parent: parent.toPB(), Range: r.toPB(), Depth: cairnpb.Depth(d),
		Durability: o.durability.toPB(),
	}
	var n int
	err := c.call(ctx, o, writeRoute(parent.Major), func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error {
		req.Header = h
		resp, err := kv.MultiDelete(ctx, req)
		if err == nil {
			n = int(resp.GetDeleted())
		}
		return err
	})
	return n, err
}
