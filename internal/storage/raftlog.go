package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// A replicated shard keeps its Raft log and state in the engine, in spaces of
// their own. The bytes of entries and states are opaque here (the replica
// package encodes them); storage only files them:
//
//	'l' shard(8 BE) index(8 BE) -> one Raft log entry
//	's' shard(8 BE) 'a'         -> applied index (8 BE)
//	's' shard(8 BE) 'h'         -> Raft hard state
//	's' shard(8 BE) 't'         -> truncated state: index(8 BE) term(8 BE)
//	's' shard(8 BE) 'c'         -> Raft configuration state
//	's' shard(8 BE) 'p'         -> partition table (ptable.go): replicated
//	                               data, carried in the shard's snapshots
const (
	logSpace   = 'l'
	shardSpace = 's'

	shardApplied   = 'a'
	ShardHardState = 'h'
	ShardTruncated = 't'
	ShardConfState = 'c'
	shardTable     = 'p'
)

func shardKey(shard uint64, kind byte) []byte {
	b := make([]byte, 0, 10)
	b = append(b, shardSpace)
	b = binary.BigEndian.AppendUint64(b, shard)
	return append(b, kind)
}

func logKey(shard, index uint64) []byte {
	b := make([]byte, 0, 17)
	b = append(b, logSpace)
	b = binary.BigEndian.AppendUint64(b, shard)
	return binary.BigEndian.AppendUint64(b, index)
}

// PutLogEntry files entry data at index.
func (b *Batch) PutLogEntry(shard, index uint64, data []byte) error {
	return b.other(b.b.Set(logKey(shard, index), data, nil))
}

// DeleteLogRange deletes the entries with lo <= index < hi.
func (b *Batch) DeleteLogRange(shard, lo, hi uint64) error {
	if lo >= hi {
		return nil
	}
	return b.other(b.b.DeleteRange(logKey(shard, lo), logKey(shard, hi), nil))
}

// PutShardState sets one of a shard's states (ShardHardState, ...).
func (b *Batch) PutShardState(shard uint64, kind byte, v []byte) error {
	return b.other(b.b.Set(shardKey(shard, kind), v, nil))
}

// DeleteShardRaftState deletes, within the batch, the shard's whole Raft log
// and every one of its states: hard state, truncated state, conf state and
// applied index. Its records are untouched. No replica of the shard may be
// running. Writes added to the batch afterwards, and the applied index that
// Commit writes after SetApplied, take effect over the deletion.
func (b *Batch) DeleteShardRaftState(shard uint64) error {
	// Every key below is 1+8+8 ('l') or 1+8+1 ('s') bytes long, so appending
	// 0xff bytes bounds the shard's keys without computing shard+1.
	logEnd := append(logKey(shard, ^uint64(0)), 0xff)
	if err := b.b.DeleteRange(logKey(shard, 0), logEnd, nil); err != nil {
		return err
	}
	stateEnd := append(shardKey(shard, 0xff), 0xff)
	return b.b.DeleteRange(shardKey(shard, 0), stateEnd, nil)
}

// SetApplied records index as the shard's applied index (snapshots).
func (b *Batch) SetApplied(index uint64) { b.last = index }

// ShardState reads one of a shard's states; ok is false if never written.
func (e *Engine) ShardState(shard uint64, kind byte) (v []byte, ok bool, err error) {
	db, l := e.acquire()
	defer e.release(l)
	raw, closer, err := db.Get(shardKey(shard, kind))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("storage: shard %d state %c: %w", shard, kind, e.readErr(err))
	}
	defer closer.Close()
	return append([]byte(nil), raw...), true, nil
}

// ShardApplied returns a shard's applied index (0 if none).
func (e *Engine) ShardApplied(shard uint64) (uint64, error) {
	v, ok, err := e.ShardState(shard, shardApplied)
	if err != nil || !ok {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: shard %d applied index of %d bytes", ErrCorrupt, shard, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// LogEntries calls fn for the entries lo <= index < hi in order, stopping
// early when fn returns false.
func (e *Engine) LogEntries(shard, lo, hi uint64, fn func(index uint64, data []byte) bool) error {
	db, l := e.acquire()
	defer e.release(l)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: logKey(shard, lo), UpperBound: logKey(shard, hi)})
	if err != nil {
		return e.readErr(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		v, err := it.ValueAndErr()
		if err != nil {
			return e.readErr(err)
		}
		if !fn(binary.BigEndian.Uint64(k[9:]), v) {
			break
		}
	}
	return e.readErr(it.Error())
}

// LastLogIndex returns the shard's highest log index; ok is false if the log
// is empty.
func (e *Engine) LastLogIndex(shard uint64) (uint64, bool, error) {
	db, l := e.acquire()
	defer e.release(l)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: logKey(shard, 0), UpperBound: logKey(shard+1, 0)})
	if err != nil {
		return 0, false, e.readErr(err)
	}
	defer it.Close()
	if !it.Last() {
		return 0, false, e.readErr(it.Error())
	}
	return binary.BigEndian.Uint64(it.Key()[9:]), true, nil
}
