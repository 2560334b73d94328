// Package topology describes where a store's data lives: its storage nodes,
// its shards (each a Raft group of replicas on distinct nodes), and which
// shard owns each partition. A Topology is a value: it is built once (by
// Build today, by the admin service later), saved as JSON, and carried on
// the wire so clients can route requests by partition.
//
// # Invariants (checked by Validate)
//
//   - Node, shard and partition ids are unique; node addresses are unique.
//   - A shard's replicas sit on distinct, known nodes.
//   - Every partition belongs to exactly one known shard.
//   - Seq grows with every change; a node or client holding a lower Seq is
//     stale.
//
// Partitions are dealt to shards in contiguous blocks, so a shard's
// partitions are one span of hash space, and preferred leaders are dealt
// round-robin over the nodes, so leaders spread evenly.
//
// # Concurrency
//
// A *Topology must not be modified after it is shared; everything here reads
// it without locks.
package topology
