package server

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
)

// MaxPutManyRecords bounds the records of one PutMany request (published in
// StoreInfo as max_put_many_records).
const MaxPutManyRecords = 1000

// PutMany is a bulk load: each put is done on its own, not atomically with
// the others. Puts of one major path go together as one batch, in request
// order (so a later put of a key wins); the batches of different major
// paths are proposed at once, and the shard's group commit writes them
// together. A put that fails (invalid, or not this node's to write) gets
// its own error in its result; the others go on.
func (s *Server) PutMany(ctx context.Context, req *cairnpb.PutManyRequest) (_ *cairnpb.PutManyResponse, err error) {
	defer s.calls.done(opPutMany, time.Now(), &err)
	if err := checkHeader(req.GetHeader()); err != nil {
		return nil, s.status(err)
	}
	ops := req.GetOps()
	if len(ops) == 0 || len(ops) > MaxPutManyRecords {
		return nil, s.status(badInput("invalid_argument", "put_many: %d records; send 1 to %d (max_put_many_records) per request", len(ops), MaxPutManyRecords))
	}
	if _, err := checkDurability(req.GetDurability()); err != nil {
		return nil, s.status(err)
	}
	results := make([]*cairnpb.PutManyResult, len(ops))
	groups := map[string][]int{}
	var order []string
	for i, op := range ops {
		if err := s.checkPut(op); err != nil {
			results[i] = s.failedResult(err)
			continue
		}
		g := keys.Key{Major: op.GetKey().GetMajor()}.String() // escaped: ["a\x00b"] and ["a", "b"] differ
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for gi, g := range order {
		idx := groups[g]
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[gi] = s.putGroup(ctx, req, idx, results)
		}()
	}
	wg.Wait()
	if err := s.allRouting(errs); err != nil {
		// Nothing was written because this node cannot write any of it
		// (not the leader, say): one request-level error, so that the
		// client's usual retry follows the leader hint and backs off.
		return nil, s.status(err)
	}
	return &cairnpb.PutManyResponse{Results: results}, nil
}

// allRouting returns the first error if every proposed batch failed with
// an error that a retry elsewhere or later may cure, certainly not
// applied; nil otherwise (or if nothing was proposed).
func (s *Server) allRouting(errs []error) error {
	for _, err := range errs {
		if err == nil {
			return nil
		}
		d := s.failedResult(err).GetDetail()
		if d == nil || d.GetMaybeApplied() || (d.GetAction() != cairnpb.ErrorDetail_ACTION_REFRESH && d.GetAction() != cairnpb.ErrorDetail_ACTION_RETRY) {
			return nil
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// putGroup proposes the puts at idx (one major path) as one batch, writes
// their results, and returns the batch's error.
func (s *Server) putGroup(ctx context.Context, req *cairnpb.PutManyRequest, idx []int, results []*cairnpb.PutManyResult) error {
	ops := make([]*cairnpb.Operation, len(idx))
	for j, i := range idx {
		ops[j] = &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: req.GetOps()[i]}}
	}
	res, err := s.propose(ctx, req.GetHeader(), req.GetDurability(), s.batchCommand(ops...), req.GetOps()[idx[0]].GetKey().GetMajor())
	for j, i := range idx {
		if err != nil {
			results[i] = s.failedResult(err)
		} else {
			results[i] = &cairnpb.PutManyResult{Result: res.Ops[j]}
		}
	}
	return err
}

// failedResult is a record's result for err: the status a single Put
// would have returned.
func (s *Server) failedResult(err error) *cairnpb.PutManyResult {
	st := status.Convert(s.status(err))
	r := &cairnpb.PutManyResult{ErrorCode: uint32(st.Code()), ErrorMessage: st.Message()}
	for _, d := range st.Details() {
		if ed, ok := d.(*cairnpb.ErrorDetail); ok {
			r.Detail = ed
		}
	}
	return r
}
