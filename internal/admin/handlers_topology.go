package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/topology"
)

func topologyShard(id uint64) topology.ShardID { return topology.ShardID(id) }
func topologyNode(id uint64) topology.NodeID   { return topology.NodeID(id) }

// poolNodes returns the pool's storage nodes as topology nodes, and the
// primary zones they sit in.
func poolNodes(m *Meta, p *Pool) ([]topology.Node, []topology.ZoneRF, error) {
	var nodes []topology.Node
	var zones []topology.ZoneRF
	seen := map[int]bool{}
	for _, id := range p.SNs {
		sn := m.sn(id)
		if sn == nil {
			continue
		}
		z := m.zoneByID(sn.Zone)
		if z == nil {
			continue
		}
		if z.Type == "secondary" {
			return nil, nil, failed("%s is in secondary zone %s; this version places replicas in primary zones only: leave secondary zones out of the pool", snName(id), z.Name)
		}
		nodes = append(nodes, topology.Node{ID: topology.NodeID(id), Addr: sn.Addr(), Capacity: sn.Capacity, Zone: z.Name})
		if !seen[z.ID] {
			seen[z.ID] = true
			zones = append(zones, topology.ZoneRF{Name: z.Name, RF: z.RF})
		}
	}
	if len(nodes) == 0 {
		return nil, nil, failed("pool %s has no deployed storage nodes; add some with pool join -name %s -sn ID", p.Name, p.Name)
	}
	return nodes, zones, nil
}

// maxCreatePartitions bounds topology create -partitions: a store starts
// with at most 65536 partitions (topology split-partitions makes more, up
// to topology.MaxPartitions).
const maxCreatePartitions = 1 << 16

func (s *Service) topologyCreate(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	if err := checkName("topology", a["name"]); err != nil {
		return nil, err
	}
	parts, _ := strconv.Atoi(a["partitions"]) // 1 to maxCreatePartitions: Command.Check
	var c *Candidate
	_, err := s.store.update(ctx, func(m *Meta) error {
		if m.Store == "" {
			return ErrNoMeta
		}
		if m.candidate(a["name"]) != nil {
			return failed("topology %s already exists; pick another name, or see topology list", a["name"])
		}
		if msg := partitionsFixed(m, uint32(parts)); msg != "" {
			return usageError("topology create: -partitions %d: %s", parts, msg)
		}
		p := m.pool(a["pool"])
		if p == nil {
			return notFound("there is no pool %s; create it with pool create -name %s and add nodes with pool join", a["pool"], a["pool"])
		}
		nodes, zones, err := poolNodes(m, p)
		if err != nil {
			return err
		}
		t, err := topology.Place(m.Store, uint32(parts), nodes, zones)
		if err != nil {
			return failed("cannot lay out topology %s over pool %s: %v", a["name"], p.Name, strings.TrimPrefix(err.Error(), "topology: invalid: "))
		}
		c = &Candidate{Name: a["name"], Pool: p.Name, Topology: t, Created: time.Now().UTC()}
		m.Candidates = append(m.Candidates, *c)
		m.event("topology %s created over pool %s: %d shards, %d partitions", c.Name, p.Name, len(t.Shards), parts)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rf := 0
	if len(c.Topology.Shards) > 0 {
		rf = len(c.Topology.Shards[0].Replicas)
	}
	text := fmt.Sprintf("Created: %s (%d shards x %d replicas, %d partitions over %d storage nodes)",
		c.Name, len(c.Topology.Shards), rf, c.Topology.Partitions, len(c.Topology.Nodes))
	return reply(text, c)
}

// partitionsFixed says why a topology of partitions partitions cannot be
// deployed over m's deployed topology, or returns "" if it can (or nothing
// is deployed): a key's partition is its hash modulo the count, so another
// count would put keys in partitions that do not hold them. Only topology
// split-partitions makes more (see splitFixed).
func partitionsFixed(m *Meta, partitions uint32) string {
	if m.Deployed == nil || m.Deployed.Partitions == partitions {
		return ""
	}
	n := m.Deployed.Partitions
	return fmt.Sprintf("the number of partitions is fixed when the store is first deployed (deployed: %d), so create the candidate with -partitions %d; for more partitions, split them: topology clone -current -name NAME, then topology split-partitions -name NAME -factor 2", n, n)
}

// splitFixed is partitionsFixed for a candidate to deploy: a multiple of
// the deployed count is allowed in a candidate made from the deployed
// topology (cloned, then split by topology split-partitions).
func splitFixed(m *Meta, t *topology.Topology) string {
	if d := m.Deployed; d != nil && t.Partitions > d.Partitions && t.Partitions%d.Partitions == 0 && derived(d, t) {
		return ""
	}
	return partitionsFixed(m, t.Partitions)
}

func (s *Service) candidateArg(ctx context.Context, name string) (*Meta, *Candidate, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, nil, err
	}
	c := m.candidate(name)
	if c == nil {
		return nil, nil, notFound("there is no topology candidate %s; topology list shows them, topology create makes one", name)
	}
	return m, c, nil
}

func (s *Service) topologyPreview(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, c, err := s.candidateArg(ctx, a["name"])
	if err != nil {
		return nil, err
	}
	if msg := splitFixed(m, c.Topology); msg != "" {
		return nil, failed("topology %s has %d partitions and cannot be deployed: %s", c.Name, c.Topology.Partitions, msg)
	}
	if topology.SameLayout(m.Deployed, c.Topology) {
		text := fmt.Sprintf("Topology %s matches the deployed topology (%s, sequence %d): no changes; deploying it does nothing.", c.Name, m.DeployedName, m.Deployed.Seq)
		return reply(text, map[string]any{"name": c.Name, "changes": []string{}})
	}
	if m.Deployed != nil {
		return s.previewChanges(ctx, m, c)
	}
	lines := topology.Diff(m.Deployed, c.Topology)
	text := fmt.Sprintf("Topology transformation from current deployed topology to %s:\n", c.Name)
	for _, l := range lines {
		text += "  " + l + "\n"
	}
	return reply(strings.TrimRight(text, "\n"), map[string]any{"name": c.Name, "changes": lines})
}

func (s *Service) topologyValidate(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	t, what := m.Deployed, "the deployed topology"
	if a["name"] != "" {
		c := m.candidate(a["name"])
		if c == nil {
			return nil, notFound("there is no topology candidate %s; topology list shows them", a["name"])
		}
		t, what = c.Topology, "topology "+c.Name
	}
	if t == nil {
		return nil, failed("no topology is deployed yet; validate a candidate with topology validate -name NAME")
	}
	rep := t.Check()
	text := fmt.Sprintf("Validation for %s:\n%s", what, reportText(rep))
	r, err := reply(text, rep)
	if err == nil {
		r.Problems = !rep.OK()
	}
	return r, err
}

func reportText(rep topology.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s, %d %s.", len(rep.Violations), plural(len(rep.Violations), "violation", "violations"), len(rep.Warnings), plural(len(rep.Warnings), "warning", "warnings"))
	for _, f := range rep.Violations {
		fmt.Fprintf(&b, "\n  violation %s: %s", f.Subject, f.Message)
	}
	for _, f := range rep.Warnings {
		fmt.Fprintf(&b, "\n  warning   %s: %s", f.Subject, f.Message)
	}
	return b.String()
}

func (s *Service) topologyView(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, c, err := s.candidateArg(ctx, a["name"])
	if err != nil {
		return nil, err
	}
	return reply(topologyText(m, c.Topology, nil), c)
}

func (s *Service) topologyList(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, c := range m.Candidates {
		mark := ""
		if c.Name == m.DeployedName {
			mark = " (deployed)"
		}
		lines = append(lines, fmt.Sprintf("%s: pool %s, %d shards, %d partitions%s", c.Name, c.Pool, len(c.Topology.Shards), c.Topology.Partitions, mark))
	}
	if len(lines) == 0 {
		lines = []string{"No topology candidates. Create one with topology create -name NAME -pool POOL -partitions N"}
	}
	return reply(strings.Join(lines, "\n"), nonNil(m.Candidates))
}

func (s *Service) planDeployTopology(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, c, err := s.candidateArg(ctx, a["name"])
	if err != nil {
		return nil, err
	}
	if m.Deployed != nil {
		return s.redeploy(ctx, m, c, a)
	}
	if rep := c.Topology.Check(); !rep.OK() {
		return nil, failed("topology %s breaks the placement rules; fix the pool or capacities and create a new candidate:\n%s", c.Name, reportText(rep))
	}
	t := *c.Topology
	t.Seq = 1
	tb, err := json.Marshal(&t)
	if err != nil {
		return nil, err
	}
	var tasks []*Task
	for _, n := range t.Nodes {
		text := fmt.Sprintf("create the replicas of %s on %s", shardNames(t.ShardsOn(n.ID)), topology.NodeName(n.ID))
		if len(t.ShardsOn(n.ID)) == 0 {
			text = "give " + topology.NodeName(n.ID) + " the topology (it hosts no replica)"
		}
		tasks = append(tasks, newTask("install-topology", text, map[string]string{"sn": strconv.FormatUint(uint64(n.ID), 10)}))
	}
	tasks = append(tasks,
		newTask("await-leaders", fmt.Sprintf("wait for all %d shards to elect a leader", len(t.Shards)), nil),
		newTask("init-tables", "give every shard its partition table", nil),
		newTask("record-topology", "record topology "+c.Name+" as deployed", nil))
	return s.createPlan(ctx, "deploy-topology", a, tasks, map[string]string{"topology": string(tb)})
}

// redeploy answers plan deploy-topology over a deployed store: a
// candidate that matches the deployed layout needs no plan (exit 0, and
// "nothing_to_do": true in the JSON for -wait); any other becomes an
// elastic plan (planElastic), or is refused saying why.
func (s *Service) redeploy(ctx context.Context, m *Meta, c *Candidate, a map[string]string) (*cairnpb.AdminReply, error) {
	if msg := splitFixed(m, c.Topology); msg != "" {
		return nil, failed("topology %s has %d partitions and cannot be deployed: %s", c.Name, c.Topology.Partitions, msg)
	}
	if !topology.SameLayout(m.Deployed, c.Topology) {
		return s.planElastic(ctx, m, c, a)
	}
	text := fmt.Sprintf("Topology %s matches the deployed topology (%s, sequence %d): nothing to deploy.", c.Name, m.DeployedName, m.Deployed.Seq)
	return reply(text, map[string]any{"name": c.Name, "deployed": m.DeployedName, "sequence": m.Deployed.Seq, "nothing_to_do": true})
}

// nonNil returns s, or an empty slice for nil, so that JSON shows [] and
// not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func shardNames(shards []topology.Shard) string {
	var names []string
	for _, s := range shards {
		names = append(names, topology.ShardName(s.ID))
	}
	if len(names) == 0 {
		return "no shards"
	}
	return strings.Join(names, ", ")
}
