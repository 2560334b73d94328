package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/latency"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/storage"
)

// TestHandlerWritesSnapshot: every figure of a snapshot appears under its
// name, shards by label; a snapshot without storage or replicas leaves
// their metrics out and still serves the process's.
func TestHandlerWritesSnapshot(t *testing.T) {
	full := Snapshot{
		Storage: &storage.Stats{Commits: 7, CommitKeys: 21, CommitBytes: 4096, WALSyncs: 3, Flushes: 2,
			Compactions: 1, MemtableBytes: 1 << 20, L0Files: 4, DiskBytes: 5 << 20, RowHits: 9, RowMisses: 8, RowEntries: 6},
		Local: &replica.LocalStats{Applied: 12, Groups: 5, Commands: 12},
		Shards: []replica.RaftStats{{Shard: 2, Leader: true, Term: 3, Commit: 40, Applied: 39,
			Readies: 11, Appended: 20, ApplyEntries: 19, Sent: 33}},
		Requests: []server.OpStats{{Op: "multi_get", Calls: 17, Errors: 2}},
		Streams:  &server.StreamStats{Streams: 1, Sockets: 8, SocketsTotal: 10},
	}
	body := get(t, full)
	for _, line := range []string{
		"cairn_storage_commits_total 7", "cairn_storage_commit_keys_total 21", "cairn_storage_commit_bytes_total 4096",
		"cairn_storage_wal_fsyncs_total 3", "cairn_storage_flushes_total 2", "cairn_storage_compactions_total 1",
		"cairn_storage_memtable_bytes 1.048576e+06", "cairn_storage_l0_files 4", "cairn_storage_disk_bytes 5.24288e+06",
		"cairn_row_cache_hits_total 9", "cairn_row_cache_misses_total 8", "cairn_row_cache_entries 6",
		"cairn_apply_groups_total 5", "cairn_apply_commands_total 12", `cairn_applied_index{shard="0"} 12`,
		`cairn_applied_index{shard="2"} 39`, `cairn_raft_leader{shard="2"} 1`, `cairn_raft_term{shard="2"} 3`,
		`cairn_raft_commit_index{shard="2"} 40`, `cairn_raft_readies_total{shard="2"} 11`,
		`cairn_raft_entries_appended_total{shard="2"} 20`, `cairn_raft_entries_applied_total{shard="2"} 19`,
		`cairn_raft_messages_sent_total{shard="2"} 33`,
		`cairn_requests_total{op="multi_get"} 17`, `cairn_request_errors_total{op="multi_get"} 2`,
		`cairn_call_streams_open{transport="grpc"} 1`, `cairn_call_streams_open{transport="socket"} 8`,
		"cairn_call_sockets_total 10",
	} {
		if !strings.Contains(body, "\n"+line+"\n") {
			t.Errorf("no line %q", line)
		}
	}
	empty := get(t, Snapshot{})
	if strings.Contains(empty, "\ncairn_") || !strings.Contains(empty, "\ngo_goroutines ") {
		t.Errorf("an empty snapshot: want no cairn_ metric and the Go runtime's; got\n%s", empty)
	}
}

// TestHistograms: a method's call durations and the WAL's fsyncs appear as
// Prometheus histograms, with cumulative buckets in seconds, the sum, and
// a count that matches the buckets.
func TestHistograms(t *testing.T) {
	var calls, fsyncs latency.Histogram
	for _, d := range []time.Duration{30 * time.Microsecond, 40 * time.Microsecond, 3 * time.Millisecond, time.Minute} {
		calls.Record(d)
	}
	fsyncs.Record(700 * time.Microsecond)
	body := get(t, Snapshot{
		Storage:  &storage.Stats{WALSyncs: 1, WALSyncTime: fsyncs.Snapshot()},
		Requests: []server.OpStats{{Op: "get", Calls: 4, Time: calls.Snapshot()}},
	})
	for _, line := range []string{
		`cairn_request_duration_seconds_bucket{op="get",le="2e-05"} 0`,
		`cairn_request_duration_seconds_bucket{op="get",le="5e-05"} 2`,
		`cairn_request_duration_seconds_bucket{op="get",le="0.002"} 2`,
		`cairn_request_duration_seconds_bucket{op="get",le="0.005"} 3`,
		`cairn_request_duration_seconds_bucket{op="get",le="10"} 3`,
		`cairn_request_duration_seconds_bucket{op="get",le="+Inf"} 4`,
		`cairn_request_duration_seconds_sum{op="get"} 60.00307`,
		`cairn_request_duration_seconds_count{op="get"} 4`,
		`cairn_storage_wal_fsync_duration_seconds_bucket{le="0.0005"} 0`,
		`cairn_storage_wal_fsync_duration_seconds_bucket{le="0.001"} 1`,
		`cairn_storage_wal_fsync_duration_seconds_count 1`,
	} {
		if !strings.Contains(body, "\n"+line+"\n") {
			t.Errorf("no line %q in\n%s", line, body)
		}
	}
}

func get(t *testing.T, s Snapshot) string {
	t.Helper()
	srv := httptest.NewServer(Handler(func() Snapshot { return s }))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return "\n" + string(b)
}
