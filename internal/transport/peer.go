package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cairndb/cairn/internal/grpcconn"
	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// envelope is one queued outbound item: a marshaled Raft message or a
// commit notice.
type envelope struct {
	shard        ShardID
	raft         []byte
	notice       bool
	term, commit uint64
}

// envelopeOverhead over-estimates the protobuf framing of one Envelope
// inside a Batch (tags, lengths, shard) and a notice's body.
const envelopeOverhead = 40

func (e *envelope) size() int { return len(e.raft) + envelopeOverhead }

// peer owns the outbound Messages stream to one node. Send and SendNotice
// put envelopes on queue; run, the only other user, owns everything else.
type peer struct {
	t     *Transport
	id    NodeID
	queue chan envelope
	log   *slog.Logger

	// Owned by run.
	conn         *grpc.ClientConn
	stream       transportpb.Raft_MessagesClient
	cancelStream context.CancelFunc
	connectedAt  time.Time
	backoff      time.Duration // wait after the latest failure; 0 when healthy
	retryAt      time.Time     // no connect attempt before this
	down         bool          // the latest attempt failed (for logging transitions)
	batch        transportpb.Batch
	slots        []*slot              // reused Envelope messages
	shards       map[ShardID]struct{} // scratch for per-shard OnUnreachable
	carry        envelope             // taken from queue but did not fit the last batch
	haveCarry    bool
	fullLog      sometimes
}

// slot is a reusable Envelope with its CommitNotice.
type slot struct {
	env    transportpb.Envelope
	notice transportpb.CommitNotice
}

func newPeer(t *Transport, id NodeID) *peer {
	p := &peer{
		t:      t,
		id:     id,
		queue:  make(chan envelope, t.cfg.QueueLen),
		log:    t.log.With("peer", uint64(id)),
		shards: make(map[ShardID]struct{}),
	}
	p.batch.FromNode = uint64(t.cfg.NodeID)
	return p
}

// enqueue adds e to the queue without blocking; false means it was full.
func (p *peer) enqueue(e envelope) bool {
	select {
	case p.queue <- e:
		return true
	default:
		if p.fullLog.allow(time.Second) {
			p.log.Warn("outbound queue full, dropping messages", "queue_len", cap(p.queue))
		}
		return false
	}
}

// run is the peer's sender goroutine. It waits for an envelope, makes sure
// a stream exists (connecting if the backoff allows, dropping otherwise),
// drains the queue into one Batch and sends it.
func (p *peer) run() {
	defer p.t.wg.Done()
	defer p.disconnect()
	ctx := p.t.ctx
	for {
		var first envelope
		if p.haveCarry {
			first, p.haveCarry = p.carry, false
			p.carry = envelope{}
		} else {
			select {
			case <-ctx.Done():
				return
			case first = <-p.queue:
			}
		}
		if p.stream == nil {
			if time.Now().Before(p.retryAt) {
				p.drop(first) // in backoff: fail fast, raft retransmits
				continue
			}
			if err := p.connect(); err != nil {
				if ctx.Err() != nil {
					return
				}
				p.failed(err)
				p.drop(first)
				continue
			}
		}
		n := p.fill(first)
		err := p.stream.Send(&p.batch)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// io.EOF means the stream has ended; its status says why.
			if errors.Is(err, io.EOF) {
				if _, rerr := p.stream.CloseAndRecv(); rerr != nil {
					err = rerr
				}
			}
			p.dropBatch(n)
			p.disconnect()
			p.failed(fmt.Errorf("send: %w", err))
			continue
		}
		p.t.batchesSent.Add(1)
		p.release(n)
	}
}

// fill puts first and whatever else is queued, up to MaxBatchBytes, in
// p.batch. An envelope that does not fit is kept in p.carry for the next
// batch. It returns the number of envelopes in the batch.
func (p *peer) fill(first envelope) int {
	p.batch.Envelopes = p.batch.Envelopes[:0]
	total := p.put(first)
	for total < p.t.cfg.MaxBatchBytes {
		select {
		case e := <-p.queue:
			if total+e.size() > p.t.cfg.MaxBatchBytes {
				p.carry, p.haveCarry = e, true
				return len(p.batch.Envelopes)
			}
			total += p.put(e)
		default:
			return len(p.batch.Envelopes)
		}
	}
	return len(p.batch.Envelopes)
}

// put appends e to p.batch using the next reusable slot.
func (p *peer) put(e envelope) int {
	i := len(p.batch.Envelopes)
	if i == len(p.slots) {
		p.slots = append(p.slots, new(slot))
	}
	s := p.slots[i]
	s.env.Shard = uint64(e.shard)
	if e.notice {
		s.notice.Term, s.notice.Commit = e.term, e.commit
		s.env.Raft, s.env.Notice = nil, &s.notice
	} else {
		s.env.Raft, s.env.Notice = e.raft, nil
	}
	p.batch.Envelopes = append(p.batch.Envelopes, &s.env)
	return e.size()
}

// release forgets the payloads of the first n slots so the GC can free them.
func (p *peer) release(n int) {
	for i := range n {
		p.slots[i].env.Raft = nil
	}
	p.batch.Envelopes = p.batch.Envelopes[:0]
}

// dropBatch reports the n envelopes of a batch that failed to send.
func (p *peer) dropBatch(n int) {
	for _, e := range p.batch.Envelopes[:n] {
		p.shards[ShardID(e.GetShard())] = struct{}{}
	}
	p.release(n)
	p.reportShards()
}

// drop reports first and everything queued right now as unreachable.
func (p *peer) drop(first envelope) {
	p.shards[first.shard] = struct{}{}
drain:
	for {
		select {
		case e := <-p.queue:
			p.shards[e.shard] = struct{}{}
		default:
			break drain
		}
	}
	p.reportShards()
}

func (p *peer) reportShards() {
	for s := range p.shards {
		p.t.reportUnreachable(s, p.id)
	}
	clear(p.shards)
}

// failed records a failed connect or stream and schedules the next attempt.
func (p *peer) failed(err error) {
	if !p.connectedAt.IsZero() && time.Since(p.connectedAt) >= p.t.backoffMax {
		p.backoff = 0 // the stream was healthy for a while: start over
	}
	p.connectedAt = time.Time{}
	p.backoff = min(max(2*p.backoff, p.t.backoffMin), p.t.backoffMax)
	wait := p.backoff + rand.N(p.backoff/5+1)
	p.retryAt = time.Now().Add(wait)
	if !p.down {
		p.log.Warn("peer unreachable", "err", err, "retry_in", wait)
	} else {
		p.log.Debug("peer still unreachable", "err", err, "retry_in", wait)
	}
	p.down = true
}

// connect resolves the peer's address, dials it and opens the Messages
// stream, all within DialTimeout (the stream then lives until an error or
// Close).
func (p *peer) connect() error {
	p.t.dials.Add(1)
	addr, ok := p.t.cfg.Resolve(p.id)
	if !ok {
		return errNoAddress
	}
	conn, err := p.t.dial(p.t.ctx, addr)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(p.t.ctx)
	stream, err := transportpb.NewRaftClient(conn).Messages(sctx)
	if err != nil {
		cancel()
		conn.Close()
		return fmt.Errorf("transport: open stream to %s: %w", addr, err)
	}
	p.conn, p.stream, p.cancelStream = conn, stream, cancel
	p.connectedAt = time.Now()
	p.log.Info("connected to peer", "addr", addr)
	p.down = false
	return nil
}

// disconnect abandons the stream and closes the connection, if any.
func (p *peer) disconnect() {
	if p.cancelStream != nil {
		p.cancelStream()
	}
	if p.conn != nil {
		p.conn.Close()
	}
	p.conn, p.stream, p.cancelStream = nil, nil, nil
}

var errNoAddress = errors.New("transport: no address for peer")

// dial returns a client connection to addr that is ready, or an error
// within DialTimeout. A fresh ClientConn per (re)connect means the address
// from Resolve is always current and gRPC's own reconnect backoff (up to
// 120s) never delays recovery; this package's backoff governs instead.
func (t *Transport) dial(ctx context.Context, addr string) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if t.cfg.TLS != nil {
		creds = credentials.NewTLS(t.cfg.TLS)
	}
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallSendMsgSize(maxMsgBytes),
			grpc.MaxCallRecvMsgSize(maxMsgBytes),
		),
		// Backoff must be set: a zero Config would make gRPC retry a
		// failed connection without delay until we close it.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: t.cfg.DialTimeout}),
	}, grpcconn.DialWindows()...)
	conn, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("transport: dial %s: %w", addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.DialTimeout)
	defer cancel()
	conn.Connect()
	for {
		s := conn.GetState()
		switch s {
		case connectivity.Ready:
			return conn, nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			conn.Close()
			return nil, fmt.Errorf("transport: connect to %s failed", addr)
		}
		if !conn.WaitForStateChange(ctx, s) {
			conn.Close()
			return nil, fmt.Errorf("transport: connect to %s: %w", addr, ctx.Err())
		}
	}
}
