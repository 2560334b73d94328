package robustness

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/test/clustertest"
)

// rejoinLogKeep is --raft-log-keep for TestWipedReplicaRejoins: small, so
// the leader's log is truncated far past what a wiped replica has.
const rejoinLogKeep = 10

// sameIDPanic is etcd raft's panic when a replica that lost its log is
// sent a commit index beyond it (a wiped replica rejoining under its old
// Raft identity).
var sameIDPanic = regexp.MustCompile(`tocommit\(\d+\) is out of range \[lastIndex\(\d+\)\]`)

// TestWipedReplicaRejoins checks docs/guarantees.md R9 on 3 nodes, one shard of 3
// replicas, --raft-log-keep 10: a follower whose data directory is deleted
// (SIGKILL, rm -r ROOT/data, restart) catches up through a snapshot, since
// the log it would need is truncated, and then serves every record,
// including those written while it caught up, to NONE_REQUIRED reads sent
// to it directly.
func TestWipedReplicaRejoins(t *testing.T) {
	seed := seed(t)
	rng := clustertest.Rand(seed, 0)
	c := clustertest.Start(t, clustertest.Options{Nodes: 3, Shards: 1, RF: 3, LogKeep: rejoinLogKeep})
	cl := c.Client(5 * time.Second)
	ctx := context.Background()
	const shard topology.ShardID = 1

	want := make(map[string]string)
	var keys []client.Key
	write := func(n int, phase string) {
		t.Helper()
		for range n {
			k := client.Key{Major: []string{"rejoin", fmt.Sprint(len(keys))}}
			v := fmt.Sprintf("%s-%d", phase, rng.Uint64())
			d := client.Durability{MasterSync: client.WriteNoSync, ReplicaAck: client.AckSimpleMajority}
			if rng.IntN(4) == 0 {
				d.MasterSync = client.Sync
			}
			if _, err := cl.Put(ctx, k, []byte(v), client.WithDurability(d)); err != nil {
				t.Fatalf("put %s: %v", keyName(k), err)
			}
			keys = append(keys, k)
			want[keyName(k)] = v
		}
	}
	write(200+rng.IntN(100), "before")

	lead := c.WaitLeader(shard, failoverTimeout)
	followers := c.Followers(shard, lead)
	f := followers[rng.IntN(len(followers))]
	st, err := c.ShardStatus(lead, shard)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d records written; leader node %d applied %d; wiping follower node %d", len(keys), lead, st.GetApplied(), f)

	c.WipeAndRestart(f)
	node := c.Node(f)
	write(50, "during") // while the wiped replica catches up

	st, err = c.ShardStatus(c.WaitLeader(shard, failoverTimeout), shard)
	if err != nil {
		t.Fatal(err)
	}
	target := st.GetApplied()
	caughtUp := clustertest.Poll(catchUpTimeout, func() bool {
		select {
		case <-node.Exited():
			return true // reported below
		default:
		}
		fs, err := c.ShardStatus(f, shard)
		return err == nil && fs.GetApplied() >= target
	})
	select {
	case <-node.Exited():
		if log := node.Log(); sameIDPanic.MatchString(log) {
			// Commit 67331fe made wiped replicas rejoin under a new Raft
			// identity; before it, this test met exactly this panic.
			t.Fatalf("wiped node %d panicked in etcd raft (%q in its log): it rejoined under its old Raft identity; wiped replicas must be readmitted (internal/node/rejoin.go)",
				f, sameIDPanic.FindString(log))
		}
		t.Fatalf("wiped node %d exited while catching up; its log is below", f)
	default:
	}
	if caughtUp != nil {
		fs, _ := c.ShardStatus(f, shard)
		t.Fatalf("wiped node %d did not apply index %d within %v (it is at %d)", f, target, catchUpTimeout, fs.GetApplied())
	}
	if !strings.Contains(node.Log(), "installing snapshot") {
		t.Errorf("wiped node %d caught up without installing a snapshot (no \"installing snapshot\" in its log); with --raft-log-keep %d it should have needed one", f, rejoinLogKeep)
	}

	none := &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}
	missing := 0
	for _, k := range keys {
		resp, _, err := rawGet(c, f, k, none, 5*time.Second)
		switch {
		case err != nil:
			t.Fatalf("NONE_REQUIRED read of %s on node %d: %v", keyName(k), f, err)
		case !resp.GetFound() || string(resp.GetRecord().GetValue()) != want[keyName(k)]:
			missing++
			if missing <= 10 {
				t.Errorf("node %d: %s is (found %v, %q), want %q", f, keyName(k), resp.GetFound(), resp.GetRecord().GetValue(), want[keyName(k)])
			}
		}
	}
	if missing > 0 {
		t.Fatalf("node %d serves %d of %d records wrong after catching up", f, missing, len(keys))
	}
	t.Logf("wiped node %d caught up to index %d and serves all %d records", f, target, len(keys))

	// The shard still works with the rejoined replica: a write is applied
	// on every replica.
	ver, err := cl.Put(ctx, keys[0], []byte("after"), client.WithDurability(client.Durability{ReplicaAck: client.AckAll}))
	if err != nil {
		t.Fatalf("put with ack ALL after the rejoin: %v", err)
	}
	resp, _, err := rawGet(c, f, keys[0], &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION, Version: ver, TimeoutMs: 5000}, 5*time.Second)
	if err != nil || string(resp.GetRecord().GetValue()) != "after" {
		t.Errorf("VERSION read on rejoined node %d: (%q, %v), want \"after\"", f, resp.GetRecord().GetValue(), err)
	}
}
