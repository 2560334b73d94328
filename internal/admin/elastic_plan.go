package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// plan deploy-topology over a deployed store runs the candidate's changes
// (topology.Compare) as tasks, each idempotent, each publishing the
// topology it reached under a new sequence number, so clients and nodes
// follow and an interrupted plan resumes where it was
// (docs/design/20261125_elasticity.md):
//
//	init-tables                 every shard gets its partition table (a no-op once it has one)
//	split-partitions            if the count grows: every shard splits, then the topology
//	publish-topology shards     new nodes and new (empty) shards, their tables
//	join-replica shard sn       per replica a shard gains: learner, catch up, voter, publish
//	leave-replica shard sn      per replica it loses: hand off, remove, publish (replica_plan.go)
//	move-partitions p:A:B,...   a round of moves, at most one per source shard, run at
//	                            once on each source's leader; then the topology names the targets
//	publish-topology final      the candidate itself: removed shards and nodes go
//
// Replica changes (rebalance, change-repfactor, plan migrate-sn) run one
// node at a time, adds before removes, before any partition moves.

func (s *Service) planElastic(ctx context.Context, m *Meta, c *Candidate, a map[string]string) (*cairnpb.AdminReply, error) {
	ch, err := topology.Compare(m.Deployed, c.Topology)
	if err != nil {
		return nil, cannotDeploy(m, c, err)
	}
	if rep := c.Topology.Check(); !rep.OK() {
		return nil, failed("topology %s breaks the placement rules; fix it first:\n%s", c.Name, reportText(rep))
	}
	cb, err := json.Marshal(c.Topology)
	if err != nil {
		return nil, err
	}
	tasks := []*Task{newTask("init-tables", "give every shard its partition table", nil)}
	if ch.Split != 0 {
		tasks = append(tasks, newTask("split-partitions", fmt.Sprintf("split the %d partitions into %d", m.Deployed.Partitions, ch.Split),
			map[string]string{"to": strconv.FormatUint(uint64(ch.Split), 10)}))
	}
	if len(ch.NewShards) > 0 || len(ch.NewNodes) > 0 {
		tasks = append(tasks, newTask("publish-topology", newShardsText(ch), map[string]string{"step": "shards"}))
	}
	tasks = append(tasks, replicaTasks(ch.Replicas)...)
	for _, round := range moveRounds(ch.Moves) {
		var descs, specs []string
		for _, mv := range round {
			descs = append(descs, fmt.Sprintf("%d (%s -> %s)", mv.Partition, topology.ShardName(mv.From), topology.ShardName(mv.To)))
			specs = append(specs, fmt.Sprintf("%d:%d:%d", mv.Partition, mv.From, mv.To))
		}
		tasks = append(tasks, newTask("move-partitions", plural(len(round), "move partition ", "move partitions ")+strings.Join(descs, ", "),
			map[string]string{"moves": strings.Join(specs, ","), "max_rate": a["max-rate"], "move_share": a["move-share"]}))
	}
	tasks = append(tasks, newTask("publish-topology", "record topology "+c.Name+" as deployed", map[string]string{"step": "final"}))
	return s.createPlan(ctx, "deploy-topology", a, tasks, map[string]string{"candidate": string(cb)})
}

// newShardsText describes the publish-topology shards task: the new
// shards it creates or, when there are none, the new storage nodes it adds.
func newShardsText(ch topology.Changes) string {
	if n := len(ch.NewShards); n > 0 {
		return "create " + plural(n, "the new shard ", "the new shards ") + shardNames(ch.NewShards) + " (empty) and publish the topology"
	}
	return "add " + plural(len(ch.NewNodes), "the new storage node ", "the new storage nodes ") + nodeIDs(ch.NewNodes) +
		" to the topology, hosting nothing yet, and publish it"
}

// planCandidate returns the topology an elastic plan deploys.
func planCandidate(p *Plan) (*topology.Topology, error) {
	var t topology.Topology
	if err := json.Unmarshal([]byte(p.Data["candidate"]), &t); err != nil {
		return nil, permanent("the plan's candidate topology is unreadable: %v", err)
	}
	return &t, nil
}

// taskInitTables gives every shard of the topology the plan works on (the
// deployed one, or the one a first deploy installs) its partition table.
func (s *Service) taskInitTables(ctx context.Context, p *Plan) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	t := m.Deployed
	if t == nil || p.Data["topology"] != "" {
		if t, err = planTopology(p); err != nil {
			return err
		}
	}
	for _, sh := range t.Shards {
		parts := []uint32{}
		for _, q := range t.PartitionsOf(sh.ID) {
			parts = append(parts, uint32(q))
		}
		cmd := &commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: t.Partitions, Partitions: parts}}}
		if err := s.shardCommand(ctx, t, sh.ID, cmd); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) taskSplit(ctx context.Context, t *Task) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	to, _ := strconv.ParseUint(t.Args["to"], 10, 32)
	cur := m.Deployed
	if cur.Partitions != uint32(to) {
		if to == 0 || uint32(to)%cur.Partitions != 0 {
			return permanent("split to %d partitions: not a multiple of the deployed %d", to, cur.Partitions)
		}
		f := uint32(to) / cur.Partitions
		for _, sh := range cur.Shards {
			cmd := &commandpb.Command{Body: &commandpb.Command_Split{Split: &commandpb.Split{FromN: cur.Partitions, Factor: f}}}
			if err := s.shardCommand(ctx, cur, sh.ID, cmd); err != nil {
				return err
			}
		}
	}
	return s.publish(ctx, func(t *topology.Topology) error {
		if t.Partitions == uint32(to) {
			return nil
		}
		f := uint32(to) / t.Partitions
		owners := make([]topology.ShardID, 0, to)
		for _, o := range t.PartitionShard {
			for range f {
				owners = append(owners, o)
			}
		}
		t.Partitions, t.PartitionShard = uint32(to), owners
		return nil
	}, "")
}

// taskPublish publishes a step of the candidate: "shards" adds its new
// nodes and shards (owning nothing yet) and gives the new shards their
// tables; "final" deploys the candidate itself.
func (s *Service) taskPublish(ctx context.Context, p *Plan, t *Task) error {
	cand, err := planCandidate(p)
	if err != nil {
		return err
	}
	if t.Args["step"] == "final" {
		// Nodes that leave stay listed, hosting nothing, so that they get
		// this topology and drop their replicas of removed shards; plan
		// remove-sn then takes them out.
		return s.publish(ctx, func(cur *topology.Topology) error {
			seq, old := cur.Seq, cur.Nodes
			*cur = *cand.Clone()
			cur.Seq = seq
			for _, n := range old {
				if _, ok := cur.Node(n.ID); !ok {
					cur.Nodes = append(cur.Nodes, n)
				}
			}
			return nil
		}, p.Args["name"])
	}
	var fresh []topology.Shard
	err = s.publish(ctx, func(cur *topology.Topology) error {
		for _, n := range cand.Nodes {
			if _, ok := cur.Node(n.ID); !ok {
				cur.Nodes = append(cur.Nodes, n)
			}
		}
		for _, sh := range cand.Shards {
			if _, ok := cur.Shard(sh.ID); !ok {
				cur.Shards = append(cur.Shards, sh)
			}
		}
		cur.MaxShard = max(cur.MaxShard, cand.MaxShard)
		return nil
	}, "")
	if err != nil {
		return err
	}
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	for _, sh := range m.Deployed.Shards {
		if len(m.Deployed.PartitionsOf(sh.ID)) == 0 {
			fresh = append(fresh, sh)
		}
	}
	only := *m.Deployed
	only.Shards = fresh
	if err := s.awaitLeaders(ctx, &only, preferredWait); err != nil {
		return fmt.Errorf("the new shards: %w", err)
	}
	for _, sh := range fresh {
		cmd := &commandpb.Command{Body: &commandpb.Command_InitTable{InitTable: &commandpb.InitTable{N: m.Deployed.Partitions, Partitions: []uint32{}}}}
		if err := s.shardCommand(ctx, m.Deployed, sh.ID, cmd); err != nil {
			return err
		}
	}
	return nil
}

// publish changes the deployed topology with fn, and, if that changed its
// layout, installs it under the next sequence number on every node it
// lists, then records it as deployed (renamed to name if given). Run again,
// it finds the change recorded and installs it again where missing.
func (s *Service) publish(ctx context.Context, fn func(*topology.Topology) error, name string) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	next := m.Deployed.Clone()
	if err := fn(next); err != nil {
		return err
	}
	if !topology.SameLayout(next, m.Deployed) {
		next.Seq = m.Deployed.Seq + 1
	} else {
		next = m.Deployed
	}
	if err := next.Validate(); err != nil {
		return permanent("the next topology is invalid: %v", err)
	}
	tb, err := json.Marshal(next)
	if err != nil {
		return err
	}
	// A node that is down gets the topology later (syncTopologies): the
	// shards' partition tables, not the topology, decide who serves what,
	// so one dead node must not hold up a move that its shards survived.
	var missed []string
	for _, n := range next.Nodes {
		if err := s.installOn(ctx, m, n, tb); isUnreachable(err) && ctx.Err() == nil {
			if sn := m.sn(uint64(n.ID)); sn != nil && sn.Gone {
				continue // its disk is gone; if it comes back (sn start --rejoin-as) it fetches the topology
			}
			missed = append(missed, topology.NodeName(n.ID))
			s.log.Warn("a node did not answer the topology's publication; it gets it when it answers", "seq", next.Seq, "sn", n.ID, "err", err)
		} else if err != nil {
			return fmt.Errorf("installing topology %d on %s: %w", next.Seq, topology.NodeName(n.ID), err)
		}
	}
	if len(missed) == len(next.Nodes) {
		return status.Errorf(codes.Unavailable, "no node answered the publication of topology %d", next.Seq)
	}
	_, err = s.store.update(ctx, func(m *Meta) error {
		if m.Deployed.Seq < next.Seq {
			m.Deployed = next
			m.event("topology sequence %d published: %d shards, %d partitions", next.Seq, len(next.Shards), next.Partitions)
			if len(missed) > 0 {
				m.event("topology sequence %d not installed yet on %s (not answering); the admin installs it when they answer", next.Seq, strings.Join(missed, ", "))
			}
		}
		if name != "" && m.DeployedName != name {
			m.DeployedName = name
			m.event("topology %s deployed (sequence %d)", name, m.Deployed.Seq)
		}
		return nil
	})
	return err
}

// installOn installs topology tb on node n, within installTimeout, or
// goneWait for a node marked Gone (plan migrate-sn).
func (s *Service) installOn(ctx context.Context, m *Meta, n topology.Node, tb []byte) error {
	wait := installTimeout
	if sn := m.sn(uint64(n.ID)); sn != nil && sn.Gone {
		wait = goneWait
	}
	ictx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err := s.control(n.Addr).InstallTopology(ictx, &controlpb.InstallTopologyRequest{Store: m.Store, Topology: tb, Peers: m.peers()})
	return err
}

// goneWait bounds a call to a node marked Gone.
const goneWait = 3 * time.Second

// installTimeout bounds one node's InstallTopology in a publication: a
// node that does not answer by then (stopped, or its host gone) is left
// for syncTopologies.
const installTimeout = 5 * time.Second

// installTopology installs the topology tb on the node at addr.
func (s *Service) installTopology(ctx context.Context, m *Meta, addr string, tb []byte) error {
	ictx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	_, err := s.control(addr).InstallTopology(ictx, &controlpb.InstallTopologyRequest{Store: m.Store, Topology: tb, Peers: m.peers()})
	return err
}

// isUnreachable reports whether err says that a node did not answer (as
// opposed to refusing a request).
func isUnreachable(err error) bool {
	c := status.Code(err)
	return err != nil && (c == codes.Unavailable || c == codes.DeadlineExceeded)
}

// syncTopologies installs the deployed topology on every deployed node
// whose Describe (infos) shows an older one: a node that was down when a
// topology was published (publish goes on without it) catches up at the
// admin leader's next poll of the nodes.
func (s *Service) syncTopologies(ctx context.Context, m *Meta, infos map[uint64]*controlpb.NodeInfo) {
	t := m.Deployed
	if t == nil {
		return
	}
	var tb []byte
	for _, n := range t.Nodes {
		info := infos[uint64(n.ID)]
		if info == nil || info.GetTopologySeq() == 0 || info.GetTopologySeq() >= t.Seq {
			continue
		}
		if tb == nil {
			var err error
			if tb, err = json.Marshal(t); err != nil {
				return
			}
		}
		if err := s.installTopology(ctx, m, n.Addr, tb); err != nil {
			s.log.Warn("installing the deployed topology on a node that missed it failed; the next poll retries", "sn", n.ID, "seq", t.Seq, "err", err)
			continue
		}
		s.log.Info("installed the deployed topology on a node that missed it", "sn", n.ID, "seq", t.Seq, "had", info.GetTopologySeq())
	}
}

// moveRounds groups moves into rounds with at most one move per source
// shard and per target shard, in order, so that a round's moves can run at
// once without two of them loading one shard.
func moveRounds(moves []topology.Move) [][]topology.Move {
	var rounds [][]topology.Move
	for _, mv := range moves {
		placed := false
		for i, r := range rounds {
			if !slices.ContainsFunc(r, func(x topology.Move) bool { return x.From == mv.From || x.To == mv.To }) {
				rounds[i] = append(r, mv)
				placed = true
				break
			}
		}
		if !placed {
			rounds = append(rounds, []topology.Move{mv})
		}
	}
	return rounds
}

// parseMoves reads a move-partitions task's "p:from:to,..." list.
func parseMoves(spec string) ([]topology.Move, error) {
	var out []topology.Move
	for _, f := range strings.Split(spec, ",") {
		var p uint32
		var from, to uint64
		if _, err := fmt.Sscanf(f, "%d:%d:%d", &p, &from, &to); err != nil {
			return nil, permanent("the task's move %q is unreadable: %v", f, err)
		}
		out = append(out, topology.Move{Partition: keys.PartitionID(p), From: topology.ShardID(from), To: topology.ShardID(to)})
	}
	return out, nil
}

// taskMovePartitions runs a round of moves at once, each on its source's
// leader, and publishes each new owner as soon as its move ends.
func (s *Service) taskMovePartitions(ctx context.Context, p *Plan, t *Task) error {
	moves, err := parseMoves(t.Args["moves"])
	if err != nil {
		return err
	}
	rate, _ := strconv.ParseInt(t.Args["max_rate"], 10, 64)
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	i := slices.Index(p.Tasks, t)
	start := time.Now()
	// The task has no timeout (longTasks): it ends when no move of the
	// round has reported progress for moveStallTimeout, and is retried.
	ctx, stall := context.WithCancelCause(ctx)
	defer stall(nil)
	var lastProgress atomic.Int64
	lastProgress.Store(time.Now().UnixNano())
	var mu, pubMu sync.Mutex
	progress := make([]*controlpb.MoveProgress, len(moves))
	note := func() {
		mu.Lock()
		line := roundProgress(moves, progress, time.Since(start))
		mu.Unlock()
		_ = s.noteTask(ctx, p.ID, i, func(t *Task) { t.Progress = line })
	}
	errs := make([]error, len(moves))
	var wg sync.WaitGroup
	for j, mv := range moves {
		// Publish the new owner as soon as the target owns the partition
		// (before the source drops its copy): until then clients that
		// reach the source are sent on by its wrong_shard answers.
		// A move published by an earlier run still runs: it ends at once,
		// or drops what the source kept if that run stopped before the drop.
		published := m.Deployed.PartitionShard[mv.Partition] == mv.To
		var pubErr error
		publish := func() {
			published = true
			pubMu.Lock()
			defer pubMu.Unlock()
			pubErr = s.publish(ctx, func(t *topology.Topology) error {
				t.PartitionShard[mv.Partition] = mv.To
				return nil
			}, "")
		}
		wg.Go(func() {
			errs[j] = s.runMove(ctx, m, mv, rate, func(pr *controlpb.MoveProgress) {
				lastProgress.Store(time.Now().UnixNano())
				mu.Lock()
				progress[j] = pr
				mu.Unlock()
				if !published && (pr.GetPhase() == "drop" || pr.GetPhase() == "done") {
					publish()
				}
			})
			if errs[j] == nil && !published {
				publish()
			}
			errs[j] = cmp.Or(errs[j], pubErr)
		})
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(min(progressEvery, moveStallTimeout)):
				note()
				if time.Since(time.Unix(0, lastProgress.Load())) > moveStallTimeout {
					stall(fmt.Errorf("no move of the round reported progress for %v", moveStallTimeout))
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	err = errors.Join(errs...)
	if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = fmt.Errorf("%w: %w", cause, err)
	}
	if err == nil {
		var bytes int64
		for _, pr := range progress {
			bytes += pr.GetBytesCopied()
		}
		_ = s.noteTask(ctx, p.ID, i, func(t *Task) {
			t.Progress = ""
			t.Result = []string{roundProgress(moves, progress, time.Since(start))}
			t.Args["bytes"] = strconv.FormatInt(bytes, 10)
		})
		err = pauseAfterRound(ctx, p, t, time.Since(start))
	}
	return err
}

// defaultMoveShare is the percent of the time rounds of moves run by
// default. make elastic-bench (docs/guarantees.md M6) measured workload A
// at 0.72-0.92 of its steady throughput with it, and 0.62-0.75 with moves
// back to back (100), which take half the time.
const defaultMoveShare = 50

// pauseAfterRound pauses after a round of moves that took took, so that
// rounds run for the plan's move share of the time; not after the last.
func pauseAfterRound(ctx context.Context, p *Plan, t *Task, took time.Duration) error {
	i := slices.Index(p.Tasks, t)
	if !slices.ContainsFunc(p.Tasks[i+1:], func(t *Task) bool { return t.Kind == "move-partitions" }) {
		return nil
	}
	share, err := strconv.Atoi(cmp.Or(t.Args["move_share"], strconv.Itoa(defaultMoveShare)))
	if err != nil || share < 1 || share > 100 {
		return permanent("the task's move share %q is not a percent from 1 to 100", t.Args["move_share"])
	}
	pause := took * time.Duration(100-share) / time.Duration(share)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(pause):
		return nil
	}
}

// moveStallTimeout ends a round of moves that made no progress for that
// long (a node that holds a move's stream and does nothing); the task is
// then retried.
var moveStallTimeout = 30 * time.Second

// runMove runs one move on its source's leader, reporting its progress.
func (s *Service) runMove(ctx context.Context, m *Meta, mv topology.Move, rate int64, report func(*controlpb.MoveProgress)) error {
	addr, err := s.shardLeaderAddr(ctx, m.Deployed, mv.From)
	if err != nil {
		return err
	}
	stream, err := s.control(addr).MovePartition(ctx, &controlpb.MovePartitionRequest{
		Store: m.Store, Partition: uint32(mv.Partition), FromShard: uint64(mv.From), ToShard: uint64(mv.To), BytesPerSec: rate * 1e6})
	if err != nil {
		return err
	}
	for {
		pr, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the move of partition %d ended without finishing", mv.Partition)
		} else if err != nil {
			return err
		}
		report(pr)
		if pr.GetPhase() == "done" {
			return nil
		}
	}
}

// roundProgress says where a round of moves is.
func roundProgress(moves []topology.Move, progress []*controlpb.MoveProgress, took time.Duration) string {
	var parts []string
	var bytes int64
	for j, mv := range moves {
		pr := progress[j]
		bytes += pr.GetBytesCopied()
		parts = append(parts, fmt.Sprintf("%d %s", mv.Partition, cmp.Or(pr.GetPhase(), "starting")))
	}
	return fmt.Sprintf("%s; %.1f MB copied in %v", strings.Join(parts, ", "), float64(bytes)/1e6, took.Round(100*time.Millisecond))
}

// movesLine sums up a plan's partition moves for show plan: how many are
// done, the bytes they copied, the rate and the time left at that rate.
func (p *Plan) movesLine() string {
	total, done := 0, 0
	var bytes int64
	for _, t := range p.Tasks {
		if t.Kind != "move-partitions" {
			continue
		}
		n := strings.Count(t.Args["moves"], ",") + 1
		total += n
		if t.State == taskSucceeded {
			done += n
			b, _ := strconv.ParseInt(t.Args["bytes"], 10, 64)
			bytes += b
		}
	}
	if total == 0 {
		return ""
	}
	line := fmt.Sprintf("%d/%d partitions moved, %.1f MB copied", done, total, float64(bytes)/1e6)
	if done > 0 && !p.Started.IsZero() {
		end := p.Ended
		if end.IsZero() {
			end = time.Now()
		}
		el := end.Sub(p.Started).Seconds()
		line += fmt.Sprintf(", %.2f partitions/s, %.1f MB/s", float64(done)/el, float64(bytes)/1e6/el)
		if done < total && p.Ended.IsZero() {
			line += fmt.Sprintf(", about %v left", (time.Duration(float64(total-done)/float64(done)*el) * time.Second).Round(time.Second))
		}
	}
	return line
}

// shardCommand proposes a move command on shard's leader, following the
// nodes' not-leader answers; a deterministic refusal of the command is a
// permanent error.
func (s *Service) shardCommand(ctx context.Context, t *topology.Topology, shard topology.ShardID, cmd *commandpb.Command) error {
	b, err := proto.Marshal(cmd)
	if err != nil {
		return err
	}
	addr, err := s.shardLeaderAddr(ctx, t, shard)
	if err != nil {
		return err
	}
	r, err := s.control(addr).ShardCommand(ctx, &controlpb.ShardCommandRequest{Store: t.Store, Shard: uint64(shard), Command: b})
	if err != nil {
		return err
	}
	if r.GetError() != "" {
		return permanent("%s refused %T: %s", topology.ShardName(shard), cmd.GetBody(), r.GetError())
	}
	return nil
}

// shardLeaderAddr asks the nodes of shard's replicas which leads it.
func (s *Service) shardLeaderAddr(ctx context.Context, t *topology.Topology, shard topology.ShardID) (string, error) {
	sh, ok := t.Shard(shard)
	if !ok {
		return "", permanent("%s is not in topology %d", topology.ShardName(shard), t.Seq)
	}
	for _, id := range sh.Replicas {
		n, ok := t.Node(id)
		if !ok {
			continue
		}
		info, err := s.control(n.Addr).Describe(ctx, &controlpb.DescribeRequest{})
		if err != nil {
			continue
		}
		for _, st := range info.GetShards() {
			if st.GetShard() == uint64(shard) && st.GetIsLeader() {
				return n.Addr, nil
			}
		}
	}
	return "", status.Errorf(codes.Unavailable, "no node says it leads %s", topology.ShardName(shard))
}
