package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// maxLag is how many Raft entries a replica may trail its leader before
// verify configuration calls it lagging.
const maxLag = 1000

// verification collects what verify configuration finds. Its JSON is a
// topology.Report: {"violations": [...], "warnings": [...]}, each finding
// {"rule", "subject", "message"}, with [] for none.
type verification struct {
	Violations []topology.Finding
	Warnings   []topology.Finding
}

// report is the verification as verify configuration's JSON shows it.
func (v *verification) report() topology.Report {
	return topology.Report{Violations: v.Violations, Warnings: v.Warnings}
}

func (v *verification) violate(rule, subject, format string, a ...any) {
	v.Violations = append(v.Violations, topology.Finding{Rule: rule, Subject: subject, Message: fmt.Sprintf(format, a...)})
}

func (v *verification) warn(rule, subject, format string, a ...any) {
	v.Warnings = append(v.Warnings, topology.Finding{Rule: rule, Subject: subject, Message: fmt.Sprintf(format, a...)})
}

func (s *Service) verify(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	infos := s.describeAll(ctx, m)
	var v verification
	seq := uint64(0)
	if m.Deployed == nil {
		v.warn("no-topology", m.Store, "no topology is deployed: create one with topology create and deploy it with plan deploy-topology")
	} else {
		seq = m.Deployed.Seq
		rep := m.Deployed.Check()
		v.Violations = append(v.Violations, rep.Violations...)
		for _, f := range rep.Warnings {
			if f.Rule == topology.RuleUnusedCapacity && goneNamed(m, f.Subject) {
				continue // plan remove-sn is the advice for it (verifyNodes)
			}
			v.Warnings = append(v.Warnings, f)
		}
		s.verifyShards(m, infos, &v)
	}
	s.verifyNodes(m, infos, &v)
	s.verifyStorage(m, infos, &v)
	s.verifyAdmins(m, infos, &v)
	if isLocalRead(ctx) {
		s.verifyNoLeader(infos, &v)
	}
	r, err := reply(verifyText(m, seq, len(infos), len(s.cfg.Replica.Voters()), &v), v.report())
	if err == nil {
		r.Problems = len(v.Violations) > 0
	}
	return r, err
}

// verifyText renders verify configuration's findings for store m at
// topology sequence seq, of whose nodes reachable answered, with admins
// admins. Its last line is always "Verification complete: N violations,
// M warnings." (singular for 1).
func verifyText(m *Meta, seq uint64, reachable, admins int, v *verification) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Verify: starting verification of store %s based upon topology sequence #%d\n", m.Store, seq)
	fmt.Fprintf(&b, "%d storage %s, %d reachable; %d %s\n", len(m.SNs), plural(len(m.SNs), "node", "nodes"), reachable, admins, plural(admins, "admin", "admins"))
	for _, f := range v.Violations {
		fmt.Fprintf(&b, "Verify: violation %s: %s\n", f.Subject, f.Message)
	}
	for _, f := range v.Warnings {
		fmt.Fprintf(&b, "Verify: warning   %s: %s\n", f.Subject, f.Message)
	}
	fmt.Fprintf(&b, "Verification complete: %s, %s.", countOf(len(v.Violations), "violation"), countOf(len(v.Warnings), "warning"))
	return b.String()
}

// goneNamed reports whether subject names a storage node marked Gone.
func goneNamed(m *Meta, subject string) bool {
	for _, sn := range m.SNs {
		if sn.Gone && subject == snName(sn.ID) {
			return true
		}
	}
	return false
}

// countOf is "1 warning", "2 warnings", "0 warnings".
func countOf(n int, what string) string {
	return fmt.Sprintf("%d %s", n, plural(n, what, what+"s"))
}

// verifyNoLeader records, for a verify run without an admin leader
// (noleader.go), that the store cannot be administered.
func (s *Service) verifyNoLeader(infos map[uint64]*controlpb.NodeInfo, v *verification) {
	voters := s.cfg.Replica.Voters()
	up := runningAdmins(voters, s.cfg.Node, infos)
	v.violate("no-admin-leader", "admin", "no admin leader: %d of the %d admins run, and %d must to elect one; until then no plan runs and the metadata cannot change (start the admins' nodes with cairn sn start --root DIR)",
		up, len(voters), len(voters)/2+1)
}

func (s *Service) verifyNodes(m *Meta, infos map[uint64]*controlpb.NodeInfo, v *verification) {
	for _, sn := range m.SNs {
		info := infos[sn.ID]
		hosting := m.Deployed != nil && len(m.Deployed.ShardsOn(topology.NodeID(sn.ID))) > 0
		switch {
		case sn.Gone && !hosting && (info == nil || info.GetStore() != m.Store):
			v.warn("gone", snName(sn.ID), "its disk is gone for good and its replicas moved off (plan migrate-sn): remove it with plan remove-sn -sn %s -wait", snName(sn.ID))
			continue
		case info == nil && hosting:
			v.violate("unreachable", snName(sn.ID), "storage node at %s does not answer: start it with cairn sn start --root DIR, or check its host and network; if its disk is gone for good, deploy a new node (plan deploy-sn) and run plan migrate-sn -from %s -to snN -wait, or restart it with a new root under its old id (cairn sn start --root NEW --rejoin-as %s --helper-hosts HOST:PORT)",
				sn.Addr(), snName(sn.ID), snName(sn.ID))
			continue
		case info == nil:
			v.violate("unreachable", snName(sn.ID), "storage node at %s does not answer: start it with cairn sn start --root DIR, or check its host and network; it hosts no replica, so plan remove-sn -sn %s -wait removes it",
				sn.Addr(), snName(sn.ID))
			continue
		}
		if info.GetStore() != m.Store || info.GetSnId() != sn.ID {
			v.violate("identity", snName(sn.ID), "the node at %s says it is sn%d of store %q: another node answers on this address", sn.Addr(), info.GetSnId(), info.GetStore())
		}
		if m.Deployed != nil && len(m.Deployed.ShardsOn(topology.NodeID(sn.ID))) == 0 {
			n := snName(sn.ID)
			v.warn("unused-node", n, "hosts no replica, so it stores no data: to use it, pool join -name POOL -sn %s, then topology clone -current -name NEW, topology redistribute -name NEW -pool POOL and plan deploy-topology -name NEW -wait; or remove it with plan remove-sn -sn %s -wait", n, n)
		}
	}
}

func (s *Service) verifyShards(m *Meta, infos map[uint64]*controlpb.NodeInfo, v *verification) {
	for _, sh := range m.Deployed.Shards {
		states := map[uint64]*controlpb.ShardState{}
		var leaderApplied uint64
		stuck := stuckFollowers(sh, infos)
		hasLeader := false
		for _, r := range sh.Replicas {
			info := infos[uint64(r)]
			if info == nil {
				continue
			}
			for _, st := range info.GetShards() {
				if st.GetShard() == uint64(sh.ID) {
					states[uint64(r)] = st
					if st.GetIsLeader() {
						hasLeader, leaderApplied = true, st.GetApplied()
					}
				}
			}
		}
		name := topology.ShardName(sh.ID)
		if advice := noLeaderAdvice(m, sh, infos, states); !hasLeader || advice.minority {
			v.violate("no-leader", name, "%s", advice.text)
		}
		for _, r := range sh.Replicas {
			svc := serviceName(uint64(sh.ID), uint64(r))
			st, reachable := states[uint64(r)], infos[uint64(r)] != nil
			switch {
			case !reachable:
				v.violate("unreachable", svc, "the replica's node %s does not answer", snName(uint64(r)))
			case slices.Contains(m.Stopped, svc):
				v.warn("stopped", svc, "stopped by plan stop-service; start it with plan start-service -service %s -wait", svc)
			case st == nil || !st.GetRunning():
				v.violate("not-running", svc, "%s does not run this replica: restart the node, or run plan deploy-topology again", snName(uint64(r)))
			case st.GetRebuilding():
				// verifyStorage names it with its node's storage state
			case stuck[uint64(r)] != "":
				v.violate("stuck", svc, "%s; %s", stuck[uint64(r)], stuckAdvice(uint64(r), name, s.cfg.RepairStuckAfter, restoredAhead(sh, uint64(r), infos)))
			case hasLeader && leaderApplied > st.GetApplied()+maxLag:
				v.violate("lagging", svc, "trails its leader by %d entries (applied %d of %d)", leaderApplied-st.GetApplied(), st.GetApplied(), leaderApplied)
			}
		}
	}
}

// stuckAdvice is the way out for a replica that cannot follow its leader,
// given the admin leader's RepairStuckAfter and whether the replica holds
// a restored history (restoredAhead).
func stuckAdvice(sn uint64, shard string, repairAfter time.Duration, restored bool) string {
	auto := "the admin does not rebuild it (the admin leader runs with --repair-stuck-after 0)"
	switch {
	case restored:
		auto = "the admin does not rebuild a replica restored from a snapshot, since that would undo the restore"
	case repairAfter > 0:
		auto = fmt.Sprintf("the admin leader rebuilds it from its peers once it has been stuck for %v (--repair-stuck-after), if %s keeps a healthy majority without it and no plan runs; show events says when", repairAfter, shard)
	}
	return fmt.Sprintf("it counts towards no write and never catches up: %s. By hand: stop %s, move its root aside, and start it on an empty root with cairn sn start --root NEW --rejoin-as %s --helper-hosts HOST:PORT (or restore every replica of %s from one snapshot)",
		auto, snName(sn), snName(sn), shard)
}

// leaderAdvice says why a shard has no leader that can take writes, and
// what to do.
type leaderAdvice struct {
	text string
	// minority: fewer than a majority of the replicas run, so no leader can
	// commit a write even if a lone replica still calls itself leader.
	minority bool
}

// noLeaderAdvice explains why shard sh has no working leader and what to
// do, from what its replicas' nodes answered (infos) and the replicas'
// states. It names the nodes that do not answer and the replicas that do
// not run; when a majority runs, an election is under way (as right after
// the nodes start) and the advice is to verify again in a few seconds.
func noLeaderAdvice(m *Meta, sh topology.Shard, infos map[uint64]*controlpb.NodeInfo, states map[uint64]*controlpb.ShardState) leaderAdvice {
	name := topology.ShardName(sh.ID)
	var unreachable, down []string
	running := 0
	for _, r := range sh.Replicas {
		st, svc := states[uint64(r)], serviceName(uint64(sh.ID), uint64(r))
		switch {
		case infos[uint64(r)] == nil:
			unreachable = append(unreachable, snName(uint64(r)))
		case slices.Contains(m.Stopped, svc) || (st != nil && !st.GetRunning()):
			down = append(down, fmt.Sprintf("%s is stopped: plan start-service -service %s -wait", svc, svc))
		case st == nil:
			down = append(down, fmt.Sprintf("%s does not run %s", snName(uint64(r)), svc))
		default:
			running++
		}
	}
	majority := len(sh.Replicas)/2 + 1
	a := leaderAdvice{minority: running < majority}
	advice := []string{fmt.Sprintf("no replica of %s leads yet: %d of its %d replicas run, a majority, so an election is in progress (as right after the nodes restart); run verify configuration again in a few seconds", name, running, len(sh.Replicas))}
	if a.minority {
		advice[0] = fmt.Sprintf("%s has no leader that can take writes: only %d of its %d replicas run, and a majority (%d) must", name, running, len(sh.Replicas), majority)
	}
	if len(unreachable) > 0 {
		advice = append(advice, fmt.Sprintf("%s %s not answer: start %s with cairn sn start --root DIR, or check the host and network", strings.Join(unreachable, ", "), doOrDoes(len(unreachable)), itOrThem(len(unreachable))))
	}
	a.text = strings.Join(append(advice, down...), "; ")
	return a
}

func doOrDoes(n int) string {
	if n == 1 {
		return "does"
	}
	return "do"
}

func itOrThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func (s *Service) verifyAdmins(m *Meta, infos map[uint64]*controlpb.NodeInfo, v *verification) {
	rf := 1
	for _, z := range m.Zones {
		if z.Type != "secondary" {
			rf = max(rf, z.RF)
		}
	}
	voters := s.cfg.Replica.Voters()
	for _, id := range voters {
		if id != s.cfg.Node && infos[id] == nil {
			v.violate("admin-unreachable", "admin on "+snName(id), "does not answer; the admins keep working while a majority of them is up")
		}
	}
	s.verifyRemovedAdmins(m, infos, v)
	if len(m.Admins) == 0 {
		v.warn("admin-not-deployed", "admin", "the bootstrap admin is not deployed: run plan deploy-admin -sn %s -wait", snName(s.cfg.Node))
	}
	if n := len(voters); n < rf || n%2 == 0 {
		var next []string
		for _, sn := range m.SNs {
			// only nodes that answer as members: plan deploy-admin needs them
			if info := infos[sn.ID]; info.GetStore() == m.Store && !sn.Gone && !slices.Contains(voters, sn.ID) && len(next) < rf-n {
				next = append(next, fmt.Sprintf("plan deploy-admin -sn %s -wait", snName(sn.ID)))
			}
		}
		advice := "deploy more admins"
		if len(next) > 0 {
			advice = strings.Join(next, "; ")
		}
		v.warn("admin-count", "admin", "%s under replication factor %d: if an admin's node fails the store keeps serving data, but cannot be administered until a majority of admins is back. For %d admins run: %s",
			countOf(n, "admin"), rf, max(rf, 3), advice)
	}
}

// verifyRemovedAdmins warns of nodes that still hold an admin replica the
// admin group no longer counts (plan remove-admin could not reach them).
func (s *Service) verifyRemovedAdmins(m *Meta, infos map[uint64]*controlpb.NodeInfo, v *verification) {
	members := s.adminMembers()
	for _, sn := range m.SNs {
		pending := slices.Contains(m.AdminCleanup, sn.ID)
		if slices.Contains(members, sn.ID) || (!pending && !infos[sn.ID].GetAdmin()) {
			continue
		}
		v.warn("admin-removed", "admin on "+snName(sn.ID),
			"was removed from the admin group but %s still holds its replica; run plan remove-admin -admin %s -wait once %s answers",
			snName(sn.ID), snName(sn.ID), snName(sn.ID))
	}
}
