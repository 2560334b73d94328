package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// The metadata is one record of the admin group's engine:
//
//	key   /admin/-/meta      (major "admin", minor "meta")
//	value JSON of Meta
//
// An update reads it with ABSOLUTE consistency on the leader, changes it,
// and writes it back with a put-if-version, synced on a majority. A failed
// condition means another leader wrote in between: the update starts over.
var metaKey = keys.Key{Major: []string{"admin"}, Minor: []string{"meta"}}

// ErrNoMeta is returned before configure has created the metadata.
var ErrNoMeta = errors.New("admin: the store is not configured yet; run configure -name STORE")

type metaStore struct {
	r  *replica.Raft
	mu sync.Mutex // serializes updates from this node
}

// load returns the metadata and its record version, read linearizably.
func (s *metaStore) load(ctx context.Context) (*Meta, []byte, error) {
	if err := s.r.ReadReady(ctx, replica.Consistency{Kind: replica.Absolute}); err != nil {
		return nil, nil, err
	}
	return s.loadLocal()
}

// loadLocal reads this replica's copy, however stale.
func (s *metaStore) loadLocal() (*Meta, []byte, error) {
	rec, ok, err := s.r.Engine().GetIn(Shard, metaKey, time.Now().UnixMilli())
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, ErrNoMeta
	}
	var m Meta
	if err := json.Unmarshal(rec.Value, &m); err != nil {
		return nil, nil, fmt.Errorf("admin: the metadata record is corrupt: %w", err)
	}
	return &m, rec.Version, nil
}

// update applies fn to the current metadata and writes the result. fn may
// be called more than once; it must only change m. If fn returns an error
// nothing is written.
func (s *metaStore) update(ctx context.Context, fn func(m *Meta) error) (*Meta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 0; ; attempt++ {
		m, ver, err := s.load(ctx)
		if errors.Is(err, ErrNoMeta) {
			m, err = &Meta{}, nil
		}
		if err != nil {
			return nil, err
		}
		if err := fn(m); err != nil {
			return nil, err
		}
		ok, err := s.put(ctx, m, ver)
		if err != nil || ok {
			return m, err
		}
		if attempt > 20 {
			return nil, errors.New("admin: the metadata keeps changing under this update; retry")
		}
	}
}

func (s *metaStore) put(ctx context.Context, m *Meta, ver []byte) (bool, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	put := &cairnpb.PutOp{Key: &cairnpb.Key{Major: metaKey.Major, Minor: metaKey.Minor}, Value: b}
	if ver == nil {
		put.Condition = cairnpb.Condition_CONDITION_IF_ABSENT
	} else {
		put.Condition, put.MatchVersion = cairnpb.Condition_CONDITION_IF_VERSION, ver
	}
	cmd := &commandpb.Command{NowMs: time.Now().UnixMilli(), Body: &commandpb.Command_Batch{
		Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{{Op: &cairnpb.Operation_Put{Put: put}}}}}}
	res, err := s.r.ProposeWith(ctx, cmd, replica.WriteOptions{Master: storage.Sync, Replica: storage.Sync, Ack: replica.AckMajority})
	if err != nil {
		return false, err
	}
	return len(res.Ops) == 1 && res.Ops[0].GetSuccess(), nil
}
