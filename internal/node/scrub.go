package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/storage"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Scrubbing reads every block of the engine's sstables, and its MANIFEST
// and WALs, checking their checksums (storage.Engine.VerifyBlocks). Damage
// found marks the engine corrupt, which runs the engine's corruption
// handling (storage.Config.OnCorruption). Two things scrub: a background
// loop (ScrubConfig, cairn lite and cairn sn --scrub-rate), and, on a
// storage node, the admin's plan verify-data (Control.VerifyBlocks).

// ScrubConfig configures the background scrub.
type ScrubConfig struct {
	// Rate bounds the scrub's reads, in bytes per second. 0 (the default)
	// turns the background scrub off.
	Rate int64
	// Interval is the pause between the end of a pass and the start of
	// the next. Default 24h. The first pass starts when the node starts.
	Interval time.Duration
}

// DefaultScrubInterval is ScrubConfig.Interval's default.
const DefaultScrubInterval = 24 * time.Hour

func (c ScrubConfig) validate() error {
	switch {
	case c.Rate < 0:
		return fmt.Errorf("scrub-rate: negative %d (bytes per second; 0 turns the scrub off)", c.Rate)
	case c.Rate > 0 && c.Interval < time.Second:
		return fmt.Errorf("scrub-interval: %v is below 1s", c.Interval)
	}
	return nil
}

// scrubber runs the background scrub of one engine until stop.
type scrubber struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startScrub starts the background scrub of e, or returns nil when
// cfg.Rate is 0.
func startScrub(e *storage.Engine, cfg ScrubConfig, log *slog.Logger) *scrubber {
	if cfg.Rate <= 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &scrubber{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		scrubLoop(ctx, e, cfg, log.With("component", "scrub"))
	}()
	return s
}

// stop ends the scrub and waits for it; safe on nil.
func (s *scrubber) stop() {
	if s == nil {
		return
	}
	s.cancel()
	<-s.done
}

func scrubLoop(ctx context.Context, e *storage.Engine, cfg ScrubConfig, log *slog.Logger) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c := e.Corrupt(); c != nil {
			log.Warn("background scrub skipped: the engine is already marked corrupt", "file", c.File, "detail", c.Detail)
		} else {
			scrubPass(ctx, e, cfg.Rate, log)
		}
		t.Reset(cfg.Interval)
	}
}

// scrubPass runs one VerifyBlocks pass and logs its start and end.
func scrubPass(ctx context.Context, e *storage.Engine, rate int64, log *slog.Logger) {
	start := time.Now()
	log.Info("scrub pass starting", "rate_bytes_per_sec", rate)
	var last storage.ScrubProgress
	err := e.VerifyBlocks(ctx, rate, func(p storage.ScrubProgress) { last = p })
	args := []any{"files", last.FilesDone, "bytes", last.BytesDone, "duration", time.Since(start).Round(time.Millisecond)}
	switch {
	case errors.Is(err, storage.ErrCorrupt):
		log.Error("scrub pass found damage; the engine is marked corrupt", append(args, "err", err)...)
	case ctx.Err() != nil:
		log.Info("scrub pass stopped", args...)
	case err != nil:
		log.Warn("scrub pass failed", append(args, "err", err)...)
	default:
		log.Info("scrub pass done: every block checked", args...)
	}
}

// blockCheck is the admin's VerifyBlocks run on a storage node: one at a
// time, keyed by the request's id.
type blockCheck struct {
	id     uint64
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	progress storage.ScrubProgress
	err      error
	finished bool
	started  time.Time
	ended    time.Time
}

// blockChecks holds a node's current admin block check.
type blockChecks struct {
	mu  sync.Mutex
	cur *blockCheck
}

// get returns the check with id, starting it (and ending another one)
// when it is not the current one.
func (b *blockChecks) get(e *storage.Engine, id uint64, rate int64, log *slog.Logger) *blockCheck {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil && b.cur.id == id {
		return b.cur
	}
	if b.cur != nil {
		b.cur.cancel()
		<-b.cur.done
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &blockCheck{id: id, cancel: cancel, done: make(chan struct{}), started: time.Now()}
	b.cur = c
	go func() {
		defer close(c.done)
		log.Info("verifying every block for the admin", "id", id, "rate_bytes_per_sec", rate)
		err := e.VerifyBlocks(ctx, rate, func(p storage.ScrubProgress) {
			c.mu.Lock()
			c.progress = p
			c.mu.Unlock()
		})
		c.mu.Lock()
		c.err, c.finished, c.ended = err, true, time.Now()
		c.mu.Unlock()
		log.Info("block verification for the admin ended", "id", id, "err", err)
	}()
	return c
}

// stop ends the current check and waits for it.
func (b *blockChecks) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil {
		b.cur.cancel()
		<-b.cur.done
	}
}

// reply reports the check's progress or outcome.
func (c *blockCheck) reply(e *storage.Engine) *controlpb.VerifyBlocksReply {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.progress
	r := &controlpb.VerifyBlocksReply{Done: c.finished, Files: int32(p.Files), FilesDone: int32(p.FilesDone),
		Bytes: p.Bytes, BytesDone: p.BytesDone}
	end := time.Now()
	if c.finished {
		end = c.ended
	}
	r.DurationMs = end.Sub(c.started).Milliseconds()
	switch {
	case !c.finished:
	case errors.Is(c.err, storage.ErrCorrupt):
		r.Corrupt, r.Detail = true, c.err.Error()
		var ce *storage.CorruptionError
		if errors.As(c.err, &ce) {
			r.File, r.Detail = ce.File, ce.Detail
		} else if k := e.Corrupt(); k != nil {
			r.File, r.Detail = k.File, k.Detail
		}
	case c.err != nil:
		r.Error = c.err.Error()
	}
	return r
}

func (c controlRPC) VerifyBlocks(_ context.Context, req *controlpb.VerifyBlocksRequest) (*controlpb.VerifyBlocksReply, error) {
	n := c.n
	if req.GetId() == 0 || req.GetBytesPerSec() < 0 {
		return nil, status.Error(codes.InvalidArgument, "verify blocks: an id and a non-negative rate are required")
	}
	// Under ctlMu, which a heal holds while it replaces the engine: the
	// check starts on the engine in place, and a heal stops it (n.blocks).
	n.ctlMu.Lock()
	defer n.ctlMu.Unlock()
	if err := n.checkStore(req.GetStore()); err != nil {
		return nil, err
	}
	if n.healing.Load() {
		return nil, errHealing(n.id())
	}
	e := n.engine()
	return n.blocks.get(e, req.GetId(), req.GetBytesPerSec(), n.log).reply(e), nil
}
