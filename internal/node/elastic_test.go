package node

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

type fakeLeader struct{ leads atomic.Bool }

func (f *fakeLeader) IsLeader() bool { return f.leads.Load() }

// TestWhileLeading: a move's context ends, with cause errLeadershipLost,
// soon after its node stops leading the shard (a leader cut off from its
// peers steps down, and its pending proposals would otherwise wait), and
// not before; cancelling it ends it with context.Canceled.
func TestWhileLeading(t *testing.T) {
	rep := &fakeLeader{}
	rep.leads.Store(true)
	ctx, stop := whileLeading(context.Background(), rep)
	defer stop()
	select {
	case <-ctx.Done():
		t.Fatalf("the context ended while the node leads: %v", context.Cause(ctx))
	case <-time.After(5 * leaderPoll): // a few polls, not a synchronisation
	}
	rep.leads.Store(false)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context did not end within 10s of the node stepping down")
	}
	if cause := context.Cause(ctx); !errors.Is(cause, errLeadershipLost) {
		t.Errorf("cause %v, want errLeadershipLost", cause)
	}

	rep.leads.Store(true)
	ctx, stop = whileLeading(context.Background(), rep)
	stop()
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
		t.Errorf("cause after stop: %v, want context.Canceled", cause)
	}
}
