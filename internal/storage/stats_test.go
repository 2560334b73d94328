package storage

import (
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
)

// TestStatsCountCommits: Stats counts each commit, the keys and bytes in
// it, and the WAL fsyncs that reached the disk (a SYNC commit's, not a
// WRITE_NO_SYNC one's); a flush shows in Flushes and empties the memtable.
func TestStatsCountCommits(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	before := e.Stats()
	for range 3 {
		if r := a.apply(1, []*cairnpb.Operation{putOp("/s/-/a", "x", 0, nil), putOp("/s/-/b", "y", 0, nil)}, WriteNoSync); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	mid := e.Stats()
	if got := mid.Commits - before.Commits; got != 3 {
		t.Fatalf("commits: %d, want 3", got)
	}
	// Each commit holds the two records and the applied index.
	if got := mid.CommitKeys - before.CommitKeys; got != 9 {
		t.Fatalf("keys: %d, want 9", got)
	}
	if mid.CommitBytes <= before.CommitBytes {
		t.Fatalf("bytes did not grow: %d then %d", before.CommitBytes, mid.CommitBytes)
	}
	if mid.WALSyncs != before.WALSyncs || mid.WALSyncTime != before.WALSyncTime {
		t.Fatalf("WRITE_NO_SYNC commits fsynced: %d then %d, durations %+v then %+v",
			before.WALSyncs, mid.WALSyncs, before.WALSyncTime, mid.WALSyncTime)
	}
	if mid.MemtableBytes == 0 {
		t.Fatal("memtable size 0 after writes")
	}
	a.apply(1, []*cairnpb.Operation{putOp("/s/c", "z", 0, nil)}, Sync)
	after := e.Stats()
	if after.WALSyncs <= mid.WALSyncs {
		t.Fatalf("a SYNC commit did not count a fsync: %d then %d", mid.WALSyncs, after.WALSyncs)
	}
	// Every real fsync has its duration, and only those.
	if got, want := after.WALSyncTime.Count()-mid.WALSyncTime.Count(), after.WALSyncs-mid.WALSyncs; got != want || after.WALSyncTime.Sum <= mid.WALSyncTime.Sum {
		t.Fatalf("fsync durations: %d more recorded (sum %v then %v), want %d, one per real fsync",
			got, mid.WALSyncTime.Sum, after.WALSyncTime.Sum, want)
	}
	db, l := e.acquire()
	err := db.Flush()
	e.release(l)
	if err != nil {
		t.Fatal(err)
	}
	flushed := e.Stats()
	if flushed.Flushes <= after.Flushes || flushed.DiskBytes == 0 {
		t.Fatalf("after a flush: flushes %d then %d, disk bytes %d", after.Flushes, flushed.Flushes, flushed.DiskBytes)
	}
}
