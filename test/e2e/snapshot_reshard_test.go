package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
)

// TestSnapshotRestoreAfterGrowth takes a snapshot of the white-paper store
// (rg1, rg2 on sn1..sn3, 100 partitions), grows the store to six nodes
// (rg3, rg4 take half the partitions) and splits its partitions to 200,
// then restores the snapshot on all six nodes: the shards are re-sharded
// from the snapshot's. A node that holds no copy is told which nodes hold
// what it needs, and restores with --from. The store comes back at the
// snapshot (TTLs included) and takes writes.
func TestSnapshotRestoreAfterGrowth(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	nodes := deployWhitePaper(t)
	c := openStore(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	key := func(i int) client.Key { return client.MustParseKey(fmt.Sprintf("/grow/k%03d/-/v", i)) }
	for i := range 200 {
		var opts []client.Option
		if i%4 == 0 {
			opts = append(opts, client.WithTTL(48*time.Hour))
		}
		if _, err := c.Put(ctx, key(i), []byte("before"), opts...); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	checkAdmin(t, nodes[0], 0, []string{"Created snapshot named s1 on all 2 shards"}, "snapshot", "create", "-name", "s1")

	more, script := threeMoreNodes(t)
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, script)); code != 0 {
		t.Fatalf("growing: exit %d\n%s\n%s", code, out, errOut)
	}
	runPlan(t, nodes[0], 3*time.Minute, "plan", "deploy-topology", "-name", "Grown")
	checkAdmin(t, nodes[0], 0, nil, "topology", "clone", "-current", "-name", "Split")
	checkAdmin(t, nodes[0], 0, nil, "topology", "split-partitions", "-name", "Split", "-factor", "2")
	runPlan(t, nodes[0], 2*time.Minute, "plan", "deploy-topology", "-name", "Split")
	t.Logf("snapshot list:\n%s", checkAdmin(t, nodes[0], 0, []string{"s1  ", "restore re-shards it"}, "snapshot", "list"))
	for i := range 220 {
		if _, err := c.Put(ctx, key(i), []byte("after")); err != nil {
			t.Fatalf("put %d after the growth: %v", i, err)
		}
	}
	c.Close()
	all := append(append([]*storageNode{}, nodes...), more...)
	for i, sn := range all {
		if code := sn.stop(); code != 0 {
			t.Fatalf("sn%d: exit %d after SIGTERM", i+1, code)
		}
	}

	code, out, errOut := runCairn(t, "sn", "restore", "--root", more[0].root, "--snapshot", "s1")
	t.Logf("restore on sn4 without --from: exit %d\n%s%s", code, out, errOut)
	if code != 2 || !strings.Contains(errOut, "holds no copy of snapshot s1") || !strings.Contains(errOut, "--from") {
		t.Fatalf("restore on sn4, which holds no copy: exit %d, want 2 (input to fix) and advice to use --from\n%s\n%s", code, out, errOut)
	}
	for i, sn := range all {
		args := []string{"sn", "restore", "--root", sn.root, "--snapshot", "s1"}
		if i >= 3 {
			args = append(args, "--from", nodes[0].root, "--from", nodes[1].root)
		}
		out := mustCairn(t, args...)
		if !strings.Contains(out, "re-sharded from rg") {
			t.Fatalf("restore on sn%d: want its shards re-sharded from the snapshot's:\n%s", i+1, out)
		}
		t.Logf("sn%d: %s", i+1, out)
	}
	for _, sn := range all {
		sn.start(t)
	}
	c = openStore(t, all)
	waitFor(t, time.Minute, "the restored store to serve absolute reads", func() bool {
		_, _, err := c.Get(ctx, key(0), client.WithConsistency(client.Absolute))
		return err == nil
	})
	for i := range 220 {
		rec, found, err := c.Get(ctx, key(i), client.WithConsistency(client.Absolute))
		switch {
		case err != nil:
			t.Fatalf("get %d after restore: %v", i, err)
		case i < 200 && (!found || string(rec.Value) != "before"):
			t.Errorf("key %d after restore: found=%v value=%q, want the snapshot's %q", i, found, rec.Value, "before")
		case i >= 200 && found:
			t.Errorf("key %d was written after the snapshot but survived the restore", i)
		case i < 200 && (i%4 == 0) == rec.Expiration.IsZero():
			t.Errorf("key %d after restore: expiration %v, want one iff it was written with a TTL", i, rec.Expiration)
		}
	}
	for i := range 220 {
		if _, err := c.Put(ctx, key(i), []byte("new")); err != nil {
			t.Fatalf("write %d after restore: %v", i, err)
		}
	}
	waitFor(t, time.Minute, "verify configuration to pass after the restore", func() bool {
		code, _, _ := admin(t, nodes[0], "verify", "configuration")
		return code == 0
	})
}
