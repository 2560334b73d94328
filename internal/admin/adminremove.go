package admin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// plan remove-admin takes an admin replica out of the admin group:
//
//	1 transfer-admin-leader   if the admin to remove leads, hand the
//	                          leadership to another running admin (the
//	                          new leader resumes the plan at this task,
//	                          which then has nothing to do)
//	2 remove-admin-member     Raft conf change: remove it from the group
//	3 drop-admin              tell its node to close the replica, forget
//	                          it in membership.json and delete ROOT/admin;
//	                          a node that does not answer is recorded in
//	                          Meta.AdminCleanup and the plan says so
//	4 record-admin-removal    Meta.Admins and the event log
//
// A node in Meta.AdminCleanup (or that still reports an admin replica it
// is no longer a member for) gets a plan of tasks 3 and 4 only.

// adminMembers returns the admin group's members as this replica knows
// them: its voters, then its learners.
func (s *Service) adminMembers() []uint64 {
	return append(slices.Clone(s.cfg.Replica.Voters()), s.cfg.Replica.Learners()...)
}

// adminRunning reports whether the admin on storage node id runs: self
// (the node asking) does; another does when its node answered Describe
// (infos, from describeAll) and hosts an admin replica.
func adminRunning(id, self uint64, infos map[uint64]*controlpb.NodeInfo) bool {
	return id == self || infos[id].GetAdmin()
}

// runningAdmins counts the voters whose admin runs (adminRunning).
func runningAdmins(voters []uint64, self uint64, infos map[uint64]*controlpb.NodeInfo) int {
	up := 0
	for _, id := range voters {
		if adminRunning(id, self, infos) {
			up++
		}
	}
	return up
}

// adminDown says why the admin on id does not run and what brings it back.
func adminDown(id uint64, infos map[uint64]*controlpb.NodeInfo) downReplica {
	d := downReplica{Name: "admin on " + snName(id), Reason: "its node " + snName(id) + " does not answer",
		Fix: "start " + snName(id) + " with cairn sn start --root DIR"}
	if infos[id] != nil {
		d.Reason, d.Fix = snName(id)+" answers but runs no admin replica", "restart "+snName(id)
	}
	return d
}

// checkAdminRemoval returns an error (InvalidArgument) unless the admin
// group, whose voters are voters, can lose its voter target: the last
// admin may never go; without force, the admins left must include a
// majority of running ones, or they could not elect a leader. self is
// the node asking; infos is describeAll's answer. Removing a learner (an
// admin whose deploy-admin did not finish) or an admin that is itself
// down never costs the group a running member and passes the majority rule
// whenever the group could elect a leader before.
func checkAdminRemoval(target, self uint64, voters []uint64, infos map[uint64]*controlpb.NodeInfo, force bool) error {
	if !slices.Contains(voters, target) {
		return nil
	}
	if len(voters) == 1 {
		return failed("the admin on %s is the store's only admin: without it the store cannot be administered. Deploy another admin first (plan deploy-admin -sn SN -wait), then remove this one", snName(target))
	}
	if force {
		return nil
	}
	var rest []string
	var down []downReplica
	for _, v := range voters {
		if v == target {
			continue
		}
		rest = append(rest, snName(v))
		if !adminRunning(v, self, infos) {
			down = append(down, adminDown(v, infos))
		}
	}
	need := len(rest)/2 + 1
	running := len(rest) - len(down)
	if running >= need {
		return nil
	}
	var alt []string
	for _, v := range voters {
		if v != target && !adminRunning(v, self, infos) && checkAdminRemoval(v, self, voters, infos, false) == nil {
			alt = append(alt, "plan remove-admin -admin "+snName(v))
		}
	}
	return adminMajorityError(snName(target), rest, running, need, down, alt)
}

// adminMajorityError says that removing the admin on target would leave
// the admins rest, of which running run, short of the need they must have
// to elect a leader; which are down, and what to do (alt: removals that
// would pass instead).
func adminMajorityError(target string, rest []string, running, need int, down []downReplica, alt []string) error {
	names, fixes := downText(down)
	var b strings.Builder
	fmt.Fprintf(&b, "removing the admin on %s would leave %d admins (%s) of which %d runs, fewer than the %d they need to elect a leader: the store could then not be administered",
		target, len(rest), strings.Join(rest, ", "), running, need)
	fmt.Fprintf(&b, "; down: %s. Bring %s back first (%s)", names, itOrThem(len(down)), fixes)
	if len(alt) > 0 {
		fmt.Fprintf(&b, ", or remove the down admin instead (%s)", strings.Join(alt, "; "))
	}
	fmt.Fprintf(&b, ", or add -force to remove the admin on %s anyway; the admin then runs no command until a majority of the admins left is up", target)
	return failed("%s", b.String())
}

// removalKind says what plan remove-admin -admin id removes: a member of
// the admin group (voter or learner), or, member false, the leftover
// replica of an admin removed while its node was down (listed in cleanup,
// or reported by the node). Any other id is an error that lists the
// admins.
func removalKind(id uint64, members, voters, cleanup []uint64, infos map[uint64]*controlpb.NodeInfo) (member bool, err error) {
	if slices.Contains(members, id) {
		return true, nil
	}
	if slices.Contains(cleanup, id) || infos[id].GetAdmin() {
		return false, nil
	}
	return false, notFound("there is no admin on %s; the admins are on %s (show admins lists them)", snName(id), snNames(voters))
}

func (s *Service) planRemoveAdmin(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	id, err := parseID(a["admin"], "sn")
	if err != nil {
		return nil, usageError("-admin: %v (show admins names each admin by its storage node)", err)
	}
	voters := s.cfg.Replica.Voters()
	infos := s.describeAll(ctx, m)
	member, err := removalKind(id, s.adminMembers(), voters, m.AdminCleanup, infos)
	if err != nil {
		return nil, err
	}
	if m.sn(id) == nil {
		return nil, failed("%s is not deployed as a storage node, so its admin could not be told to stop; deploy it first (plan deploy-sn)", snName(id))
	}
	force := a["force"] == "true"
	if err := checkAdminRemoval(id, s.cfg.Node, voters, infos, force); err != nil {
		return nil, err
	}
	args := map[string]string{"sn": strconv.FormatUint(id, 10)}
	if force {
		args["force"] = "true"
	}
	name := snName(id)
	var tasks []*Task
	if member {
		tasks = append(tasks,
			newTask("transfer-admin-leader", "hand the admin leadership to another admin if "+name+" leads", args),
			newTask("remove-admin-member", "remove "+name+" from the admin group", args))
	}
	tasks = append(tasks,
		newTask("drop-admin", "tell "+name+" to stop its admin replica and delete its files", args),
		newTask("record-admin-removal", "record the removal", args))
	return s.createPlan(ctx, "remove-admin", a, tasks, nil)
}

// taskTransferAdminLeader hands the admin leadership to the most caught-up
// other running admin if this admin is the one to remove. It returns once
// this replica no longer leads; the executor here then stops, and the new
// leader resumes the plan at this task, where it has nothing to do.
func (s *Service) taskTransferAdminLeader(ctx context.Context, t *Task) error {
	target := argID(t, "sn")
	if target != s.cfg.Node || !s.cfg.Replica.IsLeader() {
		return nil
	}
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	to := s.successor(ctx, m, target)
	if to == 0 {
		return fmt.Errorf("no other admin runs to take over the admin leadership from %s", snName(target))
	}
	_, err = s.store.update(ctx, func(m *Meta) error {
		m.event("admin leadership handed from %s to %s, to remove the admin on %s", snName(target), snName(to), snName(target))
		return nil
	})
	if err != nil {
		return err
	}
	s.log.Info("handing the admin leadership over to remove this admin", "to", to)
	s.cfg.Replica.TransferLeadership(to)
	deadline := time.Now().Add(10 * time.Second)
	for s.cfg.Replica.IsLeader() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not take over the admin leadership within 10s", snName(to))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// successor returns the voter other than target whose node answers with a
// running admin replica that has applied the most, or 0.
func (s *Service) successor(ctx context.Context, m *Meta, target uint64) uint64 {
	infos := s.describeAll(ctx, m)
	var best, applied uint64
	for _, v := range s.cfg.Replica.Voters() {
		if info := infos[v]; v != target && info.GetAdmin() && (best == 0 || info.GetAdminApplied() > applied) {
			best, applied = v, info.GetAdminApplied()
		}
	}
	return best
}

// taskRemoveAdminMember removes the admin from the admin group. Without
// -force it checks again, when it runs, that the admins left keep a
// majority of running ones: the plan may have waited since it was created.
func (s *Service) taskRemoveAdminMember(ctx context.Context, t *Task) error {
	id := argID(t, "sn")
	if !slices.Contains(s.adminMembers(), id) {
		return nil
	}
	if id == s.cfg.Node {
		// The leadership came back here after task 1: hand it over again.
		if err := s.taskTransferAdminLeader(ctx, t); err != nil {
			return err
		}
		return fmt.Errorf("handed the admin leadership over; the new leader removes %s", snName(id))
	}
	if t.Args["force"] != "true" {
		m, _, err := s.store.load(ctx)
		if err != nil {
			return err
		}
		if err := checkAdminRemoval(id, s.cfg.Node, s.cfg.Replica.Voters(), s.describeAll(ctx, m), false); err != nil {
			return permanent("%s", status.Convert(err).Message())
		}
	}
	return s.cfg.Replica.RemoveVoter(ctx, id)
}

// taskDropAdmin tells the removed admin's node to stop its replica. A node
// that does not answer does not fail the plan: the group no longer counts
// it, so it is recorded in Meta.AdminCleanup and the plan's note says to
// run plan remove-admin again once the node is back.
func (s *Service) taskDropAdmin(ctx context.Context, p *Plan, t *Task) error {
	id := argID(t, "sn")
	if slices.Contains(s.adminMembers(), id) {
		return permanent("%s is still a member of the admin group; its replica must not be dropped", snName(id))
	}
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	sn := m.sn(id)
	if sn == nil {
		return permanent("%s is not deployed", snName(id))
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = s.control(sn.Addr()).DropAdmin(dctx, &controlpb.DropAdminRequest{Store: m.Store, SnId: id})
	cancel()
	unreached := false
	if code := status.Code(err); code == codes.Unavailable || code == codes.DeadlineExceeded {
		unreached = true
	} else if err != nil {
		return err
	}
	_, err = s.store.update(ctx, func(m *Meta) error {
		q := m.plan(p.ID)
		if q.Data == nil {
			q.Data = map[string]string{}
		}
		m.AdminCleanup = slices.DeleteFunc(m.AdminCleanup, func(x uint64) bool { return x == id })
		delete(q.Data, "note")
		if unreached {
			m.AdminCleanup = append(m.AdminCleanup, id)
			q.Data["note"] = fmt.Sprintf("%s did not answer, so its admin replica still has to be stopped: when %s is back, run plan remove-admin -admin %s -wait (meanwhile it cannot rejoin the admin group: the admins no longer count it)",
				snName(id), snName(id), snName(id))
		}
		return nil
	})
	return err
}

func (s *Service) taskRecordAdminRemoval(ctx context.Context, p *Plan, t *Task) error {
	id := argID(t, "sn")
	_, err := s.store.update(ctx, func(m *Meta) error {
		if q := m.plan(p.ID); q != nil && q.Data["recorded"] == "true" {
			return nil
		}
		m.Admins = slices.DeleteFunc(m.Admins, func(x uint64) bool { return x == id })
		text := fmt.Sprintf("admin on %s removed (%d admins: %s)", snName(id), len(s.cfg.Replica.Voters()), snNames(s.cfg.Replica.Voters()))
		if !slices.ContainsFunc(p.Tasks, func(t *Task) bool { return t.Kind == "remove-admin-member" }) {
			text = fmt.Sprintf("admin replica on %s stopped and deleted (an earlier plan removed it from the admin group)", snName(id))
		}
		if slices.Contains(m.AdminCleanup, id) {
			text += fmt.Sprintf("; %s did not answer: run plan remove-admin -admin %s again when it is back", snName(id), snName(id))
		}
		m.event("%s", text)
		if q := m.plan(p.ID); q != nil {
			if q.Data == nil {
				q.Data = map[string]string{}
			}
			q.Data["recorded"] = "true"
		}
		return nil
	})
	return err
}
