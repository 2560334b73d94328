// Package node runs Cairn processes. Today that is Lite: one process holding
// one store with one shard (a single replica), serving the KV gRPC service on
// one port, like Oracle NoSQL's KVLite. Later issues add the storage node,
// which hosts replicas of several shards on the same port.
//
// Root layout:
//
//	ROOT/data/   the Pebble engine (records, meta, applied index)
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
// # Concurrency
//
// StartLite returns a running node; Close stops it once (later calls return
// the same result) and may be called from any goroutine.
package node
