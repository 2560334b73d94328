package metrics

import "github.com/prometheus/client_golang/prometheus"

// The metrics' descriptions (the list in doc.go).
var (
	commits       = desc("cairn_storage_commits_total", "Engine batches committed.")
	commitKeys    = desc("cairn_storage_commit_keys_total", "Keys (sets, deletions, range deletions) in the committed batches.")
	commitBytes   = desc("cairn_storage_commit_bytes_total", "Bytes of the committed batches.")
	walFsyncs     = desc("cairn_storage_wal_fsyncs_total", "WAL fsyncs that reached the disk: those SYNC writes asked for, and one before each WAL file closes.")
	walFsyncTime  = desc("cairn_storage_wal_fsync_duration_seconds", "How long the WAL fsyncs that reached the disk took.")
	flushes       = desc("cairn_storage_flushes_total", "Memtable flushes.")
	compactions   = desc("cairn_storage_compactions_total", "Compactions.")
	memtableBytes = desc("cairn_storage_memtable_bytes", "Size of the memtables.")
	l0Files       = desc("cairn_storage_l0_files", "Files in level 0 of the LSM.")
	diskBytes     = desc("cairn_storage_disk_bytes", "Size of the engine's files on disk.")
	rowHits       = desc("cairn_row_cache_hits_total", "Row cache lookups it answered.")
	rowMisses     = desc("cairn_row_cache_misses_total", "Row cache lookups it missed.")
	rowEntries    = desc("cairn_row_cache_entries", "Records in the row cache.")
	applyGroups   = desc("cairn_apply_groups_total", "cairn lite: group commits (commands applied together in one engine commit).")
	applyCommands = desc("cairn_apply_commands_total", "cairn lite: commands applied in the group commits.")
	appliedIndex  = desc("cairn_applied_index", "Highest command index applied to the engine (shard 0: cairn lite).", "shard")
	raftLeader    = desc("cairn_raft_leader", "1 if this node's replica leads the shard, else 0.", "shard")
	raftTerm      = desc("cairn_raft_term", "The shard's current Raft term, as this replica knows it.", "shard")
	raftCommit    = desc("cairn_raft_commit_index", "Highest log index this replica knows committed.", "shard")
	raftReadies   = desc("cairn_raft_readies_total", "Raft Readies handled (each usually one engine commit).", "shard")
	raftAppended  = desc("cairn_raft_entries_appended_total", "Raft log entries written.", "shard")
	raftApplied   = desc("cairn_raft_entries_applied_total", "Raft log entries applied.", "shard")
	raftSent      = desc("cairn_raft_messages_sent_total", "Raft messages handed to the transport.", "shard")
	callStreams   = desc("cairn_call_streams_open", "Clients' call streams open now, by transport: grpc (cairn.v1.KVStream) or socket (the call socket).", "transport")
	callSockets   = desc("cairn_call_sockets_total", "Call sockets accepted (past their preface) since the node started.")
	requests      = desc("cairn_requests_total", "KV calls served, unary or on a call stream, by method.", "op")
	requestTime   = desc("cairn_request_duration_seconds", "How long the node spent on KV calls, by method: from the call reaching the method to its answer, waits for replication and fsyncs included, the network not. Failed calls included.", "op")
	requestErrors = desc("cairn_request_errors_total", "KV calls that failed (invalid input, not the leader, a timeout...), by method; a write whose condition did not hold did not fail.", "op")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}
