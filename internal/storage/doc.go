// Package storage is Cairn's only user of Pebble. It owns the on-disk layout
// of one node's engine, the record format, the read paths (get, multi-get,
// store scan) and the deterministic apply function that turns commands into
// writes.
//
// # Key spaces
//
// The first byte of every Pebble key names its space:
//
//	'm' meta     'm' name                     -> see meta.go (store identity,
//	                                             applied index)
//	'r' records  'r' shard(8) hash(8) major 00 02 minor -> record (see package keys)
//	'x' expiry   'x' shard(8) expiry-ms(8 BE) record-key -> empty
//	'l' Raft log 'l' shard(8 BE) index(8 BE)    -> entry   (see raftlog.go)
//	's' shard    's' shard(8 BE) kind           -> a replicated shard's
//	                                             Raft and applied state
//
// Records are grouped by shard (lite's is 0), so two shards with replicas on
// one node never share a key, and within a shard sort by the hash of their
// major path, so a partition is one contiguous range of the shard's records. The 'x' space indexes records with a TTL
// by expiry time so the sweeper finds expired records without a full scan. An
// index entry may be stale (the record was rewritten or deleted since); the
// sweeper checks the record before deleting it.
//
// # Record
//
//	0      1                  9                 17                25
//	+------+------------------+-----------------+-----------------+----------
//	| 0x01 | origin (8, BE)   | index (8, BE)   | expiry-ms (8,BE)| value ...
//	+------+------------------+-----------------+-----------------+----------
//	 format  version (16 bytes, opaque to clients)  0 = never
//
// The version is the shard's origin (a random id fixed when the store was
// created) and the index of the command that wrote the record, so it changes
// on every write and orders writes within a shard.
//
// # Apply
//
// State changes only through Batch.Apply(index, command), called by one
// goroutine in index order. Apply reads nothing but the store and the command
// (the command carries the proposer's clock), so any replica that applies the
// same commands reaches the same bytes. Batch.Commit writes the applied index
// with the commands' effects atomically, so after a crash the engine reopens
// at a command boundary.
//
// # Snapshots
//
// A shard's snapshot never sits in memory whole. NewExport holds a Pebble
// snapshot and reads the shard's applied index from it; its readers stream
// the shard's data spans (ShardDataSpans: records, their expiry-index
// entries, the partition table) in chunks of at most ChunkBytes, in the
// snapshot data format (snapshot.go). On the other side an Import files the
// pairs, as they arrive, into one sstable per key space and Install ingests
// them, with the applied index, the Raft states and the deletion of the
// old data and log, in one Pebble ingestion: atomic across a crash (see
// ingest.go). ExportShard and Batch.ImportSpans keep the in-memory form
// for small spans.
//
// # Durability
//
// Commit takes a SyncMode. Sync fsyncs Pebble's WAL. WriteNoSync makes Pebble
// write its WAL buffer to the OS (so a process crash cannot lose it) but skips
// the fsync: the engine's FS wrapper (walFS) makes WAL fsyncs real only while
// a Sync commit is in flight, and fsyncs a WAL before Pebble closes it.
// NoSync leaves the WAL record in Pebble's buffer. The WAL uses format
// FormatColumnarBlocks, before WAL sync-offset chunks, so a skipped fsync
// followed by power loss reads as a torn tail, not as corruption.
//
// # Concurrency
//
// Engine reads (Get, MultiGet, StoreScan, ExpiredBefore) are safe from any
// goroutine and see a consistent snapshot each. Stats (stats.go: commit,
// fsync, flush and row cache counters, for the metrics endpoint) is safe
// from any goroutine too. A View (checksum.go) is a
// snapshot kept open: a replica takes one right after committing a Checksum
// command and hashes its partitions from it off the apply loop; close it
// before the engine. So is an Export, whose readers may stream from any
// goroutine and which Close stops mid-stream. An Import belongs to one
// goroutine at a time; Install runs on the shard's apply goroutine, as its
// other writes do. A Batch belongs to one
// goroutine. Batches of different shards may commit concurrently (see
// walFS). Close must not race with any of this.
//
// # Memory
//
// An engine with a row cache (rowcache.go) holds its bytes on the Go heap
// for as long as it is open, and raises the process's soft memory limit by
// them meanwhile (rowcache_mem.go), unless GOMEMLIMIT is set: a process
// running several engines gets room for all of their caches.
//
// # Processors
//
// A process at GOMAXPROCS 1 runs with 2 while SYNC commits happen, and
// goes back 10 s after the last one, unless GOMAXPROCS is set in the
// environment (syncprocs.go): with one P, a goroutine in fdatasync can hold
// it for the whole fsync, and the store does nothing else meanwhile.
package storage
