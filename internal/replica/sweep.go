package replica

import (
	"context"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// sweepLoop reclaims the space of expired records. Expired records are
// invisible to reads at once; this only deletes them, through the command
// path so that every replica deletes the same records.
func (l *Local) sweepLoop() {
	defer l.wg.Done()
	t := time.NewTicker(l.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-l.closing:
			return
		case <-t.C:
			l.sweepOnce()
		}
	}
}

// sweepOnce proposes Expire commands until no expired entry is left.
func (l *Local) sweepOnce() {
	for {
		now := time.Now().UnixMilli()
		recs, err := l.e.ExpiredBefore(now, l.cfg.SweepBatch)
		if err != nil {
			l.log.Warn("ttl sweep: reading the expiry index failed", "err", err)
			return
		}
		if len(recs) == 0 {
			return
		}
		cmd := &commandpb.Command{NowMs: now, Body: &commandpb.Command_Expire{Expire: &commandpb.Expire{Records: recs}}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err = l.Propose(ctx, cmd, storage.NoSync)
		cancel()
		if err != nil || len(recs) < l.cfg.SweepBatch {
			return
		}
	}
}
