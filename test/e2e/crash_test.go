package e2e

// Durability across a real crash: writers put records while the process is
// SIGKILLed; after a restart on the same root every acknowledged write must
// be there (docs: SYNC survives power loss, WRITE_NO_SYNC survives a process
// crash; NO_SYNC only a clean shutdown).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

var crashSeed = flag.Uint64("crash.seed", 0, "seed for TestCrashSIGKILL (0: from the clock)")

const (
	crashWriters    = 8
	crashCycles     = 3
	crashMinAcks    = 500 // acks per cycle before the kill
	crashHotPerW    = 2   // hot keys per writer, overwritten with increasing sequence numbers
	crashHotEvery   = 8   // every crashHotEvery-th write of a writer goes to a hot key
	crashAckTimeout = 30 * time.Second
)

// crashValue is the value stored under a unique key: derived from the key.
func crashValue(k string) []byte {
	h := sha256.Sum256([]byte(k))
	return []byte(k + "=" + hex.EncodeToString(h[:]))
}

// hotValue is the value of a hot key's seq-th write.
func hotValue(k string, seq uint64) []byte {
	return []byte(fmt.Sprintf("seq=%d;%s", seq, crashValue(k)))
}

func parseHotValue(k string, v []byte) (uint64, error) {
	s, ok := strings.CutPrefix(string(v), "seq=")
	if !ok {
		return 0, fmt.Errorf("no seq= prefix")
	}
	n, rest, ok := strings.Cut(s, ";")
	if !ok || rest != string(crashValue(k)) {
		return 0, fmt.Errorf("value does not belong to key %s", k)
	}
	return strconv.ParseUint(n, 10, 64)
}

// crashWriter is one writer's model: what it wrote and what was acknowledged.
// Only its goroutine touches it while writing; the test reads it after.
type crashWriter struct {
	id        int
	acked     map[string]bool // unique minor component -> acknowledged
	inflight  map[string]bool // unique writes that failed: maybe applied
	hotAcked  [crashHotPerW]uint64
	hotTried  [crashHotPerW]uint64
	ackCount  int
	lastError error
}

func (w *crashWriter) major() []string { return []string{"crash", "w" + strconv.Itoa(w.id)} }

func (w *crashWriter) hotKey(j int) *cairnpb.Key {
	return key([]string{"crash", "hot"}, fmt.Sprintf("w%d-h%d", w.id, j))
}

func uniqueKeyString(major []string, minor string) string {
	return "/" + strings.Join(major, "/") + "/-/" + minor
}

// run writes until ctx ends or a write fails. A failure is expected only once
// the process is dead (dead is set), and then ends the writer quietly.
func (w *crashWriter) run(ctx context.Context, c cairnpb.KVClient, sync cairnpb.SyncPolicy, cycle int, acks *atomic.Int64, reached chan struct{}, dead *atomic.Bool) {
	for n := 0; ctx.Err() == nil; n++ {
		rctx, cancel := rpcCtx()
		var err error
		if n%crashHotEvery == crashHotEvery-1 {
			j := (n / crashHotEvery) % crashHotPerW
			k := w.hotKey(j)
			seq := w.hotTried[j] + 1
			w.hotTried[j] = seq
			err = put(rctx, c, k, hotValue(k.Minor[0], seq), sync)
			if err == nil {
				w.hotAcked[j] = seq
			}
		} else {
			minor := fmt.Sprintf("c%d-%06d", cycle, n)
			err = put(rctx, c, key(w.major(), minor), crashValue(uniqueKeyString(w.major(), minor)), sync)
			if err == nil {
				w.acked[minor] = true
			} else {
				w.inflight[minor] = true
			}
		}
		cancel()
		if err != nil {
			if !dead.Load() {
				w.lastError = err
			}
			return
		}
		w.ackCount++
		if acks.Add(1) == crashMinAcks {
			close(reached)
		}
	}
}

// verify checks every acknowledged write of w against the restarted store and
// returns how many records it checked.
func (w *crashWriter) verify(t *testing.T, c cairnpb.KVClient) int {
	t.Helper()
	recs := multiGetAll(t, c, w.major(), 1000)
	found := make(map[string]bool, len(recs))
	for _, r := range recs {
		if len(r.GetKey().GetMinor()) != 1 {
			t.Errorf("writer %d: unexpected record %v", w.id, r.GetKey())
			continue
		}
		minor := r.GetKey().GetMinor()[0]
		found[minor] = true
		if want := crashValue(uniqueKeyString(w.major(), minor)); string(r.GetValue()) != string(want) {
			t.Errorf("writer %d: %s has value %q, want %q", w.id, minor, r.GetValue(), want)
		}
		if !w.acked[minor] && !w.inflight[minor] {
			t.Errorf("writer %d: %s is present but was never written", w.id, minor)
		}
	}
	checked, missing := 0, 0
	for minor := range w.acked {
		checked++
		if !found[minor] {
			if missing++; missing <= 5 {
				t.Errorf("writer %d: acknowledged write %s is missing after restart", w.id, uniqueKeyString(w.major(), minor))
			}
		}
	}
	if missing > 0 {
		t.Errorf("writer %d: %d of %d acknowledged writes are missing", w.id, missing, len(w.acked))
	}
	for j := range crashHotPerW {
		k := w.hotKey(j)
		rec, ok := get(t, c, k)
		checked++
		if !ok {
			if w.hotAcked[j] > 0 {
				t.Errorf("writer %d: hot key %s missing; sequence %d was acknowledged", w.id, k.Minor[0], w.hotAcked[j])
			}
			continue
		}
		seq, err := parseHotValue(k.Minor[0], rec.GetValue())
		switch {
		case err != nil:
			t.Errorf("writer %d: hot key %s has bad value %q: %v", w.id, k.Minor[0], rec.GetValue(), err)
		case seq < w.hotAcked[j]:
			t.Errorf("writer %d: hot key %s has sequence %d, older than the acknowledged %d", w.id, k.Minor[0], seq, w.hotAcked[j])
		case seq > w.hotTried[j]:
			t.Errorf("writer %d: hot key %s has sequence %d, never written (last tried %d)", w.id, k.Minor[0], seq, w.hotTried[j])
		}
	}
	return checked
}

// crashRun is one subtest's state across its cycles.
type crashRun struct {
	t       *testing.T
	root    string
	sync    cairnpb.SyncPolicy
	rng     *rand.Rand
	writers []*crashWriter
	acked   int
}

func newCrashRun(t *testing.T, sync cairnpb.SyncPolicy, seed uint64) *crashRun {
	r := &crashRun{t: t, root: t.TempDir(), sync: sync, rng: rand.New(rand.NewPCG(seed, 0x63726173))}
	for i := range crashWriters {
		r.writers = append(r.writers, &crashWriter{id: i, acked: map[string]bool{}, inflight: map[string]bool{}})
	}
	return r
}

// cycle starts writers against l, waits for crashMinAcks acks and then an
// extra random delay, and ends the process with end (SIGKILL or SIGTERM).
// It returns the acks of this cycle.
func (r *crashRun) cycle(l *lite, n int, end func()) int {
	t := r.t
	c := dial(t, l.addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acks atomic.Int64
	var dead atomic.Bool
	reached := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range r.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, c, r.sync, n, &acks, reached, &dead)
		}()
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	select {
	case <-reached:
	case <-writersDone:
		t.Fatalf("cycle %d: writers stopped after %d acks: %v", n, acks.Load(), r.writerErrors())
	case <-time.After(crashAckTimeout):
		cancel()
		<-writersDone
		t.Fatalf("cycle %d: only %d acks within %v", n, acks.Load(), crashAckTimeout)
	}
	// Not synchronisation: a random extra run time so the kill lands at a
	// different point of the write stream each time.
	delay := time.Duration(200+r.rng.IntN(601)) * time.Millisecond
	time.Sleep(delay)
	dead.Store(true)
	end()
	select {
	case <-writersDone:
	case <-time.After(2 * rpcTimeout):
		t.Fatalf("cycle %d: writers still running %v after the process ended", n, 2*rpcTimeout)
	}
	if err := r.writerErrors(); err != nil {
		t.Fatalf("cycle %d: a write failed before the process was ended: %v", n, err)
	}
	got := int(acks.Load())
	r.acked += got
	t.Logf("cycle %d: ended after %d acks (+%v after the first %d); %d acked in total", n, got, delay, crashMinAcks, r.acked)
	return got
}

func (r *crashRun) writerErrors() error {
	var errs []error
	for _, w := range r.writers {
		if w.lastError != nil {
			errs = append(errs, fmt.Errorf("writer %d: %w", w.id, w.lastError))
		}
	}
	return errors.Join(errs...)
}

// verify checks every acknowledged write so far against l.
func (r *crashRun) verify(l *lite, after string) {
	t := r.t
	c := dial(t, l.addr)
	start := time.Now()
	checked := 0
	for _, w := range r.writers {
		checked += w.verify(t, c)
	}
	t.Logf("after %s: checked %d records (%d acknowledged writes so far) in %v", after, checked, r.acked, time.Since(start).Round(time.Millisecond))
	if t.Failed() {
		t.FailNow()
	}
}

func TestCrashSIGKILL(t *testing.T) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)

	for _, mode := range []cairnpb.SyncPolicy{cairnpb.SyncPolicy_SYNC_POLICY_SYNC, cairnpb.SyncPolicy_SYNC_POLICY_WRITE_NO_SYNC} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Logf("seed %d", seed)
			r := newCrashRun(t, mode, seed+uint64(mode))
			l := startLite(t, r.root)
			for n := 1; n <= crashCycles; n++ {
				r.cycle(l, n, l.kill)
				if code := l.state.ExitCode(); code != -1 {
					t.Fatalf("cycle %d: exit code %d after SIGKILL, want -1 (killed)", n, code)
				}
				l = startLite(t, r.root)
				r.verify(l, fmt.Sprintf("SIGKILL %d", n))
			}
			if code := l.stop(); code != 0 {
				t.Errorf("exit code %d after SIGTERM, want 0", code)
			}
		})
	}

	// NO_SYNC may lose writes on a crash by design, but a clean shutdown
	// (SIGTERM while writers are still busy) must keep every acknowledged one.
	t.Run("NO_SYNC_clean_shutdown", func(t *testing.T) {
		t.Logf("seed %d", seed)
		r := newCrashRun(t, cairnpb.SyncPolicy_SYNC_POLICY_NO_SYNC, seed+uint64(cairnpb.SyncPolicy_SYNC_POLICY_NO_SYNC))
		l := startLite(t, r.root)
		for n := 1; n <= crashCycles; n++ {
			code := -2
			r.cycle(l, n, func() { code = l.stop() })
			if code != 0 {
				t.Fatalf("cycle %d: exit code %d after SIGTERM, want 0", n, code)
			}
			l = startLite(t, r.root)
			r.verify(l, fmt.Sprintf("SIGTERM %d", n))
		}
		if code := l.stop(); code != 0 {
			t.Errorf("exit code %d after SIGTERM, want 0", code)
		}
	})
}
