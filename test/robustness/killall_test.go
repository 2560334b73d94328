package robustness

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/test/clustertest"
)

// TestKillAllNoSync checks docs/guarantees.md R7 on 3 nodes, 2 shards of 3
// replicas: puts acknowledged with NO_SYNC on the leader and the replicas
// (SIMPLE_MAJORITY) survive SIGKILL of every node at once, because a
// replica writes its Raft log at least to the OS before it acknowledges an
// entry, whatever the write's sync policy.
func TestKillAllNoSync(t *testing.T) {
	seed := seed(t)
	rng := clustertest.Rand(seed, 0)
	c := clustertest.Start(t, clustertest.Options{Nodes: 3, Shards: 2, RF: 3})
	cl := c.Client(5 * time.Second)
	noSync := client.Durability{MasterSync: client.NoSync, ReplicaSync: client.NoSync, ReplicaAck: client.AckSimpleMajority}

	// 4 writers, so entries are batched as under load.
	n := 200 + rng.IntN(200)
	keys := make([]client.Key, n)
	want := make([]string, n)
	for i := range n {
		keys[i] = client.Key{Major: []string{"killall", fmt.Sprint(i)}}
		want[i] = fmt.Sprintf("v%d-%d", i, rng.Uint64())
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				if _, err := cl.Put(context.Background(), keys[i], []byte(want[i]), client.WithDurability(noSync)); err != nil {
					errs <- fmt.Errorf("put %s: %w", keyName(keys[i]), err)
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

	for _, nd := range c.Nodes() {
		c.Kill(nd.ID)
	}
	t.Logf("%d NO_SYNC puts acknowledged; SIGKILLed every node", n)
	for _, nd := range c.Nodes() {
		c.Restart(nd.ID)
	}
	for _, s := range c.Topology().Shards {
		c.WaitLeader(s.ID, failoverTimeout)
	}

	cl2 := c.Client(5 * time.Second)
	lost := 0
	for i, k := range keys {
		rec, found, err := cl2.Get(context.Background(), k, client.WithConsistency(client.Absolute))
		switch {
		case err != nil:
			t.Fatalf("ABSOLUTE read of %s after the restart: %v", keyName(k), err)
		case !found || string(rec.Value) != want[i]:
			lost++
			if lost <= 10 {
				t.Errorf("%s is (found %v, %q) after the restart, want %q", keyName(k), found, rec.Value, want[i])
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged NO_SYNC puts lost when every node was SIGKILLed", lost, n)
	}
	t.Logf("all %d acknowledged NO_SYNC puts survived SIGKILL of every node", n)
}
