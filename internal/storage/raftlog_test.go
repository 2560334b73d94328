package storage

import (
	"fmt"
	"testing"
)

// TestDeleteShardRaftState: the shard's log and states go, its records and
// its neighbours' log and states stay; a later SetApplied wins.
func TestDeleteShardRaftState(t *testing.T) {
	e := testEngine(t)
	shards := []uint64{0, 1, 2, ^uint64(0)}
	for _, s := range shards {
		b := e.NewShardBatch(s, testOrigin)
		for i := uint64(1); i <= 5; i++ {
			if err := b.PutLogEntry(s, i, []byte("e")); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range []byte{ShardHardState, ShardTruncated, ShardConfState} {
			if err := b.PutShardState(s, k, []byte{k}); err != nil {
				t.Fatal(err)
			}
		}
		if r := b.Apply(5, testPut()); r.Err != nil {
			t.Fatal(r.Err)
		}
		if err := b.Commit(NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	for _, victim := range []uint64{1, ^uint64(0)} {
		b := e.NewShardBatch(victim, testOrigin)
		if err := b.DeleteShardRaftState(victim); err != nil {
			t.Fatal(err)
		}
		b.SetApplied(9)
		if err := b.Commit(Sync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	for _, s := range shards {
		deleted := s == 1 || s == ^uint64(0)
		n := 0
		if err := e.LogEntries(s, 0, ^uint64(0), func(uint64, []byte) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		_, ok, err := e.ShardState(s, ShardHardState)
		applied, aerr := e.ShardApplied(s)
		if err != nil || aerr != nil {
			t.Fatal(err, aerr)
		}
		want := fmt.Sprint(5, true, 5)
		if deleted {
			want = fmt.Sprint(0, false, 9)
		}
		if got := fmt.Sprint(n, ok, applied); got != want {
			t.Errorf("shard %d: entries, hard state, applied = %s; want %s", s, got, want)
		}
	}
	if _, ok := mustGet(t, e, "/p/-/q", 1); !ok {
		t.Error("deleting Raft state deleted a record")
	}
}
