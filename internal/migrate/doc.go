// Package migrate moves a partition from one shard to another while both
// keep serving (docs/design/20261125_elasticity.md). Run drives one move
// through the commands of storage/migrate_apply.go:
//
//	target: MigrateIn(attempt) -> Ingest ... Ingest(last, through I0) -> Replay ... -> Activate(through It)
//	source: MigrateOut -> (copy from a view at I0, replay I0+1 ..) -> Transfer at It -> DropPartition
//
// # Invariants
//
//   - Ownership is decided by the two shards' logs: the source stops
//     serving the partition at its Transfer's index It; Run proposes
//     Activate only after reading It from the source's table, and the
//     target refuses Activate unless it holds the source's writes through
//     It-1. So at most one shard serves the partition at any instant.
//   - Run holds no state of its own that matters: it reads where the move
//     is from the two tables and goes on from there, so it can be stopped
//     anywhere (a crash, a lost leadership, ctx) and run again, here or on
//     the source's next leader.
//   - Memory is bounded: the copy reads a Pebble snapshot in chunks of
//     Config.ChunkBytes, and replays go in batches of about as many bytes.
//
// # Concurrency
//
// Run is called on the node of the source shard's leader, one move per
// partition at a time (the admin's plan sees to it). It reads the source's
// engine and log from its own goroutine and proposes through Source and
// Target, which must be safe for that.
package migrate
