package e2e

// A failed write or fsync stays fatal (docs/design/20261125_storage_faults.md,
// "A failed write or fsync ... stays fatal" and "Healing a storage node"):
// three real nodes under a continuous client workload, one follower
// restarted with a storage fault injected (CAIRN_FAULTS); it exits, naming
// the file and the errno, and records the fault; the shards keep serving;
// restarted without the fault it sets its data aside, rebuilds every shard
// by snapshot, and serves every acknowledged write.

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/storage/files"
)

var faultSeed = flag.Uint64("fault.seed", 0, "seed for TestFailedFsyncReplicaRejoins (0: from the clock)")

const (
	// faultExitTimeout bounds the wait for a faulted node to die.
	faultExitTimeout = time.Minute
	// bigValueBytes is the value of the burst that fills a follower's
	// memtable (64 MiB, holding each value twice: Raft log and record),
	// so that it rotates its WAL and flushes (a MANIFEST edit).
	bigValueBytes = 1 << 20
	// maxAckGap bounds the time without an acknowledged put while a
	// follower dies and rebuilds: the leaders never change.
	maxAckGap = 3 * time.Second
)

// faultCase is one injected fault: the CAIRN_FAULTS rule, whether a burst
// of large puts is needed to reach the failing operation (a WAL rotation
// or a flush), and what the node's death must say.
type faultCase struct {
	name  string
	rule  string
	burst bool
	// code is the exit code wanted once the node was ready (70, for every
	// case: the engine stops the process itself before Pebble can panic on
	// a failed WAL create); while it opens, any non-zero code.
	code int
	file string // a part of the failing file's name
}

// TestFailedFsyncReplicaRejoins: a 3-node store (the white paper's, two
// shards of three replicas, --raft-log-keep 10) under a continuous seeded
// workload of SYNC and WRITE_NO_SYNC puts. A follower is restarted with a
// storage fault: a failed WAL fsync after N successful ones (N seeded), a
// failed MANIFEST write, a failed WAL create. It dies (exit 70, naming the
// file and the errno), its state file records the fault, and the
// shards keep acknowledging writes. Restarted without the fault it sets
// its data aside, rebuilds by snapshot, serves every acknowledged write to
// NONE_REQUIRED reads sent to it, and show events records the incident and
// its end.
func TestFailedFsyncReplicaRejoins(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	seed := *faultSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -fault.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6673796e63))
	start := time.Now()
	nodes := initNodes(t, 3)
	for _, sn := range nodes {
		sn.extra = []string{"--raft-log-keep", "10"}
		sn.owner = t
	}
	deployWhitePaperOn(t, nodes)
	c := openStore(t, nodes)
	load := startLoad(c, "fsync", seed, 4, 256, true)
	load.pace.Store(int64(5 * time.Millisecond)) // a few hundred puts a second: every one is read back from every node
	stopped := false
	defer func() {
		if !stopped {
			load.end()
		}
	}()
	load.waitAcked(t, 200, "before the first fault")
	faultsFrom := time.Now()

	// The data engine's open creates one WAL, so a create fault must skip
	// it (after=1): a write that fails inside Pebble's open is an open
	// error, not a fault (nothing was written; the next start retries).
	// The MANIFEST is written once during the node's start, which either
	// rule may hit.
	cases := []faultCase{
		{name: "fsync_wal", rule: fmt.Sprintf("op=sync,path=*.log,after=%d", 5+rng.IntN(40)), code: 70, file: ".log"},
		{name: "write_manifest", rule: fmt.Sprintf("op=write,path=MANIFEST-*,after=%d", rng.IntN(2)), burst: true, code: 70, file: "MANIFEST-"},
		{name: "create_wal", rule: "op=create,path=*.log,after=1", burst: true, code: 70, file: ".log"},
	}
	f := &faultRun{t: t, nodes: nodes, c: c, load: load, seed: seed, rng: rng, incidents: map[int]int{}}
	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) { f.inject(t, fc) })
	}

	acked := load.end()
	stopped = true
	gap, at := load.longestAckGap(faultsFrom)
	t.Logf("longest time without an acknowledged put while faults were injected: %v (from %s)", gap.Round(time.Millisecond), at.Format("15:04:05.000"))
	if gap > maxAckGap {
		t.Errorf("no put was acknowledged for %v (from %s): the shards must keep serving with one follower dead or rebuilding", gap, at.Format("15:04:05.000"))
	}
	for k, v := range f.big {
		acked[k] = v
	}
	readEverywhere(t, nodes, acked, time.Minute)
	load.mu.Lock()
	ops := load.ops + f.bigOps
	load.mu.Unlock()
	t.Logf("every node serves all %d acknowledged writes; failed attempts: %s", len(acked), load.errors())
	t.Logf("summary: ops=%d acked=%d faults=%d lost=0 (took %v)", ops, len(acked), f.faults, time.Since(start).Round(time.Millisecond))
}

// faultRun is the state of TestFailedFsyncReplicaRejoins across its cases.
type faultRun struct {
	t         *testing.T
	nodes     []*storageNode
	c         *client.Client
	load      *dfLoad
	seed      uint64
	rng       *rand.Rand
	incidents map[int]int // by node index
	faults    int
	big       map[string][]byte // the bursts' acknowledged puts
	bigOps    int
}

// inject restarts a follower with fault fc, checks its death and the
// store's service meanwhile, then restarts it without the fault and checks
// its heal.
func (f *faultRun) inject(t *testing.T, fc faultCase) {
	i := f.follower(t)
	v, sn := f.nodes[i], "sn"+strconv.Itoa(i+1)
	t.Logf("restarting %s (it leads no shard) with CAIRN_FAULTS=%q", sn, fc.rule)
	if code := v.stop(); code != 0 {
		t.Fatalf("%s: exit %d after SIGTERM, want 0", sn, code)
	}
	v.env = []string{"CAIRN_FAULTS=" + fc.rule}
	ready := f.startFaulted(t, v)
	if ready && fc.burst {
		f.burst(t, v)
	}
	code, ok := v.waitExit(faultExitTimeout)
	if !ok {
		t.Fatalf("%s still runs %v after its restart with %s", sn, faultExitTimeout, fc.rule)
	}
	died := time.Now()
	f.faults++
	stderr := v.stderr.String()
	t.Logf("%s died (exit %d, %s): %s", sn, code, map[bool]string{true: "after it was ready", false: "while it opened"}[ready],
		lastLine(logLines(stderr, "EIO")))
	switch {
	case fc.code == 70 && ready && code != 70:
		t.Errorf("%s: exit %d after a fault while running, want 70", sn, code)
	case code == 0:
		t.Errorf("%s: exit 0 after a storage fault, want non-zero", sn)
	}
	if !strings.Contains(stderr, fc.file) || !strings.Contains(stderr, "EIO") {
		t.Errorf("%s's log does not name the file (%s) and the errno (EIO):\n%s", sn, fc.file, stderr)
	}
	st := readStateFile(t, filepath.Join(v.root, "data"))
	if st.Fault == nil || !strings.Contains(st.Fault.File, fc.file) || st.Fault.Errno != "EIO" {
		t.Errorf("%s's state file records fault %+v, want one naming a %s file and EIO", sn, st.Fault, fc.file)
	} else {
		t.Logf("%s's state file records: %s %s (%s)", sn, st.Fault.Op, st.Fault.File, st.Fault.Errno)
	}
	// The shards keep serving without it.
	f.load.waitAcked(t, 100, "with "+sn+" dead")
	t.Logf("100 more puts acknowledged in %v with %s dead", time.Since(died).Round(time.Millisecond), sn)

	// Restarted without the fault: it sets its data aside and rebuilds.
	v.env = nil
	restarted := time.Now()
	v.start(t)
	line := awaitHealLog(v, "the last run stopped on a storage fault: ", st.faultFile(), "rebuilds shards rg1, rg2 from their peers")
	if line == "" {
		t.Errorf("%s does not log that it set its faulted files aside (naming %s) and rebuilds both shards:\n%s", sn, st.faultFile(), v.stderr.String())
	} else {
		t.Logf("%s logged: %s", sn, line)
	}
	f.load.waitAcked(t, 50, "while "+sn+" rebuilds")
	acked := f.load.snapshot()
	for k, v := range f.big {
		acked[k] = v
	}
	readEverywhere(t, []*storageNode{v}, acked, time.Minute)
	t.Logf("%s serves all %d writes acknowledged so far (NONE_REQUIRED) %v after its restart",
		sn, len(acked), time.Since(restarted).Round(time.Millisecond))
	if n := strings.Count(v.stderr.String(), `msg="installing snapshot"`); n < 2 {
		t.Errorf("%s installed %d snapshots after its restart, want one per shard (2):\n%s", sn, n, v.stderr.String())
	}
	f.incidents[i]++
	var events string
	waitFor(t, time.Minute, "show events to record the incident and its end", func() bool {
		_, events, _ = admin(t, f.nodes[0], "show", "events", "-last", "500")
		return strings.Count(events, sn+": storage rebuilt from peers in ") == f.incidents[i]
	})
	if n := strings.Count(events, sn+": storage fault: "); n != f.incidents[i] {
		t.Errorf("show events records %d fault incidents of %s, want %d:\n%s", n, sn, f.incidents[i], events)
	}
	t.Logf("event: %s", lastLine(logLines(events, sn+": storage fault: ")))
	t.Logf("event: %s", lastLine(logLines(events, sn+": storage rebuilt from peers in ")))
	for j, n := range f.nodes {
		if j != i && !n.running() {
			t.Fatalf("sn%d exited (code %d)", j+1, n.state.ExitCode())
		}
	}
}

// follower picks, at random, a node other than sn1 (the only admin) that
// leads no shard.
func (f *faultRun) follower(t *testing.T) int {
	t.Helper()
	var cands []int
	waitFor(t, 30*time.Second, "a node other than sn1 that leads no shard", func() bool {
		p := pingNodes(t, f.nodes[0])
		cands = cands[:0]
		for i := 1; i < len(f.nodes); i++ {
			if len(p.leads(i+1)) == 0 {
				cands = append(cands, i)
			}
		}
		return len(cands) > 0
	})
	return cands[f.rng.IntN(len(cands))]
}

// startFaulted starts v and waits for its ready line or its exit; it
// reports whether it became ready.
func (f *faultRun) startFaulted(t *testing.T, v *storageNode) bool {
	t.Helper()
	v.proc = startProcEnv(f.t, fmt.Sprintf("sn:%d", v.port), v.env, append([]string{"sn", "start", "--root", v.root}, v.extra...)...)
	var ready bool
	waitFor(t, readyTimeout, "the faulted node's ready line or exit", func() bool {
		ready = strings.Contains(v.stdout.String(), "ready at")
		return ready || !v.running()
	})
	return ready
}

// burst puts large values until v dies (its memtable fills: a WAL
// rotation and a flush), at most 200.
func (f *faultRun) burst(t *testing.T, v *storageNode) {
	t.Helper()
	if f.big == nil {
		f.big = map[string][]byte{}
	}
	d := client.Durability{MasterSync: client.WriteNoSync, ReplicaSync: client.WriteNoSync, ReplicaAck: client.AckSimpleMajority}
	n := 0
	for ; n < 200 && v.running(); n++ {
		k := client.MustParseKey(fmt.Sprintf("/fsync/big/k%05d/-/v", len(f.big)+f.bigOps))
		val := seededValue(f.seed, k.String(), bigValueBytes)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := f.c.Put(ctx, k, val, client.WithDurability(d))
		cancel()
		f.bigOps++
		if err == nil {
			f.big[k.String()] = val
		}
	}
	t.Logf("burst: %d puts of %d KiB", n, bigValueBytes>>10)
}

// stateFile is the part of an engine's cairn-state.json the tests read.
type stateFile struct {
	Clean bool `json:"clean"`
	Fault *struct {
		Op    string `json:"op"`
		File  string `json:"file"`
		Errno string `json:"errno"`
	} `json:"fault"`
}

// faultFile is the file of the recorded fault, or "(none)".
func (st stateFile) faultFile() string {
	if st.Fault == nil {
		return "(none)"
	}
	return st.Fault.File
}

func readStateFile(t *testing.T, dir string) stateFile {
	t.Helper()
	var st stateFile
	if err := files.ReadJSON(files.Default, filepath.Join(dir, "cairn-state.json"), &st); err != nil {
		t.Fatalf("state file: %v", err)
	}
	return st
}

// longestAckGap returns the longest time between two acknowledged puts
// (or since and the first) after since, and when it began.
func (l *dfLoad) longestAckGap(since time.Time) (time.Duration, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gap time.Duration
	at, last := since, since
	for _, e := range l.events {
		if e.kind != "" || e.at.Before(since) {
			continue
		}
		if d := e.at.Sub(last); d > gap {
			gap, at = d, last
		}
		last = e.at
	}
	return gap, at
}

// waitAcked waits until n more puts than now are acknowledged.
func (l *dfLoad) waitAcked(t *testing.T, n int64, why string) {
	t.Helper()
	target := l.ackSeq.Load() + n
	waitFor(t, time.Minute, fmt.Sprintf("%d more acknowledged puts (%s)", n, why), func() bool {
		return l.ackSeq.Load() >= target
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
