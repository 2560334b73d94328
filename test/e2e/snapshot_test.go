package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
)

// deployWhitePaper starts three storage nodes and runs the committed
// white-paper script against them.
func deployWhitePaper(t *testing.T) []*storageNode {
	t.Helper()
	nodes := initNodes(t, 3)
	for _, sn := range nodes {
		sn.start(t)
	}
	before, deploy, after := whitePaperScript(t, nodes)
	lines := append(append(before, deploy...), after...)
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, lines)); code != 0 {
		t.Fatalf("deploy script: exit %d\n%s\n%s", code, out, errOut)
	}
	return nodes
}

func openStore(t *testing.T, nodes []*storageNode) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	var hosts []string
	for _, sn := range nodes {
		hosts = append(hosts, sn.addr())
	}
	c, err := client.Open(ctx, client.Config{Hosts: hosts, Store: "kvstore"})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func snapKey(i int) client.Key { return client.MustParseKey(fmt.Sprintf("/snap/k%03d/-/v", i)) }

// TestSnapshotRestore takes a snapshot with the admin, changes the data,
// restores every node offline with cairn sn restore and checks that the
// store is back at the snapshot, and writable.
func TestSnapshotRestore(t *testing.T) {
	nodes := deployWhitePaper(t)
	c := openStore(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 100 {
		if _, err := c.Put(ctx, snapKey(i), []byte("before")); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	code, out, errOut := admin(t, nodes[1], "snapshot", "create", "-name", "s1")
	if code != 0 || !strings.Contains(out, "on all 2 shards") {
		t.Fatalf("snapshot create: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, out, _ := admin(t, nodes[1], "snapshot", "list"); !strings.Contains(out, "s1") {
		t.Fatalf("snapshot list lacks s1:\n%s", out)
	}
	for i := range 50 {
		if _, err := c.Put(ctx, snapKey(i), []byte("after")); err != nil {
			t.Fatalf("overwrite %d: %v", i, err)
		}
	}
	for i := 100; i < 120; i++ {
		if _, err := c.Put(ctx, snapKey(i), []byte("after")); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	c.Close()

	for _, sn := range nodes {
		if code := sn.stop(); code != 0 {
			t.Fatalf("sn %d: exit %d after SIGTERM", sn.port, code)
		}
	}
	for i, sn := range nodes {
		args := []string{"sn", "restore", "--root", sn.root, "--snapshot", "s1"}
		for j, other := range nodes {
			if j != i {
				args = append(args, "--from", other.root)
			}
		}
		out := mustCairn(t, args...)
		if strings.Count(out, "restored rg") != 2 {
			t.Fatalf("restore on sn%d restored %d shards, want 2:\n%s", i+1, strings.Count(out, "restored rg"), out)
		}
	}
	for _, sn := range nodes {
		sn.start(t)
	}
	c = openStore(t, nodes)
	waitFor(t, 30*time.Second, "the restored store to serve absolute reads", func() bool {
		_, _, err := c.Get(ctx, snapKey(0), client.WithConsistency(client.Absolute))
		return err == nil
	})
	for i := range 120 {
		rec, found, err := c.Get(ctx, snapKey(i), client.WithConsistency(client.Absolute))
		switch {
		case err != nil:
			t.Fatalf("get %d after restore: %v", i, err)
		case i < 100 && (!found || string(rec.Value) != "before"):
			t.Errorf("key %d after restore: found=%v value=%q, want the snapshot's %q", i, found, rec.Value, "before")
		case i >= 100 && found:
			t.Errorf("key %d was written after the snapshot but survived the restore", i)
		}
	}
	if _, err := c.Put(ctx, snapKey(0), []byte("new")); err != nil {
		t.Fatalf("write after restore: %v", err)
	}
	if code, out, _ := admin(t, nodes[0], "verify", "configuration"); code != 0 {
		t.Errorf("verify configuration after restore: exit %d\n%s", code, out)
	}
}
