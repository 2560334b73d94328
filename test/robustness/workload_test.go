package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/test/clustertest"
)

const (
	// opTimeout bounds one operation of the workload (the client retries
	// within it).
	opTimeout = 3 * time.Second
	// progressTimeout bounds a wait for the workload to make progress.
	progressTimeout = 15 * time.Second
	// checkTimeout bounds porcupine's check; running out fails the test.
	checkTimeout = 30 * time.Second
	// finalReadTimeout bounds the retries of one final read.
	finalReadTimeout = 15 * time.Second
)

// keyName is a key's name in histories.
func keyName(k client.Key) string { return "/" + strings.Join(k.Major, "/") }

// keysOnShards returns perShard keys /<prefix>/<i> on each shard of topo.
func keysOnShards(topo *topology.Topology, prefix string, perShard int) []client.Key {
	count := make(map[topology.ShardID]int)
	var out []client.Key
	for i := 0; len(out) < perShard*len(topo.Shards); i++ {
		k := client.Key{Major: []string{prefix, strconv.Itoa(i)}}
		s := topo.ShardForKey(k.Major)
		if count[s] < perShard {
			count[s]++
			out = append(out, k)
		}
	}
	return out
}

// workload runs goroutines that put unique values (SIMPLE_MAJORITY ack,
// SYNC or WRITE_NO_SYNC at random; a quarter of them as PutMany of two
// keys) and read with ABSOLUTE consistency, half and half, on a small key
// set through the smart client, recording every operation in a History.
type workload struct {
	c        *client.Client
	h        *clustertest.History
	topo     *topology.Topology
	keys     []client.Key
	clients  int
	stop     chan struct{}
	stopOnce sync.Once // Stop may be called again (a deferred Stop after the test's own)
	wg       sync.WaitGroup
	acked    atomic.Int64 // acknowledged puts
	// replicaSync: followers persist each put with its own sync policy
	// (ReplicaSync), so SYNC puts fsync the followers' logs too.
	replicaSync bool
}

func startWorkload(c *client.Client, h *clustertest.History, topo *topology.Topology, keys []client.Key, clients int, seed uint64) *workload {
	return startWorkloadSync(c, h, topo, keys, clients, seed, false)
}

// startWorkloadSync is startWorkload with replicaSync.
func startWorkloadSync(c *client.Client, h *clustertest.History, topo *topology.Topology, keys []client.Key, clients int, seed uint64, replicaSync bool) *workload {
	w := &workload{c: c, h: h, topo: topo, keys: keys, clients: clients, stop: make(chan struct{}), replicaSync: replicaSync}
	for id := range clients {
		w.wg.Add(1)
		go w.run(id, clustertest.Rand(seed, uint64(id)+1))
	}
	return w
}

func (w *workload) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

func (w *workload) run(id int, rng *rand.Rand) {
	defer w.wg.Done()
	ctx := context.Background()
	for seq := 0; !w.stopped(); seq++ {
		k := w.keys[rng.IntN(len(w.keys))]
		note := fmt.Sprintf("shard %d", w.topo.ShardForKey(k.Major))
		if rng.IntN(2) == 0 {
			sync := client.WriteNoSync
			if rng.IntN(2) == 0 {
				sync = client.Sync
			}
			v := fmt.Sprintf("c%d-%d", id, seq)
			call := w.h.Now()
			d := client.Durability{MasterSync: sync, ReplicaAck: client.AckSimpleMajority}
			if w.replicaSync {
				d.ReplicaSync = sync
			}
			if rng.IntN(4) == 0 {
				w.putMany(id, v, d, rng)
				continue
			}
			_, err := w.c.Put(ctx, k, []byte(v), client.WithTimeout(opTimeout), client.WithDurability(d))
			o := clustertest.ClientWriteOutcome(err)
			w.h.Add(clustertest.Op{Client: id, Kind: clustertest.Put, Key: keyName(k), Value: v,
				Call: call, Return: w.h.Now(), Outcome: o, Err: clustertest.ErrKind(err), Note: note + " " + sync.String()})
			if o == clustertest.OK {
				w.acked.Add(1)
			}
			continue
		}
		call := w.h.Now()
		rec, found, err := w.c.Get(ctx, k, client.WithTimeout(opTimeout), client.WithConsistency(client.Absolute))
		op := clustertest.Op{Client: id, Kind: clustertest.Get, Key: keyName(k), Call: call, Return: w.h.Now(), Note: note}
		if err != nil {
			op.Outcome, op.Err = clustertest.Failed, clustertest.ErrKind(err)
		} else {
			op.Outcome, op.Found, op.Value = clustertest.OK, found, string(rec.Value)
		}
		w.h.Add(op)
	}
}

// putMany writes two distinct keys (maybe of two shards) in one PutMany,
// each record a put of its own in the history, with its own outcome: a
// bulk put is not atomic, and a record refused in passing (a leader
// change, a partition moving) is sent again by the client.
func (w *workload) putMany(id int, v string, d client.Durability, rng *rand.Rand) {
	i := rng.IntN(len(w.keys))
	j := (i + 1 + rng.IntN(len(w.keys)-1)) % len(w.keys)
	ks := []client.Key{w.keys[i], w.keys[j]}
	entries := make([]client.Entry, len(ks))
	for n, k := range ks {
		entries[n] = client.Entry{Key: k, Value: []byte(fmt.Sprintf("%s.%d", v, n))}
	}
	call := w.h.Now()
	res := w.c.PutMany(context.Background(), entries, 2, client.WithTimeout(opTimeout), client.WithDurability(d))
	ret := w.h.Now()
	for n, r := range res {
		k := ks[n]
		o := clustertest.ClientWriteOutcome(r.Err)
		w.h.Add(clustertest.Op{Client: id, Kind: clustertest.Put, Key: keyName(k), Value: string(entries[n].Value),
			Call: call, Return: ret, Outcome: o, Err: clustertest.ErrKind(r.Err),
			Note: fmt.Sprintf("shard %d %s put_many", w.topo.ShardForKey(k.Major), d.MasterSync)})
		if o == clustertest.OK {
			w.acked.Add(1)
		}
	}
}

// Stop ends the workload and waits for its goroutines; each finishes the
// operation it is in, which its timeout bounds.
func (w *workload) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	w.wg.Wait()
}

// waitAcked waits until n more puts than now are acknowledged.
func (w *workload) waitAcked(t *testing.T, n int64, why string) {
	t.Helper()
	target := w.acked.Load() + n
	clustertest.Eventually(t, progressTimeout, fmt.Sprintf("%d more acknowledged puts (%s)", n, why), func() bool {
		return w.acked.Load() >= target
	})
}

// firstAck returns the first acknowledged put on shard s called at or after
// since, if any.
func firstAck(h *clustertest.History, topo *topology.Topology, keys []client.Key, s topology.ShardID, since int64) (clustertest.Op, bool) {
	onShard := make(map[string]bool)
	for _, k := range keys {
		onShard[keyName(k)] = topo.ShardForKey(k.Major) == s
	}
	var first clustertest.Op
	found := false
	for _, op := range h.Ops() {
		if op.Kind == clustertest.Put && op.Outcome == clustertest.OK && onShard[op.Key] && op.Call >= since {
			if !found || op.Return < first.Return {
				first, found = op, true
			}
		}
	}
	return first, found
}

// checkHistory reads every key's final value (readFinals, as client id),
// checks that no acknowledged write is lost and that the history is
// linearizable per key, and returns the final reads and the history.
func checkHistory(t *testing.T, c *client.Client, h *clustertest.History, keys []client.Key, id int) (map[string]clustertest.Op, []clustertest.Op) {
	t.Helper()
	finals := readFinals(t, c, h, keys, id)
	ops := h.Ops()
	t.Logf("history: %v", h.Stats())
	clustertest.ReportFinal(t, ops, finals)
	clustertest.CheckLinearizable(t, h, checkTimeout)
	return finals, ops
}

// readFinals reads every key with ABSOLUTE consistency, retrying failed
// reads (reads are safe to retry) until finalReadTimeout, and records the
// successful read of each key in the history as client id.
func readFinals(t *testing.T, c *client.Client, h *clustertest.History, keys []client.Key, id int) map[string]clustertest.Op {
	t.Helper()
	finals := make(map[string]clustertest.Op)
	for _, k := range keys {
		var op clustertest.Op
		var last error
		err := clustertest.Poll(finalReadTimeout, func() bool {
			call := h.Now()
			rec, found, err := c.Get(context.Background(), k, client.WithTimeout(opTimeout), client.WithConsistency(client.Absolute))
			if err != nil {
				last = err
				return false
			}
			op = clustertest.Op{Client: id, Kind: clustertest.Get, Key: keyName(k), Call: call, Return: h.Now(),
				Outcome: clustertest.OK, Found: found, Value: string(rec.Value), Note: "final"}
			return true
		})
		if err != nil {
			t.Fatalf("final ABSOLUTE read of %s: %v; last error: %v", keyName(k), err, last)
		}
		h.Add(op)
		finals[op.Key] = op
	}
	return finals
}

// rawGet reads k from node id only, with a raw stub, at consistency c, and
// returns the answer and how long it took.
func rawGet(cl *clustertest.Cluster, id topology.NodeID, k client.Key, c *cairnpb.Consistency, timeout time.Duration) (*cairnpb.GetResponse, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+2*time.Second)
	defer cancel()
	start := time.Now()
	resp, err := cl.KV(id).Get(ctx, &cairnpb.GetRequest{
		Header: cl.Header(timeout), Key: &cairnpb.Key{Major: k.Major, Minor: k.Minor}, Consistency: c})
	return resp, time.Since(start), err
}

// rawPut writes k=v on node id only, with a raw stub, WRITE_NO_SYNC and
// replica ack ack.
func rawPut(cl *clustertest.Cluster, id topology.NodeID, k client.Key, v string, ack cairnpb.ReplicaAckPolicy, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+2*time.Second)
	defer cancel()
	_, err := cl.KV(id).Put(ctx, &cairnpb.PutRequest{
		Header:     cl.Header(timeout),
		Op:         &cairnpb.PutOp{Key: &cairnpb.Key{Major: k.Major, Minor: k.Minor}, Value: []byte(v)},
		Durability: &cairnpb.Durability{MasterSync: cairnpb.SyncPolicy_SYNC_POLICY_WRITE_NO_SYNC, ReplicaAck: ack},
	})
	return err
}

// errorKind returns the ErrorDetail kind of a raw gRPC error ("" if none).
func errorKind(err error) string { return clustertest.Detail(err).GetKind() }

// code returns the gRPC code of a raw error.
func code(err error) codes.Code { return status.Code(err) }
