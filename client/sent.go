package client

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc/stats"
)

// sentKey is the context key of an attempt's *atomic.Bool "request sent"
// flag.
type sentKey struct{}

// sentTracker is a gRPC stats handler that sets an attempt's sent flag once
// its request message has been handed to a live connection. A write that
// fails without a server answer before that point was certainly not applied
// and may be retried; after it, its outcome is unknown (MaybeApplied).
type sentTracker struct{}

func (sentTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (sentTracker) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.OutPayload); !ok {
		return
	}
	if f, ok := ctx.Value(sentKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
}

func (sentTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (sentTracker) HandleConn(context.Context, stats.ConnStats) {}
