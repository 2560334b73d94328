package robustness

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/topology"
	"github.com/cairndb/cairn/test/clustertest"
)

// moveFaultNames are TestMoveFaults' scenarios, in the order "all" runs them.
var moveFaultNames = []string{"kill-source", "kill-target", "kill-admin", "isolate-source", "cut-link", "cut-admin"}

var moveFault = flag.String("move.fault", "random",
	"TestMoveFaults: the fault to inject ("+strings.Join(moveFaultNames, ", ")+"), all of them, or random (one, picked by the seed; make chaos runs all)")

var movePhase = flag.String("move.phase", "",
	"TestMoveFaults: strike at this phase of the mover (copy, handoff or activate) instead of the scenario's own")

const (
	// movePause is how long the mover pauses at the phase a scenario
	// strikes at (CAIRN_FAILPOINT_MOVE_PAUSE): the fault comes during it.
	// isolate-source pauses for 150ms-1.15s (from the seed) instead.
	movePause = 3 * time.Second
	// planTimeout bounds the wait for the deploy plan after the fault.
	planTimeout = 90 * time.Second
	// unservedLimit bounds how long a moving partition may be served by
	// no shard: a failover and the mover's retry.
	unservedLimit = 20 * time.Second
)

// TestMoveFaults is acceptance 4 of issue 10 (docs/guarantees.md M8-M16):
// faults during online partition moves. Each scenario deploys 3 nodes with
// 3 shards of 3 replicas and an admin on every node (through cairn sn init,
// sn start and the admin shell, every peer link through a proxy). Of the
// two shards that the admin leader's node does not lead, a and b, one
// partition moves from a to b and one from b to a, at once (topology clone
// -current, move-partition twice, plan deploy-topology; a swap keeps the
// even spread the placement rules ask for), while 6 clients run the
// workload of TestFailoverUnderLoad on 11 keys (4 and 3 in the moving
// partitions, 2 elsewhere on each shard) and two more race pairs of
// PutIfAbsent on fresh keys of the moving partitions. The fault strikes
// while a mover is paused (CAIRN_FAILPOINT_MOVE_PAUSE, once in the store) at
// the scenario's phase (-move.phase overrides it):
//
//   - kill-source: SIGKILL the moving partition's source leader mid-copy;
//   - kill-target: SIGKILL its target's leader once the source's Transfer
//     is committed, before the target is activated;
//   - kill-admin: SIGKILL the admin leader mid-copy (the plan must resume
//     on the new admin leader: show events says so);
//   - isolate-source: cut the source leader off from its peers with the
//     proxies just before it proposes the Transfer, after a pause shorter
//     or longer than its step-down takes (the KVSTORE-2276 case); the
//     links heal once the plan has ended;
//   - cut-link: cut the links between the source leader's node and the
//     target leader's node, both ways, mid-copy, for the pause and then
//     0.5-4s more (from the seed): the Raft traffic between them and the
//     mover's calls to the target stop, while each keeps its shards'
//     majorities through the third node. The plan must not end while the
//     cut lasts, and must end once it heals;
//   - cut-admin: the same between the admin leader's node and the source
//     leader's node: the admin's call that runs the move breaks, and it
//     cannot call again until the cut heals.
//
// The plan must succeed with no operator's help. Meanwhile a poller reads
// both shards' partition tables on their leaders, each move's target
// first, then its source (each a linearizable read), and fails the test if
// the source still serves a partition the target already owned; it also
// measures the longest time a moving partition was served by neither. No
// pair of PutIfAbsent may both be done. At the end every key is read
// ABSOLUTE (no acknowledged write lost), the history is checked with
// porcupine per key (unknown outcomes may or may not have taken effect),
// the moved partitions are OWNED by their targets and gone from their
// sources, every node runs the final topology (a killed one gets it from
// the admin once restarted), and every replica holds the final values.
//
// -move.fault picks the scenario: random (the default, as in make test)
// runs one chosen by the seed, all runs the four (make chaos).
func TestMoveFaults(t *testing.T) {
	runScenarios(t, "TestMoveFaults", "move.fault", moveFaultNames, *moveFault, 77, runMoveFault)
}

func runMoveFault(t *testing.T, fault string, seed uint64) {
	rng := clustertest.Rand(seed, 0)
	start := time.Now()
	phase := map[string]string{"kill-source": "copy", "kill-target": "activate", "kill-admin": "copy", "isolate-source": "handoff", "cut-link": "copy", "cut-admin": "copy"}[fault]
	if *movePhase != "" {
		phase = *movePhase
	}
	pause := movePause
	if fault == "isolate-source" {
		// Often shorter than the election timeout (500ms), so that the cut-off
		// leader still believes it leads when it proposes the Transfer;
		// sometimes longer, so that it has stepped down by then.
		pause = time.Duration(150+rng.IntN(1000)) * time.Millisecond
	}
	c := clustertest.Start(t, clustertest.Options{Nodes: 3, Shards: 3, RF: 3, Partitions: 30, Proxies: true, Deployed: true,
		Env: []string{fmt.Sprintf("CAIRN_FAILPOINT_MOVE_PAUSE=%s=%v,once=%s", phase, pause, filepath.Join(t.TempDir(), "paused"))}})
	topo := c.Topology()
	t.Logf("store deployed in %v: %d shards, %d partitions", time.Since(start).Round(time.Millisecond), len(topo.Shards), topo.Partitions)

	// The source and the target are the two shards the admin leader's node
	// does not lead, so that each fault strikes one role only.
	adminLead := adminLeader(t, c)
	var pair []topology.ShardID
	for _, s := range topo.Shards {
		if lead := c.WaitLeader(s.ID, failoverTimeout); lead != adminLead {
			pair = append(pair, s.ID)
		}
	}
	if len(pair) < 2 {
		t.Fatalf("the admin leader sn%d leads %d of the 3 shards; want two shards led elsewhere", adminLead, 3-len(pair))
	}
	if rng.IntN(2) == 0 {
		pair[0], pair[1] = pair[1], pair[0]
	}
	a, b := pair[0], pair[1]
	// One partition moves from a to b and one from b to a at once, so that
	// both shards keep the 10 partitions each that the placement rules
	// want (deploy-topology refuses an uneven spread).
	pa, pb := topo.PartitionsOf(a), topo.PartitionsOf(b)
	moves := []partMove{
		{p: uint32(pa[rng.IntN(len(pa))]), from: a, to: b},
		{p: uint32(pb[rng.IntN(len(pb))]), from: b, to: a},
	}
	t.Logf("admin leader sn%d; moving partition %d from %s (led by sn%d) to %s (led by sn%d), and partition %d back", adminLead,
		moves[0].p, topology.ShardName(a), c.WaitLeader(a, failoverTimeout), topology.ShardName(b), c.WaitLeader(b, failoverTimeout), moves[1].p)

	// Keys: 4 in the first moving partition, 3 in the second, 2 in other
	// partitions of each shard.
	wkeys := keysIn(topo, "move", map[string]int{
		fmt.Sprintf("p%d", moves[0].p): 4, fmt.Sprintf("p%d", moves[1].p): 3, "a": 2, "b": 2,
	}, []uint32{moves[0].p, moves[1].p}, a, b)
	h := clustertest.NewHistory()
	cl := c.Client(opTimeout)
	const clients = 6
	w := startWorkload(cl, h, topo, wkeys, clients, seed)
	defer w.Stop()
	w.waitAcked(t, 150, "before the move")

	poll := startTablePoller(c, a, b, moves)
	defer poll.stop()
	race := startConflictRacer(cl, topo, []uint32{moves[0].p, moves[1].p})
	defer race.stop()

	script := []string{"topology clone -current -name Moved"}
	for _, mv := range moves {
		script = append(script, fmt.Sprintf("topology move-partition -name Moved -partition %d -shard %s", mv.p, topology.ShardName(mv.to)))
	}
	for _, line := range script {
		if _, err := c.Admin(failoverTimeout, strings.Fields(line)...); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	out, err := c.Admin(failoverTimeout, "-json", "plan", "deploy-topology", "-name", "Moved")
	var started struct {
		PlanID int `json:"plan_id"`
	}
	if err != nil || json.Unmarshal([]byte(out), &started) != nil || started.PlanID == 0 {
		t.Fatalf("plan deploy-topology: %v\n%s", err, out)
	}
	planStart := time.Now()

	// Strike while the mover that got there first is paused at the phase
	// (the first of all the nodes' movers, once).
	var paused topology.NodeID
	var struck partMove
	pausedRE := regexp.MustCompile(`msg="failpoint: move paused"[^\n]* phase=` + phase + ` partition=(\d+)`)
	clustertest.Eventually(t, 30*time.Second, "a mover pausing at "+phase, func() bool {
		for _, n := range c.Nodes() {
			if m := pausedRE.FindStringSubmatch(n.RunLog()); m != nil {
				p, _ := strconv.ParseUint(m[1], 10, 32)
				for _, mv := range moves {
					if mv.p == uint32(p) {
						paused, struck = n.ID, mv
						return true
					}
				}
			}
		}
		return false
	})
	faultAt := h.Now()
	var victim topology.NodeID
	switch fault {
	case "kill-source":
		victim = paused
		c.Kill(victim)
	case "kill-target":
		victim = c.WaitLeader(struck.to, failoverTimeout)
		c.Kill(victim)
	case "kill-admin":
		victim = adminLeader(t, c)
		c.Kill(victim)
	case "isolate-source":
		victim = paused
		c.Isolate(victim)
	case "cut-link":
		victim = paused
		cutLink(t, c, rng, victim, c.WaitLeader(struck.to, failoverTimeout), started.PlanID, pause, "the mover's calls to the target")
	case "cut-admin":
		victim = paused
		cutLink(t, c, rng, victim, adminLeader(t, c), started.PlanID, pause, "the admin's calls to the source")
	}
	t.Logf("%s: the mover of partition %d (%s -> %s) on sn%d paused at %s %v after the plan started; struck sn%d at %v with %d puts acknowledged",
		fault, struck.p, topology.ShardName(struck.from), topology.ShardName(struck.to), paused, phase,
		time.Since(planStart).Round(time.Millisecond), victim, time.Duration(faultAt), w.acked.Load())

	state := waitPlan(t, c, started.PlanID, planTimeout)
	t.Logf("plan %d %s %v after the fault", started.PlanID, state, time.Duration(h.Now()-faultAt).Round(time.Millisecond))
	if state != "SUCCEEDED" {
		out, _ := c.Admin(failoverTimeout, "show", "plan", "-id", strconv.Itoa(started.PlanID))
		t.Fatalf("plan %d ended %s after %s:\n%s", started.PlanID, state, fault, out)
	}
	w.waitAcked(t, 100, "after the move")
	switch fault {
	case "isolate-source":
		c.Heal()
	case "cut-link", "cut-admin": // healed already
	default:
		c.Restart(victim)
	}
	w.waitAcked(t, 100, "after the node came back")
	w.Stop()
	poll.stop()
	race.stop()

	finals, ops := checkHistory(t, cl, h, wkeys, clients)
	poll.report(t)
	race.check(t)

	// The moved partitions are their targets', in the topology and in both
	// shards' tables (the sources dropped them).
	final := c.ShownTopology()
	tables := map[topology.ShardID]*clustertest.PartTable{}
	clustertest.Eventually(t, failoverTimeout, "both shards' tables", func() bool {
		for _, s := range []topology.ShardID{a, b} {
			if tb, _, err := c.LeaderTable(s); err == nil && tb != nil {
				tables[s] = tb
			}
		}
		return len(tables) == 2
	})
	for _, mv := range moves {
		if got := final.PartitionShard[mv.p]; got != mv.to {
			t.Errorf("partition %d is on %s in the deployed topology, want %s", mv.p, topology.ShardName(got), topology.ShardName(mv.to))
		}
		if e, ok := tables[mv.to].Parts[mv.p]; !ok || e.State != clustertest.PartOwned {
			t.Errorf("partition %d in %s's table: %+v, want OWNED", mv.p, topology.ShardName(mv.to), e)
		}
		if e, ok := tables[mv.from].Parts[mv.p]; ok {
			t.Errorf("partition %d is still in %s's table (%+v): the source did not drop it", mv.p, topology.ShardName(mv.from), e)
		}
	}
	// A node that was down when a topology was published gets it at the
	// admin leader's next poll of the nodes.
	for _, n := range c.Nodes() {
		clustertest.Eventually(t, catchUpTimeout, fmt.Sprintf("sn%d running topology %d", n.ID, final.Seq), func() bool {
			seq, err := c.TopologySeq(n.ID)
			return err == nil && seq >= final.Seq
		})
	}
	checkReplicasAgree(t, c, wkeys, finals)
	if fault == "kill-admin" {
		checkPlanResumed(t, c, started.PlanID)
	}
	logTrace(t, c, moveLogRE, "the moves")
	t.Logf("summary: %s: %d ops, %d puts acknowledged, lost 0, linearizable; table samples %d, served by two shards 0, longest unserved %v; took %v",
		fault, len(ops), w.acked.Load(), poll.samples(), poll.longestGap().Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// cutLink cuts the links between the paused mover's node src and node
// dst for the mover's pause and 0.5-4s more (the fault's length, from the
// seed: not a wait for anything), checks that plan id still runs then
// (what moves it, calls, cannot cross the cut), and heals.
func cutLink(t *testing.T, c *clustertest.Cluster, rng *rand.Rand, src, dst topology.NodeID, plan int, pause time.Duration, calls string) {
	t.Helper()
	if src == dst {
		t.Fatalf("sn%d is on both sides of the cut: no link to cut (%s)", src, calls)
	}
	c.CutBetween(src, dst)
	hold := pause + time.Duration(500+rng.IntN(3500))*time.Millisecond
	t.Logf("sn%d and sn%d cut off from each other for %v", src, dst, hold.Round(time.Millisecond))
	time.Sleep(hold)
	state := planState(t, c, plan)
	c.Heal()
	switch state {
	case "RUNNING":
	case "":
		t.Fatalf("show plan -id %d had no answer while sn%d and sn%d could not reach each other", plan, src, dst)
	default:
		t.Fatalf("plan %d ended %s while sn%d and sn%d could not reach each other: %s did not go through the cut link", plan, state, src, dst, calls)
	}
}

// moveLogRE matches the node log lines that trace the moves.
var moveLogRE = regexp.MustCompile(`(?m)^.*(msg="(moving a partition|partition moved|partition move stopped|failpoint: move paused|plan task failed)"|=== clustertest: (SIGKILL|isolated|cut|healed|run)).*$`)

// adminLeader returns the node of the admin leader (show admins).
func adminLeader(t *testing.T, c *clustertest.Cluster) topology.NodeID {
	t.Helper()
	var lead topology.NodeID
	clustertest.Eventually(t, failoverTimeout, "an admin leader", func() bool {
		out, err := c.Admin(failoverTimeout, "-json", "show", "admins")
		var admins []struct {
			SN     uint64 `json:"sn"`
			Leader bool   `json:"leader"`
		}
		if err != nil || json.Unmarshal([]byte(out), &admins) != nil {
			return false
		}
		for _, a := range admins {
			if a.Leader {
				lead = topology.NodeID(a.SN)
			}
		}
		return lead != 0
	})
	return lead
}

// waitPlan waits for plan id to end and returns its state.
func waitPlan(t *testing.T, c *clustertest.Cluster, id int, timeout time.Duration) string {
	t.Helper()
	var state string
	clustertest.Eventually(t, timeout, fmt.Sprintf("plan %d to end", id), func() bool {
		if st := planState(t, c, id); st != "" {
			state = st
		}
		return state == "SUCCEEDED" || state == "ERROR" || state == "INTERRUPTED" || state == "CANCELED"
	})
	return state
}

// planState returns plan id's state as show plan gives it ("" if the admin
// did not answer).
func planState(t *testing.T, c *clustertest.Cluster, id int) string {
	t.Helper()
	out, err := c.Admin(failoverTimeout, "-json", "show", "plan", "-id", strconv.Itoa(id))
	var p struct {
		State string `json:"state"`
	}
	if err != nil || json.Unmarshal([]byte(out), &p) != nil {
		return ""
	}
	return p.State
}

// keysIn returns keys /prefix/i: want["p<N>"] of partition N (one of
// moving), want["a"] of other partitions of shard a, want["b"] of b's.
func keysIn(topo *topology.Topology, prefix string, want map[string]int, moving []uint32, a, b topology.ShardID) []client.Key {
	var out []client.Key
	total := 0
	for _, n := range want {
		total += n
	}
	for i := 0; len(out) < total; i++ {
		k := client.Key{Major: []string{prefix, strconv.Itoa(i)}}
		p := uint32(keys.PartitionOf(keys.Hash(k.Major), topo.Partitions))
		class := ""
		switch s := topo.ShardForKey(k.Major); {
		case slices.Contains(moving, p):
			class = fmt.Sprintf("p%d", p)
		case s == a:
			class = "a"
		case s == b:
			class = "b"
		}
		if want[class] > 0 {
			want[class]--
			out = append(out, k)
		}
	}
	return out
}

// partMove is one partition move of a scenario.
type partMove struct {
	p        uint32
	from, to topology.ShardID
}

// tablePoller reads the partition tables of shards a, b and a again on
// their leaders, over and over, and records every sample in which the
// source of a move serves its partition after the target owned it. Each
// read is linearizable (ShardTable runs a ReadIndex round) and for each
// move the target's read comes first (a, b for a move a <- b; b, a for
// a move b <- a): if the target owned p at its read and the source served
// p at its later read, both served p at that later instant.
type tablePoller struct {
	c     *clustertest.Cluster
	a, b  topology.ShardID
	moves []partMove
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once

	mu     sync.Mutex
	n      int
	twice  []string
	lastOn map[uint32]time.Time // the last sample in which a shard served p
	maxGap time.Duration
}

func startTablePoller(c *clustertest.Cluster, a, b topology.ShardID, moves []partMove) *tablePoller {
	tp := &tablePoller{c: c, a: a, b: b, moves: moves, done: make(chan struct{}), lastOn: map[uint32]time.Time{}}
	now := time.Now()
	for _, mv := range moves {
		tp.lastOn[mv.p] = now
	}
	tp.wg.Add(1)
	go tp.run()
	return tp
}

func (tp *tablePoller) run() {
	defer tp.wg.Done()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	type read struct {
		t    *clustertest.PartTable
		lead topology.NodeID
	}
	for {
		select {
		case <-tp.done:
			return
		case <-tick.C:
		}
		var reads []read // a, b, a
		for _, s := range []topology.ShardID{tp.a, tp.b, tp.a} {
			t, lead, err := tp.c.LeaderTable(s)
			if err != nil || t == nil {
				break
			}
			reads = append(reads, read{t, lead})
		}
		if len(reads) < 3 {
			continue
		}
		now := time.Now()
		tp.mu.Lock()
		tp.n++
		for _, mv := range tp.moves {
			first, then := reads[0], reads[1] // target a, source b
			if mv.to == tp.b {
				first, then = reads[1], reads[2] // target b, source a
			}
			owns, serves := first.t.Parts[mv.p].State == clustertest.PartOwned, then.t.Serves(mv.p)
			if owns && serves {
				tp.twice = append(tp.twice, fmt.Sprintf("at %s partition %d: OWNED by %s (leader sn%d), then served by %s (leader sn%d, %+v)",
					now.Format("15:04:05.000"), mv.p, topology.ShardName(mv.to), first.lead, topology.ShardName(mv.from), then.lead, then.t.Parts[mv.p]))
			}
			if owns || serves {
				tp.maxGap = max(tp.maxGap, now.Sub(tp.lastOn[mv.p]))
				tp.lastOn[mv.p] = now
			}
		}
		tp.mu.Unlock()
	}
}

func (tp *tablePoller) stop() {
	tp.once.Do(func() {
		close(tp.done)
		tp.wg.Wait()
	})
}

func (tp *tablePoller) samples() int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.n
}

// longestGap is the longest time between two samples in which some shard
// served a moving partition: an upper bound of the time it was served by
// none, rounded up to the sampling (which a leader's failover slows).
func (tp *tablePoller) longestGap() time.Duration {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.maxGap
}

// report fails the test if a partition was seen served by two shards, or
// unserved for longer than unservedLimit, or if too few samples were taken.
func (tp *tablePoller) report(t *testing.T) {
	t.Helper()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if len(tp.twice) > 0 {
		t.Errorf("%d table samples show a partition served by two shards:\n\t%s", len(tp.twice), strings.Join(tp.twice, "\n\t"))
	}
	if tp.n < 10 {
		t.Errorf("only %d samples of the partition tables were taken", tp.n)
	}
	if tp.maxGap > unservedLimit {
		t.Errorf("a moving partition was served by no shard for up to %v (limit %v)", tp.maxGap, unservedLimit)
	}
	t.Logf("partition tables: %d samples, none with a partition served by two shards; longest stretch served by none (to the sampling): %v",
		tp.n, tp.maxGap.Round(time.Millisecond))
}

// conflictRacer sends, round after round, two PutIfAbsent of one fresh
// key of a moving partition at once, through the smart client. At most
// one of each pair may be done: both done would mean that two shards
// each accepted a write for the partition. Afterwards each round's key
// must hold its winner's value.
type conflictRacer struct {
	c      *client.Client
	keys   []client.Key
	done   chan struct{}
	wg     sync.WaitGroup
	rounds []raceRound
}

// raceRound is one round's pair of outcomes.
type raceRound struct {
	key     client.Key
	outcome [2]string // "done", "not-done", "failed" or "unknown"
}

func startConflictRacer(c *client.Client, topo *topology.Topology, moving []uint32) *conflictRacer {
	cr := &conflictRacer{c: c, done: make(chan struct{})}
	for i := 0; len(cr.keys) < 5000; i++ {
		k := client.Key{Major: []string{"race", strconv.Itoa(i)}}
		if slices.Contains(moving, uint32(keys.PartitionOf(keys.Hash(k.Major), topo.Partitions))) {
			cr.keys = append(cr.keys, k)
		}
	}
	cr.wg.Add(1)
	go cr.run()
	return cr
}

func (cr *conflictRacer) run() {
	defer cr.wg.Done()
	for _, k := range cr.keys {
		select {
		case <-cr.done:
			return
		default:
		}
		var r raceRound
		r.key = k
		var pair sync.WaitGroup
		for j := range 2 {
			pair.Go(func() {
				res, err := cr.c.PutIfAbsent(context.Background(), k, fmt.Appendf(nil, "racer-%d", j), client.WithTimeout(opTimeout))
				switch o := clustertest.ClientWriteOutcome(err); {
				case o == clustertest.OK && res.Done:
					r.outcome[j] = "done"
				case o == clustertest.OK:
					r.outcome[j] = "not-done"
				case o == clustertest.Unknown:
					r.outcome[j] = "unknown"
				default:
					r.outcome[j] = "failed"
				}
			})
		}
		pair.Wait()
		cr.rounds = append(cr.rounds, r)
	}
}

func (cr *conflictRacer) stop() {
	select {
	case <-cr.done:
	default:
		close(cr.done)
	}
	cr.wg.Wait()
}

// check fails the test for a round in which both puts were done, and for a
// key that does not hold its round's winner (read ABSOLUTE).
func (cr *conflictRacer) check(t *testing.T) {
	t.Helper()
	both, won := 0, 0
	for _, r := range cr.rounds {
		winner := -1
		for j, o := range r.outcome {
			if o == "done" {
				winner = j
			}
		}
		if r.outcome[0] == "done" && r.outcome[1] == "done" {
			both++
			t.Errorf("both PutIfAbsent of %s were done: two shards accepted a write for its partition", r.key)
			continue
		}
		if winner < 0 {
			continue
		}
		won++
		var rec client.Record
		var found bool
		err := clustertest.Poll(finalReadTimeout, func() bool {
			var err error
			rec, found, err = cr.c.Get(context.Background(), r.key, client.WithTimeout(opTimeout), client.WithConsistency(client.Absolute))
			return err == nil
		})
		if want := fmt.Sprintf("racer-%d", winner); err != nil || !found || string(rec.Value) != want {
			t.Errorf("%s: ABSOLUTE read found=%v %q (%v); want the winner's %q", r.key, found, rec.Value, err, want)
		}
	}
	t.Logf("conflicting PutIfAbsent pairs on the moving partitions: %d rounds, %d with a winner (read back), %d with two winners", len(cr.rounds), won, both)
}
