// Package transport carries Raft traffic between storage nodes: Raft
// messages, commit notices and snapshots of every shard two nodes share. It
// knows nothing about Raft's state; the replica decides what to send and
// what a drop means.
//
// # Messages
//
// For each destination node the Transport keeps one bounded queue
// (Config.QueueLen envelopes, all shards together) and one sender goroutine.
// The sender waits for an envelope, then takes everything else already
// queued, up to Config.MaxBatchBytes, puts it in one transportpb.Batch and
// writes that Batch, as one gRPC message, on a long-lived client stream
// (Raft.Messages) to the peer. That is the only coalescing there is:
// batching of whatever is queued when the sender is ready. Nothing waits
// for more messages and nothing is merged or deduplicated; if the replicas
// of many shards call Send during the same tick while the sender is busy
// writing the previous Batch, their heartbeats share the next gRPC message,
// and if the sender is idle the first of them may travel alone.
//
//	Messages stream, one per ordered node pair, client -> server:
//	  Batch{from_node, envelopes: [Envelope{shard, raft: Message bytes}
//	                             | Envelope{shard, notice: {term, commit}}, ...]}
//	  Batch{...} ...
//	server -> client: Ack, only after the client half-closes (it never does)
//
// Guarantees and non-guarantees:
//
//  1. Order: the envelopes from node A to node B (all shards) are delivered
//     in the order Send/SendNotice queued them, with gaps where some were
//     dropped. A MsgSnap travels on its own stream and may overtake or trail
//     the other messages.
//  2. Delivery is best effort. A message is dropped, and OnUnreachable
//     called for its (shard, peer), when the peer's queue is full, when
//     connecting fails, when the stream breaks while its Batch is written,
//     or when it is queued while the peer is in reconnect backoff. Raft
//     retransmits. A Batch that the stream accepted may still be lost if the
//     connection dies right after; nobody is told, Raft copes.
//  3. Send never blocks on the network. It marshals non-snapshot messages
//     on the caller's goroutine and puts them on a channel.
//  4. Reconnects: after a failure the sender closes the stream and its
//     connection and does not connect again before a capped exponential
//     backoff (50ms doubling to 2s, plus jitter) has passed; meanwhile
//     messages are dropped as they arrive. The next message after the
//     backoff triggers a new connect, with Config.Resolve asked for the
//     address again and a new gRPC ClientConn. An idle peer is not redialed.
//     A hung peer (TCP up, not reading) blocks its sender until the queue
//     fills; the messages queued after that are dropped with OnUnreachable.
//
// # Snapshots
//
// A MsgSnap given to Send is sent by a goroutine of its own, on its own
// connection, on a Raft.Snapshot client stream. The message travels whole
// (its Snapshot.Data is the replica's small header); the data follows,
// read from Config.OpenSnapshot's SnapshotSource a piece at a time, so
// neither side ever holds more than a chunk of it:
//
//	chunk 0:   SnapshotChunk{from_node, shard, header: the MsgSnap (marshaled
//	                         raftpb.Message), size: S, last: S == 0}
//	chunk i:   SnapshotChunk{from_node, shard, data: the next <= C bytes,
//	                         last: the data so far adds up to S}
//	server -> client: Ack after HandleSnapshot returned nil, or an error status
//
// where S is the source's Size and C is Config.SnapshotChunkBytes. The
// receiver calls Handler.HandleSnapshot with the message and a
// SnapshotData, whose Next reads the chunks off the stream as the Handler
// asks; data longer or shorter than S, or chunks of another shard, are
// refused (InvalidArgument). The sender calls OnSnapshotStatus(ok=true)
// after the Ack, ok=false on any error, including no progress for 30s
// (the source is closed then too). The sender does not copy the message:
// the caller must not modify it until OnSnapshotStatus. A MsgSnap inside
// a Messages Batch is dropped: its data can only come on a snapshot
// stream.
//
// # Inbound
//
// Register adds the service to the node's gRPC server. Each inbound
// Messages stream is read by the goroutine gRPC gives it; every envelope is
// decoded and handed to Handler.HandleRaft (or HandleNotice), in order.
// An envelope whose Raft bytes do not decode, or whose message is addressed
// to another node (a peer using a stale address), is skipped and logged
// (rate limited); the rest of the Batch is still delivered. An envelope
// for a shard the node does not host is the Handler's business.
//
// # Concurrency
//
//   - Send, SendNotice and Close are safe from any goroutine, concurrently.
//     Send and SendNotice may call OnUnreachable synchronously (queue full).
//   - OnUnreachable and OnSnapshotStatus are also called from the sender
//     and snapshot goroutines, OpenSnapshot and its source from a snapshot
//     goroutine; Handler methods from gRPC's receive goroutines (a
//     snapshot's from one of its own), concurrently for different inbound
//     streams but in order within one. None of them may call Close; they
//     may call Send. Only HandleSnapshot may run long: as long as its data
//     takes to arrive.
//   - After Close returns no Handler method or callback runs again, and
//     Send and SendNotice drop silently. Close first ends every stream, so
//     a HandleSnapshot under way fails its next read and returns. Close
//     does not stop the gRPC server; inbound streams fail with Unavailable
//     from then on.
//   - Config.Resolve is called from sender and snapshot goroutines.
//
// # Example
//
//	t, err := transport.New(transport.Config{
//		NodeID:           1,
//		Resolve:          directory.Addr, // func(NodeID) (string, bool)
//		OnUnreachable:    replicas.ReportUnreachable,
//		OnSnapshotStatus: replicas.ReportSnapshot,
//		OpenSnapshot:     replicas.SnapshotData, // the MsgSnap's data, streamed
//		Logger:           log,
//	}, replicas) // replicas implements Handler by queueing
//	if err != nil { ... }
//	defer t.Close()
//	srv := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
//	t.Register(srv)
//	// In each replica's Ready loop:
//	t.Send(shardID, rd.Messages)
package transport
