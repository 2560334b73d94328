// Package node runs Cairn processes. Today that is Lite: one process holding
// one store with one shard (a single replica), serving the KV gRPC service on
// one port, like Oracle NoSQL's KVLite. Later issues add the storage node,
// which hosts replicas of several shards on the same port.
//
// Root layout:
//
//	ROOT/data/   the Pebble engine (records, meta, applied index)
//
// A storage node adds its own files (config.json, membership.json,
// node.json, topology.json, snapshots/; see snconfig.go, membership.go,
// rejoin.go, backup.go). Each JSON file is a checked file of package
// storage/files, written atomically; a corrupt one is refused, naming it
// (rootfiles.go). Every file of a node, its engines' included, goes through
// LiteConfig.FS or SNConfig.FS (default files.Default), so tests run a
// node on a MemFS and CAIRN_FAULTS injects errors into the real binary.
//
// The store name and partition count live in the engine's meta and are fixed
// when the root is first used; starting on an existing root with other values
// fails with storage.ErrStoreMismatch.
//
// # Serving
//
// RPC handlers run on a pool of LiteConfig.StreamWorkers long-lived
// goroutines, and the node sets the process's GC percent
// (LiteConfig.GCPercent): without them a lite node under load spent about a
// quarter of its CPU growing fresh goroutines' stacks and collecting a 4 MiB
// heap fifty times a second (docs/benchmarks.md). With
// LiteConfig.PprofAddr set, Go's profiles are served on a listener of their
// own (cairn lite --pprof 127.0.0.1:6060; go tool pprof
// http://127.0.0.1:6060/debug/pprof/profile).
//
// # Storage faults
//
// Lite has no peer: an engine that cannot be proven whole is refused with
// what is wrong and how to restore (litestore.go), a recorded fault opens
// with a warning once the files prove whole (storage.Config.NoPeers),
// and ROOT/store.json notices a lost data directory.
//
// A storage node heals (heal.go, adminheal.go): an engine found corrupt at
// start or while running, or stopped by a fatal I/O error, is renamed
// aside (DATA.corrupt-<UTC time>, never deleted), the incident is recorded
// in ROOT/incidents.json (incidents.go), and a fresh engine opens; every
// replica then rejoins through its shard's leader (rejoin.go) and installs
// a snapshot. It heals only if every shard it hosts has another replica;
// otherwise it refuses to start, naming the shard. Describe reports the
// state (storageinfo.go) for ping, verify configuration and show events.
//
// # Scrub and verify-data
//
// With ScrubConfig.Rate set (cairn lite and cairn sn --scrub-rate), a
// background loop reads every block of the engine's files at that rate
// (scrub.go); damage marks the engine corrupt, so its corruption handling
// runs. A storage node also serves plan verify-data's control RPCs:
// VerifyBlocks (one check at a time, keyed by id), ShardChecksum and
// ChecksumResult (checksum.go), and RebuildReplica (rebuild.go: hand off
// leadership, close the replica, DropShard, reopen it in Rejoin mode and
// rejoin through the shard's leader). Each is idempotent by id; control
// changes hold ctlMu, and the scrubs stop before the engine closes.
//
// # Replica changes
//
// The admin changes a shard's replica set through Control.ChangeReplica
// (replica_change.go): the joining node opens an empty replica that is
// not yet in its topology (op open, idempotent, reopened from its Raft
// state after a restart); the shard's leader adds it as a learner,
// promotes it, hands off leadership and removes a leaving replica. A
// topology that places an existing shard on this node opens its replica
// the same way (updateTopology); one that no longer places a shard here
// drops it. A node that lost its whole root is rebuilt under its old id by
// WriteRejoinRoot (rejoin_root.go) from the admin's show rejoin-config;
// its replicas then rejoin like those of a wiped node.
//
// # Concurrency
//
// StartLite returns a running node; Close stops it once (later calls return
// the same result) and may be called from any goroutine.
//
// A storage node's control changes, a heal and the end of Close are
// serialized by SN.ctlMu. KV requests and snapshot reads hold SN.serveMu
// for reading while they may use the engine; a heal closes the replicas,
// then holds it for writing to swap the engine, and requests meanwhile
// answer "rejoining" (retry on another replica). Describe never waits for
// ctlMu. The admin replica's callers hold adminHost.mu for reading, so
// closing it (a heal, DropAdmin, Close) never closes its engine under them.
//
// Raft snapshots stream between replicas through the transport
// (replica.SnapshotData for a send, replica.ReceiveSnapshot for a receive,
// sn_wiring.go) without serveMu: closing a replica ends its sends, and a
// receive into a closed replica fails before it installs anything. A shard
// snapshot file is written from a storage.Export, copied and restored in
// chunks (backup.go, backup_copy.go), never read whole. A snapshot taken
// under an older topology is re-sharded as it is restored
// (restore_reshard.go): every file a shard needs is found and checked
// before any shard is touched, and each new shard's data is streamed,
// merged from its sources' files, through a pipe into the import.
package node
