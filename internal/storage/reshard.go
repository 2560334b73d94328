package storage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/cairndb/cairn/internal/keys"
)

// A snapshot is taken shard by shard under one topology. Restoring it into
// a store whose topology has changed since (partitions moved to other or
// new shards, or split) re-shards it: each shard of the new topology is
// built from the records of the old shards that held its partitions,
// rekeyed from the old shard to the new one, with their expiry-index
// entries, and a partition table of its own. Reshard writes that data as
// snapshot data (see the format in snapshot.go), so that an Import installs
// it like any other snapshot:
//
//	source 1: r|1|h.. r|1|h..  s|1|p  x|1|e|r|1|h..        (records, table, expiry)
//	source 2: r|2|h.. ...      s|2|p  x|2|e|r|2|h..
//	                 | keep(h)? rekey 1,2 -> 5; drop the sources' tables
//	                 v merged in key order
//	output:   r|5|h.. r|5|h.. ...  s|5|p (the table given)  x|5|e|r|5|h.. ...
//
// Each source's pairs are in key order and the sources keep disjoint
// hashes, so the merge is in key order too; a key met twice fails it.

// ReshardSource is one old shard's snapshot data feeding a re-shard.
type ReshardSource struct {
	Data io.Reader
	// Keep says whether a record of the major path with this hash goes
	// into the new shard (together with its expiry-index entry).
	Keep func(hash uint64) bool
}

// Reshard writes to w the snapshot data of shard dst: the records (and
// expiry-index entries) that each source keeps, rekeyed to dst, and table
// as dst's partition table. Data that does not decode fails it with
// ErrCorrupt, as does a key two sources both keep.
func Reshard(w io.Writer, dst uint64, table *PartitionTable, sources []ReshardSource) error {
	tv, err := json.Marshal(table)
	if err != nil {
		return err
	}
	heads := make([]*reshardHead, len(sources))
	for i, s := range sources {
		heads[i] = &reshardHead{r: newPairReader(s.Data), keep: s.Keep, dst: dst}
		if err := heads[i].advance(); err != nil {
			return err
		}
	}
	out := bufio.NewWriterSize(w, ChunkBytes)
	tk, wroteTable := shardKey(dst, shardTable), false
	var last []byte
	for {
		h := lowest(heads)
		if !wroteTable && (h == nil || bytes.Compare(h.k, tk) > 0) {
			if err := writePair(out, tk, tv); err != nil {
				return err
			}
			wroteTable = true
		}
		if h == nil {
			return out.Flush()
		}
		if last != nil && bytes.Compare(h.k, last) <= 0 {
			return fmt.Errorf("%w: key %x in two shards of the snapshot", ErrCorrupt, h.k)
		}
		if err := writePair(out, h.k, h.v); err != nil {
			return err
		}
		last = append(last[:0], h.k...)
		if err := h.advance(); err != nil {
			return err
		}
	}
}

// lowest returns the head with the lowest key, nil when all are done.
func lowest(heads []*reshardHead) *reshardHead {
	var low *reshardHead
	for _, h := range heads {
		if !h.done && (low == nil || bytes.Compare(h.k, low.k) < 0) {
			low = h
		}
	}
	return low
}

// writePair writes one pair; a failed write fails every later one.
func writePair(w *bufio.Writer, k, v []byte) error {
	var n [binary.MaxVarintLen64]byte
	w.Write(n[:binary.PutUvarint(n[:], uint64(len(k)))])
	w.Write(k)
	w.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))])
	_, err := w.Write(v)
	return err
}

// reshardHead is a source's next kept pair, rekeyed.
type reshardHead struct {
	r    *pairReader
	keep func(uint64) bool
	dst  uint64
	k, v []byte
	done bool
}

// advance moves to the source's next pair that goes into the new shard.
func (h *reshardHead) advance() error {
	for {
		k, v, err := h.r.next()
		if errors.Is(err, io.EOF) {
			h.done = true
			return nil
		}
		if err != nil {
			return err
		}
		if nk, ok := h.rekey(k); ok {
			h.k, h.v = nk, v
			return nil
		}
	}
}

// rekey returns k filed under the new shard, or false for a pair that
// does not go there: a shard-state pair, or a record (or its expiry
// entry) the source does not keep.
func (h *reshardHead) rekey(k []byte) ([]byte, bool) {
	switch {
	case len(k) >= keys.HeaderLen && k[0] == keys.RecordSpace:
		if !h.keep(keys.HashOf(k)) {
			return nil, false
		}
		binary.BigEndian.PutUint64(k[1:9], h.dst)
		return k, true
	case len(k) >= expiryHeaderLen+keys.HeaderLen && k[0] == expirySpace:
		sk := k[expiryHeaderLen:]
		if !h.keep(keys.HashOf(sk)) {
			return nil, false
		}
		binary.BigEndian.PutUint64(k[1:9], h.dst)
		binary.BigEndian.PutUint64(sk[1:9], h.dst)
		return k, true
	}
	return nil, false
}

// SnapshotTable reads snapshot data to its end and returns the partition
// table it carries (nil if none).
func SnapshotTable(r io.Reader) (*PartitionTable, error) {
	pr := newPairReader(r)
	var table *PartitionTable
	for {
		k, v, err := pr.next()
		if errors.Is(err, io.EOF) {
			return table, nil
		}
		if err != nil {
			return nil, err
		}
		if len(k) == 10 && k[0] == shardSpace && k[9] == shardTable {
			if table, err = decodeTable(binary.BigEndian.Uint64(k[1:9]), v); err != nil {
				return nil, err
			}
		}
	}
}

// pairReader reads snapshot data pair by pair. The slices it returns are
// the caller's to keep.
type pairReader struct {
	r   *bufio.Reader
	off int64
}

func newPairReader(r io.Reader) *pairReader {
	return &pairReader{r: bufio.NewReaderSize(r, ChunkBytes)}
}

// next returns the next pair, or io.EOF at the end of the data.
func (p *pairReader) next() (k, v []byte, err error) {
	at := p.off
	k, err = p.field()
	if err == nil {
		v, err = p.field()
	}
	switch {
	case err == nil:
		return k, v, nil
	case errors.Is(err, io.EOF) && p.off == at && k == nil:
		return nil, nil, io.EOF // the end, between pairs
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, nil, fmt.Errorf("%w: snapshot data ends inside the pair at byte %d", ErrCorrupt, at)
	}
	return nil, nil, fmt.Errorf("snapshot data at byte %d: %w", at, err)
}

func (p *pairReader) field() ([]byte, error) {
	n, err := binary.ReadUvarint(p.r)
	if err != nil {
		return nil, err
	}
	if n > maxPairLen {
		return nil, fmt.Errorf("%w: a length of %d bytes in snapshot data", ErrCorrupt, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(p.r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	p.off += int64(n) + int64(uvarintLen(int(n)))
	return b, nil
}
