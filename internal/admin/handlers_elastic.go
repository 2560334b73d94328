package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/topology"
)

// The commands that make and change topology candidates for a running
// store (Oracle's elasticity commands). Each change rewrites the candidate
// in place with a function of internal/topology, records an event, and
// says what changed compared with the candidate as it was (Compare).
// Deploying a changed topology over a running store is not done here: see
// redeploy.

// elasticHandlers are the handlers of the commands in this file.
var elasticHandlers = map[string]handler{
	"topology clone":            (*Service).topologyClone,
	"topology redistribute":     (*Service).topologyRedistribute,
	"topology rebalance":        (*Service).topologyRebalance,
	"topology contract":         (*Service).topologyContract,
	"topology change-repfactor": (*Service).topologyChangeRepFactor,
	"topology move-partition":   (*Service).topologyMovePartition,
	"topology split-partitions": (*Service).topologySplitPartitions,
}

func (s *Service) topologyClone(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	if err := checkName("topology", a["name"]); err != nil {
		return nil, err
	}
	var c Candidate
	var what string
	_, err := s.store.update(ctx, func(m *Meta) error {
		if m.Store == "" {
			return ErrNoMeta
		}
		if m.candidate(a["name"]) != nil {
			return failed("topology %s already exists; pick another name, or see topology list", a["name"])
		}
		c = Candidate{Name: a["name"], Created: time.Now().UTC()}
		if a["current"] == "true" {
			if m.Deployed == nil {
				return failed("no topology is deployed yet, so there is nothing current to clone: clone a candidate with -from NAME, or deploy one first")
			}
			c.Topology = m.Deployed.Clone()
			if d := m.candidate(m.DeployedName); d != nil {
				c.Pool = d.Pool
			}
			what = fmt.Sprintf("the deployed topology (%s, sequence %d)", m.DeployedName, m.Deployed.Seq)
		} else {
			from := m.candidate(a["from"])
			if from == nil {
				return notFound("there is no topology candidate %s; topology list shows them", a["from"])
			}
			c.Topology, c.Pool = from.Topology.Clone(), from.Pool
			what = "topology " + from.Name
		}
		m.Candidates = append(m.Candidates, c)
		m.event("topology %s created as a copy of %s", c.Name, what)
		return nil
	})
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Created %s as a copy of %s: %d shards, %d partitions. Change it with topology redistribute, rebalance, contract, change-repfactor, move-partition or split-partitions, then topology preview -name %s",
		c.Name, what, len(c.Topology.Shards), c.Topology.Partitions, c.Name)
	return reply(text, c)
}

// change rewrites candidate a["name"] with fn and says what changed: did
// formats what it did with the candidate's name ("redistributed %s"), for
// the reply ("Redistributed T: 2 new shards (rg3, rg4); 50 partitions
// move") and the event (with the pool). fn's errors wrapping
// topology.ErrInvalid are refusals (exit 1): "cannot <couldNot> T: ...".
func (s *Service) change(ctx context.Context, a map[string]string, did, couldNot string, fn func(m *Meta, c *Candidate) (*topology.Topology, error)) (*cairnpb.AdminReply, error) {
	var c *Candidate
	var ch topology.Changes
	_, err := s.store.update(ctx, func(m *Meta) error {
		if m.Store == "" {
			return ErrNoMeta
		}
		if c = m.candidate(a["name"]); c == nil {
			return notFound("there is no topology candidate %s; topology list shows them, topology clone -current -name %s makes one", a["name"], a["name"])
		}
		if m.Deployed != nil && c.Name == m.DeployedName {
			return failed("topology %s is the deployed topology and stays as it was deployed: change a copy (topology clone -current -name NEW, then %s the copy)", c.Name, couldNot)
		}
		t, err := fn(m, c)
		if err != nil {
			if status := asTopologyError(err); status != nil {
				return failed("cannot %s %s: %v", couldNot, c.Name, status)
			}
			return err
		}
		if ch, err = topology.Compare(c.Topology, t); err != nil {
			return fmt.Errorf("admin: the changed topology %s does not follow from the one before: %w", c.Name, err)
		}
		c.Topology = t
		over := ""
		if a["pool"] != "" {
			over = " over pool " + a["pool"]
		}
		m.event("%s%s: %s", fmt.Sprintf(did, "topology "+c.Name), over, changeSummary(ch))
		return nil
	})
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s: %s", upperFirst(fmt.Sprintf(did, c.Name)), changeSummary(ch))
	return reply(text, map[string]any{"name": c.Name, "pool": c.Pool, "changes": ch, "topology": c.Topology})
}

// asTopologyError returns err's message without the package prefix when
// it is a refusal of package topology, else nil.
func asTopologyError(err error) error {
	if !errors.Is(err, topology.ErrInvalid) {
		return nil
	}
	return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), topology.ErrInvalid.Error()+": "))
}

// poolArg resolves a["pool"] to its nodes and zones, each zone's
// replication factor raised to what candidate c holds already (after
// topology change-repfactor, before it is deployed).
func poolArg(m *Meta, c *Candidate, a map[string]string) ([]topology.Node, []topology.ZoneRF, *Pool, error) {
	p := m.pool(a["pool"])
	if p == nil {
		return nil, nil, nil, notFound("there is no pool %s; create it with pool create -name %s and add nodes with pool join", a["pool"], a["pool"])
	}
	nodes, zones, err := poolNodes(m, p)
	if err != nil {
		return nil, nil, nil, err
	}
	return nodes, c.Topology.ZoneRFs(zones), p, nil
}

// overPool is the change of a command that takes -name and -pool.
func (s *Service) overPool(ctx context.Context, a map[string]string, did, couldNot string, fn func(cur *topology.Topology, nodes []topology.Node, zones []topology.ZoneRF) (*topology.Topology, error)) (*cairnpb.AdminReply, error) {
	return s.change(ctx, a, did, couldNot, func(m *Meta, c *Candidate) (*topology.Topology, error) {
		nodes, zones, p, err := poolArg(m, c, a)
		if err != nil {
			return nil, err
		}
		t, err := fn(c.Topology, nodes, zones)
		if err == nil {
			c.Pool = p.Name
		}
		return t, err
	})
}

func (s *Service) topologyRedistribute(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.overPool(ctx, a, "redistributed %s", "redistribute", topology.Redistribute)
}

func (s *Service) topologyRebalance(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.overPool(ctx, a, "rebalanced %s", "rebalance", topology.Rebalance)
}

func (s *Service) topologyContract(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.overPool(ctx, a, "contracted %s", "contract", topology.Contract)
}

func (s *Service) topologyChangeRepFactor(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	rf, _ := strconv.Atoi(a["rf"])
	if rf < 1 || rf > 9 {
		return nil, usageError("topology change-repfactor: -rf %d; a replication factor is between 1 and 9", rf)
	}
	did := fmt.Sprintf("changed the replication factor of zone %s to %d in %%s", a["zn"], rf)
	return s.change(ctx, a, did, "change the replication factor of", func(m *Meta, c *Candidate) (*topology.Topology, error) {
		z, err := zoneArg(m, a["zn"])
		if err != nil {
			return nil, err
		}
		nodes, zones, p, err := poolArg(m, c, a)
		if err != nil {
			return nil, err
		}
		t, err := topology.ChangeRepFactor(c.Topology, nodes, zones, z.Name, rf)
		if err == nil {
			c.Pool = p.Name
		}
		return t, err
	})
}

// zoneArg resolves a zone given by id (zn1 or 1) or by name.
func zoneArg(m *Meta, s string) (*Zone, error) {
	if id, err := parseID(s, "zn"); err == nil {
		if z := m.zoneByID(int(id)); z != nil {
			return z, nil
		}
	}
	if z := m.zoneByName(s); z != nil {
		return z, nil
	}
	return nil, notFound("there is no zone %s; show zones lists them (give an id such as zn1, or a name)", s)
}

func (s *Service) topologyMovePartition(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	p, _ := strconv.ParseUint(a["partition"], 10, 32)
	sh, err := parseID(a["shard"], "rg")
	if err != nil {
		return nil, usageError("-shard: %v", err)
	}
	to := topology.ShardID(sh)
	did := fmt.Sprintf("moved partition %d of %%s to %s", p, topology.ShardName(to))
	return s.change(ctx, a, did, "move a partition of", func(m *Meta, c *Candidate) (*topology.Topology, error) {
		t := c.Topology
		if p >= uint64(t.Partitions) {
			return nil, usageError("topology %s has %d partitions, 0 to %d; there is no partition %d", c.Name, t.Partitions, t.Partitions-1, p)
		}
		if _, ok := t.Shard(to); !ok {
			return nil, notFound("topology %s has no shard %s; its shards are %s", c.Name, topology.ShardName(to), shardNames(t.Shards))
		}
		return topology.MovePartition(t, keys.PartitionID(p), to)
	})
}

func (s *Service) topologySplitPartitions(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	var from, to uint32
	r, err := s.change(ctx, a, "split the partitions of %s", "split the partitions of", func(m *Meta, c *Candidate) (*topology.Topology, error) {
		var err error
		from = c.Topology.Partitions
		if to, err = splitCount(from, a); err != nil {
			return nil, err
		}
		return topology.SplitPartitions(c.Topology, to)
	})
	if err == nil {
		f := to / from
		r.Text = fmt.Sprintf("Split the %d partitions of %s into %d: partition p is now partitions %d*p to %d*p+%d, on p's shard, so no key changes shard. topology redistribute spreads them over new shards; topology preview -name %s shows the change.",
			from, a["name"], to, f, f, f-1, a["name"])
	}
	return r, err
}

// splitCount is the partition count split-partitions asks for: -partitions,
// or -factor times n.
func splitCount(n uint32, a map[string]string) (uint32, error) {
	if v, ok := a["partitions"]; ok {
		c, _ := strconv.ParseUint(v, 10, 32)
		return uint32(c), nil
	}
	f, _ := strconv.ParseUint(a["factor"], 10, 32)
	if f < 2 {
		return 0, usageError("topology split-partitions: -factor %d; each partition splits into at least 2 parts", f)
	}
	if c := uint64(n) * f; c <= topology.MaxPartitions {
		return uint32(c), nil
	}
	return 0, failed("topology split-partitions: %d partitions split %d ways is more than the %d partitions a store may have", n, f, topology.MaxPartitions)
}

// changeSummary says in one line what ch changes: "2 new shards (rg3,
// rg4); 50 partitions move".
func changeSummary(ch topology.Changes) string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if ch.Split != 0 {
		add("partitions split into %d", ch.Split)
	}
	if n := len(ch.NewNodes); n > 0 {
		add("%s (%s)", countNoun(n, "new storage node"), nodeIDs(ch.NewNodes))
	}
	if n := len(ch.NewShards); n > 0 {
		var ids []topology.ShardID
		for _, s := range ch.NewShards {
			ids = append(ids, s.ID)
		}
		add("%s (%s)", countNoun(n, "new shard"), shardIDs(ids))
	}
	if len(ch.Replicas) > 0 {
		var parts []string
		for _, r := range ch.Replicas {
			p := topology.ShardName(r.Shard)
			for _, n := range r.Add {
				p += " +" + topology.NodeName(n)
			}
			for _, n := range r.Remove {
				p += " -" + topology.NodeName(n)
			}
			parts = append(parts, p)
		}
		add("replicas change (%s)", strings.Join(parts, ", "))
	}
	if n := len(ch.Leaders); n > 0 {
		if n == 1 {
			add("1 preferred leader changes")
		} else {
			add("%d preferred leaders change", n)
		}
	}
	if n := len(ch.Moves); n > 0 {
		add("%s", moveCount(n))
	}
	if n := len(ch.RemovedShards); n > 0 {
		add("%s removed (%s)", countNoun(n, "shard"), shardIDs(ch.RemovedShards))
	}
	if n := len(ch.RemovedNodes); n > 0 {
		verb := "leave"
		if n == 1 {
			verb = "leaves"
		}
		add("%s %s the topology (%s)", countNoun(n, "storage node"), verb, nodeIDs(ch.RemovedNodes))
	}
	if len(out) == 0 {
		return "nothing changes"
	}
	return strings.Join(out, "; ")
}

func moveCount(n int) string {
	if n == 1 {
		return "1 partition moves"
	}
	return fmt.Sprintf("%d partitions move", n)
}

func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func nodeIDs(ids []topology.NodeID) string {
	var out []string
	for _, id := range ids {
		out = append(out, topology.NodeName(id))
	}
	return strings.Join(out, ", ")
}

func shardIDs(ids []topology.ShardID) string {
	var out []string
	for _, id := range ids {
		out = append(out, topology.ShardName(id))
	}
	return strings.Join(out, ", ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// derived reports whether candidate t was made from deployed (a clone,
// then changed): some shard of both keeps its origin, which topology
// create never gives (origins are random).
func derived(deployed, t *topology.Topology) bool {
	return slices.ContainsFunc(t.Shards, func(s topology.Shard) bool {
		d, ok := deployed.Shard(s.ID)
		return ok && d.Origin == s.Origin
	})
}
