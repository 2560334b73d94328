package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

func (s *Service) showPlans(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	views := make([]planView, 0, len(m.Plans))
	for _, p := range m.Plans {
		waiting := s.waitingFor(m, p)
		views = append(views, planView{p, waiting})
		line := fmt.Sprintf("%3d %-22s %-11s %s", p.ID, p.Name, p.State, strings.TrimPrefix(p.title(), p.Name+" "))
		if waiting != 0 {
			line += fmt.Sprintf("  (waiting for plan %d to finish)", waiting)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		lines = []string{"No plans yet."}
	}
	return reply(strings.Join(lines, "\n"), views)
}

func (s *Service) showPlan(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.planByArg(m, a)
	if err != nil {
		return nil, err
	}
	waiting := s.waitingFor(m, p)
	return reply(p.detail(waiting), planDoc(p, waiting, true))
}

// topologyText renders a topology the way show topology prints it. infos,
// when given, adds each replica's live state.
func topologyText(m *Meta, t *topology.Topology, infos map[uint64]*controlpb.NodeInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "store=%s  numPartitions=%d  sequence=%d\n", t.Store, t.Partitions, t.Seq)
	for _, z := range m.Zones {
		fmt.Fprintf(&b, "  zn: id=%s name=%s repFactor=%d type=%s\n", zoneName(z.ID), z.Name, z.RF, strings.ToUpper(z.Type))
	}
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "  sn=[%s] zn=[%s] %s capacity=%d\n", topology.NodeName(n.ID), n.Zone, n.Addr, n.Capacity)
	}
	for _, sh := range t.Shards {
		fmt.Fprintf(&b, "  shard=[%s] num partitions=%d\n", topology.ShardName(sh.ID), len(t.PartitionsOf(sh.ID)))
		for _, r := range sh.Replicas {
			state := ""
			if info := infos[uint64(r)]; info != nil {
				state = "  " + replicaState(m, info, uint64(sh.ID))
			} else if infos != nil {
				state = "  UNREACHABLE"
			}
			pref := ""
			if r == sh.Preferred {
				pref = " (preferred leader)"
			}
			fmt.Fprintf(&b, "    [%s-rn%d] sn=%s%s%s\n", topology.ShardName(sh.ID), r, topology.NodeName(r), pref, state)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// replicaState is the replica's role and, when it runs, its applied index:
// "RUNNING,MASTER applied=7".
func replicaState(m *Meta, info *controlpb.NodeInfo, shard uint64) string {
	role := replicaRole(m, info, shard)
	if !strings.HasPrefix(role, "RUNNING") {
		return role
	}
	return fmt.Sprintf("%s applied=%d", role, shardState(info, shard).GetApplied())
}

// replicaRole is what the node info says of its replica of shard:
// RUNNING,MASTER, RUNNING,REPLICA, STOPPED, REBUILDING (it rebuilds from
// its peers after its node set corrupt files aside) or NOT DEPLOYED.
func replicaRole(m *Meta, info *controlpb.NodeInfo, shard uint64) string {
	st := shardState(info, shard)
	switch {
	case slices.Contains(m.Stopped, serviceName(shard, info.GetSnId())), st != nil && !st.GetRunning():
		return "STOPPED"
	case st == nil:
		return "NOT DEPLOYED"
	case st.GetRebuilding():
		return "REBUILDING"
	case st.GetIsLeader():
		return "RUNNING,MASTER"
	}
	return "RUNNING,REPLICA"
}

func (s *Service) showTopology(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	if m.Deployed == nil {
		return nil, failed("no topology is deployed yet: topology create, then plan deploy-topology")
	}
	infos := s.describeAll(ctx, m)
	doc, err := topologyDoc(m.Deployed)
	if err != nil {
		return nil, err
	}
	return reply(topologyText(m, m.Deployed, infos), doc)
}

// topologyDoc is show topology's JSON: the topology's own JSON, with its
// sequence number under "topology_seq" as in ping's (the stored and
// topology-file form keeps "seq").
func topologyDoc(t *topology.Topology) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	doc["topology_seq"] = doc["seq"]
	delete(doc, "seq")
	return doc, nil
}

// describeAll asks every deployed storage node about itself, in parallel,
// 2 s each. Unreachable nodes are missing from the result.
func (s *Service) describeAll(ctx context.Context, m *Meta) map[uint64]*controlpb.NodeInfo {
	return s.describeSNs(ctx, m.SNs)
}

func (s *Service) showPools(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, p := range m.Pools {
		var ids []string
		for _, id := range p.SNs {
			ids = append(ids, snName(id))
		}
		lines = append(lines, fmt.Sprintf("%s: %s", p.Name, strings.Join(ids, " ")))
	}
	if len(lines) == 0 {
		lines = []string{"No pools. Create one with pool create -name NAME"}
	}
	return reply(strings.Join(lines, "\n"), nonNil(m.Pools))
}

func (s *Service) showZones(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, z := range m.Zones {
		lines = append(lines, fmt.Sprintf("zn: id=%s name=%s repFactor=%d type=%s", zoneName(z.ID), z.Name, z.RF, strings.ToUpper(z.Type)))
	}
	if len(lines) == 0 {
		lines = []string{"No zones. Deploy one with plan deploy-zone -name NAME -rf 3 -wait"}
	}
	return reply(strings.Join(lines, "\n"), nonNil(m.Zones))
}

// adminInfo is one admin in show admins' JSON.
type adminInfo struct {
	SN       uint64 `json:"sn"`
	Addr     string `json:"addr"`
	State    string `json:"state"` // RUNNING,MASTER, RUNNING,REPLICA, NOT RUNNING or UNREACHABLE
	Leader   bool   `json:"leader"`
	Deployed bool   `json:"deployed"` // false: the bootstrap admin, not yet deployed
}

// showAdmins lists the admin replicas with their state, asking every node.
func (s *Service) showAdmins(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	infos := s.describeAll(ctx, m)
	lead, term := s.cfg.Replica.Leader()
	out := []adminInfo{}
	var lines []string
	for _, v := range s.cfg.Replica.Voters() {
		a := adminInfo{SN: v, State: adminState(v, lead, s.cfg.Node, infos), Leader: v == lead, Deployed: slices.Contains(m.Admins, v)}
		if sn := m.sn(v); sn != nil {
			a.Addr = sn.Addr()
		}
		out = append(out, a)
		line := fmt.Sprintf("admin on %s %s  %s", snName(v), a.Addr, a.State)
		if a.Leader {
			line += fmt.Sprintf(" (leader, term %d)", term)
		}
		if !a.Deployed {
			line += "  (bootstrap admin: deploy it with plan deploy-admin -sn " + snName(v) + ")"
		}
		lines = append(lines, line)
	}
	return reply(strings.Join(lines, "\n"), out)
}

// eventTime is how show events prints an event's time: RFC 3339 in UTC
// with milliseconds, "2026-11-21T11:53:16.359Z".
const eventTime = "2006-01-02T15:04:05.000Z07:00"

func (s *Service) showEvents(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	last := 50
	if v, ok := a["last"]; ok {
		last, _ = strconv.Atoi(v)
	}
	ev := m.Events
	if len(ev) > last {
		ev = ev[len(ev)-last:]
	}
	var lines []string
	for _, e := range ev {
		lines = append(lines, fmt.Sprintf("%s %4d %s", e.Time.UTC().Format(eventTime), e.Seq, e.Text))
	}
	return reply(strings.Join(lines, "\n"), nonNil(ev))
}
