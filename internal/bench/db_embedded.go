package bench

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairndb/cairn/api/fieldrec"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/storage"
)

// embeddedBinding is -db embedded: a one-replica store opened in this
// process under cairn.root (the same layout as cairn lite --root, so either
// can open a root the other wrote), driven by calling the KV server's
// handler methods directly: the whole server path without the network.
type embeddedBinding struct {
	engine *storage.Engine
	rep    *replica.Local
	srv    *server.Server
	store  serverStore
	cfg    *Config
	log    *errLog
}

func openEmbedded(cfg *Config, version string, stderr io.Writer, log *errLog) (*embeddedBinding, error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sc := storage.DefaultConfig(filepath.Join(cfg.Cairn.Root, "data"))
	sc.Logger = logger
	e, err := storage.Open(sc)
	if err != nil {
		return nil, fmt.Errorf("bench: -db embedded: %w", err)
	}
	b := &embeddedBinding{engine: e, cfg: cfg, log: log}
	if err := b.start(logger, version); err != nil {
		return nil, errors.Join(fmt.Errorf("bench: -db embedded: %w", err), b.Close())
	}
	return b, nil
}

func (b *embeddedBinding) start(logger *slog.Logger, version string) error {
	parts := b.cfg.Cairn.Partitions
	if m, ok, err := b.engine.StoreMeta(); err != nil {
		return err
	} else if ok {
		parts = m.Partitions // an existing store keeps its partition count
	}
	meta, err := b.engine.Init(b.cfg.Cairn.Store, parts)
	if err != nil {
		return err
	}
	rc := replica.DefaultConfig()
	rc.Logger = logger
	if b.rep, err = replica.OpenLocal(b.engine, meta, rc); err != nil {
		return err
	}
	scfg := server.DefaultConfig()
	scfg.Version = version
	if b.srv, err = server.New(b.rep, scfg); err != nil {
		return err
	}
	b.store = serverStore{srv: b.srv, header: &cairnpb.RequestHeader{
		Store: meta.Name, TimeoutMs: b.cfg.Cairn.Timeout.Milliseconds()}}
	b.store.durability = &cairnpb.Durability{MasterSync: cairnpb.SyncPolicy(syncPolicy(b.cfg.Cairn.Durability))}
	if b.cfg.Cairn.Consistency == "absolute" {
		b.store.consistency = &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE}
	} else {
		b.store.consistency = &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}
	}
	return nil
}

func (b *embeddedBinding) NewDB(int) (DB, error) { return newCairnDB(b.store, b.cfg, b.log), nil }

// Close stops the replica and closes the engine (flushing it).
func (b *embeddedBinding) Close() error {
	if b.rep != nil {
		b.rep.Close()
	}
	return b.engine.Close()
}

// serverStore is a kvStore that calls a server's handlers in-process. The
// request header, durability and consistency are shared read-only by every
// request.
type serverStore struct {
	srv         *server.Server
	header      *cairnpb.RequestHeader
	durability  *cairnpb.Durability
	consistency *cairnpb.Consistency
}

func keyPB(k client.Key) *cairnpb.Key { return &cairnpb.Key{Major: k.Major, Minor: k.Minor} }

func recordFromPB(p *cairnpb.Record) client.Record {
	return client.Record{Key: client.Key{Major: p.GetKey().GetMajor(), Minor: p.GetKey().GetMinor()},
		Value: p.GetValue(), Version: p.GetVersion()}
}

// getLatest is get: the embedded store has one replica.
func (s serverStore) getLatest(ctx context.Context, k client.Key) (client.Record, bool, error) {
	return s.get(ctx, k)
}

func (s serverStore) get(ctx context.Context, k client.Key) (client.Record, bool, error) {
	resp, err := s.srv.Get(ctx, &cairnpb.GetRequest{Header: s.header, Key: keyPB(k), Consistency: s.consistency})
	if err != nil || !resp.GetFound() {
		return client.Record{}, false, err
	}
	return recordFromPB(resp.GetRecord()), true, nil
}

func (s serverStore) multiGet(ctx context.Context, major []string) ([]client.Record, error) {
	req := &cairnpb.MultiGetRequest{Header: s.header, Parent: &cairnpb.Key{Major: major}, Consistency: s.consistency}
	var out []client.Record
	for {
		resp, err := s.srv.MultiGet(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, r := range resp.GetRecords() {
			out = append(out, recordFromPB(r))
		}
		if len(resp.GetResume()) == 0 {
			return out, nil
		}
		req.Resume = resp.GetResume()
	}
}

func (s serverStore) put(ctx context.Context, k client.Key, v []byte, c cond, match client.Version) (bool, error) {
	op := &cairnpb.PutOp{Key: keyPB(k), Value: v}
	switch c {
	case condIfPresent:
		op.Condition = cairnpb.Condition_CONDITION_IF_PRESENT
	case condIfVersion:
		op.Condition, op.MatchVersion = cairnpb.Condition_CONDITION_IF_VERSION, match
	}
	resp, err := s.srv.Put(ctx, &cairnpb.PutRequest{Header: s.header, Op: op, Durability: s.durability})
	if err != nil {
		return false, err
	}
	return resp.GetResult().GetSuccess(), nil
}

func (s serverStore) updateFields(ctx context.Context, k client.Key, fs []Field) (bool, error) {
	op := &cairnpb.PutOp{Key: keyPB(k), Value: fieldrec.Append(nil, fs), MergeFields: true,
		Condition: cairnpb.Condition_CONDITION_IF_PRESENT}
	resp, err := s.srv.Put(ctx, &cairnpb.PutRequest{Header: s.header, Op: op, Durability: s.durability})
	if err != nil {
		return false, err
	}
	return resp.GetResult().GetSuccess(), nil
}

func (s serverStore) putAll(ctx context.Context, ks []client.Key, vs [][]byte) error {
	req := &cairnpb.ExecuteRequest{Header: s.header, Durability: s.durability, Ops: make([]*cairnpb.Operation, len(ks))}
	for i := range ks {
		req.Ops[i] = &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: keyPB(ks[i]), Value: vs[i]}}}
	}
	resp, err := s.srv.Execute(ctx, req)
	if err == nil && !resp.GetCommitted() {
		err = fmt.Errorf("execute did not commit (operation %d failed)", resp.GetFailedIndex())
	}
	return err
}

func (s serverStore) delete(ctx context.Context, k client.Key) (bool, error) {
	resp, err := s.srv.Delete(ctx, &cairnpb.DeleteRequest{Header: s.header, Op: &cairnpb.DeleteOp{Key: keyPB(k)}, Durability: s.durability})
	if err != nil {
		return false, err
	}
	return resp.GetResult().GetSuccess(), nil
}

func (s serverStore) multiDelete(ctx context.Context, major []string) (int, error) {
	resp, err := s.srv.MultiDelete(ctx, &cairnpb.MultiDeleteRequest{Header: s.header, Parent: &cairnpb.Key{Major: major}, Durability: s.durability})
	if err != nil {
		return 0, err
	}
	return int(resp.GetDeleted()), nil
}

func (s serverStore) scan(ctx context.Context, parent []string, start string, batch int, yield func(client.Record) bool) error {
	req := &cairnpb.StoreScanRequest{Header: s.header, Parent: &cairnpb.Key{Major: parent},
		Range:     &cairnpb.KeyRange{HasStart: true, Start: start, StartInclusive: true},
		BatchSize: int32(batch), Consistency: s.consistency}
	for {
		resp, err := s.srv.StoreScan(ctx, req)
		if err != nil {
			return err
		}
		for _, r := range resp.GetRecords() {
			if !yield(recordFromPB(r)) {
				return nil
			}
		}
		if len(resp.GetResume()) == 0 {
			return nil
		}
		req.Resume = resp.GetResume()
	}
}
