package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairndb/cairn/internal/auth"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/grpcconn"
	"github.com/cairndb/cairn/internal/replica"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Shard is the id of the admin group in the node transport. Data shards
// count from 1 and never reach it.
const Shard uint64 = 1 << 40

// Config configures a Service.
type Config struct {
	// Replica is this node's replica of the admin group. Required.
	Replica *replica.Raft
	// Node is this storage node's id; Self describes it (for configure).
	Node uint64
	Self func() *controlpb.NodeInfo
	// TaskDelay pauses before each plan task. Zero in production; fault
	// tests set it (CAIRN_FAILPOINT_TASK_DELAY) to kill a leader mid-plan.
	TaskDelay time.Duration
	// Pause, if set, is called at each phase of a replica change (the
	// phases of replica_plan.go) and may wait there. Nil in production;
	// fault tests set it (CAIRN_FAILPOINT_REPLICA_PAUSE) to strike then.
	Pause func(ctx context.Context, phase string, attrs ...any) error
	// PlanTimeout bounds how long a task retries before its plan fails.
	// Default 5 minutes.
	PlanTimeout time.Duration
	Logger      *slog.Logger
	// DialOptions are added to every connection to a node (a secure
	// store's TLS credentials).
	DialOptions []grpc.DialOption
	// Route, if set, returns the address to dial for a node's address
	// (the hosting node's --peer overrides; as grpcconn.Cache.Route,
	// connections are cached by the address dialed). It must take no lock.
	Route func(addr string) string
	// LocalUsers reads this node's user table (a secure node's
	// ROOT/security/users.json), which the first user command starts from.
	// Nil on a node that is not secure.
	LocalUsers func() (uint64, []auth.User, error)
	// RepairStuckAfter is how long a replica may answer its leader without
	// being able to follow it before the admin leader has it rebuilt from
	// its peers (repair_stuck.go). Zero: never; verify configuration
	// reports it.
	RepairStuckAfter time.Duration
}

// Service is the admin service of one admin replica. Commands run on the
// admin group's leader; a Service on another replica forwards them there.
// The plan executor runs on the leader only. Safe for concurrent use.
type Service struct {
	cfg   Config
	store metaStore
	log   *slog.Logger

	wake chan struct{} // a plan became runnable
	stop chan struct{}
	wg   sync.WaitGroup
	// running is the id of the plan the executor is running, 0 if none.
	running atomic.Int64

	connMu sync.Mutex
	conns  map[string]*grpc.ClientConn

	// closeMu and closed guard the reads of the replica's engine made
	// without a leader (noleader.go): Close sets closed under closeMu, so
	// no such read runs once the caller may close the replica.
	closeMu sync.RWMutex
	closed  bool

	// leaderless is since when the admin group has had no leader
	// (UnixNano; 0: it has one), kept by watchLeader: a command that finds
	// it leaderless for leaderWait already does not wait again.
	leaderless atomic.Int64

	// repairMarks are the stuck replicas this leader watches, by service
	// name (repair_stuck.go); incidentLoop's goroutine only.
	repairMarks map[string]*repairMark
}

// New starts a Service and its executor.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PlanTimeout == 0 {
		cfg.PlanTimeout = 5 * time.Minute
	}
	s := &Service{cfg: cfg, store: metaStore{r: cfg.Replica}, log: cfg.Logger.With("component", "admin"),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), conns: make(map[string]*grpc.ClientConn)}
	s.wg.Add(3)
	go s.executor()
	go s.incidentLoop()
	go s.watchLeader()
	return s
}

// watchLeader keeps leaderless: since when the admin group has had no
// leader, as this replica sees it.
func (s *Service) watchLeader() {
	defer s.wg.Done()
	for {
		if lead, _ := s.cfg.Replica.Leader(); lead != 0 {
			s.leaderless.Store(0)
		} else {
			s.leaderless.CompareAndSwap(0, time.Now().UnixNano())
		}
		select {
		case <-s.stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the executor and closes connections. The replica is the
// caller's to close.
func (s *Service) Close() {
	s.closeMu.Lock()
	s.closed = true
	s.closeMu.Unlock()
	close(s.stop)
	s.wg.Wait()
	s.connMu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.connMu.Unlock()
}

// reply builds a successful reply from text and a JSON-able value.
func reply(text string, v any) (*cairnpb.AdminReply, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &cairnpb.AdminReply{Text: text, Json: b}, nil
}

// The admin's errors follow one rule for exit codes (internal/exitcode):
//
//   - usageError (InvalidArgument, exit 2): bad input the user must fix: a
//     malformed value, or a reference to something that does not exist
//     (notFound: a plan id, pool, storage node, service, zone, snapshot,
//     topology candidate or admin).
//   - failed (FailedPrecondition, exit 1): a valid command that could not
//     be done now: the thing exists already, the store is in the wrong
//     state, a safety check refused it (add -force), or a node it needs
//     does not answer (plan deploy-sn to a port where none listens).
//   - Unavailable (exit 3): no admin leader answers; retrying may help.
func usageError(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// notFound is a reference to something that does not exist: bad input,
// the usage class (exit 2), like a malformed value.
func notFound(format string, args ...any) error {
	return usageError(format, args...)
}

// failed is a valid command that could not be done (exit 1).
func failed(format string, args ...any) error {
	return status.Errorf(codes.FailedPrecondition, format, args...)
}

type handler func(s *Service, ctx context.Context, args map[string]string) (*cairnpb.AdminReply, error)

// Command runs req on the leader, forwarding it there if this replica is
// not the leader.
func (s *Service) Command(ctx context.Context, req *cairnpb.AdminRequest) (*cairnpb.AdminReply, error) {
	cmd, n, ok := Lookup(splitWords(req.GetCommand()))
	if !ok || n != len(splitWords(req.GetCommand())) {
		return nil, usageError("unknown command %q; type help", req.GetCommand())
	}
	args := req.GetArgs()
	if args == nil {
		args = map[string]string{}
	}
	if err := cmd.Check(args); err != nil {
		return nil, usageError("%v", err)
	}
	// The leader may be dead but not yet replaced: keep asking until a
	// leader answers, for up to 15 s (leaderWait for a local command,
	// which then answers from this replica's copy: noleader.go).
	local := localCommands[cmd.Name] && !req.GetForwarded()
	deadline := time.Now().Add(15 * time.Second)
	if local {
		deadline = time.Now().Add(leaderWait)
	}
	for !s.cfg.Replica.IsLeader() {
		if !s.awaitLeader(ctx) {
			return s.withoutLeader(ctx, req, cmd, args, 0)
		}
		if s.cfg.Replica.IsLeader() {
			break
		}
		if req.GetForwarded() {
			return nil, status.Error(codes.Unavailable, "admin: leadership is moving; retry")
		}
		lead, _ := s.cfg.Replica.Leader()
		r, err := s.forwardBounded(ctx, req, local)
		unavailable := status.Code(err) == codes.Unavailable || status.Code(err) == codes.DeadlineExceeded
		if local && unavailable && time.Now().After(deadline) && ctx.Err() == nil {
			return s.withoutLeader(ctx, req, cmd, args, lead)
		}
		if status.Code(err) != codes.Unavailable || time.Now().After(deadline) || ctx.Err() != nil {
			return r, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	h := handlers[cmd.Name]
	if h == nil {
		return nil, usageError("command %q is not implemented", cmd.Name)
	}
	r, err := h(s, ctx, args)
	return r, asStatus(err)
}

// asStatus gives plain errors a gRPC code that says who must act.
func asStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var nl *replica.NotLeaderError
	switch {
	case errors.Is(err, ErrNoMeta):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.As(err, &nl), errors.Is(err, replica.ErrDropped), errors.Is(err, context.DeadlineExceeded):
		return status.Errorf(codes.Unavailable, "admin: %v; retry", err)
	case errors.Is(err, replica.ErrUnknownOutcome):
		return status.Errorf(codes.Unknown, "admin: %v; check with show plans or show events before retrying", err)
	}
	return status.Error(codes.Internal, err.Error())
}

// awaitLeader waits up to leaderWait for the admin group to have a leader,
// counted from when it lost the last one: once the group has been
// leaderless that long, commands answer at once.
func (s *Service) awaitLeader(ctx context.Context) bool {
	deadline := time.Now().Add(leaderWait)
	if since := s.leaderless.Load(); since != 0 {
		deadline = time.Unix(0, since).Add(leaderWait)
	}
	for {
		if lead, _ := s.cfg.Replica.Leader(); lead != 0 {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
		case <-s.stop:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// forwardBounded forwards req to the leader; for a local command, for at
// most leaderWait, so that a leader that does not answer is given up on.
func (s *Service) forwardBounded(ctx context.Context, req *cairnpb.AdminRequest, local bool) (*cairnpb.AdminReply, error) {
	if !local {
		return s.forward(ctx, req)
	}
	fctx, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	return s.forward(fctx, req)
}

func (s *Service) forward(ctx context.Context, req *cairnpb.AdminRequest) (*cairnpb.AdminReply, error) {
	lead, _ := s.cfg.Replica.Leader()
	m, _, err := s.store.loadLocal()
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "admin: this admin replica is catching up; retry (%v)", err)
	}
	sn := m.sn(lead)
	addr := ""
	if sn != nil {
		addr = sn.Addr()
	} else if m.BootstrapUID != "" && lead == 1 {
		return nil, status.Error(codes.Unavailable, "admin: the leader is the bootstrap admin, not yet deployed; connect to it")
	}
	if addr == "" {
		return nil, status.Errorf(codes.Unavailable, "admin: the admin leader is node %d, whose address this replica does not know yet; retry", lead)
	}
	fwd := &cairnpb.AdminRequest{Command: req.GetCommand(), Args: req.GetArgs(), Forwarded: true}
	return cairnpb.NewAdminClient(s.conn(addr)).Command(ctx, fwd)
}

// conn returns a cached connection to addr, which reconnects with
// grpcconn's bounded back-off.
func (s *Service) conn(addr string) *grpc.ClientConn {
	if s.cfg.Route != nil {
		addr = s.cfg.Route(addr)
	}
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if c, ok := s.conns[addr]; ok {
		return c
	}
	c, err := grpcconn.New(addr, s.cfg.DialOptions...)
	if err != nil {
		panic(fmt.Sprintf("admin: grpcconn.New(%q): %v", addr, err)) // only fails on a malformed target
	}
	s.conns[addr] = c
	return c
}

func (s *Service) control(addr string) controlpb.ControlClient {
	return controlpb.NewControlClient(s.conn(addr))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := slices.Collect(maps.Keys(m))
	sort.Strings(ks)
	return ks
}

// Addr returns the address of storage node id as this replica's copy of
// the metadata knows it (possibly stale). The node's transport uses it to
// reach admins and nodes it has not been told about directly.
func (s *Service) Addr(id uint64) (string, bool) {
	m, _, err := s.store.loadLocal()
	if err != nil {
		return "", false
	}
	if sn := m.sn(id); sn != nil {
		return sn.Addr(), true
	}
	return "", false
}
