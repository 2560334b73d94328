package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/topology"
)

// Entry is one record of a bulk put. A TTL above 0 makes the record
// expire TTL after the write, over the options' WithTTL; 0 leaves it to
// the options (whose default is never).
type Entry struct {
	Key   Key
	Value []byte
	TTL   time.Duration
}

// PutManyResult is what became of one Entry: its new version, or why it
// was not written (Err; see Error.MaybeApplied for an unknown outcome).
type PutManyResult struct {
	Version Version
	Err     error
}

// putManyBatchBytes bounds the value bytes of one PutMany request; the
// server bounds its records (StoreInfo's max_put_many_records).
const putManyBatchBytes = 4 << 20

// putManyRounds bounds how often a record is sent again. A record is sent
// again when its error says the write was certainly not applied and may
// succeed later or elsewhere: a routing error (REFRESH: not_leader,
// wrong_shard) or a passing one (RETRY: dropped by a leader change, a
// partition moving), the rule a single write follows. The rounds also stop
// at the resend deadline: the first round's end plus the operation's
// timeout.
const putManyRounds = 16

// DefaultPutManyInFlight is how many requests PutMany keeps in flight when
// given inFlight <= 0.
const DefaultPutManyInFlight = 8

// PutMany writes entries, as Oracle NoSQL's put(List<EntryStream>) does for
// bulk loads: it groups them by the shard that owns them into PutMany
// requests (of any major paths; each record is written on its own, not
// atomically with the others), keeps at most inFlight requests in flight,
// and returns one result per entry, in the order of entries. A record
// refused for a reason that passes and certainly not applied (its shard
// moved or changed leader, a leader change dropped it, its partition was
// moving) is sent again, after a backoff and a topology refresh, within
// the operation's timeout; an error with the outcome unknown
// (MaybeApplied) is never retried. opts apply to every request
// (durability, TTL, timeout).
func (c *Client) PutMany(ctx context.Context, entries []Entry, inFlight int, opts ...Option) []PutManyResult {
	if inFlight <= 0 {
		inFlight = DefaultPutManyInFlight
	}
	results := make([]PutManyResult, len(entries))
	todo := make([]int, len(entries))
	for i := range todo {
		todo[i] = i
	}
	seen := c.topologySeq()
	c.putManyRound(ctx, entries, todo, inFlight, results, opts)
	ctx, cancel := context.WithTimeout(ctx, c.cfg.resolve(opts).timeout)
	defer cancel()
	backoff := initialBackoff
	for round := 1; round < putManyRounds; round++ {
		todo = resendable(results, todo)
		if len(todo) == 0 || !sleep(ctx, &backoff) {
			break
		}
		if c.cl != nil {
			c.refreshTopology(ctx, seen)
		}
		seen = c.topologySeq()
		c.putManyRound(ctx, entries, todo, inFlight, results, opts)
	}
	return results
}

// topologySeq is the sequence of the topology the client routes by (0 for
// cairn lite).
func (c *Client) topologySeq() uint64 {
	if c.cl == nil {
		return 0
	}
	return c.cl.topology().Seq
}

// resendable returns the records of todo whose error means "send it
// again": certainly not applied, and refused for a reason that passes
// (retryable, as for a single write).
func resendable(results []PutManyResult, todo []int) []int {
	var again []int
	for _, i := range todo {
		var ce *Error
		if errors.As(results[i].Err, &ce) && retryable(ce, true) {
			again = append(again, i)
		}
	}
	return again
}

func (c *Client) putManyRound(ctx context.Context, entries []Entry, todo []int, inFlight int, results []PutManyResult, opts []Option) {
	batches := c.putManyBatches(entries, todo)
	work := make(chan putManyBatch)
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
}

type putManyBatch struct {
	shard topology.ShardID
	idx   []int
}

// putManyBatches groups the entries at todo by owning shard into batches
// of at most the server's max_put_many_records records and
// putManyBatchBytes bytes, interleaving the shards so that the requests in
// flight spread over them.
func (c *Client) putManyBatches(entries []Entry, todo []int) []putManyBatch {
	maxRecords := int(c.maxPutManyRecords.Load())
	byShard := map[topology.ShardID][]int{}
	var shards []topology.ShardID
	for _, i := range todo {
		s := topology.ShardID(0)
		if c.cl != nil {
			s = c.cl.topology().ShardForKey(entries[i].Key.Major)
		}
		if _, ok := byShard[s]; !ok {
			shards = append(shards, s)
		}
		byShard[s] = append(byShard[s], i)
	}
	per := map[topology.ShardID][]putManyBatch{}
	for _, s := range shards {
		var cur []int
		size := 0
		for _, i := range byShard[s] {
			n := len(entries[i].Value)
			if len(cur) == maxRecords || (len(cur) > 0 && size+n > putManyBatchBytes) {
				per[s] = append(per[s], putManyBatch{s, cur})
				cur, size = nil, 0
			}
			cur, size = append(cur, i), size+n
		}
		per[s] = append(per[s], putManyBatch{s, cur})
	}
	var out []putManyBatch
	for k := 0; len(out) < countBatches(per); k++ {
		for _, s := range shards {
			if k < len(per[s]) {
				out = append(out, per[s][k])
			}
		}
	}
	return out
}

func countBatches(per map[topology.ShardID][]putManyBatch) int {
	n := 0
	for _, b := range per {
		n += len(b)
	}
	return n
}

// putBatch sends one PutMany request to its shard's leader and records
// each entry's result.
func (c *Client) putBatch(ctx context.Context, entries []Entry, b putManyBatch, results []PutManyResult, opts []Option) {
	o := c.cfg.resolve(opts)
	req := &cairnpb.PutManyRequest{Durability: o.durability.toPB(), Ops: make([]*cairnpb.PutOp, len(b.idx))}
	for j, i := range b.idx {
		op := OpPut(entries[i].Key, entries[i].Value)
		if entries[i].TTL > 0 {
			op = op.TTL(entries[i].TTL)
		}
		req.Ops[j] = op.toPB(o).GetPut()
	}
	var resp *cairnpb.PutManyResponse
	rt := route{kind: routeShard, shard: b.shard, write: true, leader: true}
	err := c.call(ctx, o, rt, func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error {
		req.Header = h
		var err error
		resp, err = kv.PutMany(ctx, req)
		return err
	})
	if err == nil && len(resp.GetResults()) != len(b.idx) {
		err = &Error{Code: codes.Internal, Action: ActionNone, MaybeApplied: true,
			Msg: fmt.Sprintf("put_many: the server returned %d results for %d records", len(resp.GetResults()), len(b.idx))}
	}
	for j, i := range b.idx {
		if err != nil {
			results[i] = PutManyResult{Err: err}
			continue
		}
		r := resp.GetResults()[j]
		if r.GetErrorCode() != 0 {
			results[i] = PutManyResult{Err: recordError(r)}
			continue
		}
		results[i] = PutManyResult{Version: r.GetResult().GetNewVersion()}
	}
}

// recordError is the *Error of one PutMany record, as a single Put of it
// would have returned.
func recordError(r *cairnpb.PutManyResult) *Error {
	st := status.New(codes.Code(r.GetErrorCode()), r.GetErrorMessage())
	if d := r.GetDetail(); d != nil {
		if withD, err := st.WithDetails(d); err == nil {
			st = withD
		}
	}
	return convertError(st.Err(), true, true)
}
