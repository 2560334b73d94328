package robustness

import (
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/test/clustertest"
)

const (
	// failoverTimeout bounds the wait for a new leader after a fault.
	failoverTimeout = 10 * time.Second
	// catchUpTimeout bounds the wait for a replica to catch up.
	catchUpTimeout = 15 * time.Second
)

// TestFailoverUnderLoad checks, on 3 nodes with 2 shards of 3 replicas,
// that SIGKILLing the leader of shard 1 under load loses no acknowledged
// write and keeps the history linearizable (docs/guarantees.md R1, R2, R11):
//
//  1. 8 client goroutines put unique values (SIMPLE_MAJORITY; SYNC or
//     WRITE_NO_SYNC at random) and read with ABSOLUTE consistency on 12
//     keys, 6 per shard;
//  2. after 200 acknowledged puts and up to 1s more of load (random), the
//     leader of shard 1 is SIGKILLed; the load goes on until a new leader is elected and for 3s
//     more, and must acknowledge puts on shard 1 again;
//  3. every key is read with ABSOLUTE consistency: each shows its latest
//     acknowledged put (or a later one whose outcome is unknown), and the
//     whole history is checked with porcupine;
//  4. the killed node is restarted on its data; once it has caught up,
//     every replica holds the values the final reads saw.
//
// It reports the operations, the failures by kind, the unknown outcomes and
// the failover time: from the kill to the first acknowledged put on shard
// 1 that was called after it.
func TestFailoverUnderLoad(t *testing.T) {
	seed := seed(t)
	rng := clustertest.Rand(seed, 0)
	c := clustertest.Start(t, clustertest.Options{Nodes: 3, Shards: 2, RF: 3})
	topo := c.Topology()
	cl := c.Client(opTimeout)
	keys := keysOnShards(topo, "failover", 6)
	h := clustertest.NewHistory()

	const clients = 8
	w := startWorkload(cl, h, topo, keys, clients, seed)
	defer w.Stop()
	// Mid-load: after some acknowledged puts and a random stretch of load.
	w.waitAcked(t, 200, "before the kill")
	<-time.After(time.Duration(rng.IntN(1000)) * time.Millisecond)

	const shard = 1
	victim := c.WaitLeader(shard, failoverTimeout)
	killAt := h.Now()
	c.Kill(victim)
	t.Logf("SIGKILLed node %d, the leader of shard %d, at %v with %d puts acknowledged", victim, shard, time.Duration(killAt), w.acked.Load())
	lead := c.WaitLeaderNot(shard, victim, failoverTimeout)
	electedBy := time.Duration(h.Now() - killAt)
	t.Logf("node %d leads shard %d, seen %v after the kill", lead, shard, electedBy.Round(time.Millisecond))

	// Keep the load going for 3s after the new leader appeared: the
	// load's length, not a synchronisation.
	<-time.After(3 * time.Second)
	w.Stop()

	first, ok := firstAck(h, topo, keys, shard, killAt)
	if !ok {
		t.Errorf("no put on shard %d was acknowledged after the kill", shard)
	} else {
		t.Logf("failover time (kill -> first acknowledged put on shard %d called after it): %v",
			shard, time.Duration(first.Return-killAt).Round(time.Millisecond))
	}

	finals, _ := checkHistory(t, cl, h, keys, clients)

	// The killed node comes back with its data, catches up, and then every
	// replica holds what the final reads saw.
	c.Restart(victim)
	checkReplicasAgree(t, c, keys, finals)
}

// checkReplicasAgree waits until every node has applied, on each shard,
// what the shard's leader has applied, then reads every key from every
// replica with NONE_REQUIRED consistency and compares with finals. No
// writes may run meanwhile.
func checkReplicasAgree(t *testing.T, c *clustertest.Cluster, keys []client.Key, finals map[string]clustertest.Op) {
	t.Helper()
	topo := c.Topology()
	for _, s := range topo.Shards {
		lead := c.WaitLeader(s.ID, failoverTimeout)
		st, err := c.ShardStatus(lead, s.ID)
		if err != nil {
			t.Fatalf("shard %d leader %d: %v", s.ID, lead, err)
		}
		for _, n := range s.Replicas {
			c.WaitApplied(n, s.ID, st.GetApplied(), catchUpTimeout)
		}
	}
	none := &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}
	for _, k := range keys {
		want := finals[keyName(k)]
		sh, _ := topo.Shard(topo.ShardForKey(k.Major))
		for _, n := range sh.Replicas {
			resp, _, err := rawGet(c, n, k, none, opTimeout)
			if err != nil {
				t.Errorf("node %d: NONE_REQUIRED read of %s: %v", n, keyName(k), err)
				continue
			}
			if resp.GetFound() != want.Found || string(resp.GetRecord().GetValue()) != want.Value {
				t.Errorf("node %d: %s is (found %v, %q), the final ABSOLUTE read saw (found %v, %q)",
					n, keyName(k), resp.GetFound(), resp.GetRecord().GetValue(), want.Found, want.Value)
			}
		}
	}
	if !t.Failed() {
		t.Logf("every replica holds the final value of each of %d keys", len(keys))
	}
}
