package storage

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Meta keys ('m' space):
//
//	'm' "store"    -> JSON StoreMeta, written once when the store is created
//	'm' "applied"  -> applied index, 8 bytes big-endian, written by every commit
var (
	metaStoreKey   = []byte("mstore")
	metaAppliedKey = []byte("mapplied")
)

// ErrStoreMismatch is returned by Init when the engine already holds a store
// whose name or partition count differs from the one asked for.
var ErrStoreMismatch = errors.New("storage: existing store does not match")

// StoreMeta is a store's identity, fixed at creation.
type StoreMeta struct {
	Name       string `json:"name"`
	Partitions uint32 `json:"partitions"`
	// Origin is a random id that makes this store's versions unique.
	Origin uint64 `json:"origin"`
	Format int    `json:"format"`
}

// metaFormat is the storage format this build writes and reads. Format 1
// (before 2026-11-25) filed records without their shard id; a root of
// format 1 is refused with ErrOldFormat.
const metaFormat = 2

// ErrOldFormat is returned (wrapped) for an engine written in a storage
// format this build does not read.
var ErrOldFormat = errors.New("storage: the store was written in an older storage format")

// Init returns the engine's store identity, creating it on an empty engine.
// On an existing engine the name and partition count must match.
func (e *Engine) Init(name string, partitions uint32) (StoreMeta, error) {
	if m, ok, err := e.StoreMeta(); err != nil {
		return StoreMeta{}, err
	} else if ok {
		// A split multiplies the partition count: the store is the same.
		if m.Name != name || partitions < m.Partitions || partitions%m.Partitions != 0 {
			return m, fmt.Errorf("%w: the root holds store %q with %d partitions, but %q with %d partitions was asked for",
				ErrStoreMismatch, m.Name, m.Partitions, name, partitions)
		}
		return m, nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return StoreMeta{}, err
	}
	m := StoreMeta{Name: name, Partitions: partitions, Origin: binary.BigEndian.Uint64(b[:]), Format: metaFormat}
	js, _ := json.Marshal(m)
	db, l := e.acquire()
	defer e.release(l)
	if err := db.Set(metaStoreKey, js, pebble.Sync); err != nil {
		return StoreMeta{}, fmt.Errorf("storage: write store meta: %w", err)
	}
	return m, nil
}

// StoreMeta reads the store identity; ok is false on an empty engine.
func (e *Engine) StoreMeta() (m StoreMeta, ok bool, err error) {
	db, l := e.acquire()
	defer e.release(l)
	v, closer, err := db.Get(metaStoreKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return StoreMeta{}, false, nil
	} else if err != nil {
		return StoreMeta{}, false, fmt.Errorf("storage: read store meta: %w", e.readErr(err))
	}
	defer closer.Close()
	if err := json.Unmarshal(v, &m); err != nil || m.Partitions == 0 || m.Format < 1 || m.Format > metaFormat {
		return StoreMeta{}, false, fmt.Errorf("%w: store meta %q", ErrCorrupt, v)
	}
	if m.Format != metaFormat {
		return StoreMeta{}, false, fmt.Errorf("%w: store %q in %s has storage format %d, and this build reads format %d only (records are now filed by shard); copy its records out with the build that wrote it (cairn kv --json scan) into a new store",
			ErrOldFormat, m.Name, e.cfg.Dir, m.Format, metaFormat)
	}
	return m, true, nil
}

// AppliedIndex returns the index of the last committed command (0 if none).
func (e *Engine) AppliedIndex() (uint64, error) {
	db, l := e.acquire()
	defer e.release(l)
	v, _, err := getUint64(db, metaAppliedKey)
	if err != nil {
		return 0, fmt.Errorf("storage: read applied index: %w", e.readErr(err))
	}
	return v, nil
}
