package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// applyMove applies the partition-table commands (the states and their
// order are in docs/design/20261125_elasticity.md). ok is false for any
// other command. Each is idempotent: applied again, or out of its state, it
// changes nothing, and a command that does not fit the state returns a
// Result whose Err wraps ErrMoveState, the same on every replica.
func (b *Batch) applyMove(index uint64, cmd *commandpb.Command) (Result, bool) {
	var err error
	switch c := cmd.GetBody().(type) {
	case *commandpb.Command_InitTable:
		err = b.initTable(c.InitTable)
	case *commandpb.Command_Split:
		err = b.split(c.Split)
	case *commandpb.Command_MigrateIn:
		err = b.migrateIn(c.MigrateIn)
	case *commandpb.Command_MigrateOut:
		err = b.migrateOut(index, c.MigrateOut)
	case *commandpb.Command_Ingest:
		err = b.ingest(c.Ingest)
	case *commandpb.Command_Replay:
		return b.replay(c.Replay), true
	case *commandpb.Command_Transfer:
		err = b.transfer(index, c.Transfer)
	case *commandpb.Command_Activate:
		err = b.activate(index, c.Activate)
	case *commandpb.Command_DropPartition:
		err = b.dropPartition(c.DropPartition.GetPartition())
	case *commandpb.Command_CancelMove:
		err = b.cancelMove(c.CancelMove.GetPartition())
	default:
		return Result{}, false
	}
	return Result{Err: err}, true
}

func moveErr(p uint32, format string, a ...any) error {
	return fmt.Errorf("%w: partition %d: %s", ErrMoveState, p, fmt.Sprintf(format, a...))
}

// tableFor returns the batch's table, or an error for a shard without one.
func (b *Batch) tableFor(p uint32) (*PartitionTable, error) {
	if b.table == nil {
		return nil, moveErr(p, "shard %d has no partition table (InitTable first)", b.shard)
	}
	if p >= b.table.N {
		return nil, fmt.Errorf("%w: partition %d of a table of %d", ErrBadCommand, p, b.table.N)
	}
	return b.table, nil
}

func (b *Batch) initTable(c *commandpb.InitTable) error {
	if b.table != nil {
		return nil
	}
	if c.GetN() == 0 {
		return fmt.Errorf("%w: a table of 0 partitions", ErrBadCommand)
	}
	t := &PartitionTable{N: c.GetN(), Parts: map[uint32]*PartEntry{}}
	for _, p := range c.GetPartitions() {
		if p >= c.GetN() {
			return fmt.Errorf("%w: partition %d of a table of %d", ErrBadCommand, p, c.GetN())
		}
		t.Parts[p] = &PartEntry{State: PartOwned}
	}
	return b.putTable(t)
}

// split maps every entry p to p*f .. p*f+f-1; a partition's hash range is
// exactly its children's, so no key changes hands.
func (b *Batch) split(c *commandpb.Split) error {
	f := c.GetFactor()
	switch {
	case b.table == nil:
		return moveErr(0, "shard %d has no partition table to split", b.shard)
	case b.table.N != c.GetFromN():
		return nil // split already (or another count): nothing to do
	case f < 2 || uint64(b.table.N)*uint64(f) > 1<<20:
		return fmt.Errorf("%w: split of %d partitions by %d", ErrBadCommand, b.table.N, f)
	}
	for p, e := range b.table.Parts {
		if e.State == PartIncoming || e.State == PartOutgoing {
			return moveErr(p, "is %v: a split waits for moves to end", e.State)
		}
	}
	t := &PartitionTable{N: b.table.N * f, Parts: map[uint32]*PartEntry{}}
	for p, e := range b.table.Parts {
		for k := range f {
			c := *e
			c.Versions = maps.Clone(e.Versions)
			t.Parts[p*f+k] = &c
		}
	}
	return b.putTable(t)
}

func (b *Batch) migrateIn(c *commandpb.MigrateIn) error {
	p := c.GetPartition()
	t, err := b.tableFor(p)
	if err != nil {
		return err
	}
	e := t.entry(p)
	switch {
	case e == nil:
	case e.State == PartIncoming && c.GetAttempt() > e.Attempt:
	case e.State == PartIncoming:
		return nil // this attempt or a newer one started already
	default:
		return moveErr(p, "is %v here, so it cannot move in", e.State)
	}
	if err := b.clearPartition(p); err != nil {
		return err
	}
	return b.putTable(t.with(p, &PartEntry{State: PartIncoming, Peer: c.GetFromShard(), Attempt: c.GetAttempt()}))
}

func (b *Batch) migrateOut(index uint64, c *commandpb.MigrateOut) error {
	p := c.GetPartition()
	t, err := b.tableFor(p)
	if err != nil {
		return err
	}
	e := t.entry(p)
	switch {
	case e != nil && e.State == PartOwned:
	case e != nil && (e.State == PartOutgoing || e.State == PartGone) && e.Peer == c.GetToShard():
		return nil
	default:
		return moveErr(p, "is %s here, so it cannot move out to shard %d", stateOf(e), c.GetToShard())
	}
	e.State, e.Peer, e.Index, e.Held = PartOutgoing, c.GetToShard(), index, index
	return b.putTable(t.with(p, e))
}

func (b *Batch) transfer(index uint64, c *commandpb.Transfer) error {
	p := c.GetPartition()
	t, err := b.tableFor(p)
	if err != nil {
		return err
	}
	e := t.entry(p)
	switch {
	case e != nil && e.State == PartGone && e.Peer == c.GetToShard():
		return nil
	case e == nil || e.State != PartOutgoing || e.Peer != c.GetToShard():
		return moveErr(p, "is %s here, not OUTGOING to shard %d", stateOf(e), c.GetToShard())
	}
	e.State, e.Index = PartGone, index
	return b.putTable(t.with(p, e))
}

// incoming returns p's INCOMING entry under attempt, or an error.
func (b *Batch) incoming(p uint32, attempt uint64) (*PartitionTable, *PartEntry, error) {
	t, err := b.tableFor(p)
	if err != nil {
		return nil, nil, err
	}
	e := t.entry(p)
	if e == nil || e.State != PartIncoming || e.Attempt != attempt {
		return nil, nil, moveErr(p, "is %s here, not INCOMING under attempt %d", stateOf(e), attempt)
	}
	return t, e, nil
}

func (b *Batch) activate(index uint64, c *commandpb.Activate) error {
	p := c.GetPartition()
	if t, err := b.tableFor(p); err == nil {
		if e := t.entry(p); e != nil && e.State == PartOwned && e.Since != 0 {
			return nil // activated already
		}
	}
	t, e, err := b.incoming(p, c.GetAttempt())
	if err != nil {
		return err
	}
	if !e.Copied || e.Index+1 < c.GetThrough() {
		return moveErr(p, "holds the source's writes through index %d (copied: %v), not through %d", e.Index, e.Copied, c.GetThrough()-1)
	}
	owned := &PartEntry{State: PartOwned, Versions: maps.Clone(c.GetVersions()), Since: index}
	return b.putTable(t.with(p, owned))
}

func (b *Batch) dropPartition(p uint32) error {
	t, err := b.tableFor(p)
	if err != nil {
		return err
	}
	e := t.entry(p)
	switch {
	case e == nil:
		return nil
	case e.State != PartGone:
		return moveErr(p, "is %v here; only a handed-off (GONE) partition is dropped", e.State)
	}
	if err := b.clearPartition(p); err != nil {
		return err
	}
	return b.putTable(t.with(p, nil))
}

func (b *Batch) cancelMove(p uint32) error {
	t, err := b.tableFor(p)
	if err != nil {
		return err
	}
	e := t.entry(p)
	switch {
	case e == nil || e.State == PartOwned:
		return nil
	case e.State == PartOutgoing:
		return b.putTable(t.with(p, &PartEntry{State: PartOwned, Versions: e.Versions, Since: e.Since}))
	case e.State == PartIncoming:
		if err := b.clearPartition(p); err != nil {
			return err
		}
		return b.putTable(t.with(p, nil))
	}
	return moveErr(p, "was handed off (GONE): the move can only be finished")
}

func stateOf(e *PartEntry) string {
	if e == nil {
		return "not in the table"
	}
	return e.State.String()
}

// clearPartition deletes partition p's records in the batch's shard and
// their expiry-index entries.
func (b *Batch) clearPartition(p uint32) error {
	lo, hi := keys.PartitionSpan(b.shard, keys.PartitionID(p), b.table.N)
	var stale [][]byte
	spans := []Span{{lo, hi}}
	if err := expiryIn(b.b, spans, func(k, _ []byte) { stale = append(stale, bytes.Clone(k)) }); err != nil {
		return err
	}
	for _, k := range stale {
		if err := b.b.Delete(k, nil); err != nil {
			return err
		}
	}
	b.dropped = append(b.dropped, Span{lo, hi})
	return b.b.DeleteRange(lo, hi, nil)
}

// ingest files copied records under this shard: each key arrives without
// its shard ('r' hash major ...) and must fall in partition p.
func (b *Batch) ingest(c *commandpb.Ingest) error {
	p := c.GetPartition()
	t, e, err := b.incoming(p, c.GetAttempt())
	if err != nil {
		return err
	}
	if e.Copied {
		return moveErr(p, "copy of attempt %d is complete; a late chunk is refused", e.Attempt)
	}
	ks, vs := c.GetKeys(), c.GetValues()
	if len(ks) != len(vs) {
		return fmt.Errorf("%w: ingest of %d keys and %d values", ErrBadCommand, len(ks), len(vs))
	}
	for i, k := range ks {
		if len(k) < 9 || k[0] != keys.RecordSpace || uint32(keys.PartitionOf(binary.BigEndian.Uint64(k[1:9]), t.N)) != p {
			return fmt.Errorf("%w: ingested key %x is not a record of partition %d", ErrBadCommand, k, p)
		}
		rec, err := decodeRecord(vs[i])
		if err != nil {
			return fmt.Errorf("%w: ingested record %x: %v", ErrBadCommand, k, err)
		}
		sk := ownKey(b.shard, k)
		if err := b.write(&pending{sk: sk, rec: vs[i], expMs: rec.expMs}); err != nil {
			return err
		}
	}
	if c.GetLast() {
		e.Copied, e.Index = true, c.GetThrough()
		return b.putTable(t.with(p, e))
	}
	return nil
}

// ownKey files a record key given without a shard ('r' hash ...) under
// shard.
func ownKey(shard uint64, k []byte) []byte {
	sk := make([]byte, 0, len(k)+8)
	sk = append(sk, keys.RecordSpace)
	sk = binary.BigEndian.AppendUint64(sk, shard)
	return append(sk, k[1:]...)
}

// replay applies the source's commands to partition p only, each with the
// source's version (origin, its index), and raises p's replayed index.
// Anything at or below the replayed index was applied already.
func (b *Batch) replay(c *commandpb.Replay) Result {
	p := c.GetPartition()
	t, e, err := b.incoming(p, c.GetAttempt())
	if err != nil {
		return Result{Err: err}
	}
	if !e.Copied {
		return Result{Err: moveErr(p, "the copy of attempt %d is not complete; nothing to replay onto", e.Attempt)}
	}
	origin := b.origin
	defer func() { b.origin, b.replaying = origin, false }()
	b.origin, b.replaying = c.GetSrcOrigin(), true
	for _, r := range c.GetEntries() {
		if r.GetSrcIndex() <= e.Index {
			continue
		}
		if r.GetCommand() != nil {
			if res := b.replayInto(p, r.GetSrcIndex(), r.GetCommand()); res.Err != nil && !isDeterministic(res.Err) {
				return res
			}
		}
		e.Index = r.GetSrcIndex()
	}
	if err := b.putTable(t.with(p, e)); err != nil {
		return Result{Err: err}
	}
	return Result{}
}

// replayInto applies the part of the source's command at index that
// touches partition p.
func (b *Batch) replayInto(p uint32, index uint64, cmd *commandpb.Command) Result {
	n := b.table.N
	in := func(major []string) bool { return uint32(keys.PartitionOf(keys.Hash(major), n)) == p }
	switch body := cmd.GetBody().(type) {
	case *commandpb.Command_Batch:
		if ops := body.Batch.GetOps(); len(ops) > 0 && in(opKey(ops[0]).GetMajor()) {
			return b.applyOps(index, cmd.GetNowMs(), ops)
		}
	case *commandpb.Command_MultiDelete:
		if in(body.MultiDelete.GetParent().GetMajor()) {
			return b.applyMultiDelete(cmd.GetNowMs(), body.MultiDelete)
		}
	case *commandpb.Command_Expire:
		var mine []*commandpb.ExpiredRecord
		for _, r := range body.Expire.GetRecords() {
			sk := r.GetStorageKey()
			if len(sk) >= keys.HeaderLen && uint32(keys.PartitionOf(keys.HashOf(sk), n)) == p {
				mine = append(mine, &commandpb.ExpiredRecord{StorageKey: ownKey(b.shard, slices.Concat(sk[:1], sk[9:])), ExpirationMs: r.GetExpirationMs()})
			}
		}
		return b.applyExpire(cmd.GetNowMs(), &commandpb.Expire{Records: mine})
	}
	return Result{}
}

// Touches reports whether the command writes any key of partition p of n,
// so that a mover replays only those (the others are a watermark).
func Touches(cmd *commandpb.Command, p uint32, n uint32) bool {
	in := func(major []string) bool { return uint32(keys.PartitionOf(keys.Hash(major), n)) == p }
	switch body := cmd.GetBody().(type) {
	case *commandpb.Command_Batch:
		ops := body.Batch.GetOps()
		return len(ops) > 0 && in(opKey(ops[0]).GetMajor())
	case *commandpb.Command_MultiDelete:
		return in(body.MultiDelete.GetParent().GetMajor())
	case *commandpb.Command_Expire:
		for _, r := range body.Expire.GetRecords() {
			if sk := r.GetStorageKey(); len(sk) >= keys.HeaderLen && uint32(keys.PartitionOf(keys.HashOf(sk), n)) == p {
				return true
			}
		}
	}
	return false
}

// isDeterministic reports whether a command's error is one every replica
// reaches the same way (the command was applied as a refusal).
func isDeterministic(err error) bool {
	return errors.Is(err, ErrBadCommand) || errors.Is(err, ErrMoveState) || errors.Is(err, ErrNotServed) || errors.Is(err, ErrMoving)
}
