// Package replica orders the commands of one shard and applies them.
//
// A shard of the single-node (lite) store has one replica, Local: it assigns
// each proposed command the next index, applies it with storage.Batch.Apply,
// and commits groups of commands in one Pebble batch, so many concurrent
// writers share one fsync (group commit). A replicated shard has a Raft
// replica on each of its nodes (Raft, over etcd raft), which puts a Raft log
// in front of the same apply function. Callers keep the same contract:
//
//   - Propose returns only after the command is applied and committed with
//     at least the requested durability; the Result is final.
//   - A Propose whose context ends before the command was taken for
//     applying returns the context error and the command is never applied.
//     Once taken, Propose waits for the outcome even if the context ends, so
//     an acknowledged or failed write is never "unknown" in a single replica.
//   - Reads go straight to the engine after ReadReady says the replica may
//     serve them under the requested consistency.
//   - A failed commit (a failed fsync, a full disk that Pebble could not
//     absorb) is fatal: the replica stops applying and calls Config.Fatal.
//     One exception: a Raft replica's write refused because its engine found
//     corruption while running, when the engine has a corruption handler
//     (storage.Engine.Heals), only stops the replica, since the handler
//     rebuilds it (raft_loop.go, healing).
//
// # Concurrency
//
// Propose, ReadReady, AppliedIndex, Engine and Stats are safe from any
// goroutine (Stats reads counters the loops keep in atomics, stats.go).
// One goroutine (the apply loop) owns the engine's write path; another runs
// the TTL sweeper, which proposes Expire commands like any client. Close
// stops both and waits for them.
//
// # Messages
//
// A follower or candidate sends a Ready's messages only once the Ready is
// written: its acknowledgements and votes promise what it wrote. A leader
// sends first (Raft thesis §10.2.1), so its followers persist entries while
// it does; no follower's acknowledgement is stepped before the leader's own
// write is done (one goroutine does both), so nothing commits before the
// leader holds it too. A leader holds an append that only carries a new
// commit index for up to RaftConfig.CommitLinger, until a later append to
// the same follower carries it (raft_commit.go).
//
// # Batching
//
// The Raft loop takes everything queued before a Ready (drain), and after
// a leader's new proposal it yields once (runtime.Gosched) and drains
// again: the server's workers that are already runnable propose first, so
// one Ready, one Pebble commit and one append per follower carry them
// all. Without the yield a leader's Ready carried 1.01 entries under 16
// writers, with it 5.6 (docs/benchmarks.md, "Issue 12, ninth"). Local's
// apply loop does the same before it commits a group short of MaxGroup.
// Nothing waits when no goroutine is runnable.
//
// Local's durable (Sync) groups also wait, briefly, for the writers on
// their way (group_wait.go, docs/design/20261129_group_wait.md): up to
// one recent commit's duration and Config.GroupWait, for as many writers
// as the last commits saw in flight, so that closed-loop writers share
// one fsync instead of taking turns in two groups. The loop applies each
// proposal as it takes it, so the wait overlaps the group's work.
//
// The proposals a drain takes reach raft as one MsgProp (raft_propose.go),
// so they leave in one MsgApp per follower rather than one each, and a
// follower that stepped several appends before its Ready answers them with
// one acknowledgement, the highest (raft_acks.go).
//
// # Membership
//
// A replica serves reads (ReadReady) only while it is a voter of its
// applied configuration and has applied something: a learner catching up,
// a replica its group removed, and one waiting to be readmitted answer
// ErrNotVoter or ErrRejoining, whatever the consistency. AddLearner,
// AddVoter and RemoveVoter run on the leader, one change at a time, and
// return once the change is applied there; each is a no-op when already
// done (raft_conf.go).
//
// # Checksums
//
// Raft.Checksum (on the leader) proposes a Checksum command. Every replica
// that applies it at index I commits the Ready's batch up to I, takes a
// storage.View right then, and hashes each partition from it on a
// goroutine of its own, at the command's rate, while the loop goes on
// (checksum.go). ChecksumResult returns the result by id, so replicas can
// be compared at the same I. The command changes no record, version or
// state: apply stays deterministic. Close cancels the computations and
// waits for them.
//
// # Snapshots
//
// A Raft snapshot's Data is a 25-byte header naming an export (a Pebble
// snapshot of the shard at the applied index, storage.Export) that the
// leader holds open while sends read it; the data streams beside the
// MsgSnap on the transport's snapshot stream, in chunks of at most 1 MiB,
// and the follower writes it into sstables as it arrives and installs them
// in one ingestion, with the applied index and Raft state, before raft
// learns the snapshot is applied (raft_snapshot.go). No side holds the
// shard in memory.
//
// # Backup and restore
//
// ShardSnapshot exports a running Raft replica's data together with the
// applied index it reflects, to be streamed (storage.Export).
// RestoreShard is for an offline tool: with no replica of the shard
// running, it streams such an export into the engine, replacing the
// shard's data, and resets its Raft log and state so the group restarts
// at that index (see restore.go). Restoring every replica of a shard from
// the same export leaves them identical.
//
// # Concurrency of snapshots
//
// SnapshotData (for the transport's sends) and ReceiveSnapshot (for its
// receives) are safe from any goroutine; ReceiveSnapshot blocks until the
// loop has installed or declined the snapshot, and refuses a second one
// meanwhile. Close closes the replica's exports, so sends still reading
// them fail; a receive under way fails when it hands its data over.
package replica
