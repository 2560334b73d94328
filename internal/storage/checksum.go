package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/time/rate"
)

// A partition's checksum is the 64-bit xxhash of its records in key order,
// each framed as in snapshot data:
//
//	+----------------+-----+----------------+-----+----
//	| uvarint len(k) |  k  | uvarint len(v) |  v  | ...  next record
//	+----------------+-----+----------------+-----+----
//	  k  the record's storage key: 'r' shard(8) hash(8) major 00 02 minor
//	  v  the record's bytes: format, version (origin, index), expiry, value
//
// The version and expiry are the same on every replica (apply computes them
// from the command alone), so replicas at the same applied index hash the
// same bytes. Expired records that the sweeper has not deleted yet count
// too: their deletion goes through the log like any write. Expiry-index
// entries do not: they are derived from the records.
//
// Why xxhash and not a cryptographic hash: the sums compare replicas that
// may differ by accident (a lost write, a bug, a bad disk), not by an
// adversary's design. A 64-bit sum misses a given difference with
// probability 2^-64, and xxhash runs at memory speed, so the rate bound,
// not the hash, sets the cost. The record count and bytes go with each sum.

// View is a read-only view of the engine at one moment: a Pebble snapshot.
// A replica takes one right after committing the command at some index,
// so the view holds its shard's state at exactly that index however far
// the shard moves on. While a view is open, Pebble keeps the files it
// reads (compactions cannot free their space): close it promptly. Close
// every view before the engine. A View is safe from one goroutine at a
// time.
type View struct {
	e      *Engine
	snap   *pebble.Snapshot
	locked bool
}

// NewView returns a view of the engine now.
func (e *Engine) NewView() *View {
	db, l := e.acquire()
	return &View{e: e, snap: db.NewSnapshot(), locked: l}
}

// Close releases the view; later calls do nothing.
func (v *View) Close() {
	if v.snap == nil {
		return
	}
	_ = v.snap.Close()
	v.snap = nil
	v.e.release(v.locked)
}

// ShardApplied returns the shard's applied index as the view sees it.
func (v *View) ShardApplied(shard uint64) (uint64, error) {
	raw, closer, err := v.snap.Get(shardKey(shard, shardApplied))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("storage: shard %d applied index: %w", shard, v.e.readErr(err))
	}
	defer closer.Close()
	if len(raw) != 8 {
		return 0, fmt.Errorf("%w: shard %d applied index of %d bytes", ErrCorrupt, shard, len(raw))
	}
	return binary.BigEndian.Uint64(raw), nil
}

// PartitionSum is one partition's checksum in a view.
type PartitionSum struct {
	Partition keys.PartitionID
	Sum       uint64 // xxhash64 of the framed records (see above)
	Records   int64
	Bytes     int64 // keys and record bytes hashed
}

// SumProgress is reported after each partition.
type SumProgress struct {
	Partitions, PartitionsDone int
	BytesDone                  int64
}

// sumChunk is how many bytes are hashed between two waits on the limiter.
const sumChunk = 64 << 10

// PartitionSums computes the checksum of each of parts (of a store with n
// partitions) in the view, reading at no more than bytesPerSec (0: as fast
// as it goes). It stops with ctx's error when ctx ends. A read that finds
// corruption marks the engine corrupt and returns an error wrapping
// ErrCorrupt.
func (v *View) PartitionSums(ctx context.Context, shard uint64, parts []keys.PartitionID, n uint32, bytesPerSec int64, progress func(SumProgress)) ([]PartitionSum, error) {
	if v.snap == nil {
		return nil, errors.New("storage: PartitionSums on a closed view")
	}
	var lim *rate.Limiter
	if bytesPerSec > 0 {
		lim = rate.NewLimiter(rate.Limit(bytesPerSec), int(min(bytesPerSec, sumChunk)))
	}
	p := SumProgress{Partitions: len(parts)}
	out := make([]PartitionSum, 0, len(parts))
	for _, part := range parts {
		s, err := v.partitionSum(ctx, shard, part, n, lim, &p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		p.PartitionsDone++
		if progress != nil {
			progress(p)
		}
	}
	return out, nil
}

func (v *View) partitionSum(ctx context.Context, shard uint64, part keys.PartitionID, n uint32, lim *rate.Limiter, p *SumProgress) (PartitionSum, error) {
	lo, hi := keys.PartitionSpan(shard, part, n)
	it, err := v.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return PartitionSum{}, fmt.Errorf("storage: checksum of partition %d: %w", part, v.e.readErr(err))
	}
	defer it.Close()
	s := PartitionSum{Partition: part}
	h := xxhash.New()
	var frame [binary.MaxVarintLen64]byte
	pending := int64(0) // bytes hashed since the last wait
	for ok := it.First(); ok; ok = it.Next() {
		val, err := it.ValueAndErr()
		if err != nil {
			return PartitionSum{}, fmt.Errorf("storage: checksum of partition %d: %w", part, v.e.readErr(err))
		}
		k := it.Key()
		_, _ = h.Write(frame[:binary.PutUvarint(frame[:], uint64(len(k)))])
		_, _ = h.Write(k)
		_, _ = h.Write(frame[:binary.PutUvarint(frame[:], uint64(len(val)))])
		_, _ = h.Write(val)
		size := int64(len(k) + len(val))
		s.Records++
		s.Bytes += size
		p.BytesDone += size
		if pending += size; pending >= sumChunk {
			if err := wait(ctx, lim, pending); err != nil {
				return PartitionSum{}, err
			}
			pending = 0
		}
	}
	if err := it.Error(); err != nil {
		return PartitionSum{}, fmt.Errorf("storage: checksum of partition %d: %w", part, v.e.readErr(err))
	}
	if err := wait(ctx, lim, pending); err != nil {
		return PartitionSum{}, err
	}
	s.Sum = h.Sum64()
	return s, nil
}

// wait takes n bytes from the limiter (none: only checks ctx), in pieces no
// larger than its burst.
func wait(ctx context.Context, lim *rate.Limiter, n int64) error {
	if lim == nil {
		return ctx.Err()
	}
	for n > 0 {
		k := min(n, int64(lim.Burst()))
		if err := lim.WaitN(ctx, int(k)); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
