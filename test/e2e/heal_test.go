package e2e

// A storage node heals a corrupt store from its peers (docs/design/
// 20261125_storage_faults.md, "Healing a storage node"): three real nodes,
// the white paper's store (two shards of three replicas), one node's
// MANIFEST or sstable damaged at rest or while it runs, then the node sets
// its files aside, rebuilds every shard by snapshot and serves every
// acknowledged record again, while ping, verify configuration and show
// events say what happened. The admin's own engine heals the same way
// through the admin group.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/storage"
	"google.golang.org/grpc/codes"
)

var healSeed = flag.Uint64("heal.seed", 0, "seed for TestCorruptReplicaHeals (0: from the clock)")

// rejoinDelay holds each rejoin back (CAIRN_FAILPOINT_REJOIN_DELAY), so
// that ping and verify can be seen reporting the rebuild.
const rejoinDelay = 3 * time.Second

// healRun is the store of TestCorruptReplicaHeals and what it acknowledged.
type healRun struct {
	t     *testing.T
	nodes []*storageNode
	c     *client.Client
	rng   *rand.Rand
	keys  []string          // in write order
	acked map[string][]byte // acknowledged value of each key
	// incidents counts the incidents of each node so far, by index.
	incidents map[int]int
}

func TestCorruptReplicaHeals(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	seed := *healSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -heal.seed=%d)", seed, seed)
	nodes := initNodes(t, 3)
	for _, sn := range nodes {
		// A short Raft log, truncated often, so an sstable holds records
		// rather than log entries.
		sn.extra = []string{"--raft-log-keep", "10"}
		sn.env = []string{"CAIRN_FAILPOINT_REJOIN_DELAY=" + rejoinDelay.String()}
		sn.owner = t // the subtests restart nodes that outlive them
	}
	deployWhitePaperOn(t, nodes)
	h := &healRun{t: t, nodes: nodes, c: openStore(t, nodes), rng: rand.New(rand.NewPCG(seed, 0x6865616c)),
		acked: map[string][]byte{}, incidents: map[int]int{}}
	h.load(t, 300)

	t.Run("raft_state", func(t *testing.T) {
		v := h.victim(t)
		if code := v.stop(); code != 0 { // a clean stop flushes: the Raft state is in sstables
			t.Fatalf("SIGTERM: exit %d", code)
		}
		// A block the engine's open does not prove (it checks the
		// MANIFEST, the WALs, the tables' sizes, its meta and applied
		// indexes) but the replicas read when they open: their Raft state.
		if !damageRaftState(t, v) {
			v.start(t)
			t.Skip("no block of this node's tables holds Raft state without the indexes its open proves")
		}
		h.load(t, 50)
		start := time.Now()
		v.start(t)
		h.checkHealing(t, v, ".sst")
		h.checkHealed(t, v, start)
	})

	t.Run("manifest", func(t *testing.T) {
		v := h.victim(t)
		v.kill()
		flipAt(t, currentManifest(t, filepath.Join(v.root, "data")), -1)
		h.load(t, 50) // acknowledged while the node is down
		start := time.Now()
		v.start(t)
		h.checkHealing(t, v, "MANIFEST-")
		h.checkHealed(t, v, start)
	})

	t.Run("sstable", func(t *testing.T) {
		v := h.victim(t)
		if code := v.stop(); code != 0 {
			t.Fatalf("SIGTERM: exit %d", code)
		}
		key := h.damageRecord(t, v)
		h.load(t, 50)
		start := time.Now()
		v.start(t)
		// The open proves the MANIFEST, WALs and the tables' presence and
		// sizes, not every block: the first read of the damaged block finds
		// it, and the node heals in process.
		h.readDamaged(t, v, key)
		h.checkHealing(t, v, ".sst")
		h.checkHealed(t, v, start)
	})

	t.Run("while_running", func(t *testing.T) {
		v := h.victim(t)
		if code := v.stop(); code != 0 { // the restart flushes the records into an sstable
			t.Fatalf("SIGTERM: exit %d", code)
		}
		v.start(t) // nothing reads the records before the damage: a cold block cache
		pid := v.cmd.Process.Pid
		key := h.damageRecord(t, v)
		start := time.Now()
		h.readDamaged(t, v, key)
		h.checkHealing(t, v, ".sst")
		h.load(t, 50) // acknowledged while the node rebuilds
		h.checkHealed(t, v, start)
		if !v.running() || v.cmd.Process.Pid != pid {
			t.Errorf("the node did not heal in process")
		}
	})

	t.Run("admin", func(t *testing.T) { h.adminHeals(t) })
}

// damageRaftState flips 16 bytes of the stopped node's sstables where an
// engine still opens but a replica's Raft state (truncated and hard
// state, configuration, last log index, which the replica reads when it
// opens) fails its checksum. It tries offsets 512 bytes apart, each on a copy
// of the data directory opened with storage.Open, and damages the node's
// own files at the first that qualifies; false if none does.
func damageRaftState(t *testing.T, v *storageNode) bool {
	t.Helper()
	data := filepath.Join(v.root, "data")
	tables, _ := filepath.Glob(filepath.Join(data, "*.sst"))
	for _, path := range tables {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for at := 0; at+16 <= len(b); at += 512 {
			if !openOnlyRaftStateCorrupt(t, data, filepath.Base(path), at) {
				continue
			}
			flipAt(t, path, at)
			t.Logf("flipped 16 bytes at offset %d of %s (%d bytes): the engine opens, a replica's Raft state is corrupt", at, filepath.Base(path), len(b))
			return true
		}
	}
	return false
}

// openOnlyRaftStateCorrupt reports whether, with 16 bytes of table flipped
// at offset at in a copy of data, storage.Open succeeds and reading a
// shard's Raft state fails as corruption.
func openOnlyRaftStateCorrupt(t *testing.T, data, table string, at int) bool {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(data)); err != nil {
		t.Fatal(err)
	}
	flipAt(t, filepath.Join(dir, table), at)
	cfg := storage.DefaultConfig(dir)
	cfg.CacheBytes, cfg.MinFreeBytes, cfg.CheckpointInterval = 1<<20, 0, -1
	cfg.Logger = slog.New(slog.DiscardHandler)
	e, err := storage.Open(cfg)
	if err != nil {
		return false
	}
	defer e.Close()
	for shard := uint64(1); shard <= 2; shard++ {
		for _, kind := range []byte{storage.ShardTruncated, storage.ShardHardState, storage.ShardConfState} {
			if _, _, err := e.ShardState(shard, kind); errors.Is(err, storage.ErrCorrupt) {
				return true
			}
		}
		if _, _, err := e.LastLogIndex(shard); errors.Is(err, storage.ErrCorrupt) {
			return true
		}
	}
	return false
}

func healKey(i int) string { return fmt.Sprintf("/heal/k%04d/-/v", i) }

// load writes n records with random incompressible values; each is
// acknowledged (the client retries on another replica as it must).
func (h *healRun) load(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range n {
		k := healKey(len(h.keys))
		v := make([]byte, 64+h.rng.IntN(192))
		for i := range v {
			v[i] = byte(h.rng.Uint32())
		}
		if _, err := h.c.Put(ctx, client.MustParseKey(k), v); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
		h.keys = append(h.keys, k)
		h.acked[k] = v
	}
}

// victim picks a node (not sn1, which runs the only admin) that leads
// no shard, if there is one.
func (h *healRun) victim(t *testing.T) *storageNode {
	t.Helper()
	// Ping exits 1 while a shard has no leader (a leadership transfer or
	// an election after the last subtest's restart): wait until it is 0.
	var out string
	waitFor(t, time.Minute, "a ping with every shard healthy", func() bool {
		code, o, _ := admin(t, h.nodes[0], "-json", "ping")
		out = o
		return code == 0
	})
	var p struct {
		Nodes []struct {
			SN       int `json:"sn"`
			Replicas []struct {
				Status string `json:"status"`
			} `json:"replicas"`
		} `json:"storage_nodes"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("ping -json: %v: %s", err, out)
	}
	best, leads := 0, 99
	for _, n := range p.Nodes {
		if n.SN == 1 {
			continue
		}
		l := 0
		for _, r := range n.Replicas {
			if strings.Contains(r.Status, "MASTER") {
				l++
			}
		}
		if l < leads {
			best, leads = n.SN, l
		}
	}
	t.Logf("victim sn%d (leads %d shards)", best, leads)
	return h.nodes[best-1]
}

// damageRecord flips 16 bytes of the stopped or running node's largest
// sstable inside the value of an acknowledged record (the last copy of
// the value: records sort after the Raft log), the one nearest the middle
// of the file, and returns its key.
func (h *healRun) damageRecord(t *testing.T, v *storageNode) string {
	t.Helper()
	path := largestTable(t, filepath.Join(v.root, "data"))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	key, at := "", -1
	for _, k := range h.keys {
		i := bytes.LastIndex(b, h.acked[k])
		if i >= 0 && (at < 0 || abs(i-len(b)/2) < abs(at-len(b)/2)) {
			key, at = k, i
		}
	}
	if at < 0 {
		t.Fatalf("no acknowledged value found in %s (%d bytes)", path, len(b))
	}
	flipAt(t, path, at+8)
	t.Logf("flipped 16 bytes at offset %d of %s (%d bytes), in the value of %s", at+8, filepath.Base(path), len(b), key)
	return key
}

func abs(n int) int { return max(n, -n) }

// readDamaged reads key from v (NONE_REQUIRED) until v answers that it is
// corrupt or rebuilding; nothing else may come back but the old value.
// The flipped bytes may be a copy of the value in a Raft log entry that
// was flushed beside the record (damageRecord cannot tell them apart):
// then no read reaches them, and a compaction that reads the block finds
// the damage instead, so v setting its files aside ends the wait too.
func (h *healRun) readDamaged(t *testing.T, v *storageNode, key string) {
	t.Helper()
	kv := dial(t, v.addr())
	k, _ := client.ParseKey(key)
	asides := h.incidents[slices.Index(h.nodes, v)]
	waitFor(t, 60*time.Second, "the node to find the damage", func() bool {
		if dirs, _ := filepath.Glob(filepath.Join(v.root, "data.corrupt-*")); len(dirs) > asides {
			t.Logf("the node found the damage itself (%s), before a read did", filepath.Base(dirs[len(dirs)-1]))
			return true
		}
		ctx, cancel := rpcCtx()
		defer cancel()
		resp, err := kv.Get(ctx, &cairnpb.GetRequest{Key: &cairnpb.Key{Major: k.Major, Minor: k.Minor},
			Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}})
		st, ed := errorDetail(err)
		switch {
		case err == nil && bytes.Equal(resp.GetRecord().GetValue(), h.acked[key]):
			return false // a compaction may have rewritten the block; keep asking
		case err == nil:
			t.Fatalf("read of the damaged record %s returned %q, want corruption or rejoining", key, resp.GetRecord().GetValue())
		case st.Code() == codes.DataLoss && ed.GetKind() == "corruption":
			t.Logf("the read found the damage: %v", err)
			return true
		case ed.GetKind() == "rejoining":
			return true
		}
		t.Fatalf("read of the damaged record %s: %v", key, err)
		return false
	})
}

// checkHealing checks, while v waits to rejoin (rejoinDelay), that ping
// and verify configuration say it rebuilds, why (file names the damaged
// file) and where its old files are.
func (h *healRun) checkHealing(t *testing.T, v *storageNode, file string) {
	t.Helper()
	sn := "sn" + strconv.Itoa(slices.Index(h.nodes, v)+1)
	var aside string
	waitFor(t, 30*time.Second, sn+"'s new aside directory", func() bool {
		dirs, _ := filepath.Glob(filepath.Join(v.root, "data.corrupt-*"))
		if len(dirs) == h.incidents[slices.Index(h.nodes, v)]+1 {
			aside = dirs[len(dirs)-1]
			return true
		}
		return false
	})
	// The files are set aside before the node says it rebuilds.
	waitFor(t, 30*time.Second, sn+" to report that it rebuilds", func() bool {
		_, out, _ := admin(t, h.nodes[0], "ping")
		return strings.Contains(grepLine(out, "Storage Node ["+sn+"]"), "storage: rebuilding from peers since ")
	})
	t.Logf("%s logged: %s", sn, healLogLine(v.stderr.String()))
	out := checkAdmin(t, h.nodes[0], 1, []string{"Storage Node [" + sn + "]", "storage: rebuilding from peers since ", "; old files in " + aside,
		"\tStatus: REBUILDING"}, "ping")
	if !strings.Contains(grepLine(out, "Storage Node ["+sn+"]"), file) {
		t.Errorf("ping's line for %s does not name the damaged file (%s):\n%s", sn, file, out)
	}
	t.Logf("ping: %s", grepLine(out, "Storage Node ["+sn+"]"))
	out = checkAdmin(t, h.nodes[0], 1, []string{"Verify: violation " + sn + ": storage is rebuilding from peers since ", "serve nothing until each has been readmitted"},
		"verify", "configuration")
	t.Logf("verify: %s", grepLine(out, "Verify: violation "+sn))
}

// checkHealed waits until v serves every acknowledged record to
// NONE_REQUIRED reads sent to it, then until ping and verify pass, and
// checks that show events records the incident once, and its end.
func (h *healRun) checkHealed(t *testing.T, v *storageNode, start time.Time) {
	t.Helper()
	i := slices.Index(h.nodes, v)
	sn := "sn" + strconv.Itoa(i+1)
	h.incidents[i]++
	h.awaitServed(t, v)
	t.Logf("%s served every acknowledged record %v after the damage was found or the restart", sn, time.Since(start).Round(time.Millisecond))
	awaitAdmin(t, h.nodes[0], []string{"Shard Status: healthy: 2"}, "ping")
	out := checkAdmin(t, h.nodes[0], 0, []string{"0 violations", sn + ": keeps the files of a corrupt store in " + filepath.Join(v.root, "data.corrupt-")},
		"verify", "configuration")
	if n := strings.Count(out, sn+": keeps the files of a corrupt store"); n != h.incidents[i] {
		t.Errorf("verify warns of %d aside directories on %s, want %d:\n%s", n, sn, h.incidents[i], out)
	}
	var events string
	waitFor(t, 30*time.Second, "show events to record the incident and its end", func() bool {
		_, events, _ = admin(t, h.nodes[0], "show", "events", "-last", "500")
		return strings.Count(events, sn+": storage rebuilt from peers in ") == h.incidents[i]
	})
	for _, l := range strings.Split(events, "\n") {
		if strings.Contains(l, sn+": storage") {
			t.Logf("event: %s", l)
		}
	}
	if n := strings.Count(events, sn+": storage corrupt: "); n != h.incidents[i] {
		t.Errorf("show events records %d incidents of %s, want %d:\n%s", n, sn, h.incidents[i], events)
	}
	if !strings.Contains(events, "old files kept in "+filepath.Join(v.root, "data.corrupt-")) || !strings.Contains(events, "rebuilding shards rg1, rg2 from their peers") {
		t.Errorf("show events does not say where the old files are and what is rebuilt:\n%s", events)
	}
}

// awaitServed waits until v serves every acknowledged record to
// NONE_REQUIRED reads sent to it; it may answer "rejoining" meanwhile.
func (h *healRun) awaitServed(t *testing.T, v *storageNode) {
	t.Helper()
	kv := dial(t, v.addr())
	deadline := time.Now().Add(time.Minute)
	for _, key := range h.keys {
		k, _ := client.ParseKey(key)
		for {
			ctx, cancel := rpcCtx()
			resp, err := kv.Get(ctx, &cairnpb.GetRequest{Key: &cairnpb.Key{Major: k.Major, Minor: k.Minor},
				Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}})
			cancel()
			if err == nil && bytes.Equal(resp.GetRecord().GetValue(), h.acked[key]) {
				break
			}
			if _, ed := errorDetail(err); err != nil && ed.GetKind() != "rejoining" {
				t.Fatalf("%s on %s: %v", key, v.addr(), err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not served by %s within a minute: found=%v err=%v", key, v.addr(), resp.GetFound(), err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// adminHeals damages the admin engine of a node with an admin replica
// that is not the admin leader: it sets it aside, is readmitted to the
// admin group and catches up, and show events says so.
func (h *healRun) adminHeals(t *testing.T) {
	for _, sn := range []string{"sn2", "sn3"} {
		checkAdmin(t, h.nodes[0], 0, []string{"SUCCEEDED"}, "plan", "deploy-admin", "-sn", sn, "-wait")
	}
	ids, lead := showAdmins(t, h.nodes[0])
	if len(ids) != 3 {
		t.Fatalf("admins %v, want 3", ids)
	}
	i := 1
	if lead == 2 {
		i = 2
	}
	v, sn := h.nodes[i], "sn"+strconv.Itoa(i+1)
	// A restart and a clean stop give the admin's current MANIFEST several
	// records, so damage in its middle is followed by a good one.
	if code := v.stop(); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	v.start(t)
	if code := v.stop(); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	dir := filepath.Join(v.root, "admin")
	flipAt(t, currentManifest(t, dir), -1)
	v.start(t)
	if line := awaitHealLog(v, "its files were moved to "+dir+".corrupt-"); line == "" {
		t.Errorf("%s does not log that it set its admin files aside:\n%s", sn, v.stderr.String())
	} else {
		t.Logf("%s logged: %s", sn, line)
	}
	waitFor(t, time.Minute, "the admin on "+sn+" to rebuild", func() bool {
		_, out, _ := admin(t, v, "show", "admins")
		return strings.Contains(out, "admin on "+sn+" "+v.addr()+"  RUNNING,") && strings.Count(out, "RUNNING,") == 3
	})
	var events string
	waitFor(t, 30*time.Second, "show events to record the admin's incident and its end", func() bool {
		_, events, _ = admin(t, h.nodes[0], "show", "events", "-last", "500")
		return strings.Contains(events, sn+": admin storage rebuilt from the other admins in ")
	})
	if n := strings.Count(events, sn+": admin storage corrupt: "); n != 1 {
		t.Errorf("show events records %d admin incidents of %s, want 1:\n%s", n, sn, events)
	}
	checkAdmin(t, h.nodes[0], 0, []string{"0 violations", sn + ": keeps the files of a corrupt store in " + dir + ".corrupt-"}, "verify", "configuration")
	// The rebuilt admin holds the metadata: it answers without a leader.
	checkAdmin(t, v, 0, []string{"Storage Node [" + sn + "]"}, "ping")
}

// awaitHealLog waits up to logTimeout for the line healLogLine finds in
// sn's log to contain every one of want, and returns it ("" if it did not
// come; see proc.logged).
func awaitHealLog(sn *storageNode, want ...string) string {
	var line string
	if !within(logTimeout, func() bool { line = healLogLine(sn.stderr.String()); return line != "" && containsAll(line, want) }) {
		return ""
	}
	return line
}

// healLogLine is the last line of a node's log that says it set files
// aside, or "".
func healLogLine(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "(kept for inspection)") {
			return lines[i]
		}
	}
	return ""
}

// flipAt flips 16 bytes of the file at path from offset at (-1: centred
// in the middle of the file).
func flipAt(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 {
		at = len(b)/2 - 8
	}
	if at < 0 || at+16 > len(b) {
		t.Fatalf("%s is %d bytes: no 16 bytes at %d", path, len(b), at)
	}
	for i := at; i < at+16; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// currentManifest is the MANIFEST the engine in dir uses (its marker names
// it; Pebble keeps the previous one too).
func currentManifest(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "marker.manifest.*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("manifest marker in %s: %v %v", dir, m, err)
	}
	name := filepath.Base(m[0])
	return filepath.Join(dir, name[strings.Index(name, "MANIFEST-"):])
}

// largestTable is the largest sstable in dir.
func largestTable(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	best, size := "", int64(-1)
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		t.Fatalf("no sstable in %s", dir)
	}
	return best
}
