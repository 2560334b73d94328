package admin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A change of a shard's replicas (docs/design/20261127_replica_moves.md)
// runs as two kinds of task, one node at a time, adds before removes:
//
//	join-replica  shard sn   the node opens an empty replica; the leader adds it as a
//	                         learner; once its applied index reaches the leader's (taken
//	                         when the wait began) the leader promotes it; then the
//	                         topology lists it, so clients reach it only once it votes
//	leave-replica shard sn   if the topology prefers it as leader, it no longer does;
//	                         if it leads, leadership moves to another voter; the
//	                         leader removes it; then the topology drops it, and the
//	                         node, getting that topology, drops its replica
//
// Each step finds out whether it is done (the group's voters and learners,
// the deployed topology) before it acts, so a task resumes after an admin
// failover. At most one membership change is in flight per shard: the
// plan's tasks run one at a time.
//
// Fault tests may pause a task (Config.Pause) at six phases: join (the
// joining replica is open, not yet in the group), learner (added,
// catching up), voter (promoted, not yet published), leave (a
// leave-replica begins: the leaving node may still lead), handoff (it
// leads no more, still a member) and removed (removed, not yet published).

// replicaTasks returns the tasks of the replica changes, per shard.
func replicaTasks(changes []topology.ReplicaChange) []*Task {
	var tasks []*Task
	for _, rc := range changes {
		shard := strconv.FormatUint(uint64(rc.Shard), 10)
		for i := range max(len(rc.Add), len(rc.Remove)) {
			if i < len(rc.Add) {
				id := rc.Add[i]
				tasks = append(tasks, newTask("join-replica",
					fmt.Sprintf("add a replica of %s on %s: learner, catch up, voter, publish", topology.ShardName(rc.Shard), topology.NodeName(id)),
					map[string]string{"shard": shard, "sn": strconv.FormatUint(uint64(id), 10)}))
			}
			if i < len(rc.Remove) {
				id := rc.Remove[i]
				tasks = append(tasks, newTask("leave-replica",
					fmt.Sprintf("remove the replica of %s on %s: hand off, remove, publish", topology.ShardName(rc.Shard), topology.NodeName(id)),
					map[string]string{"shard": shard, "sn": strconv.FormatUint(uint64(id), 10)}))
			}
		}
	}
	return tasks
}

// catchUpPoll is how often join-replica looks at a learner catching up,
// and catchUpStall how long its applied index may stay still before the
// attempt fails (and is retried). join-replica is a long task: a snapshot
// of a large shard may take minutes, and only a stall ends the attempt.
const (
	catchUpPoll  = 100 * time.Millisecond
	catchUpStall = 2 * time.Minute
)

func (s *Service) taskJoinReplica(ctx context.Context, p *Plan, t *Task) error {
	shard, node := topology.ShardID(argID(t, "shard")), argID(t, "sn")
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	if sh, ok := m.Deployed.Shard(shard); ok && slices.Contains(sh.Replicas, topology.NodeID(node)) {
		return nil // promoted and published by an earlier run
	}
	sn := m.sn(node)
	if sn == nil {
		return permanent("%s is not deployed", snName(node))
	}
	open := func() (*controlpb.ChangeReplicaReply, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return s.control(sn.Addr()).ChangeReplica(ctx, &controlpb.ChangeReplicaRequest{
			Store: m.Store, Shard: uint64(shard), Op: "open", Node: node, Peers: m.peers()})
	}
	if _, err := open(); err != nil {
		return fmt.Errorf("opening the replica of %s on %s: %w", topology.ShardName(shard), snName(node), err)
	}
	if err := s.pause(ctx, "join", shard, node); err != nil {
		return err
	}
	st, err := s.onLeader(ctx, m, shard, "add-learner", node)
	if err != nil {
		return err
	}
	if !slices.Contains(st.GetVoters(), node) {
		if err := s.pause(ctx, "learner", shard, node); err != nil {
			return err
		}
		target := st.GetApplied()
		var last uint64
		moved, noted := time.Now(), false
		for poll := 0; ; poll++ {
			r, err := open()
			if err != nil {
				return err
			}
			if r.GetApplied() >= target {
				break
			}
			if r.GetApplied() != last {
				last, moved = r.GetApplied(), time.Now()
			} else if time.Since(moved) > catchUpStall {
				return fmt.Errorf("%s on %s has not caught up: applied %d of %d, no progress for %v", topology.ShardName(shard), snName(node), last, target, catchUpStall)
			}
			if poll%10 == 9 {
				line := fmt.Sprintf("catching up: applied %d of %d", r.GetApplied(), target)
				_ = s.noteTask(ctx, p.ID, slices.Index(p.Tasks, t), func(t *Task) { t.Progress = line })
				noted = true
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s on %s still catching up: applied %d of %d", topology.ShardName(shard), snName(node), r.GetApplied(), target)
			case <-time.After(catchUpPoll):
			}
		}
		if noted {
			_ = s.noteTask(ctx, p.ID, slices.Index(p.Tasks, t), func(t *Task) { t.Progress = "" })
		}
		if _, err := s.onLeader(ctx, m, shard, "add-voter", node); err != nil {
			return err
		}
		if err := s.pause(ctx, "voter", shard, node); err != nil {
			return err
		}
	}
	return s.publish(ctx, func(cur *topology.Topology) error {
		for i := range cur.Shards {
			if sh := &cur.Shards[i]; sh.ID == shard && !slices.Contains(sh.Replicas, topology.NodeID(node)) {
				sh.Replicas = append(sh.Replicas, topology.NodeID(node))
			}
		}
		return nil
	}, "")
}

func (s *Service) taskLeaveReplica(ctx context.Context, p *Plan, t *Task) error {
	shard, node := topology.ShardID(argID(t, "shard")), argID(t, "sn")
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	sh, ok := m.Deployed.Shard(shard)
	if !ok || !slices.Contains(sh.Replicas, topology.NodeID(node)) {
		return nil // removed and published by an earlier run
	}
	if err := s.pause(ctx, "leave", shard, node); err != nil {
		return err
	}
	pref := preferredIn(p, shard)
	if sh.Preferred == topology.NodeID(node) {
		// First no replica prefers it, or the one taking over would hand
		// the leadership straight back (replica preferLeader).
		if err := s.publish(ctx, func(cur *topology.Topology) error {
			unprefer(cur, shard, topology.NodeID(node), pref)
			return nil
		}, ""); err != nil {
			return err
		}
	}
	st, err := s.onLeader(ctx, m, shard, "status", 0)
	if err != nil {
		return err
	}
	if st.GetLeader() == node {
		to := successorVoter(st.GetVoters(), node, preferredIn(p, shard))
		if to == 0 {
			return permanent("%s has no other voter to hand its leadership to", topology.ShardName(shard))
		}
		if _, err := s.onLeader(ctx, m, shard, "transfer-leader", to); err != nil {
			return err
		}
		if st, err = s.onLeader(ctx, m, shard, "status", 0); err != nil {
			return err
		}
		if st.GetLeader() == node {
			return fmt.Errorf("%s: leadership has not left %s yet", topology.ShardName(shard), snName(node))
		}
	}
	if slices.Contains(st.GetVoters(), node) || slices.Contains(st.GetLearners(), node) {
		if err := s.pause(ctx, "handoff", shard, node); err != nil {
			return err
		}
		if _, err := s.onLeader(ctx, m, shard, "remove", node); err != nil {
			return err
		}
		if err := s.pause(ctx, "removed", shard, node); err != nil {
			return err
		}
	}
	return s.publish(ctx, func(cur *topology.Topology) error {
		unprefer(cur, shard, topology.NodeID(node), pref)
		for i := range cur.Shards {
			if sh := &cur.Shards[i]; sh.ID == shard {
				sh.Replicas = slices.DeleteFunc(sh.Replicas, func(x topology.NodeID) bool { return x == topology.NodeID(node) })
			}
		}
		return nil
	}, "")
}

// pause is the Config.Pause failpoint at phase of a change of shard's
// replica on node.
func (s *Service) pause(ctx context.Context, phase string, shard topology.ShardID, node uint64) error {
	if s.cfg.Pause == nil {
		return nil
	}
	return s.cfg.Pause(ctx, phase, "shard", topology.ShardName(shard), "sn", snName(node))
}

// unprefer makes shard of t prefer pref instead of the leaving node, if it
// preferred that one: pref if it is a replica already, else none.
func unprefer(t *topology.Topology, shard topology.ShardID, leaving, pref topology.NodeID) {
	for i := range t.Shards {
		sh := &t.Shards[i]
		if sh.ID != shard || sh.Preferred != leaving {
			continue
		}
		sh.Preferred = 0
		if pref != leaving && slices.Contains(sh.Replicas, pref) {
			sh.Preferred = pref
		}
	}
}

// preferredIn is the candidate's preferred leader of shard (0: none).
func preferredIn(p *Plan, shard topology.ShardID) topology.NodeID {
	c, err := planCandidate(p)
	if err != nil {
		return 0
	}
	sh, _ := c.Shard(shard)
	return sh.Preferred
}

// successorVoter picks the voter that takes over from a leaving leader:
// pref if it votes, else the lowest other voter.
func successorVoter(voters []uint64, leaving uint64, pref topology.NodeID) uint64 {
	if pref != 0 && uint64(pref) != leaving && slices.Contains(voters, uint64(pref)) {
		return uint64(pref)
	}
	for _, v := range slices.Sorted(slices.Values(voters)) {
		if v != leaving {
			return v
		}
	}
	return 0
}

// onLeader runs op on shard's leader, asking the nodes of its replicas
// (those the deployed topology lists, then the leader they name) until one
// leads and does it. It returns the leader's reply.
func (s *Service) onLeader(ctx context.Context, m *Meta, shard topology.ShardID, op string, node uint64) (*controlpb.ChangeReplicaReply, error) {
	sh, ok := m.Deployed.Shard(shard)
	if !ok {
		return nil, permanent("%s is not in the deployed topology", topology.ShardName(shard))
	}
	ask := slices.Clone(sh.Replicas)
	var last error = status.Errorf(codes.Unavailable, "no replica of %s answered", topology.ShardName(shard))
	for tries := 0; tries < 3*len(sh.Replicas)+3 && len(ask) > 0; tries++ {
		id := ask[0]
		ask = ask[1:]
		sn := m.sn(uint64(id))
		if sn == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r, err := s.control(sn.Addr()).ChangeReplica(rctx, &controlpb.ChangeReplicaRequest{Store: m.Store, Shard: uint64(shard), Op: op, Node: node})
		cancel()
		switch {
		case err != nil:
			last = err
		case r.GetIsLeader() || (op != "status" && r.GetDone()):
			return r, nil
		case r.GetLeader() != 0 && r.GetLeader() != uint64(id):
			ask = append([]topology.NodeID{topology.NodeID(r.GetLeader())}, ask...)
		}
	}
	return nil, fmt.Errorf("%s on the leader of %s: %w", op, topology.ShardName(shard), last)
}
