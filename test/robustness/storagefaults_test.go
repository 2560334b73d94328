package robustness

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/test/clustertest"
)

var storageFaultsTime = flag.Duration("storagefaults.time", 10*time.Second,
	"how long TestStorageFaultsUnderLoad starts new rounds of faults (make chaos: CHAOS_STORAGE_TIME, default 60s)")

const (
	// sfMargin is every node's --min-free-bytes.
	sfMargin = 16 << 20
	// sfTmpfsBytes is the tmpfs a node's data moves to for a full disk.
	sfTmpfsBytes = 64 << 20
	// healTimeout bounds a faulted node's death, and its rebuild.
	healTimeout = 45 * time.Second
)

// TestStorageFaultsUnderLoad checks docs/guarantees.md S1-S6 under chaos
// on 3 nodes, 2 shards of 3 replicas, --raft-log-keep 50, --min-free-bytes
// 16 MiB: while the register workload (linearizability, R2) and a writer of
// unique keys (lost writes) run, each round gives a random node a random
// storage fault:
//
//   - fsync: restarted with CAIRN_FAULTS failing a WAL fsync after N; it
//     must die (exit 70 once it was ready), naming the file and EIO; then
//     restarted without it: it sets its data aside and rebuilds;
//   - write: the same with a failed WAL write;
//   - flip: SIGKILLed, 16 bytes flipped in its MANIFEST, a WAL or an
//     sstable, restarted: it refuses the files and heals at start, or
//     finds the damage when a read or a compaction reaches it and heals
//     then;
//   - full (where a tmpfs can be mounted): its data moved to a 64 MiB
//     tmpfs, filled by a ballast to below the margin; the node lags, the
//     others keep acknowledging writes; the ballast removed, it catches up.
//
// After each round the node has caught up with every shard's leader and
// serves every acknowledged unique key to NONE_REQUIRED reads sent to it,
// and every such key reads back with ABSOLUTE consistency. At the end the
// history is checked with porcupine and every replica holds the final
// values. It starts rounds for -storagefaults.time (default 10 s: about
// 25 s in all); skipped with -short; make chaos runs it with random seeds
// and a minute of rounds.
func TestStorageFaultsUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a chaos loop of storage faults (about a minute); make chaos runs it")
	}
	seed := seed(t)
	rng := clustertest.Rand(seed, 0)
	tmpfs, err := clustertest.MountTmpfs(t, sfTmpfsBytes) // before Start: unmounted after the nodes die
	if err != nil {
		t.Logf("no full-disk rounds: %v", err)
	}
	c := clustertest.Start(t, clustertest.Options{Nodes: 3, Shards: 2, RF: 3, LogKeep: 50,
		Args: []string{"--min-free-bytes", strconv.Itoa(sfMargin)}})
	topo := c.Topology()
	cl := c.Client(opTimeout)
	keys := keysOnShards(topo, "sf", 4)
	h := clustertest.NewHistory()
	const clients = 6
	w := startWorkloadSync(cl, h, topo, keys, clients, seed, true)
	u := startUniqueWriter(cl, seed, 2)
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
			u.stop()
		}
	}()
	w.waitAcked(t, 100, "before the first fault")

	kinds := []string{"fsync", "write", "flip"}
	if tmpfs != "" {
		kinds = append(kinds, "full")
	}
	f := &sfRun{t: t, c: c, cl: cl, rng: rng, u: u, tmpfs: tmpfs}
	deadline := time.Now().Add(*storageFaultsTime)
	for round := 1; round == 1 || time.Now().Before(deadline); round++ {
		id := topology.NodeID(1 + rng.IntN(3))
		kind := kinds[rng.IntN(len(kinds))]
		if kind == "full" && f.fullNode != 0 {
			id = f.fullNode // one node's data on the tmpfs at a time
		}
		lead1, _ := c.Leader(1)
		lead2, _ := c.Leader(2)
		t.Logf("round %d: %s on node %d (leaders: shard 1 node %d, shard 2 node %d)", round, kind, id, lead1, lead2)
		start := time.Now()
		switch kind {
		case "fsync":
			f.fatal(id, fmt.Sprintf("op=sync,path=*.log,after=%d", rng.IntN(30)))
		case "write":
			f.fatal(id, fmt.Sprintf("op=write,path=*.log,after=%d", rng.IntN(200)))
		case "flip":
			f.flip(id)
		case "full":
			f.full(id, w)
		}
		f.faults++
		f.settle(id)
		t.Logf("round %d: done in %v; %d unique keys acknowledged so far, all served by node %d and read back",
			round, time.Since(start).Round(time.Millisecond), u.count(), id)
	}

	w.Stop()
	acked := u.stop()
	stopped = true
	finals, ops := checkHistory(t, cl, h, keys, clients)
	// Damage no read has reached yet may be found by these reads: the
	// node answers corruption, then rejoining while it heals.
	for _, n := range c.Nodes() {
		for _, k := range keys {
			f.awaitServes(n.ID, k)
		}
	}
	checkReplicasAgree(t, c, keys, finals)
	lost := f.checkUnique(acked, 0)
	puts := 0
	for _, op := range ops {
		if op.Kind == clustertest.Put && op.Outcome == clustertest.OK {
			puts++
		}
	}
	t.Logf("summary: ops=%d acked=%d faults=%d lost=%d (register ops %d, of which %d acknowledged puts; unique keys %d of %d attempts)",
		len(ops)+u.attempts(), puts+len(acked), f.faults, lost, len(ops), puts, len(acked), u.attempts())
}

// sfRun is the state of TestStorageFaultsUnderLoad across its rounds.
type sfRun struct {
	t      *testing.T
	c      *clustertest.Cluster
	cl     *client.Client
	rng    *rand.Rand
	u      *uniqueWriter
	tmpfs  string
	faults int
	moves  int // data directories moved to the tmpfs so far
	// fullNode is the node whose data the full rounds move to the tmpfs
	// (0: none yet); only it ever keeps data there.
	fullNode topology.NodeID
}

// fatal restarts node id with the fault rule, waits for it to die, checks
// how, and restarts it without the fault (it heals at start).
func (f *sfRun) fatal(id topology.NodeID, rule string) {
	t, c := f.t, f.c
	n := c.Node(id)
	ready := c.RestartWithEnv(id, "CAIRN_FAULTS="+rule)
	select {
	case <-n.Exited():
	case <-time.After(healTimeout):
		t.Fatalf("node %d still runs %v after its restart with CAIRN_FAULTS=%s", id, healTimeout, rule)
	}
	code, _ := n.ExitCode()
	log := n.RunLog()
	t.Logf("node %d with %s died (exit %d, ready %v): %s", id, rule, code, ready, lastLine(grepLines(log, "EIO")))
	switch {
	case ready && code != 70:
		t.Errorf("node %d: exit %d after a failed write or fsync while running, want 70", id, code)
	case code == 0:
		t.Errorf("node %d: exit 0 after a storage fault", id)
	}
	if !strings.Contains(log, ".log") || !strings.Contains(log, "EIO") {
		t.Errorf("node %d's log does not name the WAL and EIO:\n%s", id, log)
	}
	c.Restart(id)
	// The log line may reach the test after the ready line (stderr and
	// stdout are two pipes).
	if err := clustertest.Poll(5*time.Second, func() bool {
		return strings.Contains(grepLines(n.RunLog(), "(kept for inspection)"), "the last run stopped on a storage fault")
	}); err != nil {
		t.Errorf("node %d restarted after a fault without saying it set its data aside:\n%s", id, n.RunLog())
	}
}

// flip SIGKILLs node id, flips 16 bytes in the middle of its current
// MANIFEST, its largest WAL or its largest sstable, and restarts it.
func (f *sfRun) flip(id topology.NodeID) {
	t, c := f.t, f.c
	n := c.Node(id)
	c.Kill(id)
	dir := filepath.Join(n.Root, "data")
	// Big enough that records follow the damage (corruption, not a torn
	// tail); the chosen kind first, then the others.
	files := []func() string{
		func() string { return largest(dir, ".log", 256<<10) },
		func() string { return largest(dir, ".sst", 0) },
		func() string {
			if m := currentManifest(t, dir); size(m) >= 1<<10 {
				return m
			}
			return ""
		},
	}
	first := f.rng.IntN(len(files))
	var path string
	for i := range files {
		if path = files[(first+i)%len(files)](); path != "" {
			break
		}
	}
	if path == "" {
		t.Logf("node %d: no file big enough to damage; restarting it as it was", id)
		c.Restart(id)
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := len(b) / 3
	for i := at; i < at+16; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("node %d: flipped 16 bytes at offset %d of %s (%d bytes)", id, at, filepath.Base(path), len(b))
	c.Restart(id)
	_ = clustertest.Poll(time.Second, func() bool { return strings.Contains(n.RunLog(), "(kept for inspection)") })
	if l := grepLines(n.RunLog(), "(kept for inspection)"); l != "" {
		t.Logf("node %d refused its files and heals: %s", id, lastLine(l))
	} else {
		t.Logf("node %d opened its files: the damage is found when a read or a compaction reaches it, or never", id)
	}
}

// full moves node id's data to the tmpfs (unless it is there), fills the
// tmpfs to below the margin, checks that the others keep acknowledging
// writes while the node lags, and frees the space.
func (f *sfRun) full(id topology.NodeID, w *workload) {
	t, c := f.t, f.c
	n := c.Node(id)
	link := filepath.Join(n.Root, "data")
	if target, err := os.Readlink(link); err != nil || !strings.HasPrefix(target, f.tmpfs) {
		c.Kill(id)
		f.clearTmpfs() // this node's older data there, set aside by a heal since
		f.fullNode = id
		f.moves++
		c.MoveDataTo(id, filepath.Join(f.tmpfs, fmt.Sprintf("n%d-%d", id, f.moves)))
		c.Restart(id)
	}
	free, err := clustertest.FreeBytes(f.tmpfs)
	if err != nil {
		t.Fatal(err)
	}
	ballast := filepath.Join(f.tmpfs, "ballast")
	fill := free - (sfMargin - 1<<20)
	if err := writeZeros(ballast, fill); err != nil {
		t.Fatal(err)
	}
	after, _ := clustertest.FreeBytes(f.tmpfs)
	t.Logf("node %d: data on a tmpfs, %d bytes free (margin %d)", id, after, sfMargin)
	clustertest.Eventually(t, progressTimeout, fmt.Sprintf("node %d to refuse writes for lack of space", id), func() bool {
		return strings.Contains(n.RunLog(), "free disk space is below the margin")
	})
	w.waitAcked(t, 50, fmt.Sprintf("with node %d's disk full", id))
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if code, exited := n.ExitCode(); exited {
		t.Fatalf("node %d exited (code %d) with its disk full", id, code)
	}
}

// clearTmpfs removes what earlier full rounds left on the tmpfs: the
// fullNode's data that a heal has set aside since (its aside directory is
// a link to it, left dangling).
func (f *sfRun) clearTmpfs() {
	entries, _ := os.ReadDir(f.tmpfs)
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(f.tmpfs, e.Name())); err != nil {
			f.t.Fatal(err)
		}
	}
}

// settle waits until node id runs and has applied what each shard's
// leader has, then checks every acknowledged unique key.
func (f *sfRun) settle(id topology.NodeID) {
	t, c := f.t, f.c
	if code, exited := c.Node(id).ExitCode(); exited {
		t.Fatalf("node %d exited (code %d)", id, code)
	}
	for _, s := range c.Topology().Shards {
		lead := c.WaitLeader(s.ID, healTimeout)
		st, err := c.ShardStatus(lead, s.ID)
		if err != nil {
			t.Fatalf("shard %d leader %d: %v", s.ID, lead, err)
		}
		c.WaitApplied(id, s.ID, st.GetApplied(), healTimeout)
	}
	if lost := f.checkUnique(f.u.snapshot(), id); lost > 0 {
		t.Fatalf("%d acknowledged unique keys lost", lost)
	}
}

// checkUnique reads every key of acked with ABSOLUTE consistency through
// the smart client and, if node is not 0, with NONE_REQUIRED from node
// (which may answer corruption or rejoining while it heals, until
// healTimeout); it returns how many were lost.
func (f *sfRun) checkUnique(acked map[string]string, node topology.NodeID) int {
	t, c, cl := f.t, f.c, f.cl
	deadline := time.Now().Add(healTimeout)
	lost := 0
	none := &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}
	for _, ks := range slices.Sorted(maps.Keys(acked)) {
		want := acked[ks]
		k := client.MustParseKey(ks)
		var got string
		var found bool
		err := clustertest.Poll(finalReadTimeout, func() bool {
			rec, ok, err := cl.Get(context.Background(), k, client.WithTimeout(opTimeout), client.WithConsistency(client.Absolute))
			got, found = string(rec.Value), ok
			return err == nil
		})
		if err != nil || !found || got != want {
			if lost++; lost <= 10 {
				t.Errorf("acknowledged %s: ABSOLUTE read found=%v %q (err %v), want %q", ks, found, got, err, want)
			}
			continue
		}
		if node == 0 {
			continue
		}
		var last string
		for {
			resp, _, err := rawGet(c, node, k, none, opTimeout)
			if err == nil && bytes.Equal(resp.GetRecord().GetValue(), []byte(want)) {
				break
			}
			last = fmt.Sprintf("found=%v %q err=%v", resp.GetFound(), resp.GetRecord().GetValue(), err)
			if kind := errorKind(err); err != nil && kind != "corruption" && kind != "rejoining" {
				t.Fatalf("NONE_REQUIRED read of %s on node %d: %v", ks, node, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d does not serve acknowledged %s within %v: %s", node, ks, healTimeout, last)
			}
			time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
		}
	}
	return lost
}

// awaitServes waits until node answers a NONE_REQUIRED read of k (it may
// answer corruption or rejoining meanwhile, for up to healTimeout).
func (f *sfRun) awaitServes(node topology.NodeID, k client.Key) {
	none := &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}
	var last error
	err := clustertest.Poll(healTimeout, func() bool {
		_, _, last = rawGet(f.c, node, k, none, opTimeout)
		if kind := errorKind(last); last != nil && kind != "corruption" && kind != "rejoining" {
			f.t.Fatalf("NONE_REQUIRED read of %s on node %d: %v", keyName(k), node, last)
		}
		return last == nil
	})
	if err != nil {
		f.t.Fatalf("node %d does not serve %s within %v: %v", node, keyName(k), healTimeout, last)
	}
}

// uniqueWriter puts unique keys /sfu/wW/N (SYNC or WRITE_NO_SYNC on every
// replica, a majority's ack), retrying a failed put with the same value
// until it is acknowledged, and remembers every acknowledged one.
type uniqueWriter struct {
	done  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	acked map[string]string
	tries int
}

func startUniqueWriter(cl *client.Client, seed uint64, writers int) *uniqueWriter {
	u := &uniqueWriter{done: make(chan struct{}), acked: map[string]string{}}
	for id := range writers {
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			rng := clustertest.Rand(seed, 1000+uint64(id))
			for n := 0; ; n++ {
				k := client.Key{Major: []string{"sfu", "w" + strconv.Itoa(id), strconv.Itoa(n)}}
				v := fmt.Sprintf("u%d-%d-%d", id, n, rng.Uint64())
				d := client.Durability{MasterSync: client.WriteNoSync, ReplicaSync: client.WriteNoSync, ReplicaAck: client.AckSimpleMajority}
				if rng.IntN(2) == 0 {
					d.MasterSync, d.ReplicaSync = client.Sync, client.Sync
				}
				for {
					select {
					case <-u.done:
						return
					default:
					}
					_, err := cl.Put(context.Background(), k, []byte(v), client.WithTimeout(opTimeout), client.WithDurability(d))
					u.mu.Lock()
					u.tries++
					if err == nil {
						u.acked[k.String()] = v
					}
					u.mu.Unlock()
					if err == nil {
						break
					}
					time.Sleep(20 * time.Millisecond) // the writer's pace after a failure
				}
				time.Sleep(25 * time.Millisecond) // the writer's pace: every key is read back each round
			}
		}()
	}
	return u
}

func (u *uniqueWriter) snapshot() map[string]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.acked)
}

func (u *uniqueWriter) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.acked)
}

func (u *uniqueWriter) attempts() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tries
}

// stop ends the writers and returns what they had acknowledged.
func (u *uniqueWriter) stop() map[string]string {
	select {
	case <-u.done:
	default:
		close(u.done)
	}
	u.wg.Wait()
	return u.snapshot()
}

// largest returns the largest file in dir with suffix of at least min
// bytes, or "".
func largest(dir, suffix string, min int64) string {
	m, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	best, size := "", min-1
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	return best
}

// size returns the size of the file at path (0 if unknown).
func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// currentManifest is the MANIFEST the engine in dir uses (its marker
// names it).
func currentManifest(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "marker.manifest.*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("manifest marker in %s: %v %v", dir, m, err)
	}
	name := filepath.Base(m[0])
	return filepath.Join(dir, name[strings.Index(name, "MANIFEST-"):])
}

// writeZeros writes a file of size bytes (tmpfs keeps every page).
func writeZeros(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for size > 0 {
		n := min(size, int64(len(buf)))
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		size -= n
	}
	return f.Close()
}

func grepLines(log, s string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
