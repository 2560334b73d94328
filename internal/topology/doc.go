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
//   - No shard id is above MaxShard (when set), the highest id the store has
//     ever used: a removed shard's id is never used again.
//
// Partitions are dealt to shards in contiguous blocks, so a shard's
// partitions are one span of hash space, and preferred leaders are dealt
// round-robin over the nodes, so leaders spread evenly.
//
// # Placement
//
// Build lays out a fixed number of shards of one replication factor.
// Place instead derives the shard count from the nodes: each node has a
// Capacity (the most replicas it may host; 0 means unlimited) and a Zone,
// and each listed zone holds its own replication factor of every shard on
// distinct nodes of that zone. Place makes as many shards as every zone can
// host (at most one per partition), fills the nodes with the most spare
// capacity first, and spreads preferred leaders as evenly as the replicas
// allow. When no shard fits it says which zone lacks what.
//
// # Rules
//
// Validate is the hard check: a topology that fails it cannot run. Check is
// the operator's report on a topology that can: it lists every violation
// of the placement rules (replicas on distinct nodes, capacity honoured,
// partitions spread evenly over shards) and warnings worth a look (preferred
// leaders spread unevenly, capacity left unused), each with a stable rule id
// and a sentence saying what to do; a Report marshals to JSON as
// {"violations": [...], "warnings": [...]}. Diff previews, line by line,
// what deploying one topology over another would change, and SameLayout
// says whether it would change nothing. Messages name nodes
// "sn1", "sn2", ... and shards "rg1", "rg2", ... (NodeName, ShardName).
//
// # Elasticity
//
// A deployed topology changes by pure functions that return a changed copy
// (elastic.go, partitions.go), each moving as little as it can:
// Redistribute adds the shards a grown pool has room for and spreads the
// partitions evenly over all shards; Rebalance moves replicas off nodes
// that left the pool or are over capacity and fills each zone's RF;
// Contract removes the shards a shrunken pool cannot host (highest ids
// first) and gives their partitions to the others; ChangeRepFactor adds
// replicas in one zone; MovePartition gives one partition to another
// shard; SplitPartitions multiplies the partition count, every partition
// p of n becoming p*f .. p*f+f-1 of n*f on p's shard, which moves no key
// (keys.PartitionOf(h, n*f)/f == keys.PartitionOf(h, n)).
//
// Compare (changes.go) turns two topologies into the machine-readable
// change list a migration executes (Changes: split, new nodes and shards,
// replica and leader changes, partition moves in the new numbering,
// removed shards and nodes), and refuses what could not be executed
// safely: another store, a partition count that is not a multiple, a
// shard whose origin changed, a removed shard's id reused, a shard whose
// replicas would all change at once (membership changes one at a time
// must keep a replica), and partitions left on a removed shard.
//
// # Example
//
//	nodes := []topology.Node{
//		{ID: 1, Addr: "10.0.0.1:5000", Capacity: 2, Zone: "east"},
//		{ID: 2, Addr: "10.0.0.2:5000", Capacity: 2, Zone: "east"},
//		{ID: 3, Addr: "10.0.0.3:5000", Capacity: 2, Zone: "east"},
//	}
//	t, err := topology.Place("kvstore", 100, nodes, []topology.ZoneRF{{Name: "east", RF: 3}})
//	// t has 2 shards of 3 replicas; every node hosts 2.
//	if r := t.Check(); !r.OK() { ... }
//	for _, line := range topology.Diff(deployed, t) { fmt.Println(line) }
//
// # Concurrency
//
// A *Topology must not be modified after it is shared; everything here reads
// it without locks.
package topology
