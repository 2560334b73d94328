package e2e

// Bounded memory where data moves: a shard larger than the memory a node
// may use is caught up by snapshot, backed up, copied to every replica's
// node and restored, and no process's peak resident set (VmHWM, or the
// rusage of an exited one) comes near the shard's size.

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/test/clustertest"
)

var snapMemSeed = flag.Uint64("snapmem.seed", 0, "seed of TestSnapshotBoundedMemory's values (0: from the clock)")

// The sizes of TestSnapshotBoundedMemory: the shard, in MiB of
// incompressible values, and the bound on every process's peak RSS. make
// test runs the small default; make test-snapmem the 300 MiB shard under a
// 150 MiB bound (CAIRN_SNAPMEM_MB=300 CAIRN_SNAPMEM_RSS_MB=150). Every
// process runs with GOMEMLIMIT=48MiB: the Go runtime's share; the rest of
// a node's resident set is its binary's pages (about 27 MiB), Pebble's
// block caches (8 MiB each for the data and the admin engine) and its
// memtables.
const (
	snapMemDefaultMB  = 128
	snapMemDefaultRSS = 112
	snapMemValueBytes = 256 << 10
	snapMemGoLimit    = "GOMEMLIMIT=48MiB"
)

// envInt reads a positive integer from the environment, or def.
func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// peakRSS returns a running process's peak resident set in bytes (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to measure memory with: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM of %d: %q", pid, rest)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// runMeasured runs the cairn binary to its end and returns its output and
// peak resident set: the highest VmHWM read from /proc while it runs,
// every 5 ms. (Not rusage's maxrss: on Linux a child forked from this
// test process starts with the test process's own high-water mark, which
// late in a package run is over the bound whatever the child does.)
func runMeasured(t *testing.T, env []string, args ...string) (string, int64) {
	t.Helper()
	cmd := exec.Command(clustertest.Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if hwm, ok := vmHWM(cmd.Process.Pid); ok {
			peak = max(peak, hwm)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out.String())
			}
			if peak == 0 {
				t.Skip("no /proc VmHWM to measure memory with")
			}
			return out.String(), peak
		case <-tick.C:
		}
	}
}

// vmHWM reads a process's VmHWM, if it still has one.
func vmHWM(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// TestSnapshotBoundedMemory: one shard (three nodes of capacity 1, RF 3)
// of CAIRN_SNAPMEM_MB MiB of incompressible values. sn3 is down while they
// are written, so it comes back behind the leader's truncated log and
// catches up by snapshot; then snapshot create writes the shard's file on
// the leader and copies it to the other two nodes, and every node is
// restored from its copy, offline. The nodes run with GOMEMLIMIT and a
// small block cache; each node's peak RSS since it (re)started, and each
// restore's, must stay under CAIRN_SNAPMEM_RSS_MB MiB, below the shard's
// size: no step may hold the shard in memory.
func TestSnapshotBoundedMemory(t *testing.T) {
	sizeMB := envInt(t, "CAIRN_SNAPMEM_MB", snapMemDefaultMB)
	bound := int64(envInt(t, "CAIRN_SNAPMEM_RSS_MB", snapMemDefaultRSS)) << 20
	size := int64(sizeMB) << 20
	if bound >= size {
		t.Fatalf("the bound (%s) must be below the shard's size (%s) to prove anything", mib(bound), mib(size))
	}
	seed := *snapMemSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("shard of %s, peak RSS bound %s, seed %d (rerun with -snapmem.seed=%d)", mib(size), mib(bound), seed, seed)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("no /proc to measure memory with: %v", err)
	}

	one := []string{"--capacity", "1"}
	nodes := initNodesWith(t, 3, map[int][]string{0: one, 1: one, 2: one})
	env := []string{snapMemGoLimit}
	for _, sn := range nodes {
		sn.extra = []string{"--raft-log-keep", "50", "--cache-bytes", "8MiB"}
		sn.env = env
	}
	deployWhitePaperOn(t, nodes)
	if code := nodes[2].stop(); code != 0 {
		t.Fatalf("sn3: exit %d after SIGTERM", code)
	}
	c := openStore(t, nodes[:2])
	start := time.Now()
	n := snapMemLoad(t, c, seed, size)
	t.Logf("wrote %d values (%s) in %v with sn3 down", n, mib(int64(n)*snapMemValueBytes), time.Since(start).Round(time.Millisecond))
	c.Close()

	// Restart sn1 and sn2, so their peaks are of what follows, not of the
	// load; then sn3 comes back and needs a snapshot.
	for _, sn := range nodes[:2] {
		if code := sn.stop(); code != 0 {
			t.Fatalf("sn %d: exit %d after SIGTERM", sn.port, code)
		}
	}
	for _, sn := range nodes {
		sn.start(t)
	}
	start = time.Now()
	waitFor(t, 5*time.Minute, "sn3 to catch up", func() bool {
		same, n := pingNodes(t, nodes[0]).converged()
		return same && n == 3
	})
	caughtUp := time.Since(start)
	if !strings.Contains(nodes[2].stderr.String(), `msg="installing snapshot"`) {
		t.Fatal("sn3 caught up from the leader's log, without a snapshot: write more than --raft-log-keep values")
	}
	installed := logLine(nodes[2].stderr.String(), `msg="installing snapshot"`)
	sent := logLine(nodes[0].stderr.String()+nodes[1].stderr.String(), fmt.Sprintf(`peer=3 index=%d `, logInt(installed, "index")))
	t.Logf("sn3 caught up by snapshot in %v\n  sender: %s\n  sn3: %s", caughtUp.Round(time.Millisecond), sent, installed)
	if got := logInt(installed, "bytes"); got < size {
		t.Fatalf("sn3 installed a snapshot of %d bytes, less than the shard's %d", got, size)
	}

	start = time.Now()
	checkAdmin(t, nodes[0], 0, []string{"on all 1 shards", "needs no --from"}, "snapshot", "create", "-name", "big")
	t.Logf("snapshot create (written on the leader, copied to two nodes) took %v", time.Since(start).Round(time.Millisecond))
	for i, sn := range nodes {
		fi, err := os.Stat(filepath.Join(sn.root, "snapshots", "big", "shard-1.data"))
		if err != nil || fi.Size() < size {
			t.Fatalf("sn%d's copy of the backup: %v, %v; want at least %d bytes", i+1, fi, err, size)
		}
	}
	for i, sn := range nodes {
		peak := peakRSS(t, sn.cmd.Process.Pid)
		t.Logf("sn%d: peak RSS %s (bound %s, shard %s)", i+1, mib(peak), mib(bound), mib(size))
		if peak > bound {
			t.Errorf("sn%d's peak RSS %s is above the bound %s: a snapshot's data was held in memory", i+1, mib(peak), mib(bound))
		}
	}

	for _, sn := range nodes {
		if code := sn.stop(); code != 0 {
			t.Fatalf("sn %d: exit %d after SIGTERM", sn.port, code)
		}
	}
	for i, sn := range nodes {
		start := time.Now()
		out, peak := runMeasured(t, env, "sn", "restore", "--root", sn.root, "--snapshot", "big")
		t.Logf("sn%d: restore took %v, peak RSS %s: %s", i+1, time.Since(start).Round(time.Millisecond), mib(peak), strings.TrimSpace(out))
		if peak > bound {
			t.Errorf("sn%d's restore peaked at %s, above the bound %s", i+1, mib(peak), mib(bound))
		}
	}
	for _, sn := range nodes {
		sn.start(t)
	}
	c = openStore(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waitFor(t, time.Minute, "the restored store to serve absolute reads", func() bool {
		_, _, err := c.Get(ctx, snapMemKey(0), client.WithConsistency(client.Absolute))
		return err == nil
	})
	for _, i := range []int{0, n / 2, n - 1} {
		rec, ok, err := c.Get(ctx, snapMemKey(i), client.WithConsistency(client.Absolute))
		if err != nil || !ok || string(rec.Value) != string(seededValue(seed, snapMemKey(i).String(), snapMemValueBytes)) {
			t.Fatalf("value %d after the restore: found %v, %v", i, ok, err)
		}
	}
}

func snapMemKey(i int) client.Key { return client.MustParseKey(fmt.Sprintf("/snapmem/k%06d/-/v", i)) }

// snapMemLoad writes values until they add up to size, four at a time,
// and returns how many it wrote.
func snapMemLoad(t *testing.T, c *client.Client, seed uint64, size int64) int {
	t.Helper()
	n := int((size + snapMemValueBytes - 1) / snapMemValueBytes)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				k := snapMemKey(i)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := c.Put(ctx, k, seededValue(seed, k.String(), snapMemValueBytes))
				cancel()
				if err != nil {
					errs <- fmt.Errorf("put %d: %w", i, err)
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
	return n
}

// logLine returns the last line of log holding s ("" if none): a
// "snapshot sent" line is found by its peer and index.
func logLine(log, s string) string {
	var last string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			last = l
		}
	}
	return last
}

// logInt reads key=N from a log line (-1 if absent).
func logInt(line, key string) int64 {
	m := regexp.MustCompile(`\b` + key + `=(\d+)`).FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}
