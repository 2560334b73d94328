package e2e

// plan verify-data on real storage nodes: a replica changed behind Raft's
// back (which no block checksum can see) is found, named and rebuilt from
// its peers; a flipped byte in an sstable is found by the block check.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"github.com/cairndb/cairn/internal/storage/files"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cairndb/cairn/internal/topology"
)

// verifyTimeout bounds one plan verify-data -wait.
const verifyTimeout = 3 * time.Minute

// adminLong runs one cairn admin command that may take minutes.
func adminLong(t *testing.T, sn *storageNode, args ...string) (int, string) {
	t.Helper()
	all := append([]string{"admin", "-host", "127.0.0.1", "-port", strconv.Itoa(sn.port)}, args...)
	p := startProc(t, "admin "+strings.Join(args, " "), all...)
	code, ok := p.waitExit(verifyTimeout)
	if !ok {
		p.kill()
		t.Fatalf("cairn admin %s: still running after %v:\n%s%s", strings.Join(args, " "), verifyTimeout, p.stdout.String(), p.stderr.String())
	}
	return code, p.stdout.String() + p.stderr.String()
}

func vdKey(i int) client.Key { return client.MustParseKey(fmt.Sprintf("/vd/k%03d/-/v", i)) }

// loadStore writes n records with random values of size bytes and
// returns them by key string.
func loadStore(t *testing.T, c *client.Client, n, size int) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	acked := map[string][]byte{}
	for i := range n {
		v := make([]byte, size)
		_, _ = rand.Read(v)
		if _, err := c.Put(ctx, vdKey(i), v); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		acked[vdKey(i).String()] = v
	}
	return acked
}

// readEverywhere checks, with NONE_REQUIRED reads sent to each node, that
// every node's replica holds every acknowledged record, waiting up to d
// for replicas that catch up.
func readEverywhere(t *testing.T, nodes []*storageNode, acked map[string][]byte, d time.Duration) {
	t.Helper()
	for _, sn := range nodes {
		kv := dial(t, sn.addr())
		var bad string
		waitFor(t, d, "every acknowledged record on "+sn.addr(), func() bool {
			bad = checkRecords(acked, func(k client.Key, want []byte) string {
				ctx, cancel := rpcCtx()
				defer cancel()
				r, err := kv.Get(ctx, &cairnpb.GetRequest{Key: key(k.Major, k.Minor...),
					Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}})
				if err != nil || !r.GetFound() || !bytes.Equal(r.GetRecord().GetValue(), want) {
					return fmt.Sprintf("%s: found=%v err=%v", k, r.GetFound(), err)
				}
				return ""
			})
			return bad == ""
		})
		if bad != "" {
			t.Fatalf("%s: %s", sn.addr(), bad)
		}
	}
}

// readWorkers is how many reads checkRecords keeps in flight: the checks
// of tens of thousands of records are bound by round trips, not CPU.
const readWorkers = 8

// checkRecords runs check on every record of acked, readWorkers at a
// time, and returns a failure it reported ("" when none did). It stops
// starting checks once one fails.
func checkRecords(acked map[string][]byte, check func(k client.Key, want []byte) string) string {
	type rec struct {
		k    string
		want []byte
	}
	todo := make(chan rec)
	var (
		mu  sync.Mutex
		bad string
		wg  sync.WaitGroup
	)
	for range readWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range todo {
				if why := check(client.MustParseKey(r.k), r.want); why != "" {
					mu.Lock()
					bad = why
					mu.Unlock()
				}
			}
		}()
	}
	for ks, want := range acked {
		mu.Lock()
		failed := bad != ""
		mu.Unlock()
		if failed {
			break
		}
		todo <- rec{ks, want}
	}
	close(todo)
	wg.Wait()
	return bad
}

// diverge rewrites the record of key k in the stopped node's engine
// without a command: its applied index stays, so Raft never repairs it.
// It returns the shard and partition of the key.
func diverge(t *testing.T, sn *storageNode, k client.Key) (topology.ShardID, keys.PartitionID) {
	t.Helper()
	var raw json.RawMessage
	if err := files.ReadJSON(files.Default, filepath.Join(sn.root, topology.FileName), &raw); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	shard := topo.ShardForKey(k.Major)
	sh, _ := topo.Shard(shard)
	part := keys.PartitionOf(keys.Hash(k.Major), topo.Partitions)
	e, err := storage.Open(storage.DefaultConfig(filepath.Join(sn.root, "data")))
	if err != nil {
		t.Fatalf("open the stopped node's engine: %v", err)
	}
	defer e.Close()
	applied, err := e.ShardApplied(uint64(shard))
	if err != nil || applied == 0 {
		t.Fatalf("shard %d applied index %d: %v", shard, applied, err)
	}
	b := e.NewShardBatch(uint64(shard), sh.Origin)
	defer b.Close()
	cmd := &commandpb.Command{NowMs: time.Now().UnixMilli(), Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{
		{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: key(k.Major, k.Minor...), Value: []byte("diverged")}}},
	}}}}
	if res := b.Apply(applied, cmd); res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := b.Commit(storage.Sync); err != nil {
		t.Fatal(err)
	}
	return shard, part
}

// writeDuring writes records until stop is closed and returns those
// acknowledged.
func writeDuring(c *client.Client, stop <-chan struct{}) func() map[string][]byte {
	var mu sync.Mutex
	acked := map[string][]byte{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := client.MustParseKey(fmt.Sprintf("/vd/during%04d/-/v", i))
			v := []byte(fmt.Sprint("during ", i))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := c.Put(ctx, k, v)
			cancel()
			if err == nil {
				mu.Lock()
				acked[k.String()] = v
				mu.Unlock()
			}
		}
	}()
	return func() map[string][]byte {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return acked
	}
}

// TestVerifyDataRepairs: one record changed directly in a stopped node's
// engine is found by plan verify-data, which names the shard, the
// partition and the node, rebuilds that replica from its peers while
// clients write, and confirms; a second run finds every replica agreeing,
// and every acknowledged record reads back from every node.
func TestVerifyDataRepairs(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	start := time.Now()
	nodes := deployWhitePaper(t)
	c := openStore(t, nodes)
	acked := loadStore(t, c, 200, 100)
	readEverywhere(t, nodes, acked, 30*time.Second)
	victim := nodes[2]
	if code := victim.stop(); code != 0 {
		t.Fatalf("sn3: exit %d after SIGTERM", code)
	}
	shard, part := diverge(t, victim, vdKey(17))
	t.Logf("changed %s (shard %s, partition %d) on sn3 behind Raft's back", vdKey(17), topology.ShardName(shard), part)
	victim.start(t)

	stop := make(chan struct{})
	during := writeDuring(c, stop)
	code, out := adminLong(t, nodes[0], "plan", "verify-data", "-wait")
	close(stop)
	want := fmt.Sprintf("%s partition %d differs on sn3 (", topology.ShardName(shard), part)
	repaired := regexp.MustCompile(regexp.QuoteMeta(want) + `[^\n]*\): sn3's replica rebuilt from its peers; agrees now at index \d+`)
	if code != 0 || !repaired.MatchString(out) {
		t.Fatalf("plan verify-data: exit %d, want 0 and a line matching %q:\n%s", code, repaired, out)
	}
	if n := strings.Count(out, "differs on"); n != 1 {
		t.Errorf("plan verify-data: %d partitions differ, want exactly the changed one:\n%s", n, out)
	}
	t.Logf("first plan verify-data:\n%s", out)

	code, out = adminLong(t, nodes[1], "plan", "verify-data", "-wait")
	for _, rg := range []string{"rg1", "rg2"} {
		if !regexp.MustCompile(rg + `: \d+ partitions agree on sn1, sn2, sn3 at index \d+`).MatchString(out) {
			t.Errorf("second plan verify-data: no agreement line for %s", rg)
		}
	}
	if code != 0 || strings.Contains(out, "differs") || !strings.Contains(out, "no damage") {
		t.Fatalf("second plan verify-data: exit %d, want 0 with every replica agreeing and no damage:\n%s", code, out)
	}
	for k, v := range during() {
		acked[k] = v
	}
	readEverywhere(t, nodes, acked, 30*time.Second)
	t.Logf("%d acknowledged records read back from every node; took %v", len(acked), time.Since(start).Round(time.Millisecond))
}

// flipInRecords flips a byte of value v where it is stored last in the
// node's sstables: in the record, which sorts after the Raft log entry
// that carries the same value. It returns the file's name.
func flipInRecords(t *testing.T, sn *storageNode, v []byte) string {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(sn.root, "data", "*.sst"))
	for _, path := range tables {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.LastIndex(data, v[:64])
		if i < 0 {
			continue
		}
		data[i+32] ^= 0xFF
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Base(path)
	}
	t.Fatalf("no sstable of %s holds the value (tables %v)", sn.root, tables)
	return ""
}

// TestVerifyDataFindsBlockDamage: a byte flipped in an sstable of a
// stopped node is reported by plan verify-data, naming the node and the
// file, and the plan fails.
func TestVerifyDataFindsBlockDamage(t *testing.T) {
	nodes := deployWhitePaper(t)
	c := openStore(t, nodes)
	acked := loadStore(t, c, 100, 4096) // random, so the blocks hold each value verbatim
	readEverywhere(t, nodes, acked, 30*time.Second)
	victim := nodes[2]
	if code := victim.stop(); code != 0 { // a clean stop flushes: the records are in sstables
		t.Fatalf("sn3: exit %d after SIGTERM", code)
	}
	file := flipInRecords(t, victim, acked[vdKey(42).String()])
	victim.start(t)
	code, out := adminLong(t, nodes[0], "plan", "verify-data", "-sn", "sn3", "-wait")
	damage := regexp.MustCompile(`sn3: block damage in \S*` + regexp.QuoteMeta(file))
	if code == 0 || !damage.MatchString(out) {
		t.Fatalf("plan verify-data -sn sn3: exit %d, want non-zero and a line matching %q:\n%s", code, damage, out)
	}
	t.Logf("plan verify-data -sn sn3:\n%s", out)
}
