package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"golang.org/x/time/rate"
)

// Source is the source shard's replica on the node that runs the move.
// *replica.Raft is one.
type Source interface {
	Shard() uint64
	Origin() uint64
	Table() *storage.PartitionTable
	Engine() *storage.Engine
	AppliedIndex() uint64
	Propose(ctx context.Context, cmd *commandpb.Command, mode storage.SyncMode) (storage.Result, error)
	CommandsIn(lo, hi uint64, fn func(uint64, *commandpb.Command) error) error
}

// Target reaches the target shard, wherever its leader is.
type Target interface {
	Propose(ctx context.Context, cmd *commandpb.Command) (storage.Result, error)
	// Table reads the target's partition table from its leader, with
	// everything committed before the call applied.
	Table(ctx context.Context) (*storage.PartitionTable, error)
}

// Move names a partition move.
type Move struct {
	Partition uint32
	From, To  uint64 // shard ids
}

// Config tunes Run.
type Config struct {
	ChunkBytes  int   // the most bytes of records per Ingest or Replay; default 256 KiB
	BytesPerSec int64 // bound on the bytes copied and replayed per second; 0: none
	// HandoffLag is how many source log entries may remain to replay when
	// Run proposes the Transfer; default 64.
	HandoffLag uint64
	Progress   func(Progress) // called after every proposal to the target; may be nil
	// Failpoint, if set, is called as the move reaches a phase that fault
	// tests aim at (test/robustness TestMoveFaults), and may block:
	//   "copy"      the first chunk of a new attempt is on the target, the
	//               copy is not complete;
	//   "handoff"   the target has replayed the source's log to within
	//               HandoffLag; the source is about to propose Transfer;
	//   "activate"  the source's Transfer is committed; the target is about
	//               to be activated.
	// An error stops the move. Nil in production.
	Failpoint func(ctx context.Context, phase string) error
}

// Progress is where a move is.
type Progress struct {
	Phase       string // "copy", "replay", "handoff", "drop", "done"
	BytesCopied int64
	Replayed    uint64 // the source index the target holds writes through
	Applied     uint64 // the source's applied index
}

func (c *Config) defaults() {
	if c.ChunkBytes <= 0 {
		c.ChunkBytes = 256 << 10
	}
	if c.HandoffLag == 0 {
		c.HandoffLag = 64
	}
}

// mover is one Run.
type mover struct {
	m    Move
	src  Source
	dst  Target
	cfg  Config
	lim  *rate.Limiter
	prog Progress
}

// Run moves m.Partition from the source to the target shard, from wherever
// the move is, and returns once the source has dropped it. An error leaves
// a state that Run, called again, goes on from.
func Run(ctx context.Context, m Move, src Source, dst Target, cfg Config) error {
	cfg.defaults()
	mv := &mover{m: m, src: src, dst: dst, cfg: cfg}
	if cfg.BytesPerSec > 0 {
		mv.lim = rate.NewLimiter(rate.Limit(cfg.BytesPerSec), max(cfg.ChunkBytes, int(min(cfg.BytesPerSec, 1<<30))))
	}
	if src.Shard() != m.From {
		return fmt.Errorf("migrate: the source replica is of shard %d, not %d", src.Shard(), m.From)
	}
	for {
		done, err := mv.step(ctx)
		if err != nil || done {
			return err
		}
	}
}

// step reads both tables and takes the next step of the move.
func (mv *mover) step(ctx context.Context) (done bool, err error) {
	p := mv.m.Partition
	dt, err := mv.dst.Table(ctx)
	if err != nil {
		return false, err
	}
	st := mv.src.Table()
	if st == nil || dt == nil {
		return false, errors.New("migrate: both shards need a partition table (InitTable) before a move")
	}
	if st.N != dt.N {
		return false, fmt.Errorf("migrate: the shards have %d and %d partitions: a split is in progress", st.N, dt.N)
	}
	se, de := st.Parts[p], dt.Parts[p]
	switch {
	case de != nil && de.State == storage.PartOwned:
		return mv.drop(ctx, se)
	case se == nil:
		return false, fmt.Errorf("migrate: shard %d does not hold partition %d, and shard %d does not own it", mv.m.From, p, mv.m.To)
	case se.State == storage.PartGone && se.Peer == mv.m.To:
		return false, mv.finish(ctx, se, de)
	case se.State == storage.PartOwned || (se.State == storage.PartOutgoing && se.Peer == mv.m.To):
		return false, mv.copyAndHandoff(ctx, se, de)
	}
	return false, fmt.Errorf("migrate: partition %d is %v on shard %d (peer %d): not a move to shard %d", p, se.State, mv.m.From, se.Peer, mv.m.To)
}

// drop removes the partition from the source once the target owns it.
// failpoint calls Config.Failpoint, if any.
func (mv *mover) failpoint(ctx context.Context, phase string) error {
	if mv.cfg.Failpoint == nil {
		return nil
	}
	return mv.cfg.Failpoint(ctx, phase)
}

func (mv *mover) drop(ctx context.Context, se *storage.PartEntry) (bool, error) {
	if se != nil {
		mv.report("drop")
		if err := mv.proposeSrc(ctx, dropCmd(mv.m.Partition)); err != nil {
			return false, err
		}
	}
	mv.report("done")
	return true, nil
}
