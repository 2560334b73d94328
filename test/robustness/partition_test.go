package robustness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/test/clustertest"
)

const (
	// rawTimeout is the timeout of a raw request to the cut-off leader.
	rawTimeout = time.Second
	// rawPace spaces the raw requests: once the old leader has stepped
	// down it answers at once, and the history needs no more than these.
	rawPace = 5 * time.Millisecond
)

// TestPartitionedLeader checks docs/guarantees.md R6 (and R1, R2, R10,
// R11) on 3 nodes, one shard of 3 replicas, every peer link through a
// proxy:
//
//  1. 6 client goroutines run the workload of TestFailoverUnderLoad through
//     the smart client on 8 keys;
//  2. the leader is cut off from both followers (clients still reach it).
//     Meanwhile one goroutine sends puts and one sends ABSOLUTE gets to it
//     directly with raw stubs. No put it is sent may be acknowledged: each
//     times out with its outcome unknown, or, once check-quorum makes it
//     step down, fails with not_leader. It answers no get; it steps down
//     within 3s. A blind put with replica ack NONE sent to it right after
//     the cut is acknowledged (R10);
//  3. the followers elect a new leader, and the smart client's puts are
//     acknowledged again;
//  4. the links heal, the old leader rejoins, and the load goes on;
//  5. every key is read with ABSOLUTE consistency (no acknowledged put is
//     lost, no put sent to the cut-off leader is ever read), the combined
//     history, raw requests included, is checked with porcupine, and every
//     replica ends with the same values.
func TestPartitionedLeader(t *testing.T) {
	seed := seed(t)
	rng := clustertest.Rand(seed, 0)
	c := clustertest.Start(t, clustertest.Options{Nodes: 3, Shards: 1, RF: 3, Proxies: true})
	topo := c.Topology()
	cl := c.Client(opTimeout)
	keys := keysOnShards(topo, "partition", 8)
	h := clustertest.NewHistory()
	const shard topology.ShardID = 1

	const clients = 6
	w := startWorkload(cl, h, topo, keys, clients, seed)
	defer w.Stop()
	w.waitAcked(t, 200, "before the partition")
	<-time.After(time.Duration(rng.IntN(500)) * time.Millisecond) // a random stretch of load

	old := c.WaitLeader(shard, failoverTimeout)
	cutAt := h.Now()
	c.Isolate(old)
	t.Logf("isolated node %d, the leader, at %v with %d puts acknowledged", old, time.Duration(cutAt), w.acked.Load())

	// A blind put with replica ack NONE is acknowledged after the leader's
	// own persist, so the cut-off leader acknowledges it as long as it
	// still believes it leads (check-quorum takes an election timeout,
	// 500ms here, to notice). It cannot have reached another replica.
	noneKey := client.Key{Major: []string{"partition-none", fmt.Sprint(rng.IntN(1000))}}
	noneErr := rawPut(c, old, noneKey, "none", cairnpb.ReplicaAckPolicy_REPLICA_ACK_POLICY_NONE, rawTimeout)
	switch {
	case noneErr == nil:
		t.Logf("the cut-off leader %d acknowledged a put with replica ack NONE", old)
	case errorKind(noneErr) == client.KindNotLeader:
		t.Logf("the cut-off leader %d had stepped down before the NONE put: %v", old, noneErr)
	default:
		t.Errorf("put with replica ack NONE to the cut-off leader %d: %v; want it acknowledged (or not_leader)", old, noneErr)
	}

	// Raw requests to the old leader, recorded as clients 'clients' (puts)
	// and 'clients+1' (gets).
	var rawOK, rawNotLeader, rawAnswered atomic.Int64
	stopRaw := make(chan struct{})
	var raw sync.WaitGroup
	raw.Add(2)
	go func() { // puts
		defer raw.Done()
		r := clustertest.Rand(seed, 1000)
		pace := time.NewTicker(rawPace)
		defer pace.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopRaw:
				return
			case <-pace.C:
			}
			k := keys[r.IntN(len(keys))]
			v := fmt.Sprintf("raw-%d", i)
			call := h.Now()
			err := rawPut(c, old, k, v, cairnpb.ReplicaAckPolicy_REPLICA_ACK_POLICY_SIMPLE_MAJORITY, rawTimeout)
			o := clustertest.RawWriteOutcome(err)
			h.Add(clustertest.Op{Client: clients, Kind: clustertest.Put, Key: keyName(k), Value: v, Call: call, Return: h.Now(),
				Outcome: o, Err: clustertest.ErrKind(err), Note: fmt.Sprintf("raw to cut-off node %d", old)})
			switch {
			case err == nil:
				rawOK.Add(1)
				t.Errorf("the cut-off old leader %d acknowledged put %s=%s", old, keyName(k), v)
			case errorKind(err) == client.KindNotLeader:
				rawNotLeader.Add(1)
			}
		}
	}()
	go func() { // ABSOLUTE gets
		defer raw.Done()
		r := clustertest.Rand(seed, 1001)
		abs := &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE}
		pace := time.NewTicker(rawPace)
		defer pace.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopRaw:
				return
			case <-pace.C:
			}
			k := keys[r.IntN(len(keys))]
			call := h.Now()
			resp, _, err := rawGet(c, old, k, abs, rawTimeout)
			op := clustertest.Op{Client: clients + 1, Kind: clustertest.Get, Key: keyName(k), Call: call, Return: h.Now(),
				Note: fmt.Sprintf("raw to cut-off node %d", old)}
			if err != nil {
				op.Outcome, op.Err = clustertest.Failed, clustertest.ErrKind(err)
			} else {
				// An answer from a leader that cannot reach a quorum would
				// be served without ReadIndex: porcupine judges it.
				op.Outcome, op.Found, op.Value = clustertest.OK, resp.GetFound(), string(resp.GetRecord().GetValue())
				rawAnswered.Add(1)
			}
			h.Add(op)
		}
	}()

	lead := c.WaitLeaderNot(shard, old, failoverTimeout)
	t.Logf("node %d leads shard %d, seen %v after the cut", lead, shard, time.Duration(h.Now()-cutAt).Round(time.Millisecond))
	var stepDown time.Duration
	clustertest.Eventually(t, failoverTimeout, fmt.Sprintf("cut-off node %d stepping down", old), func() bool {
		st, err := c.ShardStatus(old, shard)
		if err == nil && !st.GetIsLeader() {
			stepDown = time.Duration(h.Now() - cutAt)
			return true
		}
		return false
	})
	t.Logf("cut-off node %d no longer leads, seen %v after the cut", old, stepDown.Round(time.Millisecond))
	// Check-quorum steps it down within two election timeouts (20 ticks,
	// 1s); allow for a loaded machine.
	if limit := 3 * time.Second; stepDown > limit {
		t.Errorf("cut-off node %d stepped down %v after the cut; want within %v", old, stepDown, limit)
	}
	w.waitAcked(t, 200, "on the majority side")
	<-time.After(time.Duration(500+rng.IntN(1000)) * time.Millisecond) // a random stretch of load while cut
	if first, ok := firstAck(h, topo, keys, shard, cutAt); ok {
		t.Logf("first put acknowledged after the cut: %v after it", time.Duration(first.Return-cutAt).Round(time.Millisecond))
	}
	close(stopRaw)
	raw.Wait()

	c.Heal()
	healAt := h.Now()
	w.waitAcked(t, 200, "after the heal")
	// The old leader is the shard's preferred node: once it has caught
	// up, leadership moves back to it, under load.
	c.WaitPreferredLeaders(catchUpTimeout)
	t.Logf("leadership back on preferred node %d %v after the heal", old, time.Duration(h.Now()-healAt).Round(time.Millisecond))
	w.waitAcked(t, 100, "after leadership moved back")
	w.Stop()

	t.Logf("raw puts to the cut-off leader: %d acknowledged (must be 0), %d not_leader; raw ABSOLUTE gets it answered: %d",
		rawOK.Load(), rawNotLeader.Load(), rawAnswered.Load())
	if rawNotLeader.Load() == 0 {
		t.Errorf("no raw put to the cut-off node %d failed with not_leader: it never stepped down while cut off", old)
	}
	if n := rawAnswered.Load(); n > 0 {
		t.Errorf("the cut-off node %d answered %d ABSOLUTE gets: it cannot have confirmed its leadership", old, n)
	}
	finals := readFinals(t, cl, h, keys, clients+2)
	ops := h.Ops()
	// No put the cut-off leader took is ever applied: the new leader's log
	// replaced them all, even those whose outcome was unknown.
	for _, op := range ops {
		if op.Kind == clustertest.Get && op.Outcome == clustertest.OK && op.Found && strings.HasPrefix(op.Value, "raw-") {
			t.Errorf("a put sent to the cut-off leader was applied: %v", op)
		}
	}
	t.Logf("history: %v", h.Stats())
	clustertest.ReportFinal(t, ops, finals)
	clustertest.CheckLinearizable(t, h, checkTimeout)
	checkReplicasAgree(t, c, keys, finals)

	// The NONE put never left the old leader: the new leader's log
	// replaced it, so it is gone (guarantees allow that: "may be lost").
	if noneErr == nil {
		rec, found, err := cl.Get(context.Background(), noneKey, client.WithConsistency(client.Absolute))
		switch {
		case err != nil:
			t.Errorf("ABSOLUTE read of the NONE put's key: %v", err)
		case found:
			t.Logf("the NONE put acknowledged by the cut-off leader survived (%q)", rec.Value)
		default:
			t.Logf("the NONE put acknowledged by the cut-off leader is lost, as its guarantee allows")
		}
	}
}
