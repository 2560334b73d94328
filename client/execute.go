package client

import (
	"context"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
)

// Op is one write in an Execute batch. Build it with OpPut, OpPutIfAbsent,
// OpPutIfPresent, OpPutIfVersion, OpDelete or OpDeleteIfVersion, then refine
// it with AbortIfUnsuccessful, Return and TTL. An Op is a value: the methods
// return a modified copy.
type Op struct {
	key    Key
	value  []byte
	delete bool
	cond   cairnpb.Condition
	match  Version
	abort  bool
	ret    ReturnValueVersion
	retSet bool
	ttl    time.Duration
	ttlSet bool
}

// OpPut writes v under k unconditionally.
func OpPut(k Key, v []byte) Op { return Op{key: k, value: v} }

// OpPutIfAbsent writes v under k if no record exists there.
func OpPutIfAbsent(k Key, v []byte) Op {
	return Op{key: k, value: v, cond: cairnpb.Condition_CONDITION_IF_ABSENT}
}

// OpPutIfPresent writes v under k if a record exists there.
func OpPutIfPresent(k Key, v []byte) Op {
	return Op{key: k, value: v, cond: cairnpb.Condition_CONDITION_IF_PRESENT}
}

// OpPutIfVersion writes v under k if the record there has version match.
func OpPutIfVersion(k Key, v []byte, match Version) Op {
	return Op{key: k, value: v, cond: cairnpb.Condition_CONDITION_IF_VERSION, match: match}
}

// OpDelete deletes the record under k; it is done if one existed.
func OpDelete(k Key) Op { return Op{key: k, delete: true} }

// OpDeleteIfVersion deletes the record under k if it has version match.
func OpDeleteIfVersion(k Key, match Version) Op {
	return Op{key: k, delete: true, cond: cairnpb.Condition_CONDITION_IF_VERSION, match: match}
}

// AbortIfUnsuccessful makes the whole batch fail, writing nothing, if this
// op is not done. Execute then returns an *ExecutionError.
func (o Op) AbortIfUnsuccessful() Op { o.abort = true; return o }

// Return chooses what the op's Result says about the previous record. It
// overrides a WithReturn passed to Execute.
func (o Op) Return(r ReturnValueVersion) Op { o.ret, o.retSet = r, true; return o }

// TTL makes a put's record expire d after the write (0: never). It overrides
// a WithTTL passed to Execute and is ignored for deletes.
func (o Op) TTL(d time.Duration) Op { o.ttl, o.ttlSet = d, true; return o }

// Key returns the key the op writes.
func (o Op) Key() Key { return o.key }

func (o Op) toPB(def options) *cairnpb.Operation {
	ret, ttl := def.ret, def.ttl
	if o.retSet {
		ret = o.ret
	}
	if o.ttlSet {
		ttl = o.ttl
	}
	p := &cairnpb.Operation{AbortIfUnsuccessful: o.abort}
	if o.delete {
		p.Op = &cairnpb.Operation_Delete{Delete: &cairnpb.DeleteOp{
			Key: o.key.toPB(), Condition: o.cond, MatchVersion: o.match,
			Return: cairnpb.ReturnValueVersion(ret),
		}}
	} else {
		p.Op = &cairnpb.Operation_Put{Put: &cairnpb.PutOp{
			Key: o.key.toPB(), Value: o.value, Condition: o.cond, MatchVersion: o.match,
			Return: cairnpb.ReturnValueVersion(ret), TtlMs: millis(ttl),
		}}
	}
	return p
}

// Execute applies ops atomically: all of them or none. Their keys must share
// one major path; otherwise Execute fails before sending with an *Error of
// kind "multiple_major_paths". It returns one Result per op, in order. If an
// op marked AbortIfUnsuccessful is not done, nothing is written and Execute
// returns nil results and an *ExecutionError naming the op.
func (c *Client) Execute(ctx context.Context, ops []Op, opts ...Option) ([]Result, error) {
	for i, op := range ops {
		if err := keys.Key(op.key).CheckUTF8(); err != nil {
			field := "put.key"
			if op.delete {
				field = "delete.key"
			}
			return nil, invalidKey(fmt.Sprintf("execute: op %d: %s", i, field), err)
		}
	}
	for i, op := range ops {
		if !slices.Equal(op.key.Major, ops[0].key.Major) {
			return nil, &Error{Code: codes.InvalidArgument, Kind: KindMultipleMajorPaths, Action: ActionFixInput,
				Msg: fmt.Sprintf("execute: op %d key %s and op 0 key %s have different major paths; "+
					"an atomic batch must stay within one major path", i, op.key, ops[0].key)}
		}
	}
	o := c.cfg.resolve(opts)
	req := &cairnpb.ExecuteRequest{Durability: o.durability.toPB()}
	for _, op := range ops {
		req.Ops = append(req.Ops, op.toPB(o))
	}
	rt := route{write: true}
	if len(ops) > 0 {
		rt = writeRoute(ops[0].key.Major)
	}
	var resp *cairnpb.ExecuteResponse
	err := c.call(ctx, o, rt, func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error {
		req.Header = h
		var err error
		resp, err = kv.Execute(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return executeResults(ops, resp)
}

func executeResults(ops []Op, resp *cairnpb.ExecuteResponse) ([]Result, error) {
	if !resp.GetCommitted() {
		i := int(resp.GetFailedIndex())
		if i < 0 || i >= len(ops) {
			return nil, &Error{Code: codes.Internal, Action: ActionNone,
				Msg: fmt.Sprintf("execute: server reported failed op %d of %d", i, len(ops))}
		}
		return nil, &ExecutionError{Index: i, Result: resultFromPB(ops[i].key, resp.GetFailedResult())}
	}
	if len(resp.GetResults()) != len(ops) {
		return nil, &Error{Code: codes.Internal, Action: ActionNone,
			Msg: fmt.Sprintf("execute: server returned %d results for %d ops", len(resp.GetResults()), len(ops))}
	}
	out := make([]Result, len(ops))
	for i, r := range resp.GetResults() {
		out[i] = resultFromPB(ops[i].key, r)
	}
	return out, nil
}
