package topology

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/internal/keys"
)

// Changes is what deploying one topology over another does, for the
// migration engine to execute, in this order:
//
//	Split          0, or the new partition count: every partition p of n
//	               becomes p*f .. p*f+f-1 of n*f (f = Split/n), same shard
//	NewNodes       sn ids to add                   [sn4 sn5 sn6]
//	NewShards      shards to create, owning nothing yet
//	               {rg3 [sn4 sn5 sn6] preferred sn4 origin ...}
//	Replicas       on shards in both: {rg1 add [sn4] remove [sn1]}
//	Leaders        shards in both whose preferred leader changes (new Preferred)
//	Moves          {partition 25 rg1 -> rg3}, in the new (split) numbering,
//	               ascending by partition
//	RemovedShards  emptied by Moves first          [rg5]
//	RemovedNodes   hosting nothing by then         [sn7]
//
// Lists are ascending by id. Node attributes (address, zone, capacity) are
// not changes to execute and are not listed. Its JSON keys are the
// snake_case field names; lists are [] when empty.
type Changes struct {
	Split         uint32          `json:"split"`
	NewNodes      []NodeID        `json:"new_nodes"`
	NewShards     []Shard         `json:"new_shards"`
	Replicas      []ReplicaChange `json:"replicas"`
	Leaders       []Shard         `json:"leaders"`
	Moves         []Move          `json:"moves"`
	RemovedShards []ShardID       `json:"removed_shards"`
	RemovedNodes  []NodeID        `json:"removed_nodes"`
}

// Move is a partition changing shard.
type Move struct {
	Partition keys.PartitionID `json:"partition"`
	From      ShardID          `json:"from"`
	To        ShardID          `json:"to"`
}

// ReplicaChange is the replicas a shard gains and loses.
type ReplicaChange struct {
	Shard  ShardID  `json:"shard"`
	Add    []NodeID `json:"add"`
	Remove []NodeID `json:"remove"`
}

// Empty reports whether the changes change nothing.
func (c Changes) Empty() bool {
	return c.Split == 0 && len(c.NewNodes)+len(c.NewShards)+len(c.Replicas)+len(c.Leaders)+len(c.Moves)+len(c.RemovedShards)+len(c.RemovedNodes) == 0
}

// Compare returns what deploying to over from changes. Both must be valid.
// It refuses, with an error wrapping ErrInvalid that names the fix, a to
// of another store; a partition count that is neither from's nor a
// multiple of it; a shard of both whose Origin differs; a new shard whose
// id is at most from's MaxShard (a removed shard's id reused), or a
// MaxShard below from's; a shard of
// both whose replicas would all change at once (one must stay so the Raft
// membership changes, one at a time, keep a majority); and a shard removed
// that still owns partitions in to.
func Compare(from, to *Topology) (Changes, error) {
	var c Changes
	if from == nil || to == nil {
		return c, fmt.Errorf("%w: compare needs both topologies; with nothing deployed, deploy the candidate as a new store", ErrInvalid)
	}
	f, err := splitOf(from, to)
	if err != nil {
		return c, err
	}
	if err := removedOwnNothing(from, to); err != nil {
		return c, err
	}
	for _, t := range []*Topology{from, to} {
		if err := t.Validate(); err != nil {
			return c, err
		}
	}
	if err := sameShards(from, to); err != nil {
		return c, err
	}
	if err := keepsOne(from, to); err != nil {
		return c, err
	}
	if f > 1 {
		c.Split = to.Partitions
	}
	c.NewNodes, c.RemovedNodes = nodeChanges(from, to)
	for _, s := range to.Shards {
		old, ok := from.Shard(s.ID)
		if !ok {
			c.NewShards = append(c.NewShards, s)
			continue
		}
		rc := ReplicaChange{Shard: s.ID, Add: missing(s.Replicas, old.Replicas), Remove: missing(old.Replicas, s.Replicas)}
		if len(rc.Add)+len(rc.Remove) > 0 {
			c.Replicas = append(c.Replicas, rc)
		}
		if old.Preferred != s.Preferred {
			c.Leaders = append(c.Leaders, s)
		}
	}
	for _, s := range from.Shards {
		if !hasShard(to, s.ID) {
			c.RemovedShards = append(c.RemovedShards, s.ID)
		}
	}
	owner := splitOwners(from.PartitionShard, f)
	for p, s := range to.PartitionShard {
		if owner[p] != s {
			c.Moves = append(c.Moves, Move{Partition: keys.PartitionID(p), From: owner[p], To: s})
		}
	}
	c.sort()
	return c, nil
}

// splitOf returns f = to.Partitions/from.Partitions for a store of the same
// name whose count stays (1) or grows by splitting (a multiple).
func splitOf(from, to *Topology) (uint32, error) {
	switch {
	case from.Store != to.Store:
		return 0, fmt.Errorf("%w: the topology is of store %q, not %q: a topology belongs to one store; clone the deployed one (topology clone -current)", ErrInvalid, to.Store, from.Store)
	case from.Partitions == 0 || to.Partitions%from.Partitions != 0:
		return 0, fmt.Errorf("%w: %d partitions cannot follow %d: the count only grows by splitting every partition into equal parts (a multiple of %d): clone the deployed topology (topology clone -current) and split it (topology split-partitions)",
			ErrInvalid, to.Partitions, from.Partitions, from.Partitions)
	}
	return to.Partitions / from.Partitions, nil
}

// removedOwnNothing refuses partitions owned by a shard that from has and
// to removes.
func removedOwnNothing(from, to *Topology) error {
	for p, s := range to.PartitionShard {
		if hasShard(from, s) && !hasShard(to, s) {
			return fmt.Errorf("%w: shard %s is removed but still owns partition %d (and maybe others): give its partitions to remaining shards first (topology redistribute or topology move-partition)", ErrInvalid, ShardName(s), p)
		}
	}
	return nil
}

// sameShards refuses a shard of both with another origin, a new shard with
// an id from has used (at most its MaxShard), and a MaxShard that went
// back.
func sameShards(from, to *Topology) error {
	most := from.maxShard()
	if to.maxShard() < most {
		return fmt.Errorf("%w: the topology's highest shard id ever used (%d) is below the deployed one's (%d), so a removed shard's id could be used again: build the new topology from a clone of the deployed one (topology clone -current)", ErrInvalid, to.maxShard(), most)
	}
	for _, s := range to.Shards {
		old, ok := from.Shard(s.ID)
		switch {
		case ok && old.Origin != s.Origin:
			return fmt.Errorf("%w: shard %s has another origin than the deployed %s, so it is another shard (its record versions would clash): build the new topology from a clone of the deployed one (topology clone -current) rather than topology create", ErrInvalid, ShardName(s.ID), ShardName(s.ID))
		case !ok && s.ID <= most:
			return fmt.Errorf("%w: new shard %s reuses an id of the store (ids up to %s have been used, and nodes may keep state of removed shards): give new shards ids above %d; topology redistribute does", ErrInvalid, ShardName(s.ID), ShardName(most), most)
		}
	}
	return nil
}

func nodeChanges(from, to *Topology) (added, removed []NodeID) {
	for _, n := range to.Nodes {
		if _, ok := from.Node(n.ID); !ok {
			added = append(added, n.ID)
		}
	}
	for _, n := range from.Nodes {
		if _, ok := to.Node(n.ID); !ok {
			removed = append(removed, n.ID)
		}
	}
	return added, removed
}

// missing returns the ids of a that b lacks, ascending.
func missing(a, b []NodeID) []NodeID {
	var out []NodeID
	for _, n := range a {
		if !slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func (c *Changes) sort() {
	slices.Sort(c.NewNodes)
	slices.Sort(c.RemovedNodes)
	slices.Sort(c.RemovedShards)
	byID := func(a, b Shard) int { return cmp.Compare(a.ID, b.ID) }
	slices.SortFunc(c.NewShards, byID)
	slices.SortFunc(c.Leaders, byID)
	slices.SortFunc(c.Replicas, func(a, b ReplicaChange) int { return cmp.Compare(a.Shard, b.Shard) })
}

// MarshalJSON writes the changes with [] rather than null for empty lists.
func (c Changes) MarshalJSON() ([]byte, error) {
	type plain Changes // without this method
	c.NewNodes, c.NewShards, c.Replicas, c.Leaders = orEmpty(c.NewNodes), orEmpty(c.NewShards), orEmpty(slices.Clone(c.Replicas)), orEmpty(c.Leaders)
	c.Moves, c.RemovedShards, c.RemovedNodes = orEmpty(c.Moves), orEmpty(c.RemovedShards), orEmpty(c.RemovedNodes)
	for i := range c.Replicas {
		c.Replicas[i].Add, c.Replicas[i].Remove = orEmpty(c.Replicas[i].Add), orEmpty(c.Replicas[i].Remove)
	}
	return json.Marshal(plain(c))
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
