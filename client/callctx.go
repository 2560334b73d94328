package client

import (
	"context"
	"sync/atomic"
	"time"
)

// callContext returns the context an attempt's RPC runs under: ctx, ending
// when ctx ends, carrying the attempt's sent flag, but with no deadline for
// gRPC to see.
//
// The request already carries its timeout in its header (timeout_ms, set
// from ctx's deadline by Client.header), and the server bounds its work by
// that. A deadline on the call's context would make gRPC send it once more,
// as a grpc-timeout header that differs on every request (so HPACK cannot
// index it), and make the server arm a timer of its own for each request:
// about a microsecond of server CPU per get. The client still gives up on
// time: when ctx's deadline passes, gRPC sees ctx done, resets the stream
// (the server's handler sees its context cancelled) and returns
// DeadlineExceeded, as before.
func callContext(ctx context.Context, sent *atomic.Bool) context.Context {
	return headerDeadline{context.WithValue(ctx, sentKey{}, sent)}
}

// headerDeadline hides its context's deadline; Done, Err and Value are the
// context's own.
type headerDeadline struct{ context.Context }

func (headerDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }
