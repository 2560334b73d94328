package replica

import (
	"context"
	"errors"
	"fmt"
	"google.golang.org/protobuf/proto"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// ErrClosed is returned by Propose and ReadReady after Close.
var ErrClosed = errors.New("replica: shutting down")

// Config configures a Local replica.
type Config struct {
	// MaxGroup bounds the commands committed in one batch. Default 512.
	MaxGroup int
	// GroupWait bounds how long a durable (Sync) group waits for writers on
	// their way, so that one fsync carries them (group_wait.go). A group
	// waits at most as long as a recent durable commit took, never more
	// than this, and gives up after a quarter of this without an arrival.
	// DefaultConfig sets 1ms; zero or less turns the wait off.
	GroupWait time.Duration
	// SweepInterval is how often expired records are reclaimed. Default 1s.
	SweepInterval time.Duration
	// SweepBatch bounds the records one Expire command removes. Default 1000.
	SweepBatch int
	// Logger for state changes. Default slog.Default().
	Logger *slog.Logger
	// Fatal is called once if a commit fails; it must not return normally
	// in production (default: the engine's Fatal, which records the fault
	// in its state file, then logs and exits 70).
	Fatal func(error)
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{MaxGroup: 512, GroupWait: time.Millisecond, SweepInterval: time.Second, SweepBatch: 1000}
}

// Local is a shard with one replica.
type Local struct {
	cfg  Config
	e    *storage.Engine
	meta storage.StoreMeta
	log  *slog.Logger

	proposals chan *proposal
	closing   chan struct{}
	stopped   chan struct{} // closed when the apply loop has exited
	wg        sync.WaitGroup
	closeOnce sync.Once
	failed    atomic.Bool
	wait      *groupWait // the apply loop's own

	applied  atomic.Uint64
	groups   atomic.Uint64 // groups committed, for Stats (stats.go)
	commands atomic.Uint64 // commands applied in them
	mu       sync.Mutex
	advanced chan struct{} // closed and replaced whenever applied grows
}

type proposal struct {
	ctx  context.Context
	cmd  *commandpb.Command
	sync storage.SyncMode
	done chan outcome
}

type outcome struct {
	res storage.Result
	err error
}

// OpenLocal starts a replica over an engine that Init has been called on.
func OpenLocal(e *storage.Engine, meta storage.StoreMeta, cfg Config) (*Local, error) {
	if cfg.MaxGroup <= 0 || cfg.SweepInterval <= 0 || cfg.SweepBatch <= 0 {
		return nil, fmt.Errorf("replica: MaxGroup, SweepInterval and SweepBatch must be positive: %+v", cfg)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Fatal == nil {
		cfg.Fatal = func(err error) { e.Fatal(fmt.Errorf("commit failed: %w", err)) }
	}
	idx, err := e.AppliedIndex()
	if err != nil {
		return nil, err
	}
	l := &Local{
		cfg: cfg, e: e, meta: meta, log: cfg.Logger,
		proposals: make(chan *proposal, cfg.MaxGroup),
		closing:   make(chan struct{}),
		stopped:   make(chan struct{}),
		advanced:  make(chan struct{}),
		wait:      newGroupWait(cfg.GroupWait),
	}
	l.applied.Store(idx)
	l.wg.Add(2)
	go l.applyLoop()
	go l.sweepLoop()
	return l, nil
}

// Engine returns the replica's engine, for reads.
func (l *Local) Engine() *storage.Engine { return l.e }

// Meta returns the store identity.
func (l *Local) Meta() storage.StoreMeta { return l.meta }

// AppliedIndex returns the index of the last applied command.
func (l *Local) AppliedIndex() uint64 { return l.applied.Load() }

// Close stops accepting proposals, finishes the ones taken, and stops the
// sweeper. It does not close the engine.
func (l *Local) Close() {
	l.closeOnce.Do(func() { close(l.closing) })
	l.wg.Wait()
}

// Propose applies cmd with the given sync mode and returns its result. It
// sets cmd.NowMs from the wall clock when zero.
func (l *Local) Propose(ctx context.Context, cmd *commandpb.Command, mode storage.SyncMode) (storage.Result, error) {
	if l.failed.Load() {
		return storage.Result{}, ErrClosed
	}
	if err := prepare(l.e, cmd, 1); err != nil {
		return storage.Result{}, err
	}
	p := &proposal{ctx: ctx, cmd: cmd, sync: mode, done: make(chan outcome, 1)}
	if err := enqueue(ctx, l.proposals, p, l.closing); err != nil {
		return storage.Result{}, err
	}
	// Queued: wait for the outcome whatever the context says. The loop
	// answers everything it takes before it exits, so if it has exited
	// without answering, the proposal was never applied.
	select {
	case o := <-p.done:
		return o.res, o.err
	case <-l.stopped:
		select {
		case o := <-p.done:
			return o.res, o.err
		default:
			return storage.Result{}, ErrClosed
		}
	}
}

// ProposeWith is Propose with a write's full durability; a single replica
// honours the master sync mode, and every ack policy means "this replica".
func (l *Local) ProposeWith(ctx context.Context, cmd *commandpb.Command, w WriteOptions) (storage.Result, error) {
	return l.Propose(ctx, cmd, w.Master)
}

// Spans returns nil: a lite store's one shard owns every partition.
func (l *Local) Spans() []storage.Span { return nil }

// Shard returns 0, the id under which lite's records are filed.
func (l *Local) Shard() uint64 { return 0 }

// Serves returns nil: lite's one shard serves every partition.
func (l *Local) Serves([]string) error { return nil }

// prepare checks and stamps a command before it is queued: the engine must
// admit copies times its size (a replicated write is filed in the Raft log
// and then applied: two copies), and the proposer's clock is set.
func prepare(e *storage.Engine, cmd *commandpb.Command, copies int64) error {
	kind := storage.Reclaims
	if addsData(cmd) {
		kind = storage.AddsData
	}
	if err := e.Admit(copies*int64(proto.Size(cmd)), kind); err != nil {
		return err
	}
	if cmd.NowMs == 0 {
		cmd.NowMs = time.Now().UnixMilli()
	}
	return nil
}

// enqueue hands p to a loop's queue unless ctx ends or the replica closes
// first; then p was never taken.
func enqueue[P any](ctx context.Context, q chan<- P, p P, closing <-chan struct{}) error {
	select {
	case <-closing:
		return ErrClosed
	default:
	}
	select {
	case q <- p:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-closing:
		return ErrClosed
	}
}

func addsData(cmd *commandpb.Command) bool {
	b, ok := cmd.GetBody().(*commandpb.Command_Batch)
	if !ok {
		return false
	}
	for _, op := range b.Batch.GetOps() {
		if op.GetPut() != nil {
			return true
		}
	}
	return false
}
