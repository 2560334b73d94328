package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/internal/keys"
)

// An Import replaces a shard's data with snapshot data that streams in,
// without ever holding the shard in memory: Write takes the data in pieces
// of any size and files each pair, in key order, into an sstable of its key
// space; Install ingests them all at once.
//
//	DATA/ingest/shard-S-<random>/   one directory per import
//	    r.sst   range deletion of the shard's records, then its records
//	    x.sst   range deletion of its expiry-index entries, then the data's
//	    s.sst   (at Install) the data's shard-state keys (its partition
//	            table) with the applied index and the Raft states given,
//	            over a range deletion of the data's state spans (or of
//	            every state, for a restore)
//	    l.sst   (at Install) range deletion of the shard's whole Raft log
//
// One file per key space keeps the files disjoint, which Pebble requires of
// one ingestion. Each file's range deletions and points get the same
// sequence number when ingested, and a range deletion never deletes a point
// of its own sequence number: the deletions take away everything the shard
// held, the points are what it holds now.
//
// # Crash safety
//
// Install is a single Pebble ingestion of all the files. Pebble links them
// into the engine, then records the ingestion in one MANIFEST edit (or, if
// they overlap a memtable, in one WAL record), fsynced before Ingest
// returns: after a crash the engine holds all of the files or none of
// them. The data, the applied index, the truncated and configuration
// states, the hard state and the empty log change together, so a crash
// leaves the replica either with its old state (it still needs the
// snapshot, and its leader sends it again) or with the snapshot installed;
// never new data under an old applied index, nor the reverse. An import
// that never reached Install leaves only its directory, which the next
// Open removes.
//
// # Concurrency
//
// An Import belongs to one goroutine at a time (Write and Finish may run on
// one, Install on another, handed over). Close may be called at any time
// after, and removes the files unless Install ingested them.
type Import struct {
	e      *Engine
	shard  uint64
	spans  []Span
	dir    string
	files  map[byte]*sstFile // by key space
	states []Span            // the data's spans in the shard-state space
	held   [][2][]byte       // the data's shard-state pairs, written at Install
	heldN  int
	split  pairSplitter
	last   []byte // the last key filed (keys must increase)
	pairs  int64
	top    uint64 // highest version index of the records seen
	err    error  // sticky: the import is dead
	done   bool   // Finish succeeded
	gone   bool   // Installed or closed
}

// maxHeldBytes bounds the shard-state pairs an import holds until Install
// (the partition table: one key).
const maxHeldBytes = 16 << 20

// ingestDir is the directory, inside the engine's, of imports under way.
const ingestDir = "ingest"

// NewImport starts an import of shard's data spans (ShardDataSpans):
// either the whole span of the shard's records, which brings their
// expiry-index entries along, or spans inside the shard's state space.
func (e *Engine) NewImport(shard uint64, spans []Span) (*Import, error) {
	if err := checkImportSpans(shard, spans); err != nil {
		return nil, err
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	in := &Import{e: e, shard: shard, spans: spans, files: make(map[byte]*sstFile),
		dir: e.fs.PathJoin(e.cfg.Dir, ingestDir, fmt.Sprintf("shard-%d-%s", shard, hex.EncodeToString(id[:])))}
	if err := e.fs.MkdirAll(in.dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: shard %d snapshot import: %w", shard, err)
	}
	err := in.open(spans)
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("storage: shard %d snapshot import: %w", shard, err)
	}
	return in, nil
}

// checkImportSpans refuses spans an import cannot replace exactly.
func checkImportSpans(shard uint64, spans []Span) error {
	rlo, rhi := keys.ShardSpan(shard)
	slo, shi := stateSpan(shard)
	for i, s := range spans {
		whole := bytes.Equal(s.Start, rlo) && bytes.Equal(s.End, rhi)
		state := bytes.Compare(s.Start, slo) >= 0 && bytes.Compare(s.End, shi) <= 0 && bytes.Compare(s.Start, s.End) < 0
		if !whole && !state {
			return fmt.Errorf("storage: shard %d snapshot import: span [%x, %x) is neither the shard's records nor in its state", shard, s.Start, s.End)
		}
		if i > 0 && bytes.Compare(spans[i-1].End, s.Start) > 0 {
			return fmt.Errorf("storage: shard %d snapshot import: spans out of order", shard)
		}
	}
	return nil
}

// stateSpan bounds every shard-state key of shard.
func stateSpan(shard uint64) (lo, hi []byte) {
	return shardKey(shard, 0), append(shardKey(shard, 0xff), 0xff)
}

// logSpan bounds every log entry of shard.
func logSpan(shard uint64) (lo, hi []byte) {
	return logKey(shard, 0), append(logKey(shard, ^uint64(0)), 0xff)
}

// open creates the data files with their range deletions.
func (in *Import) open(spans []Span) error {
	for _, s := range spans {
		if s.Start[0] == shardSpace {
			in.states = append(in.states, s)
			continue
		}
		f, err := in.file(s.Start[0])
		if err != nil {
			return err
		}
		if err := f.deleteRange(s.Start, s.End); err != nil {
			return err
		}
		if s.Start[0] == keys.RecordSpace {
			x, err := in.file(expirySpace)
			if err != nil {
				return err
			}
			lo, hi := expirySpan(keys.ShardOf(s.Start))
			if err := x.deleteRange(lo, hi); err != nil {
				return err
			}
		}
	}
	return nil
}

// file returns the import's sstable of a key space, creating it.
func (in *Import) file(space byte) (*sstFile, error) {
	if f := in.files[space]; f != nil {
		return f, nil
	}
	f, err := in.e.createSST(in.e.fs.PathJoin(in.dir, string(space)+".sst"))
	if err != nil {
		return nil, err
	}
	in.files[space] = f
	return f, nil
}

// Write files the snapshot data in p, which may cut pairs anywhere: the
// cut pair waits for the next Write. A key outside the import's spans, a
// key not above the one before it, or a record that does not decode fails
// it with ErrCorrupt; a failed Write fails every later call.
func (in *Import) Write(p []byte) (int, error) {
	if in.err != nil {
		return 0, in.err
	}
	if in.done || in.gone {
		return 0, fmt.Errorf("storage: shard %d snapshot import: write after Finish", in.shard)
	}
	if err := in.split.write(p, in.add); err != nil {
		in.err = fmt.Errorf("storage: shard %d snapshot data: %w", in.shard, err)
		return 0, in.err
	}
	return len(p), nil
}

// add files one pair.
func (in *Import) add(k, v []byte) error {
	if len(in.last) > 0 && bytes.Compare(k, in.last) <= 0 {
		return fmt.Errorf("%w: snapshot key %x does not sort after %x", ErrCorrupt, k, in.last)
	}
	if !in.owns(k) {
		return fmt.Errorf("%w: snapshot key %x outside the shard", ErrCorrupt, k)
	}
	in.last = append(in.last[:0], k...)
	in.pairs++
	switch k[0] {
	case shardSpace:
		in.heldN += len(k) + len(v)
		if in.heldN > maxHeldBytes {
			return fmt.Errorf("%w: more than %d bytes of shard state in snapshot data", ErrCorrupt, maxHeldBytes)
		}
		in.held = append(in.held, [2][]byte{slices.Clone(k), slices.Clone(v)})
		return nil
	case keys.RecordSpace:
		rv, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("snapshot record %x: %w", k, err)
		}
		in.top = max(in.top, binary.BigEndian.Uint64(rv.version[8:]))
	}
	f := in.files[k[0]]
	if f == nil {
		return fmt.Errorf("%w: snapshot key %x outside the shard", ErrCorrupt, k)
	}
	return f.set(k, v)
}

// owns reports whether k belongs in the import's spans: a key in them, or
// the expiry-index entry, filed under the same shard, of a record in them.
func (in *Import) owns(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	if k[0] != expirySpace {
		return inSpans(in.spans, k)
	}
	return expiryInSpans(in.spans, k) && bytes.Equal(k[1:9], k[expiryHeaderLen+1:expiryHeaderLen+9])
}

// Finish ends the data: it fails with ErrCorrupt if the data ended inside a
// pair, and closes (and fsyncs) the data's files.
func (in *Import) Finish() error {
	if in.err != nil {
		return in.err
	}
	if err := in.split.end(); err != nil {
		in.err = fmt.Errorf("storage: shard %d: %w", in.shard, err)
		return in.err
	}
	for _, f := range in.files {
		if err := f.close(); err != nil {
			in.err = fmt.Errorf("storage: shard %d snapshot import: %w", in.shard, err)
			return in.err
		}
	}
	in.done = true
	return nil
}

// Bytes returns the snapshot data written so far, in bytes.
func (in *Import) Bytes() int64 { return in.split.off }

// Pairs returns the number of keys written so far.
func (in *Import) Pairs() int64 { return in.pairs }

// MaxIndex returns the highest index in the versions of the records
// written so far (0 if none), whatever their origin. A shard restored from
// the data must give new writes higher indexes than this.
func (in *Import) MaxIndex() uint64 { return in.top }

// Close removes the import's files unless Install ingested them; later
// calls do nothing.
func (in *Import) Close() {
	if in.gone && in.dir == "" {
		return
	}
	for _, f := range in.files {
		f.abort()
	}
	if in.dir != "" {
		if err := in.e.fs.RemoveAll(in.dir); err != nil {
			in.e.log.Warn("removing a snapshot import's files failed; the next open removes them", "dir", in.dir, "err", err)
		}
	}
	in.gone, in.dir = true, ""
}

// InstallState is the shard state that Install writes with the data.
type InstallState struct {
	// Applied is the shard's applied index once installed.
	Applied uint64
	// States are shard states to set, by kind (ShardHardState,
	// ShardTruncated, ShardConfState).
	States map[byte][]byte
	// Reset deletes every state of the shard first (a restore); otherwise
	// states not in States are kept (a Raft snapshot keeps nothing else).
	Reset bool
}

// Install replaces the shard's data with the import's, its applied index
// and the states given, and deletes its whole Raft log, in one ingestion
// (see Crash safety above). It needs Finish first. The files are gone
// afterwards, installed or not; on error the engine is as it was, unless
// the error is the engine's own failure.
func (in *Import) Install(st InstallState) error {
	defer in.Close()
	if in.err != nil {
		return in.err
	}
	if !in.done || in.gone {
		return fmt.Errorf("storage: shard %d snapshot import: Install without Finish", in.shard)
	}
	if err := in.writeState(st); err != nil {
		return fmt.Errorf("storage: shard %d snapshot install: %w", in.shard, err)
	}
	paths := make([]string, 0, len(in.files))
	for _, f := range in.files {
		paths = append(paths, f.path)
	}
	slices.Sort(paths)
	if err := in.e.ingest(paths); err != nil {
		return fmt.Errorf("storage: shard %d snapshot install: %w", in.shard, err)
	}
	return nil
}

// writeState writes s.sst (the data's state pairs, the applied index and
// the states) and l.sst (the log's deletion).
func (in *Import) writeState(st InstallState) error {
	s, err := in.file(shardSpace)
	if err != nil {
		return err
	}
	dels := in.states
	if st.Reset {
		lo, hi := stateSpan(in.shard)
		dels = []Span{{lo, hi}}
	}
	for _, d := range dels {
		if err := s.deleteRange(d.Start, d.End); err != nil {
			return err
		}
	}
	pairs := slices.Clone(in.held)
	pairs = append(pairs, [2][]byte{shardKey(in.shard, shardApplied), binary.BigEndian.AppendUint64(nil, st.Applied)})
	for kind, v := range st.States {
		pairs = append(pairs, [2][]byte{shardKey(in.shard, kind), v})
	}
	slices.SortFunc(pairs, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
	for i, p := range pairs {
		if i > 0 && bytes.Equal(pairs[i-1][0], p[0]) {
			return fmt.Errorf("state %x is both in the data and given", p[0])
		}
		if err := s.set(p[0], p[1]); err != nil {
			return err
		}
	}
	l, err := in.file(logSpace)
	if err != nil {
		return err
	}
	lo, hi := logSpan(in.shard)
	if err := l.deleteRange(lo, hi); err != nil {
		return err
	}
	if err := s.close(); err != nil {
		return err
	}
	return l.close()
}

// ingest links the files into Pebble in one ingestion, with WAL fsyncs
// real (walFS) in case Pebble records it in the WAL.
func (e *Engine) ingest(paths []string) error {
	if c := e.corrupt.Load(); c != nil {
		return fmt.Errorf("%w; this store refuses writes until it is repaired", corruptErr(c))
	}
	if e.ro.Load() {
		return errors.New("the engine is read-only (it started on a full disk)")
	}
	db, l := e.acquire()
	defer e.release(l)
	defer e.fatalOnPanic()
	e.fs.needSync.Add(1)
	defer e.fs.needSync.Add(-1)
	if e.rows != nil { // an ingestion writes keys nobody listed
		all := touched{all: true}
		e.rows.begin(&all)
		defer e.rows.end(&all, false)
	}
	return db.Ingest(context.Background(), paths)
}

// removeStaleImports deletes what imports cut short by a crash left.
func (e *Engine) removeStaleImports() {
	dir := e.fs.PathJoin(e.cfg.Dir, ingestDir)
	names, err := e.fs.List(dir)
	if err != nil || len(names) == 0 {
		return
	}
	e.log.Info("removing the files of snapshot imports that a stop cut short", "dir", dir, "imports", len(names))
	if err := e.fs.RemoveAll(dir); err != nil {
		e.log.Warn("removing stale snapshot imports failed", "dir", dir, "err", err)
	}
}
