package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cairndb/cairn/internal/transport/transportpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// ErrNotLeader is returned (wrapped in *NotLeaderError) when a request that
// needs the leader reaches another replica. The request was not applied.
var ErrNotLeader = errors.New("replica: not the leader")

// NotLeaderError names the leader this replica knows of (0: none known).
type NotLeaderError struct{ Leader uint64 }

func (e *NotLeaderError) Error() string {
	if e.Leader == 0 {
		return "replica: not the leader, and no leader is known yet (an election is under way)"
	}
	return fmt.Sprintf("replica: not the leader; node %d is", e.Leader)
}

func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }

// ErrDropped is returned when a proposal was certainly not applied: a new
// leader's log superseded it. Retrying is safe.
var ErrDropped = errors.New("replica: write dropped by a leader change; it was not applied")

// ErrUnknownOutcome is returned when a write's proposal was handed to Raft
// but its outcome was not learned before the request's deadline: it may or
// may not be applied. Do not retry blindly.
var ErrUnknownOutcome = errors.New("replica: write outcome unknown (it may have been applied)")

// ErrAckTimeout is returned for a write with replica-ack ALL that was
// applied (it is on a majority) but not every replica confirmed it in time.
var ErrAckTimeout = errors.New("replica: write applied, but not every replica acknowledged it in time")

// AckPolicy is how many replicas must hold a write before it is acknowledged.
type AckPolicy int

// The ack policies.
const (
	AckMajority AckPolicy = iota
	AckAll
	AckNone
)

// Sender sends Raft traffic to other nodes (the transport).
type Sender interface {
	Send(shard uint64, msgs []*raftpb.Message)
	SendNotice(shard uint64, to uint64, n *transportpb.CommitNotice)
}

// RaftConfig configures one replica of a replicated shard.
type RaftConfig struct {
	Shard  uint64   // the shard's id
	Node   uint64   // this node's id, also its Raft id in every group
	Voters []uint64 // node ids of the shard's replicas, this one included
	// Spans are the record spans of the shard's partitions.
	Spans []storage.Span
	// Partitions are the shard's partitions (Spans covers them), each
	// summed on its own by a checksum (checksum.go). Without them the
	// replica refuses to propose a checksum.
	Partitions []keys.PartitionID
	// Origin makes this shard's versions unique in the store.
	Origin uint64
	// Preferred is the node that should lead, so leaders spread evenly
	// (0: no preference).
	Preferred uint64
	// Rejoin starts the replica uninitialized and silent, for a node whose
	// data was lost: it takes no Raft messages until Admit, which the node
	// calls once the leader has readmitted it (see Readmit).
	Rejoin bool
	// TickInterval is one Raft tick. Default 100ms.
	TickInterval time.Duration
	// ElectionTicks and HeartbeatTicks, in ticks. Defaults 10 and 1.
	ElectionTicks, HeartbeatTicks int
	// CommitLinger is how long a leader may hold an append that only
	// carries a new commit index, waiting for a later append to the same
	// follower to carry it (raft_commit.go). Default 1ms; negative: none.
	CommitLinger time.Duration
	// LogKeep is the most applied entries a leader keeps for a replica
	// that lags (raft_retain.go); one further behind needs a snapshot.
	// Default 10000.
	LogKeep uint64
	// LogSlack is how many applied entries a log keeps once every replica
	// has them (a leader's view; a follower always truncates to it).
	// Default 500, at most LogKeep.
	LogSlack      uint64
	MaxGroup      int           // proposals per Raft batch; default 512
	SweepInterval time.Duration // TTL sweeping, default 1s
	SweepBatch    int           // default 1000
	Sender        Sender
	Logger        *slog.Logger
	Fatal         func(error) // default: the engine's Fatal (records the fault, logs, exits 70)
}

func (c *RaftConfig) setDefaults() {
	if c.TickInterval == 0 {
		c.TickInterval = 100 * time.Millisecond
	}
	if c.ElectionTicks == 0 {
		c.ElectionTicks = 10
	}
	if c.HeartbeatTicks == 0 {
		c.HeartbeatTicks = 1
	}
	if c.LogKeep == 0 {
		c.LogKeep = 10000
	}
	if c.LogSlack == 0 {
		c.LogSlack = 500
	}
	c.LogSlack = min(c.LogSlack, c.LogKeep)
	if c.CommitLinger == 0 {
		c.CommitLinger = time.Millisecond
	}
	if c.MaxGroup == 0 {
		c.MaxGroup = 512
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = time.Second
	}
	if c.SweepBatch == 0 {
		c.SweepBatch = 1000
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Raft is one replica of a replicated shard. See the package doc for the
// contract it shares with Local.
type Raft struct {
	cfg  RaftConfig
	e    *storage.Engine
	meta storage.StoreMeta
	log  *slog.Logger
	rn   *raft.RawNode
	ls   *logStore

	inbox     chan *raftpb.Message
	proposals chan *raftProposal
	reads     chan *readRequest
	reports   chan func(*raft.RawNode)
	closing   chan struct{}
	stopped   chan struct{} // closed when the loop has exited
	wg        sync.WaitGroup
	closeOnce sync.Once
	failed    atomic.Bool

	applied  atomic.Uint64
	counts   readyCounts                            // for Stats (stats.go)
	table    atomic.Pointer[storage.PartitionTable] // published after each commit (ptable.go)
	leader   atomic.Uint64
	term     atomic.Uint64
	mu       sync.Mutex
	advanced chan struct{}
	notice   atomic.Pointer[noticeSeen]
	voters   atomic.Pointer[[]uint64]
	learners atomic.Pointer[[]uint64]
	admitted atomic.Bool
	// preferred is the node that should lead (cfg.Preferred until
	// SetPreferred; a replica change moves it).
	preferred atomic.Uint64
	// sums holds the checksum results; sumCtx ends (cancelling the
	// computations) when the replica closes.
	sums      sumJobs
	sumCtx    context.Context
	sumCancel context.CancelFunc

	// Owned by the loop goroutine.
	nextProp  uint64
	pending   map[uint64]*raftProposal
	ackWait   []*raftProposal
	noneWait  []*raftProposal // AckNone blind puts, answered once persisted
	confWait  []*confWaiter
	readSeq   uint64
	readWait  map[string][]*readRequest
	held      heldCommits // a leader's commit-only appends (raft_commit.go)
	readIndex []*readRequest
	ticks     int
	// impossibleLogged is when impossibleAck or noteLostLog last logged:
	// one line per 10 s for both (loop goroutine only).
	impossibleLogged time.Time
	// staleLogged is when staleCommit last logged, and staleSince and
	// staleLast bound its current streak of dropped heartbeats (loop
	// goroutine only).
	staleLogged, staleSince, staleLast time.Time
	// watch is a leader's record of its followers' progress, and stuck
	// the followers it found stuck (raft_followers.go); watch is loop
	// goroutine only.
	watch       map[uint64]*followerWatch
	stuck       atomic.Pointer[map[uint64]string]
	spaceLogged time.Time // admitAppend last logged (loop goroutine only)
	// transferTo is a pending leadership transfer's target, for
	// transferTicks ticks; avoid holds targets not to try again before a
	// time (raft_space.go). Loop goroutine only.
	transferTo    uint64
	transferTicks int
	avoid         map[uint64]time.Time
	snapFailed    time.Time // a snapshot last failed to reach a peer (loop only)
	lastTerm      uint64    // the term of the last applied entry
	// snapCache is the latest snapshot built, whose data is the export
	// filed under snapID in out (raft_snapshot.go). Loop only.
	snapCache *raftpb.Snapshot
	snapID    uint64
	out       exports
	// snapIn hands received snapshots to the loop, which holds the one
	// raft may restore in inSnap (loop only); inBusy (under inMu) is set
	// from the start of a receive until the loop is done with it.
	snapIn   chan *inboundSnap
	inSnap   *inboundSnap
	inMu     sync.Mutex
	inBusy   bool
	proposed bool // loop only: a proposal went to raft since the last yield (raft_loop.go)
	// batch holds the proposals taken since the loop last stepped them into
	// raft, which it does as one MsgProp (raft_propose.go). Loop only.
	batch propBatch
}

// noticeSeen is the freshest commit notice a follower has received.
type noticeSeen struct {
	at     time.Time
	commit uint64
}

// OpenRaft starts a replica of cfg.Shard over the engine.
func OpenRaft(e *storage.Engine, meta storage.StoreMeta, cfg RaftConfig) (*Raft, error) {
	cfg.setDefaults()
	if cfg.Fatal == nil {
		cfg.Fatal = func(err error) { e.Fatal(fmt.Errorf("persisting the Raft log failed: %w", err)) }
	}
	if cfg.Sender == nil || cfg.Node == 0 || len(cfg.Voters) == 0 {
		return nil, fmt.Errorf("replica: shard %d: Sender, Node and Voters are required", cfg.Shard)
	}
	ls, err := openLogStore(e, cfg.Shard, cfg.Voters, cfg.Rejoin)
	if err != nil {
		return nil, err
	}
	applied, err := e.ShardApplied(cfg.Shard)
	if err != nil {
		return nil, err
	}
	r := &Raft{
		cfg: cfg, e: e, meta: meta, ls: ls,
		log:       cfg.Logger.With("shard", cfg.Shard),
		inbox:     make(chan *raftpb.Message, 4096),
		proposals: make(chan *raftProposal, cfg.MaxGroup),
		reads:     make(chan *readRequest, 4096),
		reports:   make(chan func(*raft.RawNode), 1024),
		snapIn:    make(chan *inboundSnap),
		closing:   make(chan struct{}),
		stopped:   make(chan struct{}),
		advanced:  make(chan struct{}),
		pending:   make(map[uint64]*raftProposal),
		readWait:  make(map[string][]*readRequest),
	}
	ls.snapshot = r.buildSnapshot
	r.sumCtx, r.sumCancel = context.WithCancel(context.Background())
	r.applied.Store(applied)
	r.counts.commit.Store(max(ls.hard.GetCommit(), applied)) // what was applied was committed
	t, err := e.LoadTable(cfg.Shard)
	if err != nil {
		return nil, err
	}
	r.table.Store(t)
	r.voters.Store(&ls.conf.Voters)
	r.learners.Store(&ls.conf.Learners)
	r.admitted.Store(!cfg.Rejoin)
	r.preferred.Store(cfg.Preferred)
	rn, err := raft.NewRawNode(&raft.Config{
		ID: cfg.Node, ElectionTick: cfg.ElectionTicks, HeartbeatTick: cfg.HeartbeatTicks,
		Storage: ls, Applied: applied, MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
		MaxUncommittedEntriesSize: 256 << 20, CheckQuorum: true, PreVote: true,
		ReadOnlyOption: raft.ReadOnlySafe, DisableProposalForwarding: true, Logger: raftLogger{r.log},
	})
	if err != nil {
		return nil, fmt.Errorf("replica: shard %d: %w", cfg.Shard, err)
	}
	r.rn = rn
	r.wg.Add(2)
	go r.loop()
	go r.sweepLoop()
	return r, nil
}

// Engine returns the engine, for reads.
func (r *Raft) Engine() *storage.Engine { return r.e }

// Meta returns the store identity.
func (r *Raft) Meta() storage.StoreMeta { return r.meta }

// Shard returns the shard's id.
func (r *Raft) Shard() uint64 { return r.cfg.Shard }

// Spans returns the record spans of the partitions the shard serves (all of
// its records when it has no partition table).
func (r *Raft) Spans() []storage.Span {
	if t := r.table.Load(); t != nil {
		return storage.PartitionSpans(r.cfg.Shard, t.Served(), t.N)
	}
	return r.cfg.Spans
}

// AppliedIndex returns the last applied index.
func (r *Raft) AppliedIndex() uint64 { return r.applied.Load() }

// Leader returns the node this replica believes leads (0: unknown) and the term.
func (r *Raft) Leader() (uint64, uint64) { return r.leader.Load(), r.term.Load() }

// IsLeader reports whether this replica leads its shard.
func (r *Raft) IsLeader() bool { return r.leader.Load() == r.cfg.Node }

// Step hands an inbound Raft message to the replica. It never blocks: when
// the inbox is full the message is dropped, and Raft retransmits.
func (r *Raft) Step(m *raftpb.Message) {
	if !r.admitted.Load() {
		return // not readmitted yet: the leader still remembers our old log
	}
	if m.GetType() == raftpb.MsgSnap {
		return // its data comes with it only through ReceiveSnapshot
	}
	if r.applied.Load() == 0 && (m.GetType() == raftpb.MsgVote || m.GetType() == raftpb.MsgPreVote) {
		// A readmitted replica forgot the votes it cast before its data was
		// lost; it votes again only once the leader's snapshot has taught it
		// the current term and leader (and so its vote lease).
		return
	}
	select {
	case r.inbox <- m:
	default:
	}
}

// ReportUnreachable tells Raft a message to node was lost (transport).
func (r *Raft) ReportUnreachable(node uint64) {
	r.report(func(rn *raft.RawNode) { rn.ReportUnreachable(node) })
}

// ReportSnapshot tells Raft whether a snapshot reached node (transport).
func (r *Raft) ReportSnapshot(node uint64, ok bool) {
	status := raft.SnapshotFinish
	if !ok {
		status = raft.SnapshotFailure
	}
	r.report(func(rn *raft.RawNode) {
		if !ok {
			r.snapFailed = time.Now()
		}
		rn.ReportSnapshot(node, status)
	})
}

// report runs fn on the loop goroutine; dropped if the queue is full (Raft
// recovers from a lost report through its own probing).
func (r *Raft) report(fn func(*raft.RawNode)) {
	select {
	case r.reports <- fn:
	default:
	}
}

// Notice records a leader's commit notice (time-lag reads).
func (r *Raft) Notice(n *transportpb.CommitNotice) {
	if n.GetTerm() < r.term.Load() {
		return
	}
	r.notice.Store(&noticeSeen{at: time.Now(), commit: n.GetCommit()})
	r.signal()
}

// Close stops the replica, its checksum computations and the snapshot
// sends that read its exports (their next read fails). It does not close
// the engine.
func (r *Raft) Close() {
	r.closeOnce.Do(func() {
		close(r.closing)
		r.sumCancel()
	})
	r.wg.Wait()
	r.out.close()
}

type raftProposal struct {
	ctx     context.Context
	cmd     *commandpb.Command
	master  storage.SyncMode
	replica storage.SyncMode
	ack     AckPolicy
	id      uint64
	term    uint64
	index   uint64 // known once persisted (for AckNone) or applied
	state   atomic.Int32
	applied atomic.Bool    // set before an AckAll write waits for every replica
	result  storage.Result // its result, while it waits
	done    chan outcome
}

const (
	propQueued int32 = iota
	propProposed
	propAbandoned
)

// WriteOptions are a write's durability settings.
type WriteOptions struct {
	Master, Replica storage.SyncMode
	Ack             AckPolicy
}

// Propose replicates and applies cmd. Errors: *NotLeaderError (not applied),
// ErrDropped (not applied), ErrUnknownOutcome, ErrAckTimeout, ErrClosed,
// storage.ErrDiskFull, or the context's error if it ended before the
// proposal reached Raft (not applied).
func (r *Raft) ProposeWith(ctx context.Context, cmd *commandpb.Command, w WriteOptions) (storage.Result, error) {
	if r.failed.Load() {
		return storage.Result{}, ErrClosed
	}
	if leader := r.leader.Load(); leader != r.cfg.Node {
		return storage.Result{}, &NotLeaderError{Leader: leader}
	}
	if err := prepare(r.e, cmd, 2); err != nil {
		return storage.Result{}, err
	}
	p := &raftProposal{ctx: ctx, cmd: cmd, master: w.Master, replica: w.Replica, ack: w.Ack, done: make(chan outcome, 1)}
	if err := enqueue(ctx, r.proposals, p, r.closing); err != nil {
		return storage.Result{}, err
	}
	select {
	case o := <-p.done:
		return o.res, o.err
	case <-r.stopped:
		select {
		case o := <-p.done:
			return o.res, o.err
		default:
		}
		if p.state.CompareAndSwap(propQueued, propAbandoned) {
			return storage.Result{}, ErrClosed
		}
		return storage.Result{}, ErrUnknownOutcome
	case <-ctx.Done():
		if p.state.CompareAndSwap(propQueued, propAbandoned) {
			return storage.Result{}, ctx.Err()
		}
		select { // the outcome may have arrived at the same moment
		case o := <-p.done:
			return o.res, o.err
		default:
		}
		if p.applied.Load() {
			return storage.Result{}, ErrAckTimeout
		}
		return storage.Result{}, fmt.Errorf("%w: %v", ErrUnknownOutcome, ctx.Err())
	}
}

// Propose is ProposeWith with the same sync mode on every replica and a
// majority ack.
func (r *Raft) Propose(ctx context.Context, cmd *commandpb.Command, mode storage.SyncMode) (storage.Result, error) {
	return r.ProposeWith(ctx, cmd, WriteOptions{Master: mode, Replica: mode})
}

// Handoff hands leadership to the most caught-up live voter (successor),
// if this replica leads, and waits (until ctx ends) for it to move: a
// clean shutdown then costs clients a transfer, not an election timeout.
func (r *Raft) Handoff(ctx context.Context) {
	if !r.IsLeader() {
		return
	}
	r.TransferLeadership(0)
	_ = r.waitFor(ctx, func() bool { return !r.IsLeader() }, "leadership handoff")
}

// TransferLeadership asks Raft to hand this leader's leadership to node if
// node is a live voter, else to the most caught-up live voter (successor):
// a node that is down or still a learner would never take it, and the
// leader would keep it. With no live voter, nothing happens. node 0: any.
func (r *Raft) TransferLeadership(node uint64) {
	r.report(func(rn *raft.RawNode) {
		st := rn.Status()
		if st.RaftState != raft.StateLeader {
			return
		}
		if to := r.successor(&st, node, 0); to != 0 {
			rn.TransferLeader(to)
		}
	})
}

// successor picks from st (a leader's status) the voter to hand leadership
// to: prefer if it is live, else the live voter with the highest match
// (the lowest id of equals). Live: not this node, a voter, heard from
// within the last election timeout (CheckQuorum resets RecentActive), not
// taking a snapshot, not avoided after a failed transfer, and, if within >
// 0, no more than within entries behind this leader's log. 0: none is.
func (r *Raft) successor(st *raft.Status, prefer, within uint64) uint64 {
	live := func(id uint64) bool {
		pr, ok := st.Progress[id]
		return ok && id != r.cfg.Node && !pr.IsLearner && pr.RecentActive && pr.State != tracker.StateSnapshot &&
			!r.avoided(id) && (within == 0 || pr.Match+within >= r.ls.lastIndex)
	}
	if prefer != 0 && live(prefer) {
		return prefer
	}
	var best, match uint64
	for id, pr := range st.Progress {
		if live(id) && (best == 0 || pr.Match > match || (pr.Match == match && id < best)) {
			best, match = id, pr.Match
		}
	}
	return best
}

func (r *Raft) signal() {
	r.mu.Lock()
	close(r.advanced)
	r.advanced = make(chan struct{})
	r.mu.Unlock()
}

func (r *Raft) waitChan() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.advanced
}

// raftLogger routes etcd raft's logging to slog (its info is our debug).
type raftLogger struct{ l *slog.Logger }

func (g raftLogger) Debug(v ...any)              { g.l.Debug(fmt.Sprint(v...)) }
func (g raftLogger) Debugf(f string, v ...any)   { g.l.Debug(fmt.Sprintf(f, v...)) }
func (g raftLogger) Info(v ...any)               { g.l.Debug(fmt.Sprint(v...)) }
func (g raftLogger) Infof(f string, v ...any)    { g.l.Debug(fmt.Sprintf(f, v...)) }
func (g raftLogger) Warning(v ...any)            { g.l.Warn(fmt.Sprint(v...)) }
func (g raftLogger) Warningf(f string, v ...any) { g.l.Warn(fmt.Sprintf(f, v...)) }
func (g raftLogger) Error(v ...any)              { g.l.Error(fmt.Sprint(v...)) }
func (g raftLogger) Errorf(f string, v ...any)   { g.l.Error(fmt.Sprintf(f, v...)) }
func (g raftLogger) Fatal(v ...any)              { g.l.Error(fmt.Sprint(v...)); panic(fmt.Sprint(v...)) }
func (g raftLogger) Fatalf(f string, v ...any)   { g.Fatal(fmt.Sprintf(f, v...)) }
func (g raftLogger) Panic(v ...any)              { g.Fatal(v...) }
func (g raftLogger) Panicf(f string, v ...any)   { g.Fatal(fmt.Sprintf(f, v...)) }
