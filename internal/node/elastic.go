package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/migrate"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The Control side of partition moves (docs/design/20261125_elasticity.md):
// ShardCommand and ShardTable let the admin (and a mover on another node)
// reach a shard's leader; MovePartition runs a move here, on the source's
// leader. Each reads the replica under enter, so a heal never closes the
// engine under it.

// ShardCommand proposes a move command on the local leader of a shard.
func (c controlRPC) ShardCommand(ctx context.Context, r *controlpb.ShardCommandRequest) (*controlpb.ShardCommandReply, error) {
	rep, release, err := c.n.leaderReplica(r.GetStore(), r.GetShard())
	if err != nil {
		return nil, err
	}
	defer release()
	var cmd commandpb.Command
	if err := proto.Unmarshal(r.GetCommand(), &cmd); err != nil || !moveCommand(&cmd) {
		return nil, status.Errorf(codes.InvalidArgument, "shard command: not a partition-table command (%v)", err)
	}
	ctx, stop := whileLeading(ctx, rep)
	defer stop()
	res, err := rep.Propose(ctx, &cmd, storage.Sync)
	if errors.Is(context.Cause(ctx), errLeadershipLost) {
		err = fmt.Errorf("%w: %v", errLeadershipLost, err)
	}
	var nl *replica.NotLeaderError
	if errors.As(err, &nl) {
		return nil, notLeaderStatus(c.n.id(), r.GetShard(), nl.Leader)
	} else if err != nil {
		return nil, status.Errorf(codes.Unavailable, "shard %d: %v", r.GetShard(), err)
	}
	return commandReply(res.Err), nil
}

// moveCommand reports whether cmd is one the admin or a mover may send.
func moveCommand(cmd *commandpb.Command) bool {
	switch cmd.GetBody().(type) {
	case *commandpb.Command_InitTable, *commandpb.Command_Split, *commandpb.Command_MigrateIn,
		*commandpb.Command_MigrateOut, *commandpb.Command_Ingest, *commandpb.Command_Replay,
		*commandpb.Command_Transfer, *commandpb.Command_Activate, *commandpb.Command_DropPartition,
		*commandpb.Command_CancelMove:
		return true
	}
	return false
}

func commandReply(err error) *controlpb.ShardCommandReply {
	if err == nil {
		return &controlpb.ShardCommandReply{}
	}
	kind := "error"
	switch {
	case errors.Is(err, storage.ErrMoveState):
		kind = "move_state"
	case errors.Is(err, storage.ErrNotServed):
		kind = "not_served"
	case errors.Is(err, storage.ErrMoving):
		kind = "moving"
	case errors.Is(err, storage.ErrBadCommand):
		kind = "bad_command"
	}
	return &controlpb.ShardCommandReply{Error: err.Error(), ErrorKind: kind}
}

// ShardTable reads a shard's table on its leader here.
func (c controlRPC) ShardTable(ctx context.Context, r *controlpb.ShardTableRequest) (*controlpb.ShardTableReply, error) {
	rep, release, err := c.n.leaderReplica(r.GetStore(), r.GetShard())
	if err != nil {
		return nil, err
	}
	defer release()
	if err := rep.ReadReady(ctx, replica.Consistency{Kind: replica.Absolute}); err != nil {
		return nil, status.Errorf(codes.Unavailable, "shard %d: %v", r.GetShard(), err)
	}
	out := &controlpb.ShardTableReply{Applied: rep.AppliedIndex()}
	if t := rep.Table(); t != nil {
		out.Table, _ = json.Marshal(t)
	}
	return out, nil
}

// errLeadershipLost ends a move, or a move command, that ran on a leader
// which then stopped leading: the caller goes on with the new leader.
var errLeadershipLost = errors.New("this node stopped leading the shard")

// leaderPoll is how often whileLeading checks the replica's leadership.
const leaderPoll = 50 * time.Millisecond

// whileLeading returns a context that ends with ctx or, with cause
// errLeadershipLost, as soon as rep stops leading. A leader cut off from
// its peers keeps its proposals pending until it hears of a later term,
// which it cannot while cut off: without this, a move (and the plan that
// waits for it) would hang on it until the plan's task timed out.
func whileLeading(ctx context.Context, rep interface{ IsLeader() bool }) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		t := time.NewTicker(leaderPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !rep.IsLeader() {
					cancel(errLeadershipLost)
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// leaderReplica returns the local replica of shard if it leads.
func (n *SN) leaderReplica(store string, shard uint64) (*replica.Raft, func(), error) {
	n.ctlMu.Lock()
	err := n.checkStore(store)
	n.ctlMu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	release, err := n.enter()
	if err != nil {
		return nil, nil, status.Error(codes.Unavailable, err.Error())
	}
	rep := n.replica(shard)
	switch {
	case rep == nil:
		release()
		return nil, nil, status.Errorf(codes.FailedPrecondition, "%s hosts no running replica of %s", topology.NodeName(n.id()), topology.ShardName(topology.ShardID(shard)))
	case !rep.IsLeader():
		release()
		lead, _ := rep.Leader()
		return nil, nil, notLeaderStatus(n.id(), shard, lead)
	}
	return rep, release, nil
}

// notLeaderStatus is the answer of a node that does not lead shard: it
// names the leader it knows as "(leader: snN)", which controlLeaderHint reads.
func notLeaderStatus(me topology.NodeID, shard, leader uint64) error {
	return status.Errorf(codes.FailedPrecondition, "%s does not lead %s (leader: sn%d)", topology.NodeName(me), topology.ShardName(topology.ShardID(shard)), leader)
}

var controlLeaderRE = regexp.MustCompile(`\(leader: sn([0-9]+)\)`)

// leaderHint returns the leader a not-leader answer names (0: none).
func controlLeaderHint(err error) uint64 {
	m := controlLeaderRE.FindStringSubmatch(status.Convert(err).Message())
	if m == nil {
		return 0
	}
	id, _ := strconv.ParseUint(m[1], 10, 64)
	return id
}

// MovePartition runs a move whose source this node leads.
func (c controlRPC) MovePartition(r *controlpb.MovePartitionRequest, stream controlpb.Control_MovePartitionServer) error {
	n := c.n
	src, release, err := n.leaderReplica(r.GetStore(), r.GetFromShard())
	if err != nil {
		return err
	}
	defer release()
	dst := &remoteShard{n: n, store: r.GetStore(), shard: r.GetToShard()}
	last := time.Time{}
	cfg := migrate.Config{BytesPerSec: r.GetBytesPerSec(), Progress: func(p migrate.Progress) {
		if time.Since(last) < 200*time.Millisecond && p.Phase != "done" {
			return
		}
		last = time.Now()
		_ = stream.Send(&controlpb.MoveProgress{Phase: p.Phase, BytesCopied: p.BytesCopied, Replayed: p.Replayed, Applied: p.Applied})
	}}
	cfg.Failpoint = n.movePause(r.GetPartition())
	n.log.Info("moving a partition", "partition", r.GetPartition(), "from", r.GetFromShard(), "to", r.GetToShard())
	ctx, stop := whileLeading(stream.Context(), src)
	defer stop()
	err = migrate.Run(ctx, migrate.Move{Partition: r.GetPartition(), From: r.GetFromShard(), To: r.GetToShard()}, src, dst, cfg)
	if errors.Is(context.Cause(ctx), errLeadershipLost) {
		err = fmt.Errorf("%w: %v", errLeadershipLost, err)
	}
	if err != nil {
		n.log.Warn("partition move stopped", "partition", r.GetPartition(), "err", err)
		return status.Errorf(codes.Unavailable, "moving partition %d from %s to %s: %v", r.GetPartition(),
			topology.ShardName(topology.ShardID(r.GetFromShard())), topology.ShardName(topology.ShardID(r.GetToShard())), err)
	}
	n.log.Info("partition moved", "partition", r.GetPartition(), "from", r.GetFromShard(), "to", r.GetToShard())
	return stream.Send(&controlpb.MoveProgress{Phase: "done"})
}

// failpointMovePause pauses partition moves at the phases of
// migrate.Config.Failpoint (failpoint.go), so that a fault test can strike
// there: CAIRN_FAILPOINT_MOVE_PAUSE=copy=3s,activate=3s,once=FILE. The
// node logs "failpoint: move paused" with the phase and the partition.
const failpointMovePause = "CAIRN_FAILPOINT_MOVE_PAUSE"

// movePause returns the failpoint of a move of partition p (nil unless
// failpointMovePause is set).
func (n *SN) movePause(p uint32) func(context.Context, string) error {
	if n.movePoint == nil {
		return nil
	}
	return func(ctx context.Context, phase string) error { return n.movePoint.pause(ctx, phase, "partition", p) }
}

// remoteShard is a migrate.Target: a shard reached through its leader's
// Control service, wherever that is (this node included).
type remoteShard struct {
	n      *SN
	store  string
	shard  uint64
	leader uint64 // the node last known to lead
	next   int    // the replica to ask when no leader is known
}

// call runs fn against the shard's leader, following not-leader answers,
// until ctx ends.
func (s *remoteShard) call(ctx context.Context, fn func(controlpb.ControlClient) error) error {
	for attempt := 0; ; attempt++ {
		addr, err := s.leaderAddr()
		if err == nil {
			cc, cerr := s.n.adminConns.Get(addr)
			if cerr != nil {
				return cerr
			}
			err = fn(controlpb.NewControlClient(cc))
			if err == nil {
				return nil
			}
			if st, ok := status.FromError(err); ok && st.Code() != codes.FailedPrecondition && st.Code() != codes.Unavailable {
				return err
			}
			s.leader = controlLeaderHint(err) // 0: ask another replica
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shard %d: %w (last: %v)", s.shard, ctx.Err(), err)
		case <-time.After(time.Duration(min(attempt+1, 10)) * 50 * time.Millisecond):
		}
	}
}

// leaderAddr returns the address of the node that leads the shard, as far
// as this node knows: its last answer, else the topology's replicas in
// turn, asking each.
func (s *remoteShard) leaderAddr() (string, error) {
	t := s.n.topology()
	if t == nil {
		return "", errors.New("no topology")
	}
	sh, ok := t.Shard(topology.ShardID(s.shard))
	if !ok {
		return "", fmt.Errorf("shard %d is not in topology %d", s.shard, t.Seq)
	}
	if s.leader == 0 {
		s.next++
		s.leader = uint64(sh.Replicas[s.next%len(sh.Replicas)])
		if rep := s.n.replica(s.shard); rep != nil {
			if lead, _ := rep.Leader(); lead != 0 {
				s.leader = lead
			}
		}
	}
	node, ok := t.Node(topology.NodeID(s.leader))
	if !ok {
		return "", fmt.Errorf("node %d is not in topology %d", s.leader, t.Seq)
	}
	return node.Addr, nil
}

func (s *remoteShard) Propose(ctx context.Context, cmd *commandpb.Command) (storage.Result, error) {
	b, err := proto.Marshal(cmd)
	if err != nil {
		return storage.Result{}, err
	}
	var reply *controlpb.ShardCommandReply
	err = s.call(ctx, func(cc controlpb.ControlClient) error {
		var err error
		reply, err = cc.ShardCommand(ctx, &controlpb.ShardCommandRequest{Store: s.store, Shard: s.shard, Command: b})
		return err
	})
	if err != nil {
		return storage.Result{}, err
	}
	return storage.Result{Err: replyErr(reply)}, nil
}

// replyErr turns a ShardCommand refusal back into the error kind it was.
func replyErr(r *controlpb.ShardCommandReply) error {
	if r.GetError() == "" {
		return nil
	}
	kinds := map[string]error{"move_state": storage.ErrMoveState, "not_served": storage.ErrNotServed, "moving": storage.ErrMoving, "bad_command": storage.ErrBadCommand}
	if k, ok := kinds[r.GetErrorKind()]; ok {
		return fmt.Errorf("%w (%s)", k, r.GetError())
	}
	return errors.New(r.GetError())
}

func (s *remoteShard) Table(ctx context.Context) (*storage.PartitionTable, error) {
	var reply *controlpb.ShardTableReply
	err := s.call(ctx, func(cc controlpb.ControlClient) error {
		var err error
		reply, err = cc.ShardTable(ctx, &controlpb.ShardTableRequest{Store: s.store, Shard: s.shard})
		return err
	})
	if err != nil || len(reply.GetTable()) == 0 {
		return nil, err
	}
	var t storage.PartitionTable
	if err := json.Unmarshal(reply.GetTable(), &t); err != nil {
		return nil, fmt.Errorf("shard %d's table: %w", s.shard, err)
	}
	return &t, nil
}
