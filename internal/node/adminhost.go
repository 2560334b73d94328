package node

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// adminHost is this node's replica of the admin group: its own small
// engine in ROOT/admin (so the admin's records never mix with shard
// spans), a Raft replica of group admin.Shard, and the admin service.
//
// Callers that reach the service (and so the engine) go through use/done;
// close waits for them after stopping the service and the replica, so the
// engine is never read once closed (DropAdmin, a heal, shutdown).
type adminHost struct {
	engine *storage.Engine
	rep    *replica.Raft
	svc    *admin.Service

	mu     sync.RWMutex
	closed bool
}

// failpointTaskDelay pauses the admin's plan executor before each task, so
// a fault test can kill the admin leader in the middle of a plan.
const failpointTaskDelay = "CAIRN_FAILPOINT_TASK_DELAY"

// failpointReplicaPause pauses the admin's replica changes at the phases
// of admin.Config.Pause (failpoint.go), so that a fault test can strike
// in the middle of one: CAIRN_FAILPOINT_REPLICA_PAUSE=learner=3s,once=FILE.
// The node logs "failpoint: replica change paused" with the phase, the
// shard and the node joining or leaving.
const failpointReplicaPause = "CAIRN_FAILPOINT_REPLICA_PAUSE"

// openAdmin starts the admin replica: as the group's first member
// (founder), or empty, waiting for the leader to add it and send it a
// snapshot. On a restart the replica's stored state wins either way.
// rebuild starts it silent after its files were set aside (adminheal.go):
// it asks the leader to readmit it, as a data replica that lost its data.
func (n *SN) openAdmin(founder, rebuild bool) error {
	sc := storage.DefaultConfig(n.adminDir())
	sc.CacheBytes, sc.MinFreeBytes, sc.Logger, sc.FS = 8<<20, n.cfg.MinFreeBytes, n.cfg.Logger, n.cfg.FS
	sc.OnCorruption = n.onAdminCorruption
	e, err := storage.Open(sc)
	if err != nil {
		return err
	}
	meta, err := e.Init("admin", 1)
	if err != nil {
		e.Close()
		return err
	}
	if !rebuild && n.incidents.unresolved(true) {
		// Stopped while it rebuilt: rejoin again unless the snapshot landed.
		_, has, err := e.ShardState(admin.Shard, storage.ShardTruncated)
		if err != nil {
			e.Close()
			return err
		}
		rebuild = !has
	}
	id := uint64(n.id())
	rep, err := replica.OpenRaft(e, meta, replica.RaftConfig{
		Shard: admin.Shard, Node: id, Voters: []uint64{id}, Origin: 1,
		Spans:        storage.ShardSpans(admin.Shard),
		TickInterval: n.cfg.TickInterval, LogKeep: 1000, Sender: sender{n},
		Logger: n.log.With("component", "admin"), Rejoin: !founder || rebuild,
	})
	if err != nil {
		e.Close()
		return err
	}
	if !rebuild {
		rep.Admit()
	}
	delay, _ := time.ParseDuration(os.Getenv(failpointTaskDelay))
	svc := admin.New(admin.Config{Replica: rep, Node: id, Self: n.describe, TaskDelay: delay, Pause: n.replicaPoint.pause, Logger: n.log,
		DialOptions: n.sec.dialOptions(), Route: n.route, LocalUsers: n.localUsers(), RepairStuckAfter: n.cfg.RepairStuckAfter})
	n.admin.Store(&adminHost{engine: e, rep: rep, svc: svc})
	n.log.Info("admin replica started", "founder", founder, "rebuild", rebuild)
	return nil
}

func (h *adminHost) handoff() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	h.rep.Handoff(ctx)
}

// use reports whether the service may be used; done must follow a true.
func (h *adminHost) use() bool {
	h.mu.RLock()
	if h.closed {
		h.mu.RUnlock()
		return false
	}
	return true
}

func (h *adminHost) done() { h.mu.RUnlock() }

func (h *adminHost) close() {
	h.svc.Close()
	h.rep.Close()
	h.mu.Lock() // the service's callers have returned: its stop ends their waits
	h.closed = true
	h.mu.Unlock()
	_ = h.engine.Close()
}

// adminRPC serves the admin shell on every node: an admin replica runs or
// forwards the command; configure on a fresh node creates the admin group
// here; other nodes forward to the peers they know.
type adminRPC struct {
	cairnpb.UnimplementedAdminServer
	n *SN
}

// Command checks the request's strings, runs or forwards it (command), and
// makes sure the reply's text is valid UTF-8: admin.proto no longer has the
// protobuf runtime check strings either way (see there), and a shell built
// from a proto3 copy of it would fail to read a reply that is not.
func (a adminRPC) Command(ctx context.Context, req *cairnpb.AdminRequest) (*cairnpb.AdminReply, error) {
	if err := checkAdminUTF8(req); err != nil {
		return nil, err
	}
	if err := a.n.checkAdminCaller(ctx, req.GetCommand(), req.GetForwarded()); err != nil {
		a.n.auditCommand(ctx, req, err)
		return nil, err
	}
	r, err := a.command(ctx, req)
	if r != nil && !utf8.ValidString(r.GetText()) {
		r.Text = strings.ToValidUTF8(r.GetText(), "\uFFFD")
	}
	if !req.GetForwarded() { // the node a client reached records it, once
		a.n.auditCommand(ctx, req, err)
	}
	return r, err
}

// checkAdminUTF8 refuses a command name, option name or option value that
// is not valid UTF-8 with INVALID_ARGUMENT naming it, and an ErrorDetail of
// kind invalid_argument and action FIX_INPUT as the KV service gives.
func checkAdminUTF8(req *cairnpb.AdminRequest) error {
	var msg string
	if !utf8.ValidString(req.GetCommand()) {
		msg = fmt.Sprintf("admin: the command name %q is not valid UTF-8", req.GetCommand())
	}
	args := req.GetArgs()
	names := slices.Sorted(maps.Keys(args))
	for _, k := range names {
		if msg != "" {
			break
		}
		switch {
		case !utf8.ValidString(k):
			msg = fmt.Sprintf("admin: the option name %q is not valid UTF-8", k)
		case !utf8.ValidString(args[k]):
			msg = fmt.Sprintf("admin: the value of option -%s is not valid UTF-8 (%q)", k, args[k])
		}
	}
	if msg == "" {
		return nil
	}
	st, err := status.New(codes.InvalidArgument, msg).WithDetails(&cairnpb.ErrorDetail{
		Kind: "invalid_argument", Action: cairnpb.ErrorDetail_ACTION_FIX_INPUT})
	if err != nil {
		return status.Error(codes.InvalidArgument, msg)
	}
	return st.Err()
}

func (a adminRPC) command(ctx context.Context, req *cairnpb.AdminRequest) (*cairnpb.AdminReply, error) {
	a.n.ctlMu.Lock()
	m := a.n.member.clone()
	a.n.ctlMu.Unlock()
	// An admin replica that rebuilds from the other admins (adminheal.go)
	// knows nothing yet: the command goes to the others.
	if h := a.n.admin.Load(); h != nil && !rebuilding(h.rep) && h.use() {
		r, err := h.svc.Command(ctx, req)
		h.done()
		if status.Code(err) != codes.Unavailable || req.GetForwarded() || m.Store == "" {
			return r, err
		}
		// This replica finds no leader: it may have been removed from the
		// admin group while its node was down (plan remove-admin), so the
		// admins no longer talk to it. Ask the other nodes.
		if fr, ferr := a.n.forwardAdmin(ctx, req, m); ferr == nil || status.Code(ferr) != codes.Unavailable {
			return fr, ferr
		}
		return r, err
	}
	switch {
	case req.GetCommand() == "configure" && m.Store == "":
		return a.n.bootstrapAdmin(ctx, req)
	case m.Store == "" && a.n.topology() != nil:
		return nil, status.Error(codes.FailedPrecondition, "this storage node was laid out by cairn cluster (a topology file) and has no admin")
	case m.Store == "":
		return nil, status.Error(codes.FailedPrecondition, "this storage node is not part of a store yet. To create a store with its first admin here, run: configure -name STORE. To add this node to an existing store, run plan deploy-sn in that store's admin")
	case req.GetForwarded():
		return nil, status.Error(codes.Unavailable, "no admin on this node")
	}
	return a.n.forwardAdmin(ctx, req, m)
}

// forwardAdmin tries the peers this node knows until an admin answers, over
// connections kept in n.adminConns (closed on shutdown).
func (n *SN) forwardAdmin(ctx context.Context, req *cairnpb.AdminRequest, m membership) (*cairnpb.AdminReply, error) {
	fwd := &cairnpb.AdminRequest{Command: req.GetCommand(), Args: req.GetArgs(), Forwarded: true}
	ids := make([]topology.NodeID, 0, len(m.Peers))
	for id := range m.Peers {
		if id != m.SN {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		cc, err := n.adminConns.Get(m.Peers[id])
		if err != nil {
			continue // a malformed address, or shutting down
		}
		r, err := cairnpb.NewAdminClient(cc).Command(ctx, fwd)
		if status.Code(err) != codes.Unavailable {
			return r, err
		}
	}
	return nil, status.Errorf(codes.Unavailable, "this node (sn%d) hosts no admin and no admin it knows answered; connect the shell to a node with an admin (show admins lists them)", m.SN)
}

// bootstrapAdmin makes a fresh node sn1 of a new store and the first
// member of its admin group, then runs configure there.
func (n *SN) bootstrapAdmin(ctx context.Context, req *cairnpb.AdminRequest) (*cairnpb.AdminReply, error) {
	if n.cfg.Init == nil {
		return nil, status.Error(codes.FailedPrecondition, "this node was not made by cairn sn init, so it cannot host an admin")
	}
	name := req.GetArgs()["name"]
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "configure: -name is required")
	}
	if err := admin.CheckStoreName(name); err != nil {
		return nil, err // before the membership is written: a refused name leaves the node as it was
	}
	n.ctlMu.Lock()
	if n.member.Store != "" || n.admin.Load() != nil {
		n.ctlMu.Unlock()
		return adminRPC{n: n}.Command(ctx, req)
	}
	m := membership{Store: name, SN: 1, Peers: map[topology.NodeID]string{1: n.Addr()}, Admin: true, AdminFounder: true}
	err := m.save(n.cfg.FS, n.cfg.Root)
	if err == nil {
		n.member = m
		n.noteStore()
		n.selfID.Store(1)
		n.log = n.cfg.Logger.With("node", 1)
		if err = n.ensureTransport(1); err == nil {
			err = n.openAdmin(true, false)
		}
	}
	n.ctlMu.Unlock()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "configure: starting the admin: %v", err)
	}
	return n.admin.Load().svc.Command(ctx, req)
}

// DropAdmin stops hosting the admin replica that plan remove-admin took out
// of the admin group. membership.json is saved first, so a node that
// crashes half-way does not open the admin again on restart, and the
// admin's retry finishes the job. It clears AdminFounder too: a later
// plan deploy-admin must add the node as a new, empty member, never found
// a group of its own. Idempotent.
func (c controlRPC) DropAdmin(_ context.Context, r *controlpb.DropAdminRequest) (*controlpb.NodeInfo, error) {
	n := c.n
	return n.change(func() error {
		if err := n.checkStore(r.GetStore()); err != nil {
			return err
		}
		if r.GetSnId() != uint64(n.id()) {
			return status.Errorf(codes.FailedPrecondition, "this node is sn%d, not sn%d", n.id(), r.GetSnId())
		}
		if n.member.Admin || n.member.AdminFounder {
			prev := n.member.clone()
			n.member.Admin, n.member.AdminFounder = false, false
			if err := n.member.save(n.cfg.FS, n.cfg.Root); err != nil {
				n.member = prev
				return err
			}
		}
		if h := n.admin.Swap(nil); h != nil {
			h.close()
			n.log.Info("admin replica stopped: removed from the admin group")
		}
		return n.cfg.FS.RemoveAll(n.adminDir())
	})
}
