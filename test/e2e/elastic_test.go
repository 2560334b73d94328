package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/topology"
)

var (
	elasticSeed  = flag.Uint64("elastic.seed", 0, "seed for TestElasticUnderLoad (0: from the clock)")
	elasticAll   = flag.Bool("elastic.all", false, "TestElasticUnderLoad also shrinks the store back and splits its partitions (make elastic)")
	elasticShare = flag.Int("elastic.moveshare", 0, "TestElasticUnderLoad grows the store with plan deploy-topology -move-share N (0: the plan's default)")
)

// TestElasticUnderLoad is acceptances 1-3 of issue 10: the white
// paper's store (3 nodes of capacity 2, RF 3, 100 partitions in 2 shards)
// takes writes from four clients throughout, while
//   - three more nodes are deployed and joined to the pool, and topology
//     clone -current, redistribute, preview and plan deploy-topology (an
//     Oracle user's sequence) grow it to 4 shards of 25 partitions;
//   - topology contract shrinks it back to 2 shards on sn1..sn3, and plan
//     remove-sn removes the three others;
//   - topology split-partitions splits the 100 partitions into 200.
//
// make test runs the growth; -elastic.all (make elastic) all three. After
// each, verify configuration has no violation. No client write fails
// for good, and every acknowledged write reads back with ABSOLUTE
// consistency and from every node that hosts its shard.
func TestElasticUnderLoad(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	seed := *elasticSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -elastic.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 10))
	start := time.Now()
	nodes := deployWhitePaperOn(t, initNodes(t, 3))
	c := openStore(t, nodes)
	load := startLoad(c, "grow", seed, 4, 8*(64+rng.IntN(128)), true) // a multiple of 8
	stopped := false
	defer func() {
		if !stopped {
			load.end()
		}
	}()
	load.waitAcked(t, 300, "before the new nodes")
	more, script := threeMoreNodes(t)
	script = append(script, "topology preview -name Grown")
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, script)); code != 0 {
		t.Fatalf("growing: exit %d\n%s\n%s", code, out, errOut)
	} else if !strings.Contains(out, "2 new shards (rg3, rg4); 50 partitions move") {
		t.Fatalf("redistribute/preview did not plan 2 new shards and 50 moves:\n%s", out)
	}
	steady := load.rate(t, 3*time.Second)
	ackedBefore := load.ackSeq.Load()
	moveStart := time.Now()
	grow := []string{"plan", "deploy-topology", "-name", "Grown"}
	if *elasticShare != 0 {
		grow = append(grow, "-move-share", strconv.Itoa(*elasticShare))
	}
	runPlan(t, nodes[0], 5*time.Minute, grow...)
	took := time.Since(moveStart)
	during := load.ackSeq.Load() - ackedBefore
	t.Logf("grown in %v: %d puts acknowledged meanwhile, %.0f/s, %.2f of the steady %.0f/s", took.Round(time.Millisecond), during,
		float64(during)/took.Seconds(), float64(during)/took.Seconds()/steady, steady)
	all := append(append([]*storageNode{}, nodes...), more...)
	readHosts(t, all, load.snapshot()) // the writes so far, on the six nodes
	if got := partitionsPerShard(t, nodes[0]); !reflect.DeepEqual(got, map[string]int{"rg1": 25, "rg2": 25, "rg3": 25, "rg4": 25}) {
		t.Errorf("partitions per shard after the growth: %v, want 25 on each of rg1..rg4", got)
	}
	_, out, _ := admin(t, nodes[0], "show", "topology")
	t.Logf("show topology:\n%s", out)
	for _, rg := range []string{"rg1", "rg2", "rg3", "rg4"} {
		if !strings.Contains(out, rg) {
			t.Errorf("show topology after the deploy lacks %s:\n%s", rg, out)
		}
	}
	if code, out, _ := admin(t, nodes[0], "verify", "configuration"); code != 0 || !strings.Contains(out, "0 violations") {
		t.Errorf("verify configuration after the growth: exit %d\n%s", code, out)
	}
	load.waitAcked(t, 100, "after the growth")

	if *elasticAll {
		shrinkStore(t, nodes, load)
		split(t, nodes, load)
	}
	acked := load.end()
	stopped = true
	readAbsolute(t, c, acked)
	if *elasticAll {
		readHosts(t, nodes, acked)
	} else {
		readHosts(t, all, acked)
	}
	load.mu.Lock()
	ops := load.ops
	load.mu.Unlock()
	errs := load.errors()
	t.Logf("summary: ops=%d acked=%d lost=0 failed attempts (retried): %s; took %v", ops, len(acked), errs, time.Since(start).Round(time.Millisecond))
}

// threeMoreNodes starts sn4..sn6 beside the white-paper store and returns
// them with the admin script that deploys them, joins them to MyPool and
// makes candidate Grown, redistributed over the pool (rg3, rg4 on them).
func threeMoreNodes(t *testing.T) ([]*storageNode, []string) {
	t.Helper()
	more := initNodes(t, 3)
	var script []string
	for _, sn := range more {
		sn.start(t)
		script = append(script, fmt.Sprintf("plan deploy-sn -znname MyZone -host 127.0.0.1 -port %d -wait", sn.port))
	}
	script = append(script, "pool join -name MyPool -sn sn4", "pool join -name MyPool -sn sn5", "pool join -name MyPool -sn sn6",
		"topology clone -current -name Grown", "topology redistribute -name Grown -pool MyPool")
	return more, script
}

// shrinkStore contracts the grown store back to sn1..sn3 and removes the
// others, checking the result.
func shrinkStore(t *testing.T, nodes []*storageNode, load *dfLoad) {
	t.Helper()
	shrink := []string{"pool create -name Small", "pool join -name Small -sn sn1", "pool join -name Small -sn sn2", "pool join -name Small -sn sn3",
		"topology clone -current -name Shrunk", "topology contract -name Shrunk -pool Small", "topology preview -name Shrunk"}
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, shrink)); code != 0 || !strings.Contains(out, "2 shards removed (rg3, rg4)") {
		t.Fatalf("contract: exit %d\n%s\n%s", code, out, errOut)
	}
	shrinkStart := time.Now()
	runPlan(t, nodes[0], 5*time.Minute, "plan", "deploy-topology", "-name", "Shrunk")
	for _, sn := range []string{"sn4", "sn5", "sn6"} {
		runPlan(t, nodes[0], time.Minute, "plan", "remove-sn", "-sn", sn)
	}
	t.Logf("shrunk to 3 nodes in %v", time.Since(shrinkStart).Round(time.Millisecond))
	if got := partitionsPerShard(t, nodes[0]); !reflect.DeepEqual(got, map[string]int{"rg1": 50, "rg2": 50}) {
		t.Errorf("partitions per shard after the shrink: %v, want 50 on each of rg1, rg2", got)
	}
	if code, out, _ := admin(t, nodes[0], "verify", "configuration"); code != 0 || !strings.Contains(out, "0 violations") {
		t.Errorf("verify configuration after the shrink: exit %d\n%s", code, out)
	}
	load.waitAcked(t, 100, "after the shrink")
}

// split splits the 100 partitions into 200: no key changes shard.
func split(t *testing.T, nodes []*storageNode, load *dfLoad) {
	t.Helper()
	before := partitionsPerShard(t, nodes[0])
	split := []string{"topology clone -current -name Split", "topology split-partitions -name Split -factor 2"}
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, split)); code != 0 {
		t.Fatalf("split: exit %d\n%s\n%s", code, out, errOut)
	}
	runPlan(t, nodes[0], 2*time.Minute, "plan", "deploy-topology", "-name", "Split")
	want := map[string]int{}
	for rg, n := range before {
		want[rg] = 2 * n
	}
	if got := partitionsPerShard(t, nodes[0]); !reflect.DeepEqual(got, want) {
		t.Errorf("partitions per shard after the split: %v, want %v (each shard's count doubled)", got, want)
	}
	if code, out, _ := admin(t, nodes[0], "verify", "configuration"); code != 0 || !strings.Contains(out, "0 violations") {
		t.Errorf("verify configuration after the split: exit %d\n%s", code, out)
	}
	load.waitAcked(t, 100, "after the split")
}

// rate measures the acknowledged puts per second over window.
func (l *dfLoad) rate(t *testing.T, window time.Duration) float64 {
	t.Helper()
	from, at := l.ackSeq.Load(), time.Now()
	waitFor(t, window+time.Minute, "the measuring window", func() bool { return time.Since(at) >= window })
	return float64(l.ackSeq.Load()-from) / time.Since(at).Seconds()
}

// readAbsolute reads every acknowledged record through the client with
// ABSOLUTE consistency (from its shard's leader, wherever it moved).
func readAbsolute(t *testing.T, c *client.Client, acked map[string][]byte) {
	t.Helper()
	if bad := checkRecords(acked, func(k client.Key, want []byte) string {
		ctx, cancel := rpcCtx()
		defer cancel()
		rec, found, err := c.Get(ctx, k, client.WithConsistency(client.Absolute))
		if err != nil || !found || !bytes.Equal(rec.Value, want) {
			return fmt.Sprintf("%s (ABSOLUTE): found=%v err=%v; want the acknowledged value", k, found, err)
		}
		return ""
	}); bad != "" {
		t.Fatal(bad)
	}
}

// readHosts reads every acknowledged record, NONE_REQUIRED, from every
// node that hosts a replica of its shard in the deployed topology.
func readHosts(t *testing.T, nodes []*storageNode, acked map[string][]byte) {
	t.Helper()
	_, out, _ := admin(t, nodes[0], "-json", "show", "topology")
	topo := decodeShownTopology(t, out)
	byAddr := map[string]*storageNode{}
	for _, sn := range nodes {
		byAddr[sn.addr()] = sn
	}
	for _, n := range topo.Nodes {
		sn := byAddr[n.Addr]
		var mine = map[string][]byte{}
		for ks, v := range acked {
			sh, _ := topo.Shard(topo.ShardForKey(client.MustParseKey(ks).Major))
			if slices.Contains(sh.Replicas, n.ID) {
				mine[ks] = v
			}
		}
		readEverywhere(t, []*storageNode{sn}, mine, time.Minute)
	}
}

// decodeShownTopology reads the topology from show topology's JSON.
func decodeShownTopology(t *testing.T, out string) *topology.Topology {
	t.Helper()
	var reply struct {
		Topology json.RawMessage `json:"topology"`
	}
	raw := json.RawMessage(out)
	if json.Unmarshal([]byte(out), &reply) == nil && len(reply.Topology) > 0 {
		raw = reply.Topology
	}
	topo, err := topology.Decode(raw)
	if err != nil {
		t.Fatalf("show topology -json: %v\n%s", err, out)
	}
	return topo
}

// partitionsPerShard counts the deployed topology's partitions by shard.
func partitionsPerShard(t *testing.T, sn *storageNode) map[string]int {
	t.Helper()
	_, out, _ := admin(t, sn, "-json", "show", "topology")
	topo := decodeShownTopology(t, out)
	got := map[string]int{}
	for _, s := range topo.PartitionShard {
		got[topology.ShardName(s)]++
	}
	return got
}

// runPlan starts a plan with the admin's -json and waits until it ends,
// failing the test unless it SUCCEEDED (it prints show plan then).
func runPlan(t *testing.T, sn *storageNode, d time.Duration, args ...string) {
	t.Helper()
	code, out, errOut := admin(t, sn, append([]string{"-json"}, args...)...)
	var started planJSON
	if code != 0 || json.Unmarshal([]byte(out), &started) != nil || started.PlanID == 0 {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
	}
	id := strconv.Itoa(started.PlanID)
	var state string
	waitFor(t, d, "plan "+id+" to end", func() bool {
		_, out, _ := admin(t, sn, "-json", "show", "plan", "-id", id)
		var p planJSON
		if json.Unmarshal([]byte(out), &p) == nil {
			state = p.State
		}
		return state == "SUCCEEDED" || state == "ERROR" || state == "INTERRUPTED" || state == "CANCELED"
	})
	if state != "SUCCEEDED" {
		_, text, _ := admin(t, sn, "show", "plan", "-id", id)
		t.Fatalf("plan %s (%v) ended %s:\n%s", id, args, state, text)
	}
}
