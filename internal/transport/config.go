package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// Size limits of the wire. The node's gRPC server is created with
// grpc.MaxRecvMsgSize(64 MiB), so every message this package sends fits.
const (
	// maxMsgBytes is the largest gRPC message a client of this package
	// sends or receives (grpc.MaxCallSendMsgSize / MaxCallRecvMsgSize).
	maxMsgBytes = 16 << 20
	// maxEnvelopeBytes is the largest marshaled Raft message Send accepts;
	// the rest of maxMsgBytes is room for the Batch and Envelope framing.
	// Larger messages are dropped (OnUnreachable) and logged: they mean the
	// replica's raft MaxSizePerMsg is misconfigured.
	maxEnvelopeBytes = maxMsgBytes - 64<<10
	// maxChunkBytes bounds Config.SnapshotChunkBytes.
	maxChunkBytes = 8 << 20
)

// Reconnect backoff: the first retry after a failure waits backoffMin, each
// further consecutive failure doubles the wait up to backoffMax (plus up to
// 20% jitter). A stream that stayed up for backoffMax resets the backoff.
const (
	backoffMin = 50 * time.Millisecond
	backoffMax = 2 * time.Second
)

// snapshotStallTimeout cancels a snapshot send when one chunk (or the
// connect, or the final Ack) makes no progress for this long, so a hung
// peer cannot leave a follower in raft's StateSnapshot forever.
const snapshotStallTimeout = 30 * time.Second

// Config configures a Transport. Zero numeric fields take their defaults in
// New; DefaultConfig returns them explicitly.
type Config struct {
	// NodeID is this node's id. It is sent as Batch.from_node and
	// SnapshotChunk.from_node, and inbound Raft messages whose To is not
	// NodeID are dropped. Required, non-zero.
	NodeID NodeID
	// Resolve returns a peer's gRPC address (host:port). It is called at
	// every connect and reconnect, never cached, so a changed address
	// applies the next time the stream to that peer is (re)established. ok
	// = false counts as a failed connect. It must be safe for concurrent
	// use and fast (no network I/O). Required.
	Resolve func(NodeID) (addr string, ok bool)
	// OnUnreachable is called when the transport drops a message for shard
	// to peer `to`: its queue was full, the connect failed, the stream
	// broke while sending it, or the peer is in reconnect backoff. It is
	// called once per (shard, peer) per drop event, not once per message.
	// The replica calls raft's ReportUnreachable. Optional.
	OnUnreachable func(shard ShardID, to NodeID)
	// OnSnapshotStatus is called once per MsgSnap given to Send: ok = true
	// after the receiver acknowledged the snapshot (its HandleSnapshot
	// read the data and returned nil), ok = false on any failure. The
	// replica calls raft's ReportSnapshot. Optional.
	OnSnapshotStatus func(shard ShardID, to NodeID, ok bool)
	// OpenSnapshot returns the data of an outbound MsgSnap, which the
	// snapshot's goroutine streams after the message (SnapshotSource). It
	// is called once per MsgSnap given to Send, from that goroutine; an
	// error fails the send (OnSnapshotStatus ok = false). Optional: without
	// it a snapshot is its message alone.
	OpenSnapshot func(shard ShardID, to NodeID, m *raftpb.Message) (SnapshotSource, error)
	// QueueLen is the capacity of each peer's outbound queue, in envelopes
	// (Raft messages or notices, all shards together). Default 4096.
	QueueLen int
	// MaxBatchBytes bounds one Batch (one gRPC message), in bytes of
	// marshaled envelopes. A single envelope larger than this travels alone.
	// Default 4 MiB; at most 16 MiB - 64 KiB.
	MaxBatchBytes int
	// SnapshotChunkBytes is the most snapshot data one SnapshotChunk
	// carries, in bytes. Default 1 MiB; at most 8 MiB.
	SnapshotChunkBytes int
	// DialTimeout bounds establishing a connection to a peer. Default 2s.
	DialTimeout time.Duration
	// TLS, when set, makes connections to peers TLS with this
	// configuration (a secure store: the store CA as roots and this node's
	// certificate, which the peer requires of a node). Nil: plaintext.
	TLS *tls.Config
	// Logger receives connection state changes (Info/Warn) and dropped
	// inbound messages (Warn, rate limited). Default slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the defaults for the numeric fields; NodeID and
// Resolve must still be set.
func DefaultConfig() Config {
	return Config{
		QueueLen:           4096,
		MaxBatchBytes:      4 << 20,
		SnapshotChunkBytes: 1 << 20,
		DialTimeout:        2 * time.Second,
	}
}

// withDefaults fills zero fields with DefaultConfig's values.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.QueueLen == 0 {
		c.QueueLen = d.QueueLen
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = d.MaxBatchBytes
	}
	if c.SnapshotChunkBytes == 0 {
		c.SnapshotChunkBytes = d.SnapshotChunkBytes
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = d.DialTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports a config that cannot work. New calls it after filling
// defaults.
func (c Config) Validate() error {
	switch {
	case c.NodeID == 0:
		return errors.New("transport: NodeID is required")
	case c.Resolve == nil:
		return errors.New("transport: Resolve is required")
	case c.QueueLen <= 0:
		return fmt.Errorf("transport: QueueLen %d is not positive", c.QueueLen)
	case c.MaxBatchBytes <= 0 || c.MaxBatchBytes > maxEnvelopeBytes:
		return fmt.Errorf("transport: MaxBatchBytes %d is outside (0, %d]", c.MaxBatchBytes, maxEnvelopeBytes)
	case c.SnapshotChunkBytes <= 0 || c.SnapshotChunkBytes > maxChunkBytes:
		return fmt.Errorf("transport: SnapshotChunkBytes %d is outside (0, %d]", c.SnapshotChunkBytes, maxChunkBytes)
	case c.DialTimeout <= 0:
		return fmt.Errorf("transport: DialTimeout %v is not positive", c.DialTimeout)
	}
	return nil
}
