package server

import (
	"context"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// Put handles put and its conditional forms.
func (s *Server) Put(ctx context.Context, req *cairnpb.PutRequest) (_ *cairnpb.WriteResponse, err error) {
	defer s.calls.done(opPut, time.Now(), &err)
	if err := checkHeader(req.GetHeader()); err != nil {
		return nil, s.status(err)
	}
	if err := s.checkPut(req.GetOp()); err != nil {
		return nil, s.status(err)
	}
	op := &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: req.GetOp()}}
	return s.writeOne(ctx, req.GetHeader(), req.GetDurability(), op)
}

// Delete handles delete and deleteIfVersion.
func (s *Server) Delete(ctx context.Context, req *cairnpb.DeleteRequest) (_ *cairnpb.WriteResponse, err error) {
	defer s.calls.done(opDelete, time.Now(), &err)
	if err := checkHeader(req.GetHeader()); err != nil {
		return nil, s.status(err)
	}
	if err := s.checkDelete(req.GetOp()); err != nil {
		return nil, s.status(err)
	}
	op := &cairnpb.Operation{Op: &cairnpb.Operation_Delete{Delete: req.GetOp()}}
	return s.writeOne(ctx, req.GetHeader(), req.GetDurability(), op)
}

func (s *Server) writeOne(ctx context.Context, h *cairnpb.RequestHeader, d *cairnpb.Durability, op *cairnpb.Operation) (*cairnpb.WriteResponse, error) {
	res, err := s.propose(ctx, h, d, s.batchCommand(op), opKey(op).GetMajor())
	if err != nil {
		return nil, s.status(err)
	}
	return &cairnpb.WriteResponse{Result: res.Ops[0]}, nil
}

// Execute applies a list of operations on one major path atomically.
func (s *Server) Execute(ctx context.Context, req *cairnpb.ExecuteRequest) (_ *cairnpb.ExecuteResponse, err error) {
	defer s.calls.done(opExecute, time.Now(), &err)
	if err := checkHeader(req.GetHeader()); err != nil {
		return nil, s.status(err)
	}
	if err := s.checkOps(req.GetOps()); err != nil {
		return nil, s.status(err)
	}
	res, err := s.propose(ctx, req.GetHeader(), req.GetDurability(), s.batchCommand(req.GetOps()...), opKey(req.GetOps()[0]).GetMajor())
	if err != nil {
		return nil, s.status(err)
	}
	if res.Aborted {
		return &cairnpb.ExecuteResponse{FailedIndex: int32(res.FailedIndex), FailedResult: res.Failed}, nil
	}
	return &cairnpb.ExecuteResponse{Committed: true, Results: res.Ops}, nil
}

// MultiDelete deletes the records under a parent key.
func (s *Server) MultiDelete(ctx context.Context, req *cairnpb.MultiDeleteRequest) (_ *cairnpb.MultiDeleteResponse, err error) {
	defer s.calls.done(opMultiDelete, time.Now(), &err)
	if err := checkHeader(req.GetHeader()); err != nil {
		return nil, s.status(err)
	}
	if err := s.checkKey("parent", req.GetParent()); err != nil {
		return nil, s.status(err)
	}
	depth, err := checkDepth(req.GetDepth())
	if err != nil {
		return nil, s.status(err)
	}
	if _, err := checkRange(req.GetRange()); err != nil {
		return nil, s.status(err)
	}
	cmd := &commandpb.Command{Body: &commandpb.Command_MultiDelete{MultiDelete: &commandpb.MultiDelete{
		Parent: req.GetParent(), Range: req.GetRange(), Depth: cairnpb.Depth(depth),
	}}}
	res, err := s.propose(ctx, req.GetHeader(), req.GetDurability(), cmd, req.GetParent().GetMajor())
	if err != nil {
		return nil, s.status(err)
	}
	return &cairnpb.MultiDeleteResponse{Deleted: res.Deleted}, nil
}

// batchCommand is the command for ops. A batch that merges fields carries
// this server's value limit, which bounds the merged records on every
// replica alike.
func (s *Server) batchCommand(ops ...*cairnpb.Operation) *commandpb.Command {
	b := &commandpb.Batch{Ops: ops}
	for _, op := range ops {
		if op.GetPut().GetMergeFields() {
			b.MaxMergedBytes = int64(s.limits.MaxValueBytes)
			break
		}
	}
	return &commandpb.Command{Body: &commandpb.Command_Batch{Batch: b}}
}

// propose runs a validated command through the shard.
func (s *Server) propose(ctx context.Context, h *cairnpb.RequestHeader, d *cairnpb.Durability, cmd *commandpb.Command, major []string) (storage.Result, error) {
	w, err := checkDurability(d)
	if err != nil {
		return storage.Result{}, err
	}
	sh, err := s.router.ShardFor(major)
	if err != nil {
		return storage.Result{}, err
	}
	ctx, cancel, err := s.begin(ctx, h)
	defer cancel()
	if err != nil {
		return storage.Result{}, err
	}
	res, err := sh.ProposeWith(ctx, cmd, w)
	if err != nil {
		return storage.Result{}, err
	}
	return res, res.Err
}

func opKey(op *cairnpb.Operation) *cairnpb.Key {
	if p := op.GetPut(); p != nil {
		return p.GetKey()
	}
	return op.GetDelete().GetKey()
}
