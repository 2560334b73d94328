package e2e

import (
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/topology"
)

var replaceSeed = flag.Uint64("replace.seed", 0, "seed for TestReplaceFailedNode (0: from the clock)")

// TestReplaceFailedNode is acceptance 5 of issue 10: the white paper's
// store (3 nodes, RF 3, 2 shards) takes writes from two clients while sn3
// is SIGKILLed and its root deleted (a disk gone for good). A new node sn4
// is deployed, and plan migrate-sn -from sn3 -to sn4 -wait moves both of
// sn3's replicas onto it: each joins its shard as a Raft learner, catches
// up by snapshot, becomes a voter, and sn3 leaves the group. Then verify
// configuration has no violation, plan remove-sn removes sn3, every
// acknowledged write reads back with ABSOLUTE consistency and from every
// node hosting its shard, and no client write failed for good.
func TestReplaceFailedNode(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	seed := *replaceSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -replace.seed=%d)", seed, seed)
	start := time.Now()
	nodes := deployWhitePaperOn(t, initNodes(t, 3))
	c := openStore(t, nodes)
	load := startLoad(c, "replace", seed, 2, 256, true)
	stopped := false
	defer func() {
		if !stopped {
			load.end()
		}
	}()
	load.waitAcked(t, 200, "before the failure")

	nodes[2].kill()
	if err := os.RemoveAll(nodes[2].root); err != nil {
		t.Fatal(err)
	}
	load.waitAcked(t, 100, "with sn3 dead")
	if code, out, _ := admin(t, nodes[0], "verify", "configuration"); code == 0 || !strings.Contains(out, "plan migrate-sn -from sn3") {
		t.Errorf("verify configuration with sn3 dead: exit %d, want a violation advising plan migrate-sn -from sn3:\n%s", code, out)
	} else {
		t.Logf("verify configuration with sn3 dead:\n%s", out)
	}
	fresh := initNodes(t, 1)[0]
	fresh.start(t)
	if code, out, errOut := admin(t, nodes[0], "plan", "deploy-sn", "-znname", "MyZone", "-host", "127.0.0.1", "-port", strconv.Itoa(fresh.port), "-wait"); code != 0 {
		t.Fatalf("deploy-sn: exit %d\n%s\n%s", code, out, errOut)
	}
	acked := load.ackSeq.Load()
	moveStart := time.Now()
	code, out, errOut := admin(t, nodes[0], "plan", "migrate-sn", "-from", "sn3", "-to", "sn4", "-wait")
	took := time.Since(moveStart)
	t.Logf("plan migrate-sn -from sn3 -to sn4 -wait (exit %d, %v, %d puts acknowledged meanwhile):\n%s%s", code, took.Round(time.Millisecond),
		load.ackSeq.Load()-acked, out, errOut)
	if code != 0 {
		t.Fatalf("migrate-sn failed")
	}
	if gap := load.longestGap(moveStart, time.Now()); gap > 3*time.Second {
		t.Errorf("no put was acknowledged for %v during migrate-sn, want writes throughout (at most 3s apart)", gap)
	} else {
		t.Logf("longest time without an acknowledged put during migrate-sn: %v", gap.Round(time.Millisecond))
	}
	load.waitAcked(t, 100, "after the migration")
	live := []*storageNode{nodes[0], nodes[1], fresh}
	_, top, _ := admin(t, nodes[0], "-json", "show", "topology")
	topo := decodeShownTopology(t, top)
	for _, sh := range topo.Shards {
		if slices.Contains(sh.Replicas, 3) || !slices.Contains(sh.Replicas, 4) {
			t.Errorf("%s's replicas after the migration: %v, want sn4 in place of sn3", topology.ShardName(sh.ID), sh.Replicas)
		}
	}
	if _, out, _ := admin(t, nodes[0], "show", "pools"); !strings.Contains(out, "sn4") {
		t.Errorf("show pools after the migration does not list sn4 (in sn3's pool):\n%s", out)
	}
	code, out, _ = admin(t, nodes[0], "verify", "configuration")
	t.Logf("verify configuration:\n%s", out)
	if code != 0 || !strings.Contains(out, "0 violations") {
		t.Errorf("verify configuration after the migration: exit %d", code)
	}
	code, out, errOut = admin(t, nodes[0], "plan", "remove-sn", "-sn", "sn3", "-wait")
	t.Logf("plan remove-sn -sn sn3 -wait (exit %d):\n%s%s", code, out, errOut)
	if code != 0 {
		t.Fatalf("remove-sn sn3 failed")
	}
	rejoinUnderOldID(t, nodes, load)
	final := load.end()
	stopped = true
	readAbsolute(t, c, final)
	readHosts(t, live, final)
	t.Logf("summary: acked=%d lost=0 failed attempts (retried): %s %s; migrate-sn took %v; test took %v",
		len(final), load.errors(), load.firstErrors(), took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// rejoinUnderOldID checks cairn sn start --rejoin-as: refused for an
// unknown id and for a node that still serves; then sn2 is SIGKILLed, its
// root deleted, and it starts on a new root under its old id and catches
// up, until verify configuration is clean again.
func rejoinUnderOldID(t *testing.T, nodes []*storageNode, load *dfLoad) {
	t.Helper()
	helper := []string{"--helper-hosts", nodes[0].addr()}
	for _, c := range []struct{ id, want string }{
		{"sn9", "store kvstore has no storage node sn9"},
		{"sn2", "sn2 still answers at " + nodes[1].addr()},
	} {
		code, out, errOut := runCairn(t, append([]string{"sn", "start", "--root", t.TempDir(), "--rejoin-as", c.id}, helper...)...)
		t.Logf("cairn sn start --root NEW --rejoin-as %s --helper-hosts %s: exit %d\n%s%s", c.id, nodes[0].addr(), code, out, errOut)
		if code == 0 || !strings.Contains(out+errOut, c.want) {
			t.Fatalf("sn start --rejoin-as %s: exit %d, want a refusal saying %q:\n%s%s", c.id, code, c.want, out, errOut)
		}
	}
	nodes[1].kill()
	if err := os.RemoveAll(nodes[1].root); err != nil {
		t.Fatal(err)
	}
	load.waitAcked(t, 50, "with sn2 dead")
	rejoinStart := time.Now()
	nodes[1].root = t.TempDir()
	nodes[1].extra = append([]string{"--rejoin-as", "sn2"}, helper...)
	nodes[1].start(t)
	t.Logf("cairn sn start --root NEW --rejoin-as sn2 --helper-hosts %s:\n%s", nodes[0].addr(), nodes[1].stdout.String())
	waitFor(t, time.Minute, "verify configuration clean after sn2 rejoined", func() bool {
		code, out, _ := admin(t, nodes[0], "verify", "configuration")
		return code == 0 && strings.Contains(out, "0 violations")
	})
	t.Logf("sn2 rejoined under its old id on a new root and caught up in %v", time.Since(rejoinStart).Round(time.Millisecond))
	load.waitAcked(t, 50, "after sn2 rejoined")
}

// firstErrors names the first failed attempt of each kind.
func (l *dfLoad) firstErrors() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for k, e := range l.first {
		parts = append(parts, k+": "+e)
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// longestGap is the longest time between acknowledged puts from from to to.
func (l *dfLoad) longestGap(from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	last, gap := from, time.Duration(0)
	for _, e := range l.events {
		if e.kind != "" || e.at.Before(from) || e.at.After(to) {
			continue
		}
		gap, last = max(gap, e.at.Sub(last)), e.at
	}
	return max(gap, to.Sub(last))
}
