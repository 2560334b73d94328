package storage

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A process with one P (GOMAXPROCS 1: pinned to one core, or a container
// with one CPU) stalls at every WAL fsync. The goroutine in fdatasync holds
// the only P until the runtime's monitor takes it back, and the monitor
// wakes every 20 µs only while it keeps finding such work: once it has been
// idle for a millisecond its sleep doubles, up to 10 ms, so that an fsync
// of a few hundred µs ends before the monitor looks twice, and the whole
// process (receiving, applying, answering) waits for the disk. A SYNC load
// then runs at one speed or at half of it, by chance (docs/benchmarks.md,
// "One P stalls at each fsync"). A second P is what lets the work overlap
// the fsync, but it costs CPU on every operation of a process that never
// fsyncs: the idle P's thread spins and wakes against the running one.
//
// So while SYNC commits happen, the process runs with two Ps, and when none
// has happened for procsIdle it goes back to the count it had:
//
//	GOMAXPROCS 1 --a SYNC commit--> 2 --procsIdle without one--> 1
//
// Only commits count (a client's SYNC write, a Raft vote), not the
// engine's own rare fsyncs (its checkpoint every 30 s, an ingestion), so a
// store whose clients never ask for SYNC keeps its one P.
//
// It is a trade, measured in docs/benchmarks.md ("Issue 12, ninth"): a SYNC
// load no longer falls into the slow regime, but the second P's spinning
// costs it about a tenth more CPU per write than the one-P fast regime.
//
// Nothing changes when the count was 2 or more already, or when GOMAXPROCS
// is set in the environment (the operator's choice wins). The count is
// process-wide, shared by every engine of the process.
var procs struct {
	mu       sync.Mutex
	raised   atomic.Bool  // the count is 2 because of SYNC commits
	declined atomic.Bool  // GOMAXPROCS is in the environment: never touch it
	last     atomic.Int64 // time of the latest SYNC commit, UnixNano
	many     atomic.Int64 // until then (UnixNano) the count is known to be 2 or more
	base     int          // the count before raising, restored after
	// set and get change and read the count, and env looks GOMAXPROCS up;
	// tests replace them.
	set func(int)
	get func() int
	env func() bool
}

// procsIdle is how long without a SYNC commit before the count goes back.
var procsIdle = 10 * time.Second

func init() {
	procs.set = func(n int) { runtime.GOMAXPROCS(n) }
	procs.get = func() int { return runtime.GOMAXPROCS(0) }
	procs.env = func() bool { _, set := os.LookupEnv("GOMAXPROCS"); return set }
}

// noteSyncCommit is called before each SYNC commit. Its common cases
// (already raised, declined, or a count of 2 or more seen in the last
// second) take no lock: a machine with several cores asks the runtime at
// most once a second.
func noteSyncCommit() {
	now := time.Now().UnixNano()
	procs.last.Store(now)
	if procs.raised.Load() || procs.declined.Load() || now < procs.many.Load() {
		return
	}
	procs.mu.Lock()
	defer procs.mu.Unlock()
	if procs.raised.Load() {
		return
	}
	if procs.get() > 1 {
		procs.many.Store(now + int64(time.Second))
		return
	}
	if procs.env() {
		procs.declined.Store(true)
		return
	}
	procs.base = procs.get()
	procs.set(2)
	procs.raised.Store(true)
	time.AfterFunc(procsIdle, lowerProcs)
}

// lowerProcs restores the count once procsIdle has passed without a SYNC
// commit, or looks again when it will have.
func lowerProcs() {
	if idle := time.Since(time.Unix(0, procs.last.Load())); idle < procsIdle {
		time.AfterFunc(procsIdle-idle, lowerProcs)
		return
	}
	procs.mu.Lock()
	defer procs.mu.Unlock()
	procs.set(procs.base)
	procs.raised.Store(false)
}
