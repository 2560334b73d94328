package e2e

// A full disk is a state, not a crash (docs/design/20261125_storage_faults.md,
// "Free space: reserved, not polled"): cairn lite on a real 64 MiB tmpfs
// with a 16 MiB margin, filled by back-to-back 64 KiB SYNC puts from
// several writers, refuses puts with disk_full, keeps serving reads and
// deletes, never lets free space fall far into the margin, and admits puts
// again once space is freed; started on a disk with no room at all it
// serves reads only and becomes writable on its own once space returns.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var diskFullSeed = flag.Uint64("diskfull.seed", 0, "seed for TestDiskFullLite and TestDiskFullOneNode (0: from the clock)")

const (
	dfTmpfsBytes = 64 << 20
	dfMargin     = 16 << 20 // --min-free-bytes
	dfValueBytes = 64 << 10
	dfBallast    = 8 << 20 // placed before the store starts, removed to free space
	dfWriters    = 4
	// dfRefusedInARow ends a writer: that many puts refused in a row.
	dfRefusedInARow = 5
	// dfSettleRefusals refusals in a row, dfSettlePause apart, end the
	// fill: room that flushes and compactions give back has been taken.
	dfSettleRefusals = 4
	dfSettlePause    = 300 * time.Millisecond
	// dfRecoverTimeout bounds the wait for puts to be admitted again after
	// space is freed (the engine polls free space every 250 ms).
	dfRecoverTimeout = 15 * time.Second
	// dfFreeSlack is how far below the margin free space may be right
	// after an acknowledged put. A put is admitted only while the free
	// space the engine counts, less what it reserves (the margin, the
	// unflushed bytes a flush will write, the outputs of running
	// compactions), has room for it; but a flush or compaction that begins
	// while the put is in flight writes before the statfs that follows the
	// acknowledgement. Measured: at most 1.9 MB below the margin.
	dfFreeSlack = 4 << 20
)

// dfSeed returns the seed of a disk-full test and logs how to rerun it.
func dfSeed(t *testing.T) uint64 {
	seed := *diskFullSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -diskfull.seed=%d)", seed, seed)
	return seed
}

// dfValue is the value of key: dfValueBytes of seeded random bytes
// (incompressible, so the disk holds every byte), derived from the key so
// it need not be kept.
func dfValue(seed uint64, key string) []byte { return seededValue(seed, key, dfValueBytes) }

// seededValue is size bytes derived from seed and key (a multiple of 8).
func seededValue(seed uint64, key string, size int) []byte {
	h := fnv.New64a()
	h.Write([]byte(key))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	v := make([]byte, size)
	for i := 0; i < len(v); i += 8 {
		u := rng.Uint64()
		for j := 0; j < 8; j++ {
			v[i+j] = byte(u >> (8 * j))
		}
	}
	return v
}

// dfKeys is what a disk-full run wrote: the acknowledged keys (in order),
// the deleted ones and the refused ones. Safe for concurrent use.
type dfKeys struct {
	mu      sync.Mutex
	acked   []*cairnpb.Key
	deleted map[string]bool
	refused []*cairnpb.Key // refused with disk_full: never written
	ops     int            // puts and deletes sent
}

func keyString(k *cairnpb.Key) string {
	return uniqueKeyString(k.GetMajor(), strings.Join(k.GetMinor(), "/"))
}

func (s *dfKeys) ack(k *cairnpb.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acked = append(s.acked, k)
	s.ops++
}

func (s *dfKeys) refuse(k *cairnpb.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused = append(s.refused, k)
	s.ops++
}

func (s *dfKeys) op() {
	s.mu.Lock()
	s.ops++
	s.mu.Unlock()
}

// isDiskFull reports whether err is a refusal for lack of disk: code
// ResourceExhausted, ErrorDetail kind disk_full, action RETRY.
func isDiskFull(err error) bool {
	st, ed := errorDetail(err)
	return err != nil && st.Code() == codes.ResourceExhausted && ed.GetKind() == "disk_full" && ed.GetAction() == cairnpb.ErrorDetail_ACTION_RETRY
}

// minFree samples the free space of dir every millisecond until stop and
// keeps the lowest value seen.
type minFree struct {
	low  atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func sampleFree(t *testing.T, dir string) *minFree {
	m := &minFree{stop: make(chan struct{}), done: make(chan struct{})}
	m.low.Store(freeBytes(t, dir))
	go func() {
		defer close(m.done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
			m.note(freeBytesNoFail(dir))
		}
	}()
	return m
}

func (m *minFree) note(f int64) {
	for {
		old := m.low.Load()
		if f >= old || m.low.CompareAndSwap(old, f) {
			return
		}
	}
}

func (m *minFree) end() int64 {
	close(m.stop)
	<-m.done
	return m.low.Load()
}

func TestDiskFullLite(t *testing.T) {
	seed := dfSeed(t)
	start := time.Now()
	mnt := mountTmpfs(t, dfTmpfsBytes)
	ballast := writeBallast(t, filepath.Join(mnt, "ballast"), dfBallast)
	root := filepath.Join(mnt, "r")
	opts := liteOpts{extra: []string{"--min-free-bytes", strconv.Itoa(dfMargin)}}
	l := startLiteOpts(t, root, opts)
	pid := l.cmd.Process.Pid
	c := dial(t, l.addr)
	keys := &dfKeys{deleted: map[string]bool{}}
	faults := 0

	// Fill: dfWriters writers put back to back until each has been refused
	// dfRefusedInARow times in a row. After every acknowledged put the
	// writer reads statfs; a sampler reads it every millisecond meanwhile.
	t.Logf("free before the load: %d bytes (tmpfs %d, ballast %d, margin %d)", freeBytes(t, mnt), dfTmpfsBytes, dfBallast, dfMargin)
	sampler := sampleFree(t, mnt)
	var afterAck minFree
	afterAck.low.Store(freeBytes(t, mnt))
	var wg sync.WaitGroup
	errs := make(chan error, dfWriters)
	for w := range dfWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inARow := 0
			for n := 0; inARow < dfRefusedInARow; n++ {
				k := key([]string{"df", "w" + strconv.Itoa(w)}, fmt.Sprintf("%05d", n))
				ctx, cancel := rpcCtx()
				err := put(ctx, c, k, dfValue(seed, keyString(k)), cairnpb.SyncPolicy_SYNC_POLICY_SYNC)
				cancel()
				switch {
				case err == nil:
					afterAck.note(freeBytesNoFail(mnt))
					keys.ack(k)
					inARow = 0
				case isDiskFull(err):
					keys.refuse(k)
					inARow++
				default:
					errs <- fmt.Errorf("writer %d: put %s: %w", w, keyString(k), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Flushes and compactions that end give room back: one writer goes on
	// until puts stay refused across several free-space polls.
	settle(t, c, keys, seed, &afterAck, mnt)
	lowest := sampler.end()
	faults++
	if !l.running() {
		t.Fatalf("lite exited (code %d) while the disk filled", l.state.ExitCode())
	}
	t.Logf("filled in %v: %d puts acknowledged, %d refused with disk_full; free now %d bytes",
		time.Since(start).Round(time.Millisecond), len(keys.acked), len(keys.refused), freeBytes(t, mnt))
	t.Logf("lowest free space: %d bytes after an acknowledged put, %d bytes sampled every ms (margin %d; margin - that = %d, %d)",
		afterAck.low.Load(), lowest, dfMargin, dfMargin-afterAck.low.Load(), dfMargin-lowest)
	if got := afterAck.low.Load(); got < dfMargin-dfFreeSlack {
		t.Errorf("free space after an acknowledged put fell to %d bytes, more than %d below the margin (%d)", got, dfFreeSlack, dfMargin)
	}
	// Not asserted: compactions are not admitted against the margin, and
	// one of more input bytes than there is room for runs the disk dry
	// (Pebble fails it with ENOSPC and retries); reported, see the log.
	if lowest < dfMargin-dfFreeSlack {
		t.Logf("NOTE: free space fell to %d bytes in between (%d ENOSPC errors in the log, from compactions)", lowest,
			strings.Count(l.stderr.String(), "no space left on device"))
	}
	checkNoFault(t, l.stderr.String())
	checkRefusal(t, c, keys, seed, "full", "")
	if !l.logged("free disk space is below the margin: puts are refused") {
		t.Errorf("lite does not log that puts are refused:\n%s", l.stderr.String())
	}

	// Full: reads of every acknowledged key, and deletes, work.
	checkDF(t, c, keys, seed, "while full")
	deleteSome(t, c, keys, 10, "while full")

	// Space freed: puts are admitted again, in the same process.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	t.Logf("removed the %d MiB ballast: free %d bytes", dfBallast>>20, freeBytes(t, mnt))
	awaitPut(t, c, keys, seed, "after the ballast was removed")
	if l.cmd.Process.Pid != pid || !l.running() {
		t.Fatalf("lite restarted or exited; puts must be admitted again by the same process")
	}

	// A clean stop, a disk with no room at all, and a start on it: ready,
	// read-only, reads served, puts and deletes refused saying read-only.
	if code := l.stop(); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0", code)
	}
	full := filepath.Join(mnt, "ballast-full")
	n := fillDisk(t, full)
	faults++
	t.Logf("stopped; filled the tmpfs with a %d-byte ballast: %d bytes free", n, freeBytes(t, mnt))
	l = startLiteOpts(t, root, opts)
	pid = l.cmd.Process.Pid
	t.Logf("ready in %v on the full disk", l.readyAfter.Round(time.Millisecond))
	c = dial(t, l.addr)
	// stderr arrives through its own pipe, maybe after the ready line.
	var line string
	waitFor(t, 10*time.Second, "lite to log that it started read-only", func() bool {
		line = grepLine(logLines(l.stderr.String(), "too full to open the engine for writing"), "")
		return line != ""
	})
	t.Logf("lite logged: %s", line)
	checkDF(t, c, keys, seed, "on a full disk, read-only")
	checkRefusal(t, c, keys, seed, "read-only", "read-only")
	del := keys.acked[0]
	ctx, cancel := rpcCtx()
	_, err := c.Delete(ctx, &cairnpb.DeleteRequest{Op: &cairnpb.DeleteOp{Key: del}, Durability: &cairnpb.Durability{MasterSync: cairnpb.SyncPolicy_SYNC_POLICY_SYNC}})
	cancel()
	keys.op()
	if !isDiskFull(err) || !strings.Contains(status.Convert(err).Message(), "read-only") {
		t.Errorf("delete on the read-only store: %v; want disk_full saying read-only", err)
	}

	// Space returns: writable on its own, no restart.
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	awaitPut(t, c, keys, seed, "after the disk was emptied")
	t.Logf("writable %v after space returned", time.Since(freed).Round(time.Millisecond))
	if l.cmd.Process.Pid != pid || !l.running() {
		t.Fatalf("lite restarted or exited; it must become writable on its own")
	}
	// The line is logged just after the switch, and reaches this process
	// through a pipe: wait for it.
	waitFor(t, 10*time.Second, "lite to log that it became writable", func() bool {
		return strings.Contains(l.stderr.String(), "the disk has room again: the engine is writable")
	})
	checkNoFault(t, l.stderr.String())
	deleteSome(t, c, keys, 5, "after becoming writable")
	checkDF(t, c, keys, seed, "writable again")

	// Every acknowledged write survives a SIGKILL.
	l.kill()
	l = startLiteOpts(t, root, opts)
	checkDF(t, dial(t, l.addr), keys, seed, "SIGKILL and restart")
	if code := l.stop(); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
	t.Logf("summary: ops=%d acked=%d refused=%d deleted=%d faults=%d lost=0 (took %v)",
		keys.ops, len(keys.acked), len(keys.refused), len(keys.deleted), faults, time.Since(start).Round(time.Millisecond))
}

// checkNoFault fails the test if the log records a fatal storage fault:
// a full disk must never reach a write Pebble cannot survive.
func checkNoFault(t *testing.T, log string) {
	t.Helper()
	if lines := logLines(log, "cannot survive"); lines != "" {
		t.Errorf("a write Pebble cannot survive failed on the full disk:\n%s", lines)
	}
}

// settle puts until dfSettleRefusals puts in a row, dfSettlePause apart
// (longer than the engine's statfs poll), are refused with disk_full.
func settle(t *testing.T, c cairnpb.KVClient, keys *dfKeys, seed uint64, afterAck *minFree, mnt string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	inARow := 0
	for n := 0; inARow < dfSettleRefusals; n++ {
		if time.Now().After(deadline) {
			t.Fatalf("puts not refused for good within a minute (%d acknowledged so far)", len(keys.acked))
		}
		k := key([]string{"df", "settle"}, fmt.Sprintf("%05d", n))
		ctx, cancel := rpcCtx()
		err := put(ctx, c, k, dfValue(seed, keyString(k)), cairnpb.SyncPolicy_SYNC_POLICY_SYNC)
		cancel()
		switch {
		case err == nil:
			afterAck.note(freeBytesNoFail(mnt))
			keys.ack(k)
			inARow = 0
		case isDiskFull(err):
			keys.refuse(k)
			inARow++
			time.Sleep(dfSettlePause) // the load's pace, not a synchronisation
		default:
			t.Fatalf("put %s: %v", keyString(k), err)
		}
	}
}

// checkRefusal checks that a put is refused with disk_full (its message
// holding want, if set) and writes nothing.
//
// A store at the edge of its margin may still admit a put now and then (a
// compaction that gave up frees its output), so while the disk is merely
// full (want == "") a put that succeeds is recorded as acknowledged and
// the next one is tried, up to 50; a read-only store must refuse the first.
func checkRefusal(t *testing.T, c cairnpb.KVClient, keys *dfKeys, seed uint64, when, want string) {
	t.Helper()
	var k *cairnpb.Key
	var err error
	for i := 0; ; i++ {
		k = key([]string{"df", "refused"}, fmt.Sprintf("%s-%d", when, i))
		ctx, cancel := rpcCtx()
		err = put(ctx, c, k, dfValue(seed, keyString(k)), cairnpb.SyncPolicy_SYNC_POLICY_SYNC)
		cancel()
		if err != nil || want != "" || i == 50 {
			break
		}
		keys.ack(k)
	}
	if !isDiskFull(err) {
		st, ed := errorDetail(err)
		t.Fatalf("put %s: %v (code %v, detail %v); want ResourceExhausted, kind disk_full, action RETRY", when, err, st.Code(), ed)
	}
	keys.refuse(k)
	if !strings.Contains(status.Convert(err).Message(), want) {
		t.Errorf("put %s: %q does not say %q", when, status.Convert(err).Message(), want)
	}
	t.Logf("put %s: %s", when, status.Convert(err).Message())
}

// checkDF reads every acknowledged key (each with its value, or absent if
// deleted) and every refused one (absent).
func checkDF(t *testing.T, c cairnpb.KVClient, keys *dfKeys, seed uint64, when string) {
	t.Helper()
	keys.mu.Lock()
	acked, refused := slices.Clone(keys.acked), slices.Clone(keys.refused)
	deleted := make(map[string]bool, len(keys.deleted))
	for k := range keys.deleted {
		deleted[k] = true
	}
	keys.mu.Unlock()
	start := time.Now()
	lost := 0
	for _, k := range acked {
		ks := keyString(k)
		r, found := get(t, c, k)
		switch {
		case deleted[ks] && found:
			t.Errorf("%s: %s was deleted but is found", when, ks)
		case !deleted[ks] && (!found || !bytes.Equal(r.GetValue(), dfValue(seed, ks))):
			if lost++; lost <= 5 {
				t.Errorf("%s: acknowledged %s is found=%v with a value of %d bytes, want its %d", when, ks, found, len(r.GetValue()), dfValueBytes)
			}
		}
	}
	for _, k := range refused {
		if _, found := get(t, c, k); found {
			t.Errorf("%s: %s was refused with disk_full but is found", when, keyString(k))
		}
	}
	if lost > 0 {
		t.Fatalf("%s: %d of %d acknowledged writes lost", when, lost, len(acked))
	}
	t.Logf("%s: %d acknowledged keys (%d deleted) and %d refused ones read back as written in %v",
		when, len(acked), len(deleted), len(refused), time.Since(start).Round(time.Millisecond))
}

// deleteSome deletes n acknowledged keys not yet deleted (SYNC); each
// must succeed.
func deleteSome(t *testing.T, c cairnpb.KVClient, keys *dfKeys, n int, when string) {
	t.Helper()
	keys.mu.Lock()
	var todo []*cairnpb.Key
	for _, k := range keys.acked {
		if !keys.deleted[keyString(k)] && len(todo) < n {
			todo = append(todo, k)
		}
	}
	keys.mu.Unlock()
	for _, k := range todo {
		ctx, cancel := rpcCtx()
		_, err := c.Delete(ctx, &cairnpb.DeleteRequest{Op: &cairnpb.DeleteOp{Key: k}, Durability: &cairnpb.Durability{MasterSync: cairnpb.SyncPolicy_SYNC_POLICY_SYNC}})
		cancel()
		keys.op()
		if err != nil {
			t.Fatalf("delete %s %s: %v", keyString(k), when, err)
		}
		keys.mu.Lock()
		keys.deleted[keyString(k)] = true
		keys.mu.Unlock()
	}
	t.Logf("deleted %d keys %s", len(todo), when)
}

// awaitPut puts until one is acknowledged; disk_full is the only refusal
// allowed meanwhile, for up to dfRecoverTimeout.
func awaitPut(t *testing.T, c cairnpb.KVClient, keys *dfKeys, seed uint64, when string) {
	t.Helper()
	deadline := time.Now().Add(dfRecoverTimeout)
	for i := 0; ; i++ {
		k := key([]string{"df", "recover"}, fmt.Sprintf("%s-%04d", strings.ReplaceAll(when, " ", "_"), i))
		ctx, cancel := rpcCtx()
		err := put(ctx, c, k, dfValue(seed, keyString(k)), cairnpb.SyncPolicy_SYNC_POLICY_SYNC)
		cancel()
		switch {
		case err == nil:
			keys.ack(k)
			t.Logf("a put was admitted %s (after %d refusals)", when, i)
			return
		case !isDiskFull(err):
			t.Fatalf("put %s: %v", when, err)
		}
		keys.refuse(k)
		if time.Now().After(deadline) {
			t.Fatalf("puts still refused %v %s: %v", dfRecoverTimeout, when, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition, with a deadline
	}
}

// logLines returns the lines of log holding s.
func logLines(log, s string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// pingDoc is the part of ping -json the disk-full tests read.
type pingDoc struct {
	Nodes []struct {
		SN       int `json:"sn"`
		Replicas []struct {
			Service string `json:"service"`
			Status  string `json:"status"`
			Applied uint64 `json:"applied"`
		} `json:"replicas"`
		Storage *struct {
			State string `json:"state"`
			Text  string `json:"text"`
		} `json:"storage"`
	} `json:"storage_nodes"`
}

// pingNodes runs ping -json on sn (any exit code) and decodes it.
func pingNodes(t *testing.T, sn *storageNode) pingDoc {
	t.Helper()
	_, out, errOut := admin(t, sn, "-json", "ping")
	var p pingDoc
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("ping -json: %v:\n%s%s", err, out, errOut)
	}
	return p
}

// leads returns the shards node snN leads, by name (rg1, ...).
func (p pingDoc) leads(snN int) []string {
	var out []string
	for _, n := range p.Nodes {
		for _, r := range n.Replicas {
			if n.SN == snN && strings.Contains(r.Status, "MASTER") {
				out = append(out, r.Service[:strings.Index(r.Service, "-")])
			}
		}
	}
	return out
}

// storage returns node snN's storage state and text.
func (p pingDoc) storage(snN int) (string, string) {
	for _, n := range p.Nodes {
		if n.SN == snN && n.Storage != nil {
			return n.Storage.State, n.Storage.Text
		}
	}
	return "", ""
}

// converged reports whether every replica of each shard has applied the
// same index, and how many replicas there are.
func (p pingDoc) converged() (bool, int) {
	applied := map[string]uint64{}
	n, same := 0, true
	for _, nd := range p.Nodes {
		for _, r := range nd.Replicas {
			rg := r.Service[:strings.Index(r.Service, "-")]
			if a, ok := applied[rg]; ok && a != r.Applied {
				same = false
			}
			applied[rg] = r.Applied
			n++
		}
	}
	return same, n
}

// dfLoad is the client workload of TestDiskFullOneNode: writers put
// unique keys with SYNC on every replica and a majority's ack through the
// smart client, retrying a refused put (same key, same value) until it is
// acknowledged; it counts what came back.
type dfLoad struct {
	c      *client.Client
	prefix string
	seed   uint64
	size   int
	stop   chan struct{}
	wg     sync.WaitGroup

	mu     sync.Mutex
	acked  map[string][]byte
	errs   map[string]int    // failed attempts by error kind
	first  map[string]string // the first error of each kind
	events []dfEvent         // every attempt's end, in order
	pace   atomic.Int64      // each writer's pause after an acknowledged put (ns)
	// syncMix: each put is SYNC or WRITE_NO_SYNC (on every replica), at
	// random; otherwise SYNC.
	syncMix bool
	ops     int
	ackSeq  atomic.Int64 // acknowledged puts so far
}

func startDFLoad(c *client.Client, seed uint64, writers, size int) *dfLoad {
	return startLoad(c, "dfn", seed, writers, size, false)
}

// startLoad starts writers of keys /prefix/wW/kNNNNN/-/v.
func startLoad(c *client.Client, prefix string, seed uint64, writers, size int, syncMix bool) *dfLoad {
	l := &dfLoad{c: c, prefix: prefix, seed: seed, size: size, syncMix: syncMix, stop: make(chan struct{}),
		acked: map[string][]byte{}, errs: map[string]int{}, first: map[string]string{}}
	for w := range writers {
		l.wg.Add(1)
		go l.run(w)
	}
	return l
}

func (l *dfLoad) run(w int) {
	defer l.wg.Done()
	rng := rand.New(rand.NewPCG(l.seed, uint64(w)))
	d := client.Durability{MasterSync: client.Sync, ReplicaSync: client.Sync, ReplicaAck: client.AckSimpleMajority}
	for n := 0; ; n++ {
		k := client.MustParseKey(fmt.Sprintf("/%s/w%d/k%05d/-/v", l.prefix, w, n))
		v := seededValue(l.seed, k.String(), l.size)
		if l.syncMix && rng.IntN(2) == 0 {
			d.MasterSync, d.ReplicaSync = client.WriteNoSync, client.WriteNoSync
		} else {
			d.MasterSync, d.ReplicaSync = client.Sync, client.Sync
		}
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			began := time.Now()
			_, err := l.c.Put(ctx, k, v, client.WithDurability(d))
			cancel()
			l.mu.Lock()
			l.ops++
			l.events = append(l.events, dfEvent{at: time.Now(), took: time.Since(began), kind: errKindOf(err)})
			if err == nil {
				l.acked[k.String()] = v
				l.mu.Unlock()
				l.ackSeq.Add(1)
				time.Sleep(time.Duration(l.pace.Load())) // the load's rate, not a synchronisation
				break
			}
			kind := errKindOf(err)
			if l.errs[kind]++; l.errs[kind] == 1 {
				l.first[kind] = fmt.Sprintf("%s (at ack %d)", err, l.ackSeq.Load())
			}
			l.mu.Unlock()
			time.Sleep(20 * time.Millisecond) // the writer's pace after a refusal
		}
	}
}

// dfEvent is the end of one attempt of a dfLoad: "" acknowledged, or the
// error's kind.
type dfEvent struct {
	at   time.Time
	took time.Duration
	kind string
}

func errKindOf(err error) string {
	if err == nil {
		return ""
	}
	var ce *client.Error
	if errors.As(err, &ce) && ce.Kind != "" {
		return ce.Kind
	}
	return "other"
}

// timeline tells, per second from since, how many puts were acknowledged,
// the slowest attempt, and how many attempts failed, by kind.
func (l *dfLoad) timeline(since time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	type sec struct {
		acked   int
		slowest time.Duration
		errs    map[string]int
	}
	var secs []sec
	for _, e := range l.events {
		if e.at.Before(since) {
			continue
		}
		i := int(e.at.Sub(since) / time.Second)
		for len(secs) <= i {
			secs = append(secs, sec{errs: map[string]int{}})
		}
		secs[i].slowest = max(secs[i].slowest, e.took)
		if e.kind == "" {
			secs[i].acked++
		} else {
			secs[i].errs[e.kind]++
		}
	}
	var b strings.Builder
	for i, s := range secs {
		fmt.Fprintf(&b, "\n\t+%ds: acked %d, slowest %v", i, s.acked, s.slowest.Round(time.Millisecond))
		for _, k := range slices.Sorted(maps.Keys(s.errs)) {
			fmt.Fprintf(&b, ", %s %d", k, s.errs[k])
		}
	}
	return b.String()
}

// refusedLate counts the attempts refused with disk_full more than d after
// the last of full (the times the node fell below its margin) before them;
// one before any of full counts from the first refusal.
func (l *dfLoad) refusedLate(full []time.Time, d time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var since time.Time
	for _, e := range l.events {
		if e.kind != "disk_full" {
			continue
		}
		if since.IsZero() {
			since = e.at
		}
		for _, f := range full {
			if !f.After(e.at) && f.After(since) {
				since = f
			}
		}
		if e.at.Sub(since) > d {
			n++
		}
	}
	return n
}

// loggedAt returns the times of the log lines that contain msg.
func loggedAt(log, msg string) []time.Time {
	var out []time.Time
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, msg) || !strings.HasPrefix(line, "time=") {
			continue
		}
		f, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		if at, err := time.Parse(time.RFC3339Nano, f); err == nil {
			out = append(out, at)
		}
	}
	return out
}

// snapshot returns a copy of what was acknowledged so far.
func (l *dfLoad) snapshot() map[string][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.acked)
}

// end stops the writers and returns what was acknowledged.
func (l *dfLoad) end() map[string][]byte {
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked
}

func (l *dfLoad) errors() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for k, n := range l.errs {
		parts = append(parts, fmt.Sprintf("%s=%d", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// TestDiskFullOneNode: three storage nodes, the white paper's store (two
// shards of three replicas); sn2 keeps its data (--storagedir) on a small
// tmpfs and leads rg2. SYNC puts through the smart client fill sn2's disk:
// the store keeps acknowledging writes (sn1 and sn3 are a majority; sn2
// lags, and hands rg2 off), no node exits, reads work, and ping and verify
// configuration say sn2's storage is low on disk. Once space is freed on
// the tmpfs, sn2 catches up: every replica applies the same index and
// NONE_REQUIRED reads sent to sn2 see every acknowledged record.
func TestDiskFullOneNode(t *testing.T) {
	seed := dfSeed(t)
	start := time.Now()
	const (
		ballast    = 36 << 20 // leaves 12 MiB above the margin: a quick fill
		valueBytes = 4 << 10
		writers    = 4
		// With sn2 full, the load goes on at about 25 puts a second
		// (small: sn2 must find room for them once space is freed) for
		// fullTime: several rounds of the leaders' checks, every 20 ticks
		// (2 s), which move leadership.
		fullPace = 160 * time.Millisecond
		fullTime = 10 * time.Second
		// handoffTime bounds how long puts on the shard sn2 led may be
		// refused with disk_full once its disk is full: 20 ticks, and slack.
		handoffTime = 4 * time.Second
	)
	mnt := mountTmpfs(t, dfTmpfsBytes)
	ballastPath := writeBallast(t, filepath.Join(mnt, "ballast"), ballast)
	const full = 1 // sn2, by index
	nodes := initNodesWith(t, 3, map[int][]string{full: {"--storagedir", filepath.Join(mnt, "data")}})
	nodes[full].extra = []string{"--min-free-bytes", strconv.Itoa(dfMargin)}
	deployWhitePaperOn(t, nodes)
	v := nodes[full]
	waitFor(t, 30*time.Second, "sn2 to lead rg2, its preferred shard", func() bool {
		return slices.Contains(pingNodes(t, nodes[0]).leads(full+1), "rg2")
	})
	t.Logf("sn2 keeps its data on a %d MiB tmpfs (%d MiB ballast, margin %d MiB) and leads rg2", dfTmpfsBytes>>20, ballast>>20, dfMargin>>20)

	c := openStore(t, nodes)
	load := startDFLoad(c, seed, writers, valueBytes)
	stopped := false
	defer func() {
		if !stopped {
			load.end()
		}
	}()
	// Until ping says sn2's storage is low on disk.
	var text string
	waitFor(t, 2*time.Minute, "sn2's disk to fill", func() bool {
		var state string
		state, text = pingNodes(t, nodes[0]).storage(full + 1)
		return state == "low-disk"
	})
	load.pace.Store(int64(fullPace))
	fullAt, ackedAtFull := time.Now(), load.ackSeq.Load()
	t.Logf("sn2 is low on disk after %d acknowledged puts (%v); free %d bytes; ping: storage: %s",
		ackedAtFull, time.Since(start).Round(time.Millisecond), freeBytes(t, mnt), text)

	// The store keeps acknowledging writes while sn2 is full.
	waitFor(t, fullTime+10*time.Second, "the load to go on with sn2 full", func() bool { return time.Since(fullAt) >= fullTime })
	// sn2 hovers at its margin (its flushes and compactions free space,
	// the load takes it): ping says low-disk whenever it is there again.
	var p pingDoc
	var code int
	var out string
	waitFor(t, 30*time.Second, "ping to report sn2's low disk", func() bool {
		p = pingNodes(t, nodes[0])
		state, _ := p.storage(full + 1)
		code, out, _ = admin(t, nodes[0], "ping")
		return state == "low-disk" && code == 1 && strings.Contains(grepLine(out, "Storage Node [sn2]"), "storage: low-disk: ")
	})
	t.Logf("ping: %s", grepLine(out, "Storage Node [sn2]"))
	// Exit 1 while sn2's replicas trail their leaders (a violation each),
	// with a warning of the low disk.
	// sn2's free space moves around the margin while its flushes and
	// compactions delete files, so a verify right after the ping may catch
	// it just above: ask until it warns, within a deadline.
	var w string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, out, _ = admin(t, nodes[0], "verify", "configuration")
		if w = logLines(out, "sn2: storage is low-disk: "); w != "" || time.Now().After(deadline) {
			break
		}
	}
	if w == "" {
		t.Errorf("verify configuration does not warn of sn2's low disk within 30s:\n%s", out)
	} else {
		t.Logf("verify: %s", w)
	}
	acked := load.end()
	stopped = true
	during := load.ackSeq.Load() - ackedAtFull
	t.Logf("%d puts acknowledged in the %v after sn2 was seen full; failed attempts: %s", during, fullTime, load.errors())
	for k, e := range load.first {
		t.Logf("first %s: %s", k, e)
	}
	for i, sn := range nodes {
		if l := logLines(sn.stderr.String(), "leadership"); l != "" {
			t.Logf("sn%d logged:\n%s", i+1, l)
		}
	}
	t.Logf("the load from 2 s before sn2 was seen full:%s", load.timeline(fullAt.Add(-2*time.Second)))
	if during < int64(fullTime/fullPace) {
		t.Errorf("only %d puts acknowledged in the %v with sn2 full; its peers are a majority", during, fullTime)
	}
	// sn2 hands rg2 off, and refuses to take it back (it is rg2's
	// preferred leader): the new leader's transfer to it is aborted and
	// that node left alone, so puts on rg2 stop being refused once the
	// handoff is done.
	// sn2 may hover: full, then not (a flush or compaction freed space),
	// then full again. Each refusal is timed from the last time sn2 found
	// itself below its margin (its log says when).
	if late := load.refusedLate(loggedAt(nodes[full].stderr.String(), "free disk space is below the margin"), handoffTime); late > 0 {
		t.Errorf("leadership of rg2 returned to sn2 with its disk full: %d puts refused with disk_full more than %v after sn2 last fell below its margin (sn2 led %v at the end)",
			late, handoffTime, p.leads(full+1))
	}
	for i, sn := range nodes {
		if !sn.running() {
			t.Fatalf("sn%d exited (code %d) while sn2's disk was full", i+1, sn.state.ExitCode())
		}
	}
	checkNoFault(t, v.stderr.String())
	// Reads work: every acknowledged record, through the smart client.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ks, want := range acked {
		r, found, err := c.Get(ctx, client.MustParseKey(ks), client.WithConsistency(client.Absolute))
		if err != nil || !found || !bytes.Equal(r.Value, want) {
			t.Fatalf("ABSOLUTE read of %s with sn2 full: found=%v err=%v", ks, found, err)
		}
	}
	t.Logf("%d acknowledged records read back (ABSOLUTE) with sn2 full", len(acked))

	// Space freed: sn2 catches up.
	if err := os.Remove(ballastPath); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	t.Logf("removed the %d MiB ballast: %d bytes free", ballast>>20, freeBytes(t, mnt))
	waitFor(t, time.Minute, "every replica to apply the same index", func() bool {
		same, n := pingNodes(t, nodes[0]).converged()
		return same && n == 6
	})
	readEverywhere(t, nodes, acked, time.Minute)
	t.Logf("sn2 caught up %v after space was freed: every replica applied the same index and serves all %d records; %d bytes free",
		time.Since(freed).Round(time.Millisecond), len(acked), freeBytes(t, mnt))
	awaitAdmin(t, nodes[0], []string{"Shard Status: healthy: 2"}, "ping")
	checkNoFault(t, v.stderr.String())
	for i, sn := range nodes {
		if !sn.running() {
			t.Fatalf("sn%d exited (code %d)", i+1, sn.state.ExitCode())
		}
	}
	load.mu.Lock()
	ops := load.ops
	load.mu.Unlock()
	t.Logf("summary: ops=%d acked=%d refused=%d faults=1 lost=0 (failed attempts: %s; took %v)",
		ops, len(acked), ops-len(acked), load.errors(), time.Since(start).Round(time.Millisecond))
}

// TestDiskFullSnapshotToFullFollower: a follower whose disk is low is sent
// a snapshot (its shard's log was truncated past what it has,
// --raft-log-keep 20). It refuses what it has no room for (the sender
// backs off), never runs out of space writing it, keeps running, and
// catches up once space is freed. (It used to install the snapshot
// without asking its engine, run out of space in the WAL and exit 70.)
func TestDiskFullSnapshotToFullFollower(t *testing.T) {
	seed := dfSeed(t)
	mnt := mountTmpfs(t, 256<<20) // Pebble's WAL preallocation (70 MiB) fits
	const full = 1                // sn2
	nodes := initNodesWith(t, 3, map[int][]string{full: {"--storagedir", filepath.Join(mnt, "data")}})
	for _, sn := range nodes {
		sn.extra = []string{"--raft-log-keep", "20"}
	}
	nodes[full].extra = append(nodes[full].extra, "--min-free-bytes", strconv.Itoa(dfMargin))
	deployWhitePaperOn(t, nodes)
	c := openStore(t, nodes)
	put := func(from, n int) (refused int) {
		for i := from; i < from+n; i++ {
			k := client.MustParseKey(fmt.Sprintf("/snapfull/k%05d/-/v", i))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := c.Put(ctx, k, seededValue(seed, k.String(), dfValueBytes)); err != nil {
				refused++
			}
			cancel()
		}
		return refused
	}
	put(0, 400) // 25 MiB
	waitFor(t, time.Minute, "every replica to apply the load", func() bool {
		same, n := pingNodes(t, nodes[0]).converged()
		return same && n == 6
	})
	// sn2's disk: 2 MiB above the margin. The load goes on: sn2 lags, its
	// shards' logs are truncated past it, and its leaders send snapshots.
	writeBallast(t, filepath.Join(mnt, "ballast"), freeBytes(t, mnt)-(dfMargin+2<<20))
	t.Logf("sn2's disk: %d bytes free (margin %d)", freeBytes(t, mnt), dfMargin)
	refused := put(400, 300)
	t.Logf("300 more puts: %d failed; sn2 installed %d snapshots; free %d", refused,
		strings.Count(nodes[full].stderr.String(), `msg="installing snapshot"`), freeBytes(t, mnt))
	if !nodes[full].running() {
		t.Fatalf("sn2 exited (code %d) with its disk full:\n%s", nodes[full].state.ExitCode(),
			logLines(nodes[full].stderr.String(), "snapshot")+"\n"+logLines(nodes[full].stderr.String(), "level=ERROR"))
	}
	if err := os.Remove(filepath.Join(mnt, "ballast")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "sn2 to catch up once space is freed", func() bool {
		same, n := pingNodes(t, nodes[0]).converged()
		return same && n == 6
	})
	if !nodes[full].running() {
		t.Fatalf("sn2 exited (code %d) while catching up", nodes[full].state.ExitCode())
	}
}
