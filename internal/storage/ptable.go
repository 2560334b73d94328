package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cockroachdb/pebble/v2"
)

// A replicated shard's partition table says which partitions it serves and
// the state of each one moving in or out (docs/design/20261125_elasticity.md).
// It is replicated data: only commands change it (InitTable, MigrateIn ...,
// see migrate_apply.go), it is written in the same batch as their effects,
// and the shard's snapshots carry it (ShardDataSpans). A shard without a
// table (every lite store, and a cluster shard until its first InitTable)
// serves whatever the node routes to it.
//
//	's' shard(8 BE) 'p' -> JSON PartitionTable
//	{"n": 100, "parts": {"7": {"state": 1}, "8": {"state": 2, "peer": 3, "index": 912}, ...}}

// PartState is a partition's state in a table.
type PartState uint8

// The states of a partition in a shard's table. A partition absent from the
// table is not the shard's.
const (
	// PartOwned: the shard serves the partition.
	PartOwned PartState = 1 + iota
	// PartOutgoing: the shard serves it while it is copied to Peer; its log
	// is held from Index.
	PartOutgoing
	// PartGone: the shard stopped serving it at Index (Transfer) in favour
	// of Peer; its keys stay until DropPartition.
	PartGone
	// PartIncoming: the shard receives it from Peer under Attempt and does
	// not serve it yet; Copied once the snapshot copy is complete, and then
	// Index is the last source index replayed.
	PartIncoming
)

var partStateNames = map[PartState]string{PartOwned: "OWNED", PartOutgoing: "OUTGOING", PartGone: "GONE", PartIncoming: "INCOMING"}

func (s PartState) String() string {
	if n, ok := partStateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("PartState(%d)", s)
}

// PartEntry is one partition's entry in a table.
type PartEntry struct {
	State   PartState `json:"state"`
	Peer    uint64    `json:"peer,omitempty"`
	Attempt uint64    `json:"attempt,omitempty"`
	Index   uint64    `json:"index,omitempty"`
	// Held is, while the partition moves out (OUTGOING, GONE), the index
	// of its MigrateOut: the shard keeps its log from there.
	Held   uint64 `json:"held,omitempty"`
	Copied bool   `json:"copied,omitempty"`
	// Versions holds, for a partition that moved here, the origins of the
	// shards that wrote its records before, each with the last index
	// whose writes this shard holds; Since is the index (in this shard's
	// log) from which it holds them.
	Versions map[uint64]uint64 `json:"versions,omitempty"`
	Since    uint64            `json:"since,omitempty"`
}

// PartitionTable is a shard's table. A *PartitionTable is never modified
// once published: changes make a copy (with).
type PartitionTable struct {
	N     uint32                `json:"n"`
	Parts map[uint32]*PartEntry `json:"parts"`
}

// ErrNotServed is wrapped by PartitionError: the shard does not serve the
// partition (it never had it, or handed it off). The client's topology is
// stale: refresh it and send the request to the shard that has it.
var ErrNotServed = errors.New("storage: this shard does not serve the partition")

// ErrMoving is wrapped by PartitionError: the partition is being moved to
// this shard and is not served yet. Retry shortly.
var ErrMoving = errors.New("storage: the partition is moving to this shard")

// ErrMoveState is the Result.Err of a move command that does not fit the
// partition's state (a Transfer of a partition that is not OUTGOING, an
// Activate before the copy caught up ...). Deterministic; nothing written.
var ErrMoveState = errors.New("storage: the command does not fit the partition's state")

// PartitionError says why a shard refused a request about a partition.
// Peer, when known, is the shard the partition went to; N is the table's
// partition count, which numbers Partition.
type PartitionError struct {
	Shard, Peer  uint64
	Partition, N uint32
	State        PartState // 0: not in the table
}

func (e *PartitionError) Error() string {
	switch e.State {
	case PartGone:
		return fmt.Sprintf("partition %d moved from shard %d to shard %d: refresh the topology", e.Partition, e.Shard, e.Peer)
	case PartIncoming:
		return fmt.Sprintf("partition %d is moving to shard %d from shard %d and is not served yet: retry shortly", e.Partition, e.Shard, e.Peer)
	}
	return fmt.Sprintf("shard %d does not serve partition %d: refresh the topology", e.Shard, e.Partition)
}

func (e *PartitionError) Unwrap() error {
	if e.State == PartIncoming {
		return ErrMoving
	}
	return ErrNotServed
}

// Serves returns nil if the shard serves hash h's partition, else a
// *PartitionError. A nil table serves everything.
func (t *PartitionTable) Serves(shard, h uint64) error {
	if t == nil {
		return nil
	}
	return t.ServesPartition(shard, uint32(keys.PartitionOf(h, t.N)))
}

// ServesPartition is Serves for a partition of t.N.
func (t *PartitionTable) ServesPartition(shard uint64, p uint32) error {
	if t == nil {
		return nil
	}
	e := t.Parts[p]
	if e != nil && (e.State == PartOwned || e.State == PartOutgoing) {
		return nil
	}
	pe := &PartitionError{Shard: shard, Partition: p, N: t.N}
	if e != nil {
		pe.State, pe.Peer = e.State, e.Peer
	}
	return pe
}

// Served returns the partitions the shard serves, in order.
func (t *PartitionTable) Served() []keys.PartitionID {
	var out []keys.PartitionID
	for p := range t.N {
		if t.ServesPartition(0, p) == nil {
			out = append(out, keys.PartitionID(p))
		}
	}
	return out
}

// VersionSince returns the index of this shard's log from which it holds
// the write that made a version of another shard (origin, index), and
// whether any partition it serves holds versions of origin that far.
func (t *PartitionTable) VersionSince(origin, index uint64) (since uint64, ok bool) {
	if t == nil {
		return 0, false
	}
	for _, e := range t.Parts {
		if through, has := e.Versions[origin]; has && through >= index && (e.State == PartOwned || e.State == PartOutgoing) {
			since, ok = max(since, e.Since), true
		}
	}
	return since, ok
}

// with returns a copy of t whose entry for p is e (nil: removed).
func (t *PartitionTable) with(p uint32, e *PartEntry) *PartitionTable {
	c := &PartitionTable{N: t.N, Parts: maps.Clone(t.Parts)}
	if e == nil {
		delete(c.Parts, p)
	} else {
		c.Parts[p] = e
	}
	return c
}

// entry returns a copy of p's entry (nil if absent).
func (t *PartitionTable) entry(p uint32) *PartEntry {
	e, ok := t.Parts[p]
	if !ok {
		return nil
	}
	c := *e
	c.Versions = maps.Clone(e.Versions)
	return &c
}

// LoadTable reads shard's partition table; nil if it has none.
func (e *Engine) LoadTable(shard uint64) (*PartitionTable, error) {
	v, ok, err := e.ShardState(shard, shardTable)
	if err != nil || !ok {
		return nil, err
	}
	return decodeTable(shard, v)
}

// Table reads shard's partition table as the view sees it; nil if none.
func (v *View) Table(shard uint64) (*PartitionTable, error) {
	raw, closer, err := v.snap.Get(shardKey(shard, shardTable))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("storage: shard %d partition table: %w", shard, v.e.readErr(err))
	}
	defer closer.Close()
	return decodeTable(shard, raw)
}

func decodeTable(shard uint64, v []byte) (*PartitionTable, error) {
	var t PartitionTable
	if err := json.Unmarshal(v, &t); err != nil || t.N == 0 {
		return nil, fmt.Errorf("%w: shard %d's partition table %.80q", ErrCorrupt, shard, v)
	}
	if t.Parts == nil {
		t.Parts = map[uint32]*PartEntry{}
	}
	return &t, nil
}

// putTable writes t as the batch's shard's table.
func (b *Batch) putTable(t *PartitionTable) error {
	v, err := json.Marshal(t)
	if err != nil {
		return err
	}
	b.table = t
	return b.other(b.b.Set(shardKey(b.shard, shardTable), v, nil))
}

// SetTable gives the batch its shard's current table (nil: none), which
// Apply checks every key against and move commands change.
func (b *Batch) SetTable(t *PartitionTable) { b.table = t }

// Table returns the shard's table as the commands applied so far left it.
func (b *Batch) Table() *PartitionTable { return b.table }
