package client

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/api/cairnpb"
)

// ReturnValueVersion chooses what a write returns about the record it
// replaced or deleted. The zero value means ReturnNone.
type ReturnValueVersion int

// The choices, numbered as on the wire.
const (
	ReturnNone    ReturnValueVersion = 1 // nothing
	ReturnValue   ReturnValueVersion = 2 // the previous value
	ReturnVersion ReturnValueVersion = 3 // the previous version
	ReturnAll     ReturnValueVersion = 4 // the previous value, version and expiration
)

func (r ReturnValueVersion) String() string {
	switch r {
	case 0:
		return "DEFAULT"
	case ReturnNone:
		return "NONE"
	case ReturnValue:
		return "VALUE"
	case ReturnVersion:
		return "VERSION"
	case ReturnAll:
		return "ALL"
	}
	return fmt.Sprintf("ReturnValueVersion(%d)", int(r))
}

// Result is the outcome of a conditional write or a delete.
type Result struct {
	// Done reports whether the write happened: its condition held, or for a
	// delete, a record existed and was deleted.
	Done bool
	// Version is the new version of a put that was done.
	Version Version
	// Previous is the record before the write, with the parts the return
	// choice asked for. It is nil unless WithReturn (or Op.Return) asked for
	// something and a record existed.
	Previous *Record
}

func resultFromPB(k Key, p *cairnpb.OperationResult) Result {
	r := Result{Done: p.GetSuccess()}
	if v := p.GetNewVersion(); len(v) > 0 {
		r.Version = Version(v)
	}
	if p.GetPreviousExists() {
		r.Previous = &Record{
			Key:        k,
			Value:      p.GetPreviousValue(),
			Version:    Version(p.GetPreviousVersion()),
			Expiration: timeFromMillis(p.GetPreviousExpirationMs()),
		}
	}
	return r
}

// Put writes v under k unconditionally and returns the new version.
func (c *Client) Put(ctx context.Context, k Key, v []byte, opts ...Option) (Version, error) {
	// Put has no way to hand back the previous record: do not ask for it.
	opts = append(opts[:len(opts):len(opts)], WithReturn(0))
	r, err := c.put(ctx, k, v, cairnpb.Condition_CONDITION_UNSPECIFIED, nil, opts)
	return r.Version, err
}

// PutIfAbsent writes v under k only if no record exists there. Result.Done
// is false, with no error, if one does.
func (c *Client) PutIfAbsent(ctx context.Context, k Key, v []byte, opts ...Option) (Result, error) {
	return c.put(ctx, k, v, cairnpb.Condition_CONDITION_IF_ABSENT, nil, opts)
}

// PutIfPresent writes v under k only if a record exists there. Result.Done
// is false, with no error, if none does.
func (c *Client) PutIfPresent(ctx context.Context, k Key, v []byte, opts ...Option) (Result, error) {
	return c.put(ctx, k, v, cairnpb.Condition_CONDITION_IF_PRESENT, nil, opts)
}

// PutIfVersion writes v under k only if the record there has version match.
// Result.Done is false, with no error, if it does not (or is absent).
func (c *Client) PutIfVersion(ctx context.Context, k Key, v []byte, match Version, opts ...Option) (Result, error) {
	return c.put(ctx, k, v, cairnpb.Condition_CONDITION_IF_VERSION, match, opts)
}

// Delete deletes the record under k. Result.Done reports whether a record
// existed and was deleted.
func (c *Client) Delete(ctx context.Context, k Key, opts ...Option) (Result, error) {
	return c.delete(ctx, k, cairnpb.Condition_CONDITION_UNSPECIFIED, nil, opts)
}

// DeleteIfVersion deletes the record under k only if it has version match.
// Result.Done is false, with no error, if it does not (or is absent).
func (c *Client) DeleteIfVersion(ctx context.Context, k Key, match Version, opts ...Option) (Result, error) {
	return c.delete(ctx, k, cairnpb.Condition_CONDITION_IF_VERSION, match, opts)
}

func (c *Client) put(ctx context.Context, k Key, v []byte, cond cairnpb.Condition, match Version, opts []Option) (Result, error) {
	return c.putOp(ctx, k, &cairnpb.PutOp{Value: v, Condition: cond, MatchVersion: match}, opts)
}

// putOp sends op (its value, condition and merge choice set) under k.
func (c *Client) putOp(ctx context.Context, k Key, op *cairnpb.PutOp, opts []Option) (Result, error) {
	if err := checkKey("put.key", k); err != nil {
		return Result{}, err
	}
	o := c.cfg.resolve(opts)
	op.Key, op.Return, op.TtlMs = k.toPB(), cairnpb.ReturnValueVersion(o.ret), millis(o.ttl)
	req := &cairnpb.PutRequest{Op: op, Durability: o.durability.toPB()}
	var res Result
	err := c.call(ctx, o, writeRoute(k.Major), func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error {
		req.Header = h
		resp, err := kv.Put(ctx, req)
		if err == nil {
			res = resultFromPB(k, resp.GetResult())
		}
		return err
	})
	return res, err
}

func (c *Client) delete(ctx context.Context, k Key, cond cairnpb.Condition, match Version, opts []Option) (Result, error) {
	if err := checkKey("delete.key", k); err != nil {
		return Result{}, err
	}
	o := c.cfg.resolve(opts)
	req := &cairnpb.DeleteRequest{
		Op: &cairnpb.DeleteOp{
			Key: k.toPB(), Condition: cond, MatchVersion: match,
			Return: cairnpb.ReturnValueVersion(o.ret),
		},
		Durability: o.durability.toPB(),
	}
	var res Result
	err := c.call(ctx, o, writeRoute(k.Major), func(ctx context.Context, kv cairnpb.KVClient, h *cairnpb.RequestHeader) error {
		req.Header = h
		resp, err := kv.Delete(ctx, req)
		if err == nil {
			res = resultFromPB(k, resp.GetResult())
		}
		return err
	})
	return res, err
}
