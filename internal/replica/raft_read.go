package replica

import (
	"context"
	"fmt"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

type readRequest struct {
	ctx   context.Context
	index uint64 // the read index, once Raft confirmed leadership
	done  chan error
}

// ReadReady returns nil once this replica may serve a read under c:
//
//   - NONE_REQUIRED: at once, on any replica that votes (a learner, or a
//     replica its group removed, answers ErrNotVoter, whatever c).
//   - ABSOLUTE: on the leader only, after a Raft ReadIndex round confirms it
//     still leads and its applied index reaches the read index
//     (linearizable; no clock assumption). Elsewhere: *NotLeaderError.
//   - TIME_LAG: on the leader at once; on a follower once it has applied the
//     commit index of a leader notice received within the lag.
//   - VERSION: once the write that made the version is applied here.
//
// Waits end at c.Timeout (or ctx) with ErrConsistency.
func (r *Raft) ReadReady(ctx context.Context, c Consistency) error {
	if r.failed.Load() {
		return ErrClosed
	}
	if !r.admitted.Load() || r.applied.Load() == 0 {
		return ErrRejoining // its store is empty until the leader's snapshot lands
	}
	if !r.Votes() {
		return ErrNotVoter // a learner still catching up, or a replica removed from its group
	}
	if c.Timeout > 0 && c.Kind != Absolute {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	switch c.Kind {
	case Absolute:
		return r.readIndexWait(ctx)
	case TimeLag:
		return r.waitFor(ctx, func() bool { return r.IsLeader() || r.fresh(c.Lag) }, "time lag")
	case AtVersion:
		origin, index, err := storage.ParseVersion(c.Version)
		if err != nil {
			return err
		}
		if origin != r.cfg.Origin {
			since, ok := r.table.Load().VersionSince(origin, index)
			if !ok {
				return fmt.Errorf("%w: version origin %016x, this shard's is %016x", ErrForeignVersion, origin, r.cfg.Origin)
			}
			index = since // a version of a shard this partition moved from: held since then
		}
		return r.waitFor(ctx, func() bool { return r.applied.Load() >= index }, fmt.Sprintf("index %d", index))
	}
	return nil
}

// fresh reports whether a commit notice received within lag is applied.
func (r *Raft) fresh(lag time.Duration) bool {
	n := r.notice.Load()
	return n != nil && time.Since(n.at) <= lag && r.applied.Load() >= n.commit
}

func (r *Raft) waitFor(ctx context.Context, ok func() bool, what string) error {
	for {
		wait := r.waitChan()
		if ok() {
			return nil
		}
		select {
		case <-wait:
		case <-r.closing:
			return ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("%w: waited for %s, applied %d", ErrConsistency, what, r.applied.Load())
		}
	}
}

func (r *Raft) readIndexWait(ctx context.Context) error {
	if l := r.leader.Load(); l != r.cfg.Node {
		return &NotLeaderError{Leader: l}
	}
	q := &readRequest{ctx: ctx, done: make(chan error, 1)}
	select {
	case r.reads <- q:
	case <-ctx.Done():
		return fmt.Errorf("%w: %v", ErrConsistency, ctx.Err())
	case <-r.closing:
		return ErrClosed
	}
	select {
	case err := <-q.done:
		return err
	case <-r.stopped:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("%w: leadership not confirmed in time: %v", ErrConsistency, ctx.Err())
	}
}

// startReads issues one ReadIndex for a batch of linearizable reads.
func (r *Raft) startReads(qs ...*readRequest) {
	if r.leader.Load() != r.cfg.Node {
		for _, q := range qs {
			q.done <- &NotLeaderError{Leader: r.leader.Load()}
		}
		return
	}
	r.readSeq++
	key := readCtx(r.readSeq)
	r.readWait[string(key)] = append(r.readWait[string(key)], qs...)
	r.rn.ReadIndex(key)
}

// releaseReads answers reads whose read index is applied.
func (r *Raft) releaseReads() {
	applied := r.applied.Load()
	keep := r.readIndex[:0]
	for _, q := range r.readIndex {
		switch {
		case q.index <= applied:
			q.done <- nil
		case q.ctx.Err() == nil:
			keep = append(keep, q)
		}
	}
	r.readIndex = keep
}

func (r *Raft) failReads(err error) {
	for k, qs := range r.readWait {
		for _, q := range qs {
			q.done <- err
		}
		delete(r.readWait, k)
	}
	for _, q := range r.readIndex {
		q.done <- err
	}
	r.readIndex = nil
}
