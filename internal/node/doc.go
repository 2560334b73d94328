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
// # Concurrency
//
// StartLite returns a running node; Close stops it once (later calls return
// the same result) and may be called from any goroutine.
package node
