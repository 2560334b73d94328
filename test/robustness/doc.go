// Package robustness checks the replication guarantees of docs/guarantees.md
// against clusters of real `cairn sn` processes with real faults: SIGKILL,
// SIGSTOP, wiped data directories, links cut by proxies, failed writes and
// fsyncs injected into a node's files (CAIRN_FAULTS), flipped bytes and full
// disks (test/clustertest). Workloads go through the smart client (package
// client) and are recorded in histories that are checked for lost
// acknowledged writes and for linearizability (porcupine).
//
//   - TestFailoverUnderLoad: SIGKILL a shard leader under load.
//   - TestConsistencyModes: NONE_REQUIRED, TIME_LAG and VERSION reads on
//     followers that are cut off or whose leader is stopped.
//   - TestWipedReplicaRejoins: a follower loses its data and catches up
//     through a snapshot.
//   - TestPartitionedLeader: a leader cut off from its followers never
//     acknowledges a write, and the majority side carries on.
//   - TestKillAllNoSync: NO_SYNC writes survive SIGKILL of every node.
//   - TestStorageFaultsUnderLoad: rounds of storage faults on random nodes
//     (a failed WAL fsync or write, bytes flipped in a MANIFEST, WAL or
//     sstable, a full disk on a tmpfs where one can be mounted); after each
//     round the node has healed or caught up and every acknowledged write
//     reads back. Rounds for -storagefaults.time (10 s; make chaos: a
//     minute); skipped with -short.
//   - TestMoveFaults: partition moves (plan deploy-topology) under a
//     SIGKILL of the source leader mid-copy, of the target leader during
//     the handoff, of the admin leader mid-plan, with the source leader
//     cut off just before its Transfer, and with the source's leader cut
//     from the target's, or from the admin leader, mid-copy. -move.fault
//     picks one (random, the default: one per seed; all: the six, as make
//     chaos runs them).
//   - TestReplicaFaults: a rebalance that moves one node's replicas onto a
//     spare node (learner, catch-up, voter; handoff, removal) under a
//     SIGKILL of the shard's leader, of the joining node, of the leaving
//     node or of the admin leader, with the joining node cut from the
//     shard's leader or from the admin leader, or with the leaving node
//     cut off from every peer. -replica.fault picks one, as -move.fault
//     does.
//
// docs/guarantees.md ("Replication", R1-R11; "Storage faults", S1-S9;
// "Faults during a move", M8-M16; "Replica moves", RM6) says which test
// checks which promise.
//
// Each test takes its randomness from -seed (0: from the clock) and prints
// the seed it used with the command that reruns it; `make chaos` runs them
// in a loop with random seeds (scripts/chaos.sh). Real processes and
// scheduling are not deterministic, so a seed reproduces the test's choices
// (keys, operations, timing of faults, which node), not every interleaving.
// Failure artifacts (node logs, histories, porcupine visualizations) go to
// $CAIRN_ARTIFACTS/<test>, or a temporary directory the test names.
package robustness
