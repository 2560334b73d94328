package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// putRecords writes n records under /prefix/i through the cluster,
// following not_leader hints, and fails the test on any other error.
func putRecords(t *testing.T, sns []*SN, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	addr := sns[0].Addr()
	for i := 0; i < n; i++ {
		key := &cairnpb.Key{Major: []string{prefix, strconv.Itoa(i)}}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := dial(t, addr).Put(ctx, &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: key, Value: []byte("v" + strconv.Itoa(i))}})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("put %d: %v", i, err)
			}
			if hint := leaderHint(err); hint != "" {
				addr = hint
			} else {
				<-time.After(20 * time.Millisecond) // election under way
			}
		}
	}
}

// flipMiddle flips 16 bytes in the middle of the file at path.
func flipMiddle(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 32 {
		t.Fatalf("%s is %d bytes: too small to corrupt in its middle", path, len(b))
	}
	for i := len(b)/2 - 8; i < len(b)/2+8; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// currentManifest returns the path of the MANIFEST an engine in dir
// uses: the one its marker names (Pebble keeps the previous one too).
func currentManifest(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "marker.manifest.*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("manifest marker in %s: %v %v", dir, m, err)
	}
	name := filepath.Base(m[0])
	return filepath.Join(dir, name[strings.Index(name, "MANIFEST-"):])
}

// largestTable returns the path of the largest sstable in dir.
func largestTable(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no sstable in %s: %v", dir, err)
	}
	best, size := "", int64(-1)
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	return best
}

// stopWithLongManifest stops node i, restarts it, writes, and stops it
// again: its current MANIFEST then holds several records, so damage in its
// middle is followed by a good record, which no crash can leave (damage in
// the last record reads as a torn write, and the engine opens).
func stopWithLongManifest(t *testing.T, sns []*SN, cfgs []SNConfig, i int) {
	t.Helper()
	if err := sns[i].Close(); err != nil {
		t.Fatal(err)
	}
	again, err := StartSN(context.Background(), cfgs[i])
	if err != nil {
		t.Fatal(err)
	}
	sns[i] = again
	putRecords(t, sns, "more", 20)
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}

// asideOf lists the aside directories of dir.
func asideOf(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(dir + asideInfix + "*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// awaitRecords waits until sn serves every record of putRecords(prefix, n)
// to NONE_REQUIRED reads, allowing only "rejoining" (and, with
// corruptOnce, one "corruption") on the way.
func awaitRecords(t *testing.T, sn *SN, prefix string, n int, d time.Duration) {
	t.Helper()
	kv := dial(t, sn.Addr())
	deadline := time.Now().Add(d)
	for i := 0; i < n; i++ {
		key := &cairnpb.Key{Major: []string{prefix, strconv.Itoa(i)}}
		for {
			got, err := kv.Get(context.Background(), &cairnpb.GetRequest{Key: key})
			if err == nil && got.GetFound() && string(got.GetRecord().GetValue()) == "v"+strconv.Itoa(i) {
				break
			}
			if err != nil {
				if st := status.Convert(err); kindOf(st) != "rejoining" && kindOf(st) != "corruption" {
					t.Fatalf("record %d on the healing node: %v (kind %q), want a value or a rejoining answer", i, err, kindOf(st))
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("record %d not served by the healed node within %v: %v %v", i, d, got, err)
			}
			<-time.After(20 * time.Millisecond) // catching up: poll with a deadline
		}
	}
}

// awaitResolved waits until sn has no open incident and reports ok.
func awaitResolved(t *testing.T, sn *SN, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		info := sn.describe()
		if info.GetStorage().GetState() == "ok" && !sn.incidents.unresolved(false) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node still reports storage %q (%s) after %v", info.GetStorage().GetState(), info.GetStorage().GetDetail(), d)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// TestCorruptEngineHealsAtStart: a node whose MANIFEST was damaged while
// it was stopped starts anyway: it sets its data directory aside, records
// the incident, rebuilds every shard from its peers, and then serves every
// record; the incident is resolved once each replica applied a snapshot.
func TestCorruptEngineHealsAtStart(t *testing.T) {
	sns, _, cfgs := startClusterCfg(t, 3, 2, 3)
	const n = 200
	putRecords(t, sns, "h", n)
	victim := 2
	stopWithLongManifest(t, sns, cfgs, victim)
	data := filepath.Join(cfgs[victim].Root, "data")
	manifest := currentManifest(t, data)
	flipMiddle(t, manifest)

	start := time.Now()
	sn, err := StartSN(context.Background(), cfgs[victim])
	if err != nil {
		t.Fatalf("restart with a corrupt MANIFEST: %v", err)
	}
	t.Cleanup(func() { _ = sn.Close() })
	aside := asideOf(t, data)
	if len(aside) != 1 {
		t.Fatalf("aside directories %v, want one", aside)
	}
	if _, err := os.Stat(filepath.Join(aside[0], filepath.Base(manifest))); err != nil {
		t.Errorf("the aside directory lacks the old MANIFEST: %v", err)
	}
	ins := sn.incidents.snapshot()
	if len(ins) != 1 || ins[0].Kind != kindCorrupt || ins[0].AsideDir != aside[0] || !strings.Contains(ins[0].Detail, filepath.Base(manifest)) ||
		!slices.Equal(ins[0].Shards, []uint64{1, 2}) {
		t.Fatalf("incidents %+v, want one corrupt incident naming %s, aside in %s, shards 1 and 2", ins, filepath.Base(manifest), aside[0])
	}
	awaitRecords(t, sn, "h", n, 30*time.Second)
	awaitResolved(t, sn, 30*time.Second)
	t.Logf("healed and served every record %v after the restart", time.Since(start).Round(time.Millisecond))
	info := sn.describe()
	for _, st := range info.GetShards() {
		if st.GetRebuilding() || !st.GetRunning() {
			t.Errorf("shard %d after the rebuild: %+v", st.GetShard(), st)
		}
	}
	si := info.GetStorage()
	if len(si.GetAsideDirs()) != 1 || si.GetAsideDirs()[0].GetPath() != aside[0] || si.GetAsideDirs()[0].GetBytes() == 0 {
		t.Errorf("aside dirs %v, want %s with its size", si.GetAsideDirs(), aside[0])
	}
	if in := si.GetIncidents(); len(in) != 1 || !in[0].GetResolved() || in[0].GetResolvedUnixMs() < in[0].GetTimeUnixMs() {
		t.Errorf("incidents %v, want one resolved", in)
	}

	// The incident survives a restart, resolved; nothing heals again.
	if err := sn.Close(); err != nil {
		t.Fatal(err)
	}
	sn, err = StartSN(context.Background(), cfgs[victim])
	if err != nil {
		t.Fatalf("restart after the heal: %v", err)
	}
	t.Cleanup(func() { _ = sn.Close() })
	if ins := sn.incidents.snapshot(); len(ins) != 1 || !ins[0].Resolved || len(asideOf(t, data)) != 1 {
		t.Errorf("after a clean restart: incidents %+v, aside %v", ins, asideOf(t, data))
	}
	awaitRecords(t, sn, "h", n, 10*time.Second)
}

// TestCorruptionWhileRunningHeals: an sstable of a running node is damaged;
// the first read (or scrub) that finds it makes the node heal in process:
// requests meanwhile answer "rejoining" (or the one "corruption"), never
// anything else, and afterwards it serves every record again.
func TestCorruptionWhileRunningHeals(t *testing.T) {
	sns, _, cfgs := startClusterCfg(t, 3, 2, 3)
	const n = 300
	putRecords(t, sns, "r", n)
	victim := 1
	// A clean restart flushes the records into an sstable, and the new
	// process has a cold block cache.
	if err := sns[victim].Close(); err != nil {
		t.Fatal(err)
	}
	sn, err := StartSN(context.Background(), cfgs[victim])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sn.Close() })
	awaitRecords(t, sn, "r", 1, 10*time.Second)
	data := filepath.Join(cfgs[victim].Root, "data")
	flipMiddle(t, largestTable(t, data))

	kv := dial(t, sn.Addr())
	found := false
	for i := 0; i < n && !found; i++ {
		_, err := kv.Get(context.Background(), &cairnpb.GetRequest{Key: &cairnpb.Key{Major: []string{"r", strconv.Itoa(i)}}})
		st := status.Convert(err)
		switch {
		case err == nil:
		case st.Code() == codes.DataLoss && kindOf(st) == "corruption":
			found = true
			t.Logf("read %d found the damage: %v", i, err)
		case kindOf(st) == "rejoining":
			found = true
		default:
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if !found {
		// The damage is in blocks no record read touches: the scrub finds it.
		if err := sn.engine().VerifyBlocks(context.Background(), 0, nil); !errors.Is(err, storage.ErrCorrupt) {
			t.Fatalf("VerifyBlocks on a damaged sstable: %v, want ErrCorrupt", err)
		}
		t.Logf("the scrub found the damage")
	}
	awaitRecords(t, sn, "r", n, 30*time.Second)
	awaitResolved(t, sn, 30*time.Second)
	if a := asideOf(t, data); len(a) != 1 {
		t.Errorf("aside directories %v, want one", a)
	}
	if ins := sn.incidents.snapshot(); len(ins) != 1 || ins[0].Kind != kindCorrupt || !ins[0].Resolved || !strings.Contains(ins[0].Detail, ".sst") {
		t.Errorf("incidents %+v, want one resolved corrupt incident naming the sstable", ins)
	}
	// The node still takes part in writes.
	putRecords(t, sns, "after", 20)
	awaitRecords(t, sn, "after", 20, 10*time.Second)
}

// TestCorruptLoneReplicaRefuses: a node hosting a shard of one replica
// cannot rebuild it, so it refuses to start, naming the shard, the file
// and how to restore, and changes nothing.
func TestCorruptLoneReplicaRefuses(t *testing.T) {
	sns, _, cfgs := startClusterCfg(t, 1, 1, 1)
	putRecords(t, sns, "l", 20)
	stopWithLongManifest(t, sns, cfgs, 0)
	data := filepath.Join(cfgs[0].Root, "data")
	manifest := currentManifest(t, data)
	flipMiddle(t, manifest)
	_, err := StartSN(context.Background(), cfgs[0])
	if !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("start: %v, want ErrCorrupt", err)
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{"shard rg1 has no other replica", filepath.Base(manifest), "cairn sn restore", "nothing was changed", "this node does not start"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if a := asideOf(t, data); len(a) != 0 {
		t.Errorf("aside directories %v after a refused start", a)
	}
	if _, err := os.Stat(filepath.Join(cfgs[0].Root, incidentsFile)); !os.IsNotExist(err) {
		t.Errorf("%s after a refused start: %v", incidentsFile, err)
	}
}

// TestFaultedEngineHealsAtStart: an engine whose last run stopped on a
// fatal I/O error (recorded in its state file) may lack writes it had
// acknowledged to its peers, so a storage node does not use it: it sets it
// aside as a "fault" incident and rebuilds from its peers.
func TestFaultedEngineHealsAtStart(t *testing.T) {
	sns, _, cfgs := startClusterCfg(t, 3, 1, 3)
	const n = 50
	putRecords(t, sns, "f", n)
	victim := 1
	if err := sns[victim].Close(); err != nil {
		t.Fatal(err)
	}
	// Record a fault the way a failed fsync does, without exiting.
	data := filepath.Join(cfgs[victim].Root, "data")
	sc := storage.DefaultConfig(data)
	sc.CacheBytes, sc.MinFreeBytes = 8<<20, 0
	sc.Fatal = func(error) {}
	e, err := storage.Open(sc)
	if err != nil {
		t.Fatal(err)
	}
	e.Fatal(errors.New("fsync data/000002.log: input/output error"))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Open(sc); !errors.Is(err, storage.ErrFaulted) {
		t.Fatalf("reopening a faulted engine: %v, want ErrFaulted", err)
	}

	sn, err := StartSN(context.Background(), cfgs[victim])
	if err != nil {
		t.Fatalf("start on a faulted engine: %v", err)
	}
	t.Cleanup(func() { _ = sn.Close() })
	ins := sn.incidents.snapshot()
	if len(ins) != 1 || ins[0].Kind != kindFault || !strings.Contains(ins[0].Detail, "input/output error") || len(asideOf(t, data)) != 1 {
		t.Fatalf("incidents %+v, aside %v; want one fault incident naming the error and one aside directory", ins, asideOf(t, data))
	}
	awaitRecords(t, sn, "f", n, 30*time.Second)
	awaitResolved(t, sn, 30*time.Second)
}

// TestHealResumesAfterRestart: a node stopped while it rebuilds (before
// any shard was readmitted) starts on its fresh, half-built engine: its
// replicas rejoin again (the engine holds no Raft state of theirs), no
// second incident is recorded, and the first one is resolved once they
// have rebuilt.
func TestHealResumesAfterRestart(t *testing.T) {
	sns, _, cfgs := startClusterCfg(t, 3, 2, 3)
	const n = 100
	putRecords(t, sns, "m", n)
	victim := 2
	stopWithLongManifest(t, sns, cfgs, victim)
	data := filepath.Join(cfgs[victim].Root, "data")
	flipMiddle(t, currentManifest(t, data))

	t.Setenv(failpointRejoinDelay, "1h") // the replicas wait to rejoin until the node stops
	sn, err := StartSN(context.Background(), cfgs[victim])
	if err != nil {
		t.Fatalf("restart with a corrupt MANIFEST: %v", err)
	}
	if st := sn.describe().GetStorage().GetState(); st != "rebuilding" {
		t.Errorf("storage state %q while the replicas wait to rejoin, want rebuilding", st)
	}
	if err := sn.Close(); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv(failpointRejoinDelay)

	sn, err = StartSN(context.Background(), cfgs[victim])
	if err != nil {
		t.Fatalf("restart in the middle of the rebuild: %v", err)
	}
	t.Cleanup(func() { _ = sn.Close() })
	awaitRecords(t, sn, "m", n, 30*time.Second)
	awaitResolved(t, sn, 30*time.Second)
	if ins := sn.incidents.snapshot(); len(ins) != 1 || !ins[0].Resolved || len(asideOf(t, data)) != 1 {
		t.Errorf("incidents %+v, aside %v; want the one incident, resolved, and one aside directory", ins, asideOf(t, data))
	}
}
