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
	"github.com/cairndb/cairn/internal/topology"
)

func (s *Service) showPlans(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, p := range m.Plans {
		lines = append(lines, fmt.Sprintf("%3d %-22s %-11s %s", p.ID, p.Name, p.State, strings.TrimPrefix(p.title(), p.Name+" ")))
	}
	if len(lines) == 0 {
		lines = []string{"No plans yet."}
	}
	return reply(strings.Join(lines, "\n"), m.Plans)
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
	return reply(p.detail(), map[string]any{"plan_id": p.ID, "state": p.State, "plan": p})
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

func replicaState(m *Meta, info *controlpb.NodeInfo, shard uint64) string {
	if slices.Contains(m.Stopped, serviceName(shard, info.GetSnId())) {
		return "STOPPED"
	}
	for _, st := range info.GetShards() {
		if st.GetShard() != shard {
			continue
		}
		switch {
		case !st.GetRunning():
			return "STOPPED"
		case st.GetIsLeader():
			return fmt.Sprintf("RUNNING,MASTER applied=%d", st.GetApplied())
		default:
			return fmt.Sprintf("RUNNING,REPLICA applied=%d", st.GetApplied())
		}
	}
	return "NOT DEPLOYED"
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
	return reply(topologyText(m, m.Deployed, infos), m.Deployed)
}

// describeAll asks every deployed storage node about itself, in parallel,
// 2 s each. Unreachable nodes are missing from the result.
func (s *Service) describeAll(ctx context.Context, m *Meta) map[uint64]*controlpb.NodeInfo {
	type res struct {
		id   uint64
		info *controlpb.NodeInfo
	}
	ch := make(chan res, len(m.SNs))
	for _, sn := range m.SNs {
		go func() {
			dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			info, err := s.control(sn.Addr()).Describe(dctx, &controlpb.DescribeRequest{})
			if err != nil {
				info = nil
			}
			ch <- res{sn.ID, info}
		}()
	}
	out := make(map[uint64]*controlpb.NodeInfo)
	for range m.SNs {
		r := <-ch
		if r.info != nil {
			out[r.id] = r.info
		}
	}
	return out
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
	return reply(strings.Join(lines, "\n"), m.Pools)
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
	return reply(strings.Join(lines, "\n"), m.Zones)
}

func (s *Service) showAdmins(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	lead, term := s.cfg.Replica.Leader()
	type admin struct {
		SN       uint64 `json:"sn"`
		Addr     string `json:"addr"`
		Leader   bool   `json:"leader"`
		Deployed bool   `json:"deployed"`
	}
	var out []admin
	var lines []string
	for _, v := range s.cfg.Replica.Voters() {
		a := admin{SN: v, Leader: v == lead, Deployed: slices.Contains(m.Admins, v)}
		if sn := m.sn(v); sn != nil {
			a.Addr = sn.Addr()
		}
		out = append(out, a)
		line := fmt.Sprintf("admin on %s %s", snName(v), a.Addr)
		if a.Leader {
			line += fmt.Sprintf("  (leader, term %d)", term)
		}
		if !a.Deployed {
			line += "  (bootstrap admin: deploy it with plan deploy-admin -sn " + snName(v) + ")"
		}
		lines = append(lines, line)
	}
	return reply(strings.Join(lines, "\n"), out)
}

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
		lines = append(lines, fmt.Sprintf("%s %4d %s", e.Time.Format("2006-01-02 15:04:05.000"), e.Seq, e.Text))
	}
	return reply(strings.Join(lines, "\n"), ev)
}

func (s *Service) ping(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	infos := s.describeAll(ctx, m)
	var b strings.Builder
	seq := uint64(0)
	if m.Deployed != nil {
		seq = m.Deployed.Seq
	}
	fmt.Fprintf(&b, "Pinging components of store %s based upon topology sequence #%d\n", m.Store, seq)
	problems := false
	for _, sn := range m.SNs {
		zn := ""
		if z := m.zoneByID(sn.Zone); z != nil {
			zn = fmt.Sprintf("[name=%s id=%s type=%s]", z.Name, zoneName(z.ID), strings.ToUpper(z.Type))
		}
		info := infos[sn.ID]
		if info == nil {
			problems = true
			fmt.Fprintf(&b, "Storage Node [%s] on %s  Zone: %s  Status: UNREACHABLE\n", snName(sn.ID), sn.Addr(), zn)
			continue
		}
		fmt.Fprintf(&b, "Storage Node [%s] on %s  Zone: %s  Status: RUNNING  Ver: %s\n", snName(sn.ID), sn.Addr(), zn, info.GetVersion())
		if info.GetAdmin() {
			fmt.Fprintf(&b, "\tAdmin [admin on %s]\tStatus: RUNNING applied=%d\n", snName(sn.ID), info.GetAdminApplied())
		}
		for _, st := range info.GetShards() {
			fmt.Fprintf(&b, "\tRep Node [%s]\tStatus: %s\n", serviceName(st.GetShard(), sn.ID), replicaState(m, info, st.GetShard()))
		}
	}
	r, err := reply(strings.TrimRight(b.String(), "\n"), infos)
	if err == nil {
		r.Problems = problems
	}
	return r, err
}
