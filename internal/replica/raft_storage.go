package replica

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// bootstrapIndex is where every replica of a new shard starts: all replicas
// begin with the same truncated log (index and term 5) and the same voters,
// so no configuration entries are needed to form the group.
const bootstrapIndex = 5

// logStore implements raft.Storage over the engine for one shard. Only the
// replica's loop goroutine uses it (raft calls it from RawNode methods).
type logStore struct {
	e          *storage.Engine
	shard      uint64
	hard       *raftpb.HardState
	conf       *raftpb.ConfState
	truncIndex uint64 // entries <= truncIndex are gone
	truncTerm  uint64
	lastIndex  uint64
	terms      map[uint64]uint64        // recent entries' terms
	recent     map[uint64]*raftpb.Entry // recently appended entries, so raft rarely reads them back
	snapshot   func() (*raftpb.Snapshot, error)
}

func openLogStore(e *storage.Engine, shard uint64, voters []uint64, rejoin bool) (*logStore, error) {
	s := &logStore{e: e, shard: shard, terms: make(map[uint64]uint64), recent: make(map[uint64]*raftpb.Entry),
		hard: &raftpb.HardState{}, conf: &raftpb.ConfState{}}
	tr, ok, err := e.ShardState(shard, storage.ShardTruncated)
	if err != nil {
		return nil, err
	}
	if !ok && rejoin {
		return s, nil // uninitialized: the first snapshot brings log position and voters
	}
	if !ok {
		return s, s.bootstrap(voters)
	}
	if len(tr) != 16 {
		return nil, fmt.Errorf("%w: truncated state of %d bytes", storage.ErrCorrupt, len(tr))
	}
	s.truncIndex, s.truncTerm = binary.BigEndian.Uint64(tr), binary.BigEndian.Uint64(tr[8:])
	if err := s.load(storage.ShardHardState, s.hard); err != nil {
		return nil, err
	}
	if err := s.load(storage.ShardConfState, s.conf); err != nil {
		return nil, err
	}
	last, ok, err := e.LastLogIndex(shard)
	if err != nil {
		return nil, err
	}
	s.lastIndex = s.truncIndex
	if ok && last > s.truncIndex {
		s.lastIndex = last
	}
	return s, nil
}

func (s *logStore) load(kind byte, into proto.Message) error {
	v, ok, err := s.e.ShardState(s.shard, kind)
	if err != nil || !ok {
		return err
	}
	if err := proto.Unmarshal(v, into); err != nil {
		return fmt.Errorf("%w: shard %d state %c: %v", storage.ErrCorrupt, s.shard, kind, err)
	}
	return nil
}

func (s *logStore) bootstrap(voters []uint64) error {
	b := s.e.NewShardBatch(s.shard, 0)
	defer b.Close()
	if err := s.reset(b, bootstrapIndex, bootstrapIndex, voters); err != nil {
		return err
	}
	return b.Commit(storage.Sync)
}

// reset writes into b the state of a group whose log is empty and truncated
// at index (with term), everything up to index committed and applied, and
// voters as its configuration. It deletes nothing: the shard's log must hold
// no entries, or b must delete them.
func (s *logStore) reset(b *storage.Batch, index, term uint64, voters []uint64) error {
	states, err := s.resetStates(index, term, voters)
	if err != nil {
		return err
	}
	for kind, v := range states {
		if err := b.PutShardState(s.shard, kind, v); err != nil {
			return err
		}
	}
	b.SetApplied(index)
	return nil
}

// resetStates sets the log's memory to a group whose log is empty and
// truncated at index (with term), everything up to index committed, and
// voters as its configuration, and returns those states encoded, by kind.
func (s *logStore) resetStates(index, term uint64, voters []uint64) (map[byte][]byte, error) {
	s.truncIndex, s.truncTerm, s.lastIndex = index, term, index
	s.hard = &raftpb.HardState{Term: proto.Uint64(term), Commit: proto.Uint64(index), Vote: proto.Uint64(0)}
	s.conf = &raftpb.ConfState{Voters: slices.Clone(voters)}
	clear(s.terms)
	clear(s.recent)
	hb, err := proto.Marshal(s.hard)
	if err != nil {
		return nil, err
	}
	cb, err := proto.Marshal(s.conf)
	if err != nil {
		return nil, err
	}
	return map[byte][]byte{
		storage.ShardTruncated: truncatedState(index, term),
		storage.ShardHardState: hb,
		storage.ShardConfState: cb,
	}, nil
}

func (s *logStore) writeTruncated(b *storage.Batch) error {
	return b.PutShardState(s.shard, storage.ShardTruncated, truncatedState(s.truncIndex, s.truncTerm))
}

func (s *logStore) writeState(b *storage.Batch) error {
	hb, err := proto.Marshal(s.hard)
	if err != nil {
		return err
	}
	return b.PutShardState(s.shard, storage.ShardHardState, hb)
}

// InitialState implements raft.Storage.
func (s *logStore) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	return proto.Clone(s.hard).(*raftpb.HardState), proto.Clone(s.conf).(*raftpb.ConfState), nil
}

// Entries implements raft.Storage.
func (s *logStore) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	if lo <= s.truncIndex {
		return nil, raft.ErrCompacted
	}
	if hi > s.lastIndex+1 {
		return nil, raft.ErrUnavailable
	}
	if out, ok := s.fromRecent(lo, hi, maxSize); ok {
		return out, nil
	}
	var out []*raftpb.Entry
	var size uint64
	var derr error
	err := s.e.LogEntries(s.shard, lo, hi, func(index uint64, data []byte) bool {
		e := &raftpb.Entry{}
		if derr = proto.Unmarshal(data, e); derr != nil {
			return false
		}
		size += uint64(len(data))
		if len(out) > 0 && size > maxSize {
			return false
		}
		out = append(out, e)
		return true
	})
	if err == nil {
		err = derr
	}
	if err == nil && len(out) == 0 {
		err = raft.ErrUnavailable
	}
	return out, err
}

// Term implements raft.Storage.
func (s *logStore) Term(i uint64) (uint64, error) {
	switch {
	case i == s.truncIndex:
		return s.truncTerm, nil
	case i < s.truncIndex:
		return 0, raft.ErrCompacted
	case i > s.lastIndex:
		return 0, raft.ErrUnavailable
	}
	if t, ok := s.terms[i]; ok {
		return t, nil
	}
	es, err := s.Entries(i, i+1, 1<<62)
	if err != nil {
		return 0, err
	}
	return es[0].GetTerm(), nil
}

// LastIndex implements raft.Storage.
func (s *logStore) LastIndex() (uint64, error) { return s.lastIndex, nil }

// FirstIndex implements raft.Storage.
func (s *logStore) FirstIndex() (uint64, error) { return s.truncIndex + 1, nil }

// Snapshot implements raft.Storage.
func (s *logStore) Snapshot() (*raftpb.Snapshot, error) { return s.snapshot() }

const (
	termCacheMax   = 4096
	recentCacheMax = 1024
)

// fromRecent serves Entries from the cache when it holds all of [lo, hi).
// Entries are immutable once filed, so sharing the pointers is safe.
func (s *logStore) fromRecent(lo, hi, maxSize uint64) ([]*raftpb.Entry, bool) {
	out := make([]*raftpb.Entry, 0, min(hi-lo, 64))
	var size uint64
	for i := lo; i < hi; i++ {
		e, ok := s.recent[i]
		if !ok {
			return nil, false
		}
		size += uint64(len(e.GetData())) + 32
		if len(out) > 0 && size > maxSize {
			break
		}
		out = append(out, e)
	}
	return out, true
}

// append files entries (which may overwrite a suffix of the log).
func (s *logStore) append(b *storage.Batch, es []*raftpb.Entry) error {
	if len(es) == 0 {
		return nil
	}
	for _, e := range es {
		data, err := proto.Marshal(e)
		if err != nil {
			return err
		}
		if err := b.PutLogEntry(s.shard, e.GetIndex(), data); err != nil {
			return err
		}
	}
	last := es[len(es)-1].GetIndex()
	if err := b.DeleteLogRange(s.shard, last+1, s.lastIndex+1); err != nil {
		return err
	}
	for i := last + 1; i <= s.lastIndex; i++ {
		delete(s.terms, i)
		delete(s.recent, i)
	}
	s.lastIndex = last
	for _, e := range es {
		s.terms[e.GetIndex()] = e.GetTerm()
		s.recent[e.GetIndex()] = e
	}
	if len(s.recent) > 2*recentCacheMax {
		for i := range s.recent {
			if i+recentCacheMax < s.lastIndex {
				delete(s.recent, i)
			}
		}
	}
	if len(s.terms) > termCacheMax {
		for i := range s.terms {
			if i+termCacheMax/2 < s.lastIndex {
				delete(s.terms, i)
			}
		}
	}
	return nil
}

// truncate drops entries up to and including index (which is applied).
func (s *logStore) truncate(b *storage.Batch, index uint64) error {
	term, err := s.Term(index)
	if err != nil {
		return err
	}
	if err := b.DeleteLogRange(s.shard, s.truncIndex+1, index+1); err != nil {
		return err
	}
	for i := range s.recent {
		if i <= index {
			delete(s.recent, i)
		}
	}
	s.truncIndex, s.truncTerm = index, term
	return s.writeTruncated(b)
}

// snapshotStates returns the states a snapshot installs with its data
// (storage.Import.Install, which also deletes the whole log): the
// truncated state at the snapshot's index and term, its configuration and
// the hard state hs, and the configuration itself.
func (s *logStore) snapshotStates(m *raftpb.SnapshotMetadata, hs *raftpb.HardState) (map[byte][]byte, *raftpb.ConfState, error) {
	conf := proto.Clone(raftpb.EnsureConfState(m.GetConfState())).(*raftpb.ConfState)
	cb, err := proto.Marshal(conf)
	if err != nil {
		return nil, nil, err
	}
	hb, err := proto.Marshal(hs)
	if err != nil {
		return nil, nil, err
	}
	return map[byte][]byte{
		storage.ShardTruncated: truncatedState(m.GetIndex(), m.GetTerm()),
		storage.ShardConfState: cb,
		storage.ShardHardState: hb,
	}, conf, nil
}

// restored resets the log's memory to an installed snapshot's.
func (s *logStore) restored(m *raftpb.SnapshotMetadata, conf *raftpb.ConfState, hs *raftpb.HardState) {
	s.truncIndex, s.truncTerm, s.lastIndex = m.GetIndex(), m.GetTerm(), m.GetIndex()
	clear(s.terms)
	clear(s.recent)
	s.conf = conf
	s.hard = hs
}

// truncatedState encodes the truncated state: index(8 BE) term(8 BE).
func truncatedState(index, term uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, index), term)
}
