package transport

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// NodeID identifies a storage node. It equals the Raft replica id of every
// replica the node hosts.
type NodeID uint64

// ShardID identifies a shard (one Raft group).
type ShardID uint64

// Handler is implemented by the storage node. The transport calls it from
// its receive goroutines (one per inbound stream), possibly concurrently for
// different peers. Implementations must not block for long (they queue) and
// must not call Transport.Close. The message belongs to the Handler.
type Handler interface {
	// HandleRaft delivers one inbound Raft message (never MsgSnap).
	HandleRaft(shard ShardID, m *raftpb.Message)
	// HandleSnapshot delivers an inbound MsgSnap and its data, which it
	// reads (data.Next) to io.EOF before it returns nil; it may stop
	// earlier with an error. It runs for as long as the data takes to
	// arrive and be stored; data.Next fails once the transport closes. The
	// sender learns of success when it returns nil; an error (the replica
	// has no room for it, say) is sent back as ResourceExhausted, or
	// InvalidArgument if it wraps ErrMalformedSnapshot, and the sender
	// reports the snapshot failed.
	HandleSnapshot(shard ShardID, m *raftpb.Message, data *SnapshotData) error
	// HandleNotice delivers a commit notice sent by node from.
	HandleNotice(shard ShardID, from NodeID, n *transportpb.CommitNotice)
	// HandleRejoin readmits node into shard if this node leads it (see
	// transportpb.RejoinRequest). It may block until the change is applied.
	HandleRejoin(ctx context.Context, shard ShardID, node NodeID) *transportpb.RejoinResponse
}

// Transport carries Raft messages, commit notices and snapshots between
// nodes. See the package documentation for its contract.
type Transport struct {
	cfg Config
	h   Handler
	log *slog.Logger

	// ctx is cancelled by Close; every sender and snapshot goroutine and
	// every outbound stream derives from it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // sender and snapshot goroutines
	gate   gate           // Send, SendNotice and inbound deliveries
	once   sync.Once

	mu    sync.RWMutex
	peers map[NodeID]*peer

	dropLog sometimes // rate limits warnings about dropped inbound messages

	// Test hooks and counters.
	backoffMin         time.Duration
	backoffMax         time.Duration
	batchesSent        atomic.Uint64 // Batches written to a stream
	batchesRecv        atomic.Uint64 // Batches read from inbound streams
	snapshotChunksRecv atomic.Uint64
	dials              atomic.Uint64 // connect attempts of the Messages path
	inboundDropped     atomic.Uint64 // inbound envelopes skipped (undecodable, misrouted)
}

// New returns a Transport for cfg that delivers inbound traffic to h. It
// starts no goroutine and opens no connection until the first Send.
func New(cfg Config, h Handler) (*Transport, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errors.New("transport: Handler is required")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{
		cfg:        cfg,
		h:          h,
		log:        cfg.Logger.With("component", "transport", "node", uint64(cfg.NodeID)),
		ctx:        ctx,
		cancel:     cancel,
		peers:      make(map[NodeID]*peer),
		backoffMin: backoffMin,
		backoffMax: backoffMax,
	}
	t.gate.init()
	return t, nil
}

// Register registers the transportpb Raft service on the node's gRPC
// server. The server should allow messages of 64 MiB
// (grpc.MaxRecvMsgSize(64<<20)). Register may be called again on a new
// server (e.g. after a restart of the listener).
func (t *Transport) Register(s *grpc.Server) {
	transportpb.RegisterRaftServer(s, &service{t: t})
}

// Send queues msgs, all of one shard, for their destinations (m.To). It
// never blocks on the network: a message whose peer queue is full is
// dropped and reported through OnUnreachable, on the calling goroutine.
// Messages other than MsgSnap are marshaled before Send returns, so the
// caller may reuse them. A MsgSnap is sent by its own goroutine and is read
// until OnSnapshotStatus is called; the caller must not modify it. Messages
// to this node itself or to node 0 are dropped and logged. After Close,
// Send drops everything silently.
func (t *Transport) Send(shard ShardID, msgs []*raftpb.Message) {
	if !t.gate.enter() {
		return
	}
	defer t.gate.exit()
	var reported []NodeID // peers already reported unreachable in this call
	unreachable := func(to NodeID) {
		for _, r := range reported {
			if r == to {
				return
			}
		}
		reported = append(reported, to)
		t.reportUnreachable(shard, to)
	}
	for _, m := range msgs {
		to := NodeID(m.GetTo())
		if !t.validDest(shard, to, m.GetType().String()) {
			continue
		}
		if m.GetType() == raftpb.MsgSnap {
			t.startSnapshot(shard, to, m)
			continue
		}
		b, err := proto.Marshal(m)
		if err != nil {
			t.log.Error("cannot marshal raft message", "shard", uint64(shard), "to", uint64(to), "err", err)
			unreachable(to)
			continue
		}
		if len(b) > maxEnvelopeBytes {
			t.log.Error("raft message too large to send; check raft MaxSizePerMsg",
				"shard", uint64(shard), "to", uint64(to), "bytes", len(b), "limit", maxEnvelopeBytes)
			unreachable(to)
			continue
		}
		if !t.peer(to).enqueue(envelope{shard: shard, raft: b}) {
			unreachable(to)
		}
	}
}

// SendNotice queues a commit notice for shard to node to, on the same queue
// (and so in the same order) as Raft messages. Like Send, it never blocks
// and reports a full queue through OnUnreachable.
func (t *Transport) SendNotice(shard ShardID, to NodeID, n *transportpb.CommitNotice) {
	if !t.gate.enter() {
		return
	}
	defer t.gate.exit()
	if !t.validDest(shard, to, "CommitNotice") {
		return
	}
	e := envelope{shard: shard, notice: true, term: n.GetTerm(), commit: n.GetCommit()}
	if !t.peer(to).enqueue(e) {
		t.reportUnreachable(shard, to)
	}
}

// Close stops the sender and snapshot goroutines, closes their client
// connections and makes inbound streams fail with Unavailable. When it
// returns, the Transport calls neither the Handler nor any callback again.
// It does not stop the gRPC server (its owner does). Close is idempotent and
// always returns nil; it must not be called from a Handler or a callback.
func (t *Transport) Close() error {
	t.once.Do(func() {
		t.cancel()     // unblocks senders, streams, snapshot sends and receives
		t.gate.close() // no new Send/SendNotice/delivery; waits for those running
		t.wg.Wait()    // each sender closes its connection on the way out
	})
	return nil
}

// validDest reports whether a message for `to` can be sent, logging when not.
func (t *Transport) validDest(shard ShardID, to NodeID, what string) bool {
	if to != 0 && to != t.cfg.NodeID {
		return true
	}
	t.log.Warn("dropping outbound message with invalid destination",
		"shard", uint64(shard), "to", uint64(to), "type", what)
	return false
}

// closing reports whether Close has begun; callbacks are skipped then.
func (t *Transport) closing() bool { return t.ctx.Err() != nil }

func (t *Transport) reportUnreachable(shard ShardID, to NodeID) {
	if t.cfg.OnUnreachable != nil && !t.closing() {
		t.cfg.OnUnreachable(shard, to)
	}
}

func (t *Transport) reportSnapshot(shard ShardID, to NodeID, ok bool) {
	if t.cfg.OnSnapshotStatus != nil && !t.closing() {
		t.cfg.OnSnapshotStatus(shard, to, ok)
	}
}

// peer returns the sender for id, starting it on first use. Only called
// inside the gate, so wg.Add never races with Close's wg.Wait.
func (t *Transport) peer(id NodeID) *peer {
	t.mu.RLock()
	p := t.peers[id]
	t.mu.RUnlock()
	if p != nil {
		return p
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p = t.peers[id]; p == nil {
		p = newPeer(t, id)
		t.peers[id] = p
		t.wg.Add(1)
		go p.run()
	}
	return p
}

// gate admits callers until closed; close waits for the admitted ones to
// leave. Unlike a sync.RWMutex it is reentrant: a Handler that calls Send
// cannot deadlock against a pending Close.
type gate struct {
	mu     sync.Mutex
	cond   sync.Cond
	n      int
	closed bool
}

func (g *gate) init() { g.cond.L = &g.mu }

func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.n++
	return true
}

func (g *gate) exit() {
	g.mu.Lock()
	g.n--
	if g.n == 0 && g.closed {
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}

func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	for g.n > 0 {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

// sometimes allows one event per interval; it rate limits log lines.
type sometimes struct{ last atomic.Int64 }

func (s *sometimes) allow(interval time.Duration) bool {
	now := time.Now().UnixNano()
	last := s.last.Load()
	return now-last >= int64(interval) && s.last.CompareAndSwap(last, now)
}

// Server returns the transport's gRPC service, for a node that registers a
// service of its own that delegates to a transport created after its gRPC
// server started (a storage node learns its id when it joins a store).
func (t *Transport) Server() transportpb.RaftServer { return &service{t: t} }
