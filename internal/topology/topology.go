package topology

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/internal/keys"
)

// NodeID names a storage node; ShardID names a shard. Both start at 1.
type (
	NodeID  uint64
	ShardID uint64
)

// ErrInvalid is returned (wrapped) by Validate and Build.
var ErrInvalid = errors.New("topology: invalid")

// Node is a storage node.
type Node struct {
	ID   NodeID `json:"id"`
	Addr string `json:"addr"` // host:port for clients and peers
	// Capacity is the most replicas the node may host. 0 means unknown and
	// counts as unlimited, as in topologies written before capacities
	// existed. Not carried on the wire (ToPB drops it).
	Capacity int `json:"capacity,omitempty"`
	// Zone names the zone (rack, room, data center) the node runs in; Place
	// puts each zone's replicas on that zone's nodes. Not carried on the wire.
	Zone string `json:"zone,omitempty"`
}

// Shard is a replication group.
type Shard struct {
	ID       ShardID  `json:"id"`
	Replicas []NodeID `json:"replicas"`
	// Preferred is the replica that should lead (for an even spread).
	Preferred NodeID `json:"preferred"`
	// Origin makes the shard's record versions unique in the store.
	Origin uint64 `json:"origin"`
}

// Topology is a store's layout.
type Topology struct {
	Store      string  `json:"store"`
	Partitions uint32  `json:"partitions"`
	Seq        uint64  `json:"seq"`
	Nodes      []Node  `json:"nodes"`
	Shards     []Shard `json:"shards"`
	// PartitionShard[p] is the shard that owns partition p.
	PartitionShard []ShardID `json:"partition_shard"`
	// MaxShard is the highest shard id ever used in this store (0 in
	// topologies written before it existed: then the highest id listed).
	// New shards get ids above it, so a removed shard's id is never reused:
	// a node may keep stale state under an old id. Not carried on the wire.
	MaxShard ShardID `json:"max_shard,omitempty"`
}

// Build lays out a new store: shards shards of rf replicas over nodes,
// partitions dealt to shards in contiguous blocks.
func Build(store string, partitions uint32, nodes []Node, shards, rf int) (*Topology, error) {
	switch {
	case rf < 1 || rf > len(nodes):
		return nil, fmt.Errorf("%w: replication factor %d needs at least %d nodes, there are %d", ErrInvalid, rf, rf, len(nodes))
	case shards < 1:
		return nil, fmt.Errorf("%w: %d shards; a store needs at least one", ErrInvalid, shards)
	case uint32(shards) > partitions:
		return nil, fmt.Errorf("%w: %d shards but only %d partitions; each shard needs a partition", ErrInvalid, shards, partitions)
	}
	t := &Topology{Store: store, Partitions: partitions, Seq: 1, Nodes: slices.Clone(nodes)}
	leads := make(map[NodeID]int)
	for s := range shards {
		sh := Shard{ID: ShardID(s + 1), Origin: randomOrigin()}
		for r := range rf {
			sh.Replicas = append(sh.Replicas, nodes[(s*rf+r)%len(nodes)].ID)
		}
		sh.Preferred = leastLoaded(sh.Replicas, leads)
		leads[sh.Preferred]++
		t.Shards = append(t.Shards, sh)
	}
	t.PartitionShard = dealPartitions(partitions, shards)
	t.MaxShard = ShardID(shards)
	return t, t.Validate()
}

// dealPartitions gives partitions to shards 1..shards in contiguous blocks
// whose sizes differ by at most one.
func dealPartitions(partitions uint32, shards int) []ShardID {
	out := make([]ShardID, partitions)
	for p := range partitions {
		out[p] = ShardID(uint64(p)*uint64(shards)/uint64(partitions) + 1)
	}
	return out
}

func leastLoaded(replicas []NodeID, load map[NodeID]int) NodeID {
	best := replicas[0]
	for _, n := range replicas[1:] {
		if load[n] < load[best] {
			best = n
		}
	}
	return best
}

func randomOrigin() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:]) | 1
}

// Validate checks the invariants in the package doc.
func (t *Topology) Validate() error {
	nodes := make(map[NodeID]bool)
	addrs := make(map[string]bool)
	for _, n := range t.Nodes {
		if n.ID == 0 || nodes[n.ID] || n.Addr == "" || addrs[n.Addr] {
			return fmt.Errorf("%w: node %d (%q) has a zero, duplicate or empty id or address", ErrInvalid, n.ID, n.Addr)
		}
		nodes[n.ID], addrs[n.Addr] = true, true
	}
	shards := make(map[ShardID]bool)
	for _, s := range t.Shards {
		if s.ID == 0 || shards[s.ID] || len(s.Replicas) == 0 {
			return fmt.Errorf("%w: shard %d has a zero or duplicate id or no replicas", ErrInvalid, s.ID)
		}
		shards[s.ID] = true
		if t.MaxShard != 0 && s.ID > t.MaxShard {
			return fmt.Errorf("%w: shard %d is above the highest shard id ever used (%d); new shards take ids above it", ErrInvalid, s.ID, t.MaxShard)
		}
		seen := make(map[NodeID]bool)
		for _, r := range s.Replicas {
			if !nodes[r] || seen[r] {
				return fmt.Errorf("%w: shard %d's replica on node %d is unknown or doubled (replicas must sit on distinct nodes)", ErrInvalid, s.ID, r)
			}
			seen[r] = true
		}
		if s.Preferred != 0 && !seen[s.Preferred] {
			return fmt.Errorf("%w: shard %d prefers node %d, which holds none of its replicas", ErrInvalid, s.ID, s.Preferred)
		}
	}
	if uint32(len(t.PartitionShard)) != t.Partitions || t.Partitions == 0 {
		return fmt.Errorf("%w: %d partitions but %d partition owners", ErrInvalid, t.Partitions, len(t.PartitionShard))
	}
	for p, s := range t.PartitionShard {
		if !shards[s] {
			return fmt.Errorf("%w: partition %d belongs to unknown shard %d", ErrInvalid, p, s)
		}
	}
	return nil
}

// Clone returns a deep copy of t, which the caller may change.
func (t *Topology) Clone() *Topology {
	c := *t
	c.Nodes = slices.Clone(t.Nodes)
	c.Shards = slices.Clone(t.Shards)
	for i := range c.Shards {
		c.Shards[i].Replicas = slices.Clone(t.Shards[i].Replicas)
	}
	c.PartitionShard = slices.Clone(t.PartitionShard)
	return &c
}

// maxShard is the highest shard id ever used: MaxShard, or for a topology
// written before MaxShard existed, the highest listed.
func (t *Topology) maxShard() ShardID {
	m := t.MaxShard
	for _, s := range t.Shards {
		m = max(m, s.ID)
	}
	return m
}

// ShardFor returns the shard owning partition p.
func (t *Topology) ShardFor(p keys.PartitionID) ShardID { return t.PartitionShard[p] }

// ShardForKey returns the shard owning a major path.
func (t *Topology) ShardForKey(major []string) ShardID {
	return t.ShardFor(keys.PartitionOf(keys.Hash(major), t.Partitions))
}

// PartitionsOf returns the partitions shard s owns, ascending.
func (t *Topology) PartitionsOf(s ShardID) []keys.PartitionID {
	var out []keys.PartitionID
	for p, owner := range t.PartitionShard {
		if owner == s {
			out = append(out, keys.PartitionID(p))
		}
	}
	return out
}

// Node returns the node with id.
func (t *Topology) Node(id NodeID) (Node, bool) {
	i := slices.IndexFunc(t.Nodes, func(n Node) bool { return n.ID == id })
	if i < 0 {
		return Node{}, false
	}
	return t.Nodes[i], true
}

// Shard returns the shard with id.
func (t *Topology) Shard(id ShardID) (Shard, bool) {
	i := slices.IndexFunc(t.Shards, func(s Shard) bool { return s.ID == id })
	if i < 0 {
		return Shard{}, false
	}
	return t.Shards[i], true
}

// ShardsOn returns the shards with a replica on node n.
func (t *Topology) ShardsOn(n NodeID) []Shard {
	var out []Shard
	for _, s := range t.Shards {
		if slices.Contains(s.Replicas, n) {
			out = append(out, s)
		}
	}
	return out
}

// FileName is the topology file's name in a node's root. The file is a
// checked file (package storage/files) holding the topology's JSON; this
// package does no file I/O.
const FileName = "topology.json"

// Decode parses and validates a topology's JSON (the "data" of
// topology.json, or a topology sent by a peer).
func Decode(b []byte) (*Topology, error) {
	var t Topology
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("topology: not a topology: %w", err)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return &t, nil
}
