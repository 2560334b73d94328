package storage

import (
	"runtime"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

// TestSyncCommitsRaiseProcs: at GOMAXPROCS 1, a SYNC commit raises the
// count to 2 at once, a WRITE_NO_SYNC commit does not, and the count goes
// back after procsIdle without SYNC commits. With GOMAXPROCS in the
// environment nothing changes. (That each SYNC commit pushes the lowering
// back is not checked: it could only be told apart by timing.)
func TestSyncCommitsRaiseProcs(t *testing.T) {
	was := runtime.GOMAXPROCS(1)
	procs.many.Store(0) // forget a count of 2 seen by earlier tests' SYNC commits
	idle, env := procsIdle, procs.env
	t.Cleanup(func() {
		waitProcs(t, 1) // no lowering left to run against the restored count
		runtime.GOMAXPROCS(was)
		procsIdle, procs.env = idle, env
		procs.declined.Store(false)
	})
	procsIdle = 200 * time.Millisecond
	procs.env = func() bool { return false }
	a := &applier{t: t, e: testEngine(t)}
	put := func(mode SyncMode) {
		a.apply(1, []*cairnpb.Operation{putOp("/a/-/b", "v", cairnpb.Condition_CONDITION_UNSPECIFIED, nil)}, mode)
	}

	put(WriteNoSync)
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("after a WRITE_NO_SYNC commit GOMAXPROCS is %d, want 1", n)
	}
	put(Sync)
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("after a SYNC commit GOMAXPROCS is %d, want 2", n)
	}
	waitProcs(t, 1)

	// At 2 or more a SYNC commit leaves the count alone, and for a second
	// the commits after it do not ask the runtime again.
	runtime.GOMAXPROCS(2)
	put(Sync)
	if procs.raised.Load() || procs.many.Load() <= time.Now().UnixNano() {
		t.Fatalf("at GOMAXPROCS 2 a SYNC commit raised %v, remembered the count until %d", procs.raised.Load(), procs.many.Load())
	}
	procs.many.Store(time.Now().Add(time.Hour).UnixNano()) // no timing: the window surely still runs
	runtime.GOMAXPROCS(1)
	put(Sync)
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("within the window after seeing 2, a SYNC commit set the count to %d", n)
	}
	procs.many.Store(0)

	procs.env = func() bool { return true } // the operator set GOMAXPROCS
	put(Sync)
	if n := runtime.GOMAXPROCS(0); n != 1 || !procs.declined.Load() {
		t.Fatalf("with GOMAXPROCS in the environment a SYNC commit changed the count to %d", n)
	}
}

// waitProcs waits, with a deadline, until GOMAXPROCS is n and not raised.
func waitProcs(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.GOMAXPROCS(0) != n || procs.raised.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("GOMAXPROCS stayed %d (raised %v), want %d", runtime.GOMAXPROCS(0), procs.raised.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
