package topology

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Rule ids of the findings Check reports. They are stable: tools and tests
// may match on them.
const (
	// RuleDistinctNodes: a shard has two replicas on one node (violation).
	RuleDistinctNodes = "distinct-nodes"
	// RuleUnknownNode: a shard has a replica on a node the topology does
	// not list (violation).
	RuleUnknownNode = "unknown-node"
	// RulePreferredReplica: a shard prefers a leader that holds none of its
	// replicas (violation).
	RulePreferredReplica = "preferred-replica"
	// RuleCapacity: a node hosts more replicas than its Capacity (violation).
	RuleCapacity = "capacity"
	// RuleUnknownShard: partitions belong to a shard the topology does not
	// list (violation).
	RuleUnknownShard = "unknown-shard"
	// RulePartitionSpread: two shards' partition counts differ by more than
	// one (warning: the store works, and a deliberate move-partition may
	// want it so).
	RulePartitionSpread = "partition-spread"
	// RuleLeaderSpread: two nodes hosting replicas prefer to lead numbers of
	// shards that differ by more than one (warning: leadership moves at
	// runtime anyway).
	RuleLeaderSpread = "leader-spread"
	// RuleLeaderPreferred: a shard has no preferred leader (warning).
	RuleLeaderPreferred = "leader-preferred"
	// RuleUnusedCapacity: a node hosts fewer replicas than its Capacity
	// (warning).
	RuleUnusedCapacity = "unused-capacity"
)

// Finding is one thing Check found. Its JSON keys are "rule", "subject"
// and "message".
type Finding struct {
	Rule    string `json:"rule"`    // one of the Rule* ids, e.g. "capacity"
	Subject string `json:"subject"` // what it is about: a node ("sn3") or shard ("rg2")
	Message string `json:"message"` // a full sentence: what is wrong and what to do
}

// String returns "rule subject: message".
func (f Finding) String() string { return f.Rule + " " + f.Subject + ": " + f.Message }

// Report is Check's result. Violations break a placement rule and should
// block deploying the topology; warnings are worth an operator's look.
// Its JSON is {"violations": [...], "warnings": [...]}, with [] for none.
type Report struct {
	Violations []Finding `json:"violations"`
	Warnings   []Finding `json:"warnings"`
}

// MarshalJSON writes the report with [] rather than null for an empty list.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // without this method
	if r.Violations == nil {
		r.Violations = []Finding{}
	}
	if r.Warnings == nil {
		r.Warnings = []Finding{}
	}
	return json.Marshal(plain(r))
}

// OK reports whether the topology breaks no rule (warnings allowed).
func (r Report) OK() bool { return len(r.Violations) == 0 }

// Check reports how t follows the placement rules, for an operator. Unlike
// Validate, which rejects topologies that cannot work, Check also judges
// topologies that work but place data badly, and it reports every finding,
// not just the first. Findings come in a fixed order (shard rules by shard,
// then node rules by node, then partitions, then leaders).
//
// Violations: a shard's replicas on one node, on an unknown node, or a
// preferred leader outside its replicas; a node hosting more replicas than
// its Capacity (0: unlimited; a shard listing a node twice counts once
// there); partitions owned by an unknown shard, or partition counts per
// shard differing by more than one.
//
// Warnings: preferred-leader counts of nodes hosting replicas differing by
// more than one; a shard with no preferred leader; a node hosting fewer
// replicas than its Capacity.
func (t *Topology) Check() Report {
	var r Report
	violate := func(rule, subject, format string, a ...any) {
		r.Violations = append(r.Violations, Finding{rule, subject, fmt.Sprintf(format, a...)})
	}
	warn := func(rule, subject, format string, a ...any) {
		r.Warnings = append(r.Warnings, Finding{rule, subject, fmt.Sprintf(format, a...)})
	}
	known := make(map[NodeID]bool)
	for _, n := range t.Nodes {
		known[n.ID] = true
	}
	hosted := make(map[NodeID]int)
	leads := make(map[NodeID]int)
	for _, s := range t.Shards {
		rg := ShardName(s.ID)
		count := make(map[NodeID]int)
		for _, n := range s.Replicas {
			count[n]++
		}
		for i, n := range s.Replicas {
			if slices.Index(s.Replicas, n) != i {
				continue // a doubled replica is one replica too many, reported once
			}
			hosted[n]++
			if count[n] > 1 {
				violate(RuleDistinctNodes, rg, "%s has %d replicas on %s; a shard's replicas must sit on distinct nodes so that losing one node loses one replica: move %d of them to other storage nodes.", rg, count[n], NodeName(n), count[n]-1)
			}
			if !known[n] {
				violate(RuleUnknownNode, rg, "%s has a replica on %s, which is not a storage node of this topology: add %s to the nodes or move the replica to a listed node.", rg, NodeName(n), NodeName(n))
			}
		}
		switch {
		case s.Preferred == 0:
			warn(RuleLeaderPreferred, rg, "%s has no preferred leader; leaders will not be spread evenly: prefer one of %s.", rg, nodeList(s.Replicas))
		case count[s.Preferred] == 0:
			violate(RulePreferredReplica, rg, "%s prefers %s as leader, but %s holds none of its replicas: prefer one of %s.", rg, NodeName(s.Preferred), NodeName(s.Preferred), nodeList(s.Replicas))
		default:
			leads[s.Preferred]++
		}
	}
	for _, n := range t.Nodes {
		sn, h, c := NodeName(n.ID), hosted[n.ID], n.Capacity
		switch {
		case c > 0 && h > c:
			violate(RuleCapacity, sn, "%s hosts %d replicas but its capacity is %d: move %d replicas to storage nodes with spare capacity, or raise %s's capacity if its hardware allows.", sn, h, c, h-c, sn)
		case c > 0 && h < c:
			warn(RuleUnusedCapacity, sn, "%s hosts %d of its capacity %d replicas; a new topology could use it.", sn, h, c)
		}
	}
	t.checkPartitions(violate, warn)
	checkLeaders(hosted, leads, warn)
	return r
}

func (t *Topology) checkPartitions(violate, warn func(rule, subject, format string, a ...any)) {
	owned := make(map[ShardID]int)
	for _, s := range t.PartitionShard {
		owned[s]++
	}
	for _, s := range t.Shards {
		delete(owned, s.ID)
	}
	for _, s := range slices.Sorted(maps.Keys(owned)) {
		violate(RuleUnknownShard, ShardName(s), "%s owning %d partitions is not a shard of this topology: give those partitions to a listed shard.", ShardName(s), owned[s])
	}
	if len(t.Shards) == 0 {
		return
	}
	count := make(map[ShardID]int)
	for _, s := range t.PartitionShard {
		count[s]++
	}
	most := slices.MaxFunc(t.Shards, func(a, b Shard) int { return cmp.Compare(count[a.ID], count[b.ID]) })
	fewest := slices.MinFunc(t.Shards, func(a, b Shard) int { return cmp.Compare(count[a.ID], count[b.ID]) })
	if count[most.ID]-count[fewest.ID] > 1 {
		n, p := len(t.Shards), len(t.PartitionShard)
		fair := fmt.Sprint(p / n)
		if p%n != 0 {
			fair = fmt.Sprintf("%d or %d", p/n, p/n+1)
		}
		warn(RulePartitionSpread, ShardName(most.ID), "%s owns %d partitions and %s owns %d, but %d partitions over %d shards means %s each: unless that is meant, topology redistribute evens them out so load spreads evenly.",
			ShardName(most.ID), count[most.ID], ShardName(fewest.ID), count[fewest.ID], p, n, fair)
	}
}

func checkLeaders(hosted, leads map[NodeID]int, warn func(rule, subject, format string, a ...any)) {
	nodes := slices.Sorted(maps.Keys(hosted))
	if len(nodes) == 0 {
		return
	}
	most, fewest := nodes[0], nodes[0]
	for _, n := range nodes {
		if leads[n] > leads[most] {
			most = n
		}
		if leads[n] < leads[fewest] {
			fewest = n
		}
	}
	if leads[most]-leads[fewest] > 1 {
		warn(RuleLeaderSpread, NodeName(most), "%s is the preferred leader of %s and %s of %d; counts should differ by at most 1 so leaders' load spreads evenly: prefer leaders on the nodes that lead fewest (a warning only, since leadership moves at runtime).",
			NodeName(most), plural(leads[most], "shard"), NodeName(fewest), leads[fewest])
	}
}
