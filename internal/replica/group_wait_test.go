package replica

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// TestGroupWaitRule: no wait before a durable commit has been timed, for a
// group without a Sync write, or for a group as large as the writers seen
// in flight; the wait is bounded by the recent commit and by GroupWait;
// a wait that ran out lowers the writers expected to those seen.
func TestGroupWaitRule(t *testing.T) {
	w := newGroupWait(time.Millisecond)
	if w.wants(1, storage.Sync) {
		t.Fatal("waits before any durable commit was timed")
	}
	w.committed(8, 800*time.Microsecond, false)
	switch {
	case !w.wants(1, storage.Sync):
		t.Fatal("a durable group of 1 does not wait with 8 writers in flight")
	case w.wants(3, storage.WriteNoSync):
		t.Fatal("a group without a Sync write waits")
	case w.wants(8, storage.Sync):
		t.Fatal("a group of all 8 writers waits")
	case w.limit() != 800*time.Microsecond || w.gap != 250*time.Microsecond:
		t.Fatalf("limit %v, gap %v; want the commit's 800µs and a quarter of GroupWait", w.limit(), w.gap)
	}
	w.committed(8, 8*time.Millisecond, false)
	if w.commit != 1700*time.Microsecond || w.limit() != time.Millisecond {
		t.Fatalf("commit average %v, limit %v; want 1.7ms and GroupWait's 1ms", w.commit, w.limit())
	}
	w.committed(3, time.Millisecond, true)
	if w.expect != 3 {
		t.Fatalf("after a wait that ran out with 3 writers seen, expect %d", w.expect)
	}
	w.committed(5, time.Millisecond, false)
	if w.expect != 5 {
		t.Fatalf("after 5 writers seen, expect %d", w.expect)
	}
	off := newGroupWait(0)
	off.commit, off.expect = time.Millisecond, 8
	if off.wants(1, storage.Sync) {
		t.Fatal("GroupWait 0 waits")
	}
}

// primeWait makes l's next durable group wait for expect writers, for up
// to limit, as if a commit had just seen them. It must run before the
// first proposal, which orders it before the apply loop's reads.
func primeWait(l *Local, expect int) {
	l.wait.expect, l.wait.commit = expect, time.Hour
}

// proposeTaken queues a Sync put directly and returns once the apply loop
// has taken it; the outcome arrives on the returned channel.
func proposeTaken(t *testing.T, l *Local, key string) chan outcome {
	t.Helper()
	cmd := put(key, "v", 0)
	if err := prepare(l.e, cmd, 1); err != nil {
		t.Fatal(err)
	}
	p := &proposal{ctx: context.Background(), cmd: cmd, sync: storage.Sync, done: make(chan outcome, 1)}
	l.proposals <- p
	waitFor(t, func() bool { return len(l.proposals) == 0 }, "the apply loop to take the proposal")
	return p.done
}

// TestGroupWaitHoldsTheGroupForWritersOnTheirWay: with four writers
// expected, a durable group of one that the loop already took waits for
// the three that come after it, commits all four with one fsync, and stops
// waiting as soon as they are there, long before GroupWait.
func TestGroupWaitHoldsTheGroupForWritersOnTheirWay(t *testing.T) {
	l := openTest(t, Config{MaxGroup: 512, GroupWait: 20 * time.Second, SweepInterval: time.Hour, SweepBatch: 1000})
	primeWait(l, 4)
	start := time.Now()
	first := proposeTaken(t, l, "/g/-/0")
	var wg sync.WaitGroup
	for i := 1; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := l.Propose(context.Background(), put("/g/-/"+string(rune('0'+i)), "v", 0), storage.Sync); err != nil || r.Err != nil {
				t.Errorf("propose %d: %v %v", i, err, r.Err)
			}
		}()
	}
	wg.Wait()
	if o := <-first; o.err != nil || o.res.Err != nil {
		t.Fatalf("first write: %v %v", o.err, o.res.Err)
	}
	if s := l.Stats(); s.Groups != 1 || s.Commands != 4 {
		t.Fatalf("%d commands in %d groups; want 4 in one", s.Commands, s.Groups)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("the group took %v: it waited past its fourth writer", took)
	}
}

// TestGroupWaitGivesUpAndForgets: a durable write whose expected writers do
// not come commits once no other arrives for a quarter of GroupWait, and
// the writers expected fall to the one seen, so the next lone write does
// not wait.
func TestGroupWaitGivesUpAndForgets(t *testing.T) {
	const wait = 200 * time.Millisecond
	l := openTest(t, Config{MaxGroup: 512, GroupWait: wait, SweepInterval: time.Hour, SweepBatch: 1000})
	primeWait(l, 4)
	start := time.Now()
	if r, err := l.Propose(context.Background(), put("/g/-/alone", "v", 0), storage.Sync); err != nil || r.Err != nil {
		t.Fatalf("propose: %v %v", err, r.Err)
	}
	if took := time.Since(start); took < wait/4 {
		t.Fatalf("the write took %v: it did not wait for the writers expected", took)
	}
	// The loop wrote expect before it answered, and proposes nothing else.
	if l.wait.expect != 1 {
		t.Fatalf("after a wait that ran out, %d writers expected; want the 1 seen", l.wait.expect)
	}
}

// TestGroupWaitEndsOnClose: Close does not wait out a group's wait; the
// write taken is committed and acknowledged.
func TestGroupWaitEndsOnClose(t *testing.T) {
	l := openTest(t, Config{MaxGroup: 512, GroupWait: time.Minute, SweepInterval: time.Hour, SweepBatch: 1000})
	primeWait(l, 4)
	done := proposeTaken(t, l, "/g/-/closing")
	start := time.Now()
	l.Close()
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Close took %v: it waited out the group's wait", took)
	}
	if o := <-done; o.err != nil || o.res.Err != nil {
		t.Fatalf("the write taken before Close: %v %v", o.err, o.res.Err)
	}
	if got := l.AppliedIndex(); got != 1 {
		t.Fatalf("applied index %d after Close; want the write taken", got)
	}
}
