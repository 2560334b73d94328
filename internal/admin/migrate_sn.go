package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// plan migrate-sn -from X -to Y replaces storage node X, whose disk is gone
// for good, by Y, a node deployed with plan deploy-sn that hosts nothing
// yet. Its plan:
//
//	retire-sn X               mark X Gone: no later step waits for it
//	publish-topology shards   Y joins the topology (hosting nothing)
//	join-replica S Y          per shard X hosted: learner, snapshot, voter
//	leave-replica S X         X leaves the shard's Raft group and topology
//	host-admin Y ...          if X hosted an admin: Y's admin joins the admin
//	remove-admin-member X     group as learner then voter, X's leaves
//	publish-topology final    X stays listed, hosting nothing: plan remove-sn next
//	join-pools                Y joins X's pools, so later topologies place it
//
// Every shard keeps a majority throughout when only X is down: it gains a
// caught-up voter before it loses X. X must not answer as a member of the
// store (stop it first): two nodes must never act as one id.
func (s *Service) planMigrateSN(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	if err := checkMigrateArgs(a["from"], a["to"]); err != nil {
		return nil, err
	}
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	from, err := s.snArg(m, a["from"])
	if err != nil {
		return nil, err
	}
	to, err := s.snArg(m, a["to"])
	if err != nil {
		return nil, err
	}
	for _, p := range m.Plans {
		if p.Name == "migrate-sn" && p.State != Succeeded && p.State != Canceled {
			if f, _ := parseID(p.Args["from"], "sn"); f == from.ID {
				return nil, failed("plan %d already migrates %s (%s): resume it with plan execute -id %d -wait, or cancel it first",
					p.ID, snName(from.ID), p.State, p.ID)
			}
		}
	}
	if err := s.checkMigrateSN(ctx, m, from, to); err != nil {
		return nil, err
	}
	cand := migratedTopology(m, from, to)
	ch, err := topology.Compare(m.Deployed, cand)
	if err != nil {
		return nil, failed("%v", err)
	}
	cb, err := json.Marshal(cand)
	if err != nil {
		return nil, err
	}
	fromArgs := map[string]string{"sn": strconv.FormatUint(from.ID, 10)}
	toArgs := map[string]string{"sn": strconv.FormatUint(to.ID, 10)}
	tasks := []*Task{newTask("retire-sn", "mark "+snName(from.ID)+" as gone for good: no step waits for it", fromArgs)}
	if len(ch.NewNodes) > 0 {
		tasks = append(tasks, newTask("publish-topology", "add "+snName(to.ID)+" to the topology, hosting nothing yet", map[string]string{"step": "shards"}))
	}
	tasks = append(tasks, replicaTasks(ch.Replicas)...)
	if slices.Contains(m.Admins, from.ID) || slices.Contains(s.adminMembers(), from.ID) {
		tasks = append(tasks,
			newTask("host-admin", "start an admin replica on "+snName(to.ID), toArgs),
			newTask("add-admin-learner", "add it to the admin group as a learner", toArgs),
			newTask("await-admin", "wait for it to catch up", toArgs),
			newTask("add-admin-voter", "make it a voter", toArgs),
			newTask("record-admin", "record the admin", toArgs))
		if slices.Contains(s.adminMembers(), from.ID) {
			tasks = append(tasks, newTask("remove-admin-member", "remove "+snName(from.ID)+"'s admin from the admin group", fromArgs))
		}
		tasks = append(tasks,
			newTask("drop-admin", "tell "+snName(from.ID)+" to drop its admin replica (passed over if it does not answer)", fromArgs),
			newTask("record-admin-removal", "record the removal", fromArgs))
	}
	tasks = append(tasks,
		newTask("publish-topology", "record the topology with "+snName(to.ID)+" in place of "+snName(from.ID), map[string]string{"step": "final"}),
		newTask("join-pools", "put "+snName(to.ID)+" in the pools of "+snName(from.ID), map[string]string{"from": fromArgs["sn"], "to": toArgs["sn"]}))
	return s.createPlan(ctx, "migrate-sn", a, tasks, map[string]string{"candidate": string(cb)})
}

// checkMigrateArgs refuses, whatever the store's state, -from and -to that
// are not storage node ids or that name the same node: bad input.
func checkMigrateArgs(from, to string) error {
	f, err := parseID(from, "sn")
	if err != nil {
		return usageError("-from: %v", err)
	}
	t, err := parseID(to, "sn")
	if err != nil {
		return usageError("-to: %v", err)
	}
	if f == t {
		return usageError("-from and -to name the same storage node, %s: -from is the node whose disk is gone, -to a newly deployed node (plan deploy-sn) that replaces it", snName(f))
	}
	return nil
}

// checkMigrateSN refuses a migration the store could not finish or that
// would let two nodes act as one.
func (s *Service) checkMigrateSN(ctx context.Context, m *Meta, from, to *SN) error {
	switch {
	case m.Deployed == nil:
		return failed("no topology is deployed: there is nothing to migrate")
	case from.Zone != to.Zone:
		return failed("%s is in zone zn%d and %s in zn%d: the replacement must be in the same zone (deploy it with plan deploy-sn -zn zn%d)",
			snName(to.ID), to.Zone, snName(from.ID), from.Zone, from.Zone)
	case slices.Contains(m.Admins, to.ID) && slices.Contains(m.Admins, from.ID):
		return failed("%s hosts an admin already, and %s's admin must move: migrate to a newly deployed node", snName(to.ID), snName(from.ID))
	}
	here := m.Deployed.ShardsOn(topology.NodeID(from.ID))
	if len(here) == 0 && !slices.Contains(m.Admins, from.ID) {
		return failed("%s hosts no replica and no admin: remove it with plan remove-sn -sn %s", snName(from.ID), snName(from.ID))
	}
	if n := len(m.Deployed.ShardsOn(topology.NodeID(to.ID))); n > 0 {
		return failed("%s hosts %d replicas already; migrate-sn moves onto a newly deployed node that hosts nothing", snName(to.ID), n)
	}
	if to.Capacity < len(here) {
		return failed("%s has capacity %d but %s hosted %d replicas", snName(to.ID), to.Capacity, snName(from.ID), len(here))
	}
	for _, sh := range here {
		if len(sh.Replicas) < 2 {
			return failed("%s has no replica but the one on %s: its data went with that disk; restore it from a backup", topology.ShardName(sh.ID), snName(from.ID))
		}
	}
	dctx, cancel := context.WithTimeout(ctx, goneWait)
	info, err := s.control(from.Addr()).Describe(dctx, &controlpb.DescribeRequest{})
	cancel()
	if err == nil && info.GetStore() == m.Store && info.GetSnId() == from.ID {
		return failed("%s still answers at %s as a member of store %s: migrate-sn replaces a node whose disk is gone; stop it first (or, if its data is intact, keep it)",
			snName(from.ID), from.Addr(), m.Store)
	}
	return nil
}

// migratedTopology is the deployed topology with to in place of from: in
// every shard's replicas and as preferred leader.
func migratedTopology(m *Meta, from, to *SN) *topology.Topology {
	t := m.Deployed.Clone()
	if _, ok := t.Node(topology.NodeID(to.ID)); !ok {
		zone := ""
		if z := m.zoneByID(to.Zone); z != nil {
			zone = z.Name
		}
		t.Nodes = append(t.Nodes, topology.Node{ID: topology.NodeID(to.ID), Addr: to.Addr(), Capacity: to.Capacity, Zone: zone})
	}
	for i := range t.Shards {
		sh := &t.Shards[i]
		for j, r := range sh.Replicas {
			if r == topology.NodeID(from.ID) {
				sh.Replicas[j] = topology.NodeID(to.ID)
			}
		}
		if sh.Preferred == topology.NodeID(from.ID) {
			sh.Preferred = topology.NodeID(to.ID)
		}
	}
	return t
}

// taskRetireSN marks a node Gone (plan migrate-sn).
func (s *Service) taskRetireSN(ctx context.Context, t *Task) error {
	id := argID(t, "sn")
	_, err := s.store.update(ctx, func(m *Meta) error {
		for i := range m.SNs {
			if m.SNs[i].ID == id && !m.SNs[i].Gone {
				m.SNs[i].Gone = true
				m.event("storage node %s marked gone for good: its replicas move off", snName(id))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("marking %s gone: %w", snName(id), err)
	}
	return nil
}

// taskJoinPools puts node "to" in every pool node "from" is in (plan
// migrate-sn), so that later topology operations over those pools use it.
func (s *Service) taskJoinPools(ctx context.Context, t *Task) error {
	from, to := argID(t, "from"), argID(t, "to")
	_, err := s.store.update(ctx, func(m *Meta) error {
		for i := range m.Pools {
			p := &m.Pools[i]
			if slices.Contains(p.SNs, from) && !slices.Contains(p.SNs, to) {
				p.SNs = append(p.SNs, to)
				m.event("%s joined pool %s in place of %s", snName(to), p.Name, snName(from))
			}
		}
		return nil
	})
	return err
}
