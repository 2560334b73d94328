package migrate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cairndb/cairn/internal/transport/transportpb"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized tests (0: from the clock)")

// net delivers Raft messages between the replicas of every shard in
// process (a fake for this package's tests only).
type net struct {
	mu   sync.Mutex
	reps map[[2]uint64]*replica.Raft // (shard, node)
}

type sender struct {
	n    *net
	node uint64
}

func (s sender) Send(shard uint64, msgs []*raftpb.Message) {
	for _, m := range msgs {
		s.n.mu.Lock()
		r := s.n.reps[[2]uint64{shard, m.GetTo()}]
		s.n.mu.Unlock()
		if r != nil {
			r.Step(proto.Clone(m).(*raftpb.Message))
		}
	}
}

func (s sender) SendNotice(uint64, uint64, *transportpb.CommitNotice) {}

// cluster is three engines, each hosting a replica of shards 1 and 2.
type cluster struct {
	t    *testing.T
	net  *net
	reps map[uint64][]*replica.Raft // by shard
}

const nParts = 8

func newCluster(t *testing.T) *cluster {
	c := &cluster{t: t, net: &net{reps: map[[2]uint64]*replica.Raft{}}, reps: map[uint64][]*replica.Raft{}}
	for node := uint64(1); node <= 3; node++ {
		sc := storage.DefaultConfig(t.TempDir())
		sc.CacheBytes, sc.MinFreeBytes = 8<<20, 0
		e, err := storage.Open(sc)
		if err != nil {
			t.Fatal(err)
		}
		// Registered before the replicas' Close, so it runs after them: an
		// engine closed under a running replica fails its next write, and
		// the engine's default Fatal exits the test binary.
		t.Cleanup(func() { e.Close() })
		meta, _ := e.Init("test", nParts)
		for shard := uint64(1); shard <= 2; shard++ {
			r, err := replica.OpenRaft(e, meta, replica.RaftConfig{
				Shard: shard, Node: node, Voters: []uint64{1, 2, 3}, Origin: 0x100 * shard, Preferred: 1,
				Spans: storage.ShardSpans(shard), TickInterval: 10 * time.Millisecond, LogKeep: 50,
				Sender: sender{c.net, node},
				Fatal:  func(err error) { t.Errorf("fatal on node %d: %v", node, err) },
			})
			if err != nil {
				t.Fatal(err)
			}
			c.net.mu.Lock()
			c.net.reps[[2]uint64{shard, node}] = r
			c.net.mu.Unlock()
			c.reps[shard] = append(c.reps[shard], r)
			t.Cleanup(r.Close)
		}
	}
	// Node 1 is every shard's preferred leader: wait until it leads, so
	// that no leadership transfer drops a test's first proposals.
	waitFor(t, func() bool { return c.reps[1][0].IsLeader() && c.reps[2][0].IsLeader() })
	return c
}

// leader waits for shard's leader.
func (c *cluster) leader(shard uint64) *replica.Raft {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range c.reps[shard] {
			if r.IsLeader() {
				return r
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Fatalf("no leader for shard %d", shard)
	return nil
}

// propose sends cmd to shard's leader, retrying while leadership moves.
func (c *cluster) propose(ctx context.Context, shard uint64, cmd *commandpb.Command) (storage.Result, error) {
	for {
		res, err := c.leader(shard).Propose(ctx, cmd, storage.Sync)
		if errors.Is(err, replica.ErrNotLeader) || errors.Is(err, replica.ErrDropped) {
			continue
		}
		return res, err
	}
}

// target is a Target over the in-process shard 2.
type target struct{ c *cluster }

func (t target) Propose(ctx context.Context, cmd *commandpb.Command) (storage.Result, error) {
	return t.c.propose(ctx, 2, cmd)
}

func (t target) Table(ctx context.Context) (*storage.PartitionTable, error) {
	r := t.c.leader(2)
	if err := r.ReadReady(ctx, replica.Consistency{Kind: replica.Absolute}); err != nil {
		return nil, err
	}
	return r.Table(), nil
}

func put(key, value string) *commandpb.Command {
	k, _ := keys.Parse(key)
	return &commandpb.Command{NowMs: time.Now().UnixMilli(), Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{
		{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: &cairnpb.Key{Major: k.Major, Minor: k.Minor}, Value: []byte(value)}}}}}}}
}

// TestMoveUnderLoad moves partitions between two shards whose replicas
// share three engines, while writers keep putting keys of every partition
// to whichever shard serves it (the one that refuses says so, and the
// writer goes to the other, as a client does after a refresh). Every
// acknowledged write is read back, with its version, from the shard that
// ends with its partition, and the source no longer holds the moved keys.
// Seeded: -seed.
func TestMoveUnderLoad(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./internal/migrate -run TestMoveUnderLoad -seed=%d)", seed, seed)
	c := newCluster(t)
	ctx := context.Background()
	all := []uint32{0, 1, 2, 3, 4, 5, 6, 7}
	if _, err := c.propose(ctx, 1, &commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: nParts, Partitions: all}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.propose(ctx, 2, &commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: nParts}}}); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		acked   = map[string]string{} // key -> value of the last acknowledged put
		refused atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			shard := uint64(1)
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("/u%d/-/w%d", rng.IntN(300), w)
				val := fmt.Sprintf("v%d-%d", w, i)
				res, err := c.propose(ctx, shard, put(key, val))
				if err == nil {
					err = res.Err
				}
				switch {
				case errors.Is(err, storage.ErrNotServed) || errors.Is(err, storage.ErrMoving):
					refused.Add(1)
					shard = 3 - shard // the other shard: what a refreshed topology says
					i--
					continue
				case err != nil:
					t.Errorf("put %s: %v", key, err)
					return
				}
				mu.Lock()
				acked[key] = val
				mu.Unlock()
			}
		}()
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) > 200 })
	moves := []uint32{2, 5, 7}
	for _, p := range moves {
		src := c.leader(1)
		err := Run(ctx, Move{Partition: p, From: 1, To: 2}, src, target{c}, Config{ChunkBytes: 4 << 10, HandoffLag: 8})
		if err != nil {
			t.Fatalf("move of partition %d: %v", p, err)
		}
		t.Logf("moved partition %d", p)
	}
	stop.Store(true)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	moved := map[uint32]bool{2: true, 5: true, 7: true}
	for key, val := range acked {
		k, _ := keys.Parse(key)
		p := uint32(keys.PartitionOf(keys.Hash(k.Major), nParts))
		owner, other := uint64(1), uint64(2)
		if moved[p] {
			owner, other = 2, 1
		}
		for _, r := range c.reps[owner] {
			waitFor(t, func() bool { return r.AppliedIndex() >= c.leader(owner).AppliedIndex() })
			rec, ok, err := r.Engine().GetIn(owner, k, time.Now().UnixMilli())
			if err != nil || !ok || string(rec.Value) != val {
				t.Fatalf("%s on shard %d (node replica): %q, %v, %v; want the acknowledged %q", key, owner, rec.Value, ok, err, val)
			}
		}
		if _, ok, _ := c.reps[other][0].Engine().GetIn(other, k, time.Now().UnixMilli()); ok && moved[p] {
			t.Fatalf("%s is still on the source shard after the drop", key)
		}
	}
	t.Logf("summary: acked keys=%d, moves=%d, refused (then sent to the other shard)=%d, lost=0", len(acked), len(moves), refused.Load())
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRunResumesAfterAStopAtEachPhase: a move stopped at each phase a
// fault test strikes at (Config.Failpoint: mid-copy, before the Transfer,
// between the Transfer and the Activate) is finished by a second Run, and
// the target ends with every record; the phases come in order.
func TestRunResumesAfterAStopAtEachPhase(t *testing.T) {
	for i, phase := range []string{"copy", "handoff", "activate"} {
		t.Run(phase, func(t *testing.T) {
			c := newCluster(t)
			ctx := context.Background()
			all := []uint32{0, 1, 2, 3, 4, 5, 6, 7}
			if _, err := c.propose(ctx, 1, &commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: nParts, Partitions: all}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.propose(ctx, 2, &commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: nParts}}}); err != nil {
				t.Fatal(err)
			}
			const p = 3
			var want []string
			for j := 0; len(want) < 20; j++ {
				key := fmt.Sprintf("/k%d/-/v", j)
				k, _ := keys.Parse(key)
				if uint32(keys.PartitionOf(keys.Hash(k.Major), nParts)) != p {
					continue
				}
				if res, err := c.propose(ctx, 1, put(key, "v"+key)); err != nil || res.Err != nil {
					t.Fatalf("put %s: %v %v", key, err, res.Err)
				}
				want = append(want, key)
			}
			var seen []string
			stop := errors.New("stopped by the failpoint")
			cfg := Config{ChunkBytes: 256, Failpoint: func(_ context.Context, ph string) error {
				seen = append(seen, ph)
				if ph == phase {
					return stop
				}
				return nil
			}}
			mv := Move{Partition: p, From: 1, To: 2}
			if err := Run(ctx, mv, c.leader(1), target{c}, cfg); !errors.Is(err, stop) {
				t.Fatalf("Run with a stop at %s: %v", phase, err)
			}
			if order := []string{"copy", "handoff", "activate"}[:i+1]; fmt.Sprint(seen) != fmt.Sprint(order) {
				t.Errorf("phases %v, want %v", seen, order)
			}
			if err := Run(ctx, mv, c.leader(1), target{c}, Config{ChunkBytes: 256}); err != nil {
				t.Fatalf("Run after the stop at %s: %v", phase, err)
			}
			lead := c.leader(2)
			for _, key := range want {
				k, _ := keys.Parse(key)
				rec, ok, err := lead.Engine().GetIn(2, k, time.Now().UnixMilli())
				if err != nil || !ok || string(rec.Value) != "v"+key {
					t.Errorf("%s on the target: %q, %v, %v", key, rec.Value, ok, err)
				}
			}
			if e := lead.Table().Parts[p]; e == nil || e.State != storage.PartOwned {
				t.Errorf("partition %d on the target: %+v, want OWNED", p, e)
			}
		})
	}
}
