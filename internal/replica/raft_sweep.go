package replica

import (
	"context"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// sweepLoop reclaims expired records of this shard; only the leader sweeps,
// through the log, so every replica deletes the same records.
func (r *Raft) sweepLoop() {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-r.closing:
			return
		case <-t.C:
			if r.IsLeader() {
				r.sweepOnce()
			}
		}
	}
}

func (r *Raft) sweepOnce() {
	for {
		now := time.Now().UnixMilli()
		recs, err := r.e.ExpiredIn(r.cfg.Shard, now, r.cfg.SweepBatch)
		if err != nil || len(recs) == 0 {
			return
		}
		cmd := &commandpb.Command{NowMs: now, Body: &commandpb.Command_Expire{Expire: &commandpb.Expire{Records: recs}}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err = r.Propose(ctx, cmd, storage.NoSync)
		cancel()
		if err != nil || len(recs) < r.cfg.SweepBatch {
			return
		}
	}
}
