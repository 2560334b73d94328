// Package metrics serves a node's counters and gauges in the Prometheus
// text format, on the node's debug listener (--pprof ADDR, beside
// /debug/pprof/): GET /metrics.
//
// It reads, at each scrape and not before, a Snapshot the node assembles:
// its engine's storage.Stats, per replica replica.RaftStats (a storage
// node) or replica.LocalStats (cairn lite), and its KV server's
// server.OpStats. Nothing on the request path touches Prometheus: the
// counters are the engine's, replicas' and server's own atomics, so a node
// that nobody scrapes pays a few atomic adds per commit, per Ready and per
// call, and a clock read per call and per real fsync for the histograms
// (internal/latency's fixed buckets, exported as Prometheus histograms).
//
// The names (docs/operations.md, "Metrics"):
//
//	cairn_storage_commits_total          engine batches committed
//	cairn_storage_commit_keys_total      keys in them
//	cairn_storage_commit_bytes_total     bytes in them
//	cairn_storage_wal_fsyncs_total       WAL fsyncs that reached the disk
//	cairn_storage_wal_fsync_duration_seconds  histogram: how long they took
//	cairn_storage_flushes_total          memtable flushes
//	cairn_storage_compactions_total      compactions
//	cairn_storage_memtable_bytes         memtables' size
//	cairn_storage_l0_files               files in level 0
//	cairn_storage_disk_bytes             the engine's files on disk
//	cairn_row_cache_hits_total           row cache lookups answered
//	cairn_row_cache_misses_total         row cache lookups missed
//	cairn_row_cache_entries              records in the row cache
//	cairn_apply_groups_total             lite: group commits
//	cairn_apply_commands_total           lite: commands applied in them
//	cairn_applied_index{shard}           highest index applied
//	cairn_raft_leader{shard}             1 on the shard's leader, else 0
//	cairn_raft_term{shard}               current term
//	cairn_raft_commit_index{shard}       highest index known committed
//	cairn_raft_readies_total{shard}      Readies handled
//	cairn_raft_entries_appended_total{shard}  log entries written
//	cairn_raft_entries_applied_total{shard}   log entries applied
//	cairn_raft_messages_sent_total{shard}     Raft messages sent
//	cairn_requests_total{op}             KV calls served (get, multi_get, put, ...)
//	cairn_request_errors_total{op}       those that failed
//	cairn_request_duration_seconds{op}   histogram: the node's time on them
//	cairn_call_streams_open{transport}   clients' call streams open: grpc, socket
//	cairn_call_sockets_total             call sockets accepted
//
// and the Go runtime's and the process's (go_*, process_*).
//
// # Concurrency
//
// A Handler serves scrapes concurrently; each calls Snapshot once, from the
// scrape's goroutine, so Snapshot must be safe from any goroutine.
package metrics
