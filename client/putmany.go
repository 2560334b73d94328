package client

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// Entry is one record of a bulk put.
type Entry struct {
	Key   Key
	Value []byte
}

// PutManyResult is what became of one Entry: its new version, or why it
// was not written (Err; see Error.MaybeApplied for an unknown outcome).
type PutManyResult struct {
	Version Version
	Err     error
}

// Bulk puts group the entries of one major path into batches of at most
// these many records and bytes (one Execute each).
const (
	putManyBatchRecords = 100
	putManyBatchBytes   = 4 << 20
)

// DefaultPutManyInFlight is how many requests PutMany keeps in flight when
// given inFlight <= 0.
const DefaultPutManyInFlight = 8

// PutMany writes entries, as Oracle NoSQL's put(List<EntryStream>) does for
// bulk loads. It groups them by major path into batches (each one Execute,
// so one batch is atomic; batches are not atomic with each other), sorts
// the batches by the shard that owns them, keeps at most inFlight requests
// in flight, and returns one result per entry, in the order of entries.
// A batch the server refuses as bad input is retried record by record, so
// each record gets its own error; an error with the outcome unknown is not
// retried. opts apply to every request (durability, TTL, timeout).
func (c *Client) PutMany(ctx context.Context, entries []Entry, inFlight int, opts ...Option) []PutManyResult {
	if inFlight <= 0 {
		inFlight = DefaultPutManyInFlight
	}
	results := make([]PutManyResult, len(entries))
	batches := c.putManyBatches(entries)
	work := make(chan []int)
	var wg sync.WaitGroup
	for range min(inFlight, len(batches)) {
		wg.Go(func() {
			for b := range work {
				c.putBatch(ctx, entries, b, results, opts)
			}
		})
	}
	for _, b := range batches {
		work <- b
	}
	close(work)
	wg.Wait()
	return results
}

// putManyBatches returns the entries' indexes in batches: one major path
// each, at most putManyBatchRecords records and putManyBatchBytes bytes,
// ordered by owning shard so that requests in flight spread over shards.
func (c *Client) putManyBatches(entries []Entry) [][]int {
	byMajor := map[string][]int{}
	var order []string
	for i, e := range entries {
		m := Key{Major: e.Key.Major}.String() // the string form escapes '/' in components
		if _, ok := byMajor[m]; !ok {
			order = append(order, m)
		}
		byMajor[m] = append(byMajor[m], i)
	}
	var batches [][]int
	for _, m := range order {
		var cur []int
		size := 0
		for _, i := range byMajor[m] {
			n := len(entries[i].Value)
			if len(cur) == putManyBatchRecords || (len(cur) > 0 && size+n > putManyBatchBytes) {
				batches = append(batches, cur)
				cur, size = nil, 0
			}
			cur, size = append(cur, i), size+n
		}
		batches = append(batches, cur)
	}
	if c.cl != nil {
		t := c.cl.topology()
		slices.SortStableFunc(batches, func(a, b []int) int {
			return int(t.ShardForKey(entries[a[0]].Key.Major)) - int(t.ShardForKey(entries[b[0]].Key.Major))
		})
	}
	return batches
}

// putBatch writes one batch and records each entry's result.
func (c *Client) putBatch(ctx context.Context, entries []Entry, batch []int, results []PutManyResult, opts []Option) {
	if len(batch) == 1 {
		i := batch[0]
		v, err := c.Put(ctx, entries[i].Key, entries[i].Value, opts...)
		results[i] = PutManyResult{Version: v, Err: err}
		return
	}
	ops := make([]Op, len(batch))
	for j, i := range batch {
		ops[j] = OpPut(entries[i].Key, entries[i].Value)
	}
	res, err := c.Execute(ctx, ops, opts...)
	var ce *Error
	if errors.As(err, &ce) && ce.Action == ActionFixInput && !ce.MaybeApplied {
		for _, i := range batch { // one record is bad: find it, write the others
			c.putBatch(ctx, entries, []int{i}, results, opts)
		}
		return
	}
	for j, i := range batch {
		if err != nil {
			results[i] = PutManyResult{Err: err}
		} else {
			results[i] = PutManyResult{Version: res[j].Version}
		}
	}
}
