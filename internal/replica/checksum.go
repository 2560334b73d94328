package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// Replica checksums. The leader proposes a Checksum command (Checksum);
// every replica, on applying it at index I, commits what the Ready's batch
// holds up to I, takes a view of its engine right then (the shard's state
// at exactly I), and starts a goroutine that hashes each of the shard's
// partitions from that view at the command's rate (storage.PartitionSums),
// while the loop goes on applying. Results stay here, keyed by the
// command's id, for ChecksumResult: the admin fetches them from every
// replica and compares them partition by partition.
//
// The command changes no state, so apply stays deterministic. An id seen
// again (a retried proposal applied twice) keeps its first index on every
// replica alike. A replica that skips the entry (it caught up through a
// Raft snapshot past it) or restarted since has no result for the id; the
// caller proposes a new id.

// ChecksumResult is one replica's checksum of its shard at Index.
type ChecksumResult struct {
	ID    uint64
	Index uint64
	// Sums holds one sum per partition once Done without Err.
	Sums     []storage.PartitionSum
	Progress storage.SumProgress
	Done     bool
	Err      error
	Started  time.Time
	Ended    time.Time
}

const (
	maxSumJobs = 32        // results kept per replica; the oldest go first
	sumJobTTL  = time.Hour // a finished result is kept this long
)

// sumJobs holds a replica's checksum results. Its methods are safe from
// any goroutine.
type sumJobs struct {
	mu    sync.Mutex
	jobs  map[uint64]*sumJob
	order []uint64 // ids, oldest first
}

type sumJob struct {
	res    ChecksumResult
	cancel context.CancelFunc
}

func (s *sumJobs) get(id uint64) (ChecksumResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return ChecksumResult{}, false
	}
	res := j.res
	return res, true
}

// add registers a job for id at index unless id is known; it reports
// whether it did.
func (s *sumJobs) add(id, index uint64, cancel context.CancelFunc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs == nil {
		s.jobs = make(map[uint64]*sumJob)
	}
	if _, ok := s.jobs[id]; ok {
		return false
	}
	s.expireLocked(time.Now())
	s.jobs[id] = &sumJob{res: ChecksumResult{ID: id, Index: index, Started: time.Now()}, cancel: cancel}
	s.order = append(s.order, id)
	return true
}

// expireLocked drops finished results older than sumJobTTL, then the
// oldest results (cancelling them if they run) beyond maxSumJobs-1.
func (s *sumJobs) expireLocked(now time.Time) {
	keep := s.order[:0]
	for i, id := range s.order {
		j := s.jobs[id]
		old := j.res.Done && now.Sub(j.res.Ended) > sumJobTTL
		if old || len(s.order)-i >= maxSumJobs {
			j.cancel()
			delete(s.jobs, id)
			continue
		}
		keep = append(keep, id)
	}
	s.order = keep
}

func (s *sumJobs) update(id uint64, fn func(*ChecksumResult)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[id]; ok {
		fn(&j.res)
	}
}

// Checksum makes the shard's replicas checksum their partitions at one
// index, on the leader: it proposes a Checksum command with id (unless
// this replica has applied one with id already) and returns the index it
// was applied at. Each replica computes at bytesPerSec (0: unbounded).
// Errors are those of ProposeWith; *NotLeaderError names the leader.
func (r *Raft) Checksum(ctx context.Context, id uint64, bytesPerSec int64) (uint64, error) {
	if res, ok := r.sums.get(id); ok {
		return res.Index, nil
	}
	if len(r.cfg.Partitions) == 0 {
		return 0, fmt.Errorf("replica: shard %d: no partitions configured to checksum", r.cfg.Shard)
	}
	cmd := &commandpb.Command{Body: &commandpb.Command_Checksum{Checksum: &commandpb.Checksum{Id: id, BytesPerSec: bytesPerSec}}}
	if _, err := r.ProposeWith(ctx, cmd, WriteOptions{Master: storage.WriteNoSync, Replica: storage.WriteNoSync}); err != nil {
		return 0, err
	}
	res, ok := r.sums.get(id)
	if !ok {
		return 0, fmt.Errorf("replica: shard %d: checksum %d was applied but its result is gone (too many checksums at once?)", r.cfg.Shard, id)
	}
	return res.Index, nil
}

// ChecksumResult returns this replica's result for checksum id; ok is
// false if it never applied one with that id (or forgot it).
func (r *Raft) ChecksumResult(id uint64) (ChecksumResult, bool) { return r.sums.get(id) }

// cutForChecksum runs on the loop goroutine when the Checksum command at
// index has been applied into rb: it commits the batch (everything up to
// and including index), takes a view right then, starts the computation
// from it, and gives rb a fresh batch for the entries after index. An id
// already seen changes nothing: the first index stands.
func (r *Raft) cutForChecksum(rb *readyBatch, index uint64, c *commandpb.Checksum) error {
	ctx, cancel := context.WithCancel(r.sumCtx)
	if !r.sums.add(c.GetId(), index, cancel) {
		cancel()
		return nil
	}
	if err := rb.b.Commit(rb.mode); err != nil {
		return err
	}
	rb.b.Close()
	view := r.e.NewView()
	t := rb.b.Table()
	rb.b = r.e.NewShardBatch(r.cfg.Shard, r.cfg.Origin)
	rb.b.SetTable(t)
	r.wg.Add(1)
	go r.computeSums(ctx, cancel, c, index, view)
	return nil
}

// computeSums hashes the shard's partitions from view and records the
// result under the command's id.
func (r *Raft) computeSums(ctx context.Context, cancel context.CancelFunc, c *commandpb.Checksum, index uint64, view *storage.View) {
	defer r.wg.Done()
	defer cancel()
	defer view.Close()
	id := c.GetId()
	sums, err := r.sumsAt(ctx, view, index, c.GetBytesPerSec(), func(p storage.SumProgress) {
		r.sums.update(id, func(res *ChecksumResult) { res.Progress = p })
	})
	r.sums.update(id, func(res *ChecksumResult) {
		res.Sums, res.Err, res.Done, res.Ended = sums, err, true, time.Now()
	})
	r.signal() // wakes waitFor callers (tests)
	if err != nil && !errors.Is(err, context.Canceled) {
		r.log.Warn("checksum failed", "id", id, "index", index, "err", err)
		return
	}
	r.log.Debug("checksum done", "id", id, "index", index, "partitions", len(sums))
}

// sumsAt checks that view holds the shard at index, then hashes it.
func (r *Raft) sumsAt(ctx context.Context, view *storage.View, index uint64, rate int64, progress func(storage.SumProgress)) ([]storage.PartitionSum, error) {
	at, err := view.ShardApplied(r.cfg.Shard)
	if err != nil {
		return nil, err
	}
	if at != index {
		return nil, fmt.Errorf("replica: shard %d: the checksum's view is at applied index %d, not %d", r.cfg.Shard, at, index)
	}
	parts, n := r.cfg.Partitions, r.meta.Partitions
	if t, err := view.Table(r.cfg.Shard); err != nil {
		return nil, err
	} else if t != nil {
		parts, n = t.Served(), t.N
	}
	return view.PartitionSums(ctx, r.cfg.Shard, parts, n, rate, progress)
}
