package bench

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/auth"
)

// cairnBinding is -db cairn: one client (a pool of gRPC connections,
// cairn.conns per host) shared by every thread.
type cairnBinding struct {
	c   *client.Client
	cfg *Config
	log *errLog
}

func openCairn(ctx context.Context, cfg *Config, log *errLog) (*cairnBinding, error) {
	ccfg := client.Config{
		Hosts: cfg.Cairn.Hosts, Store: cfg.Cairn.Store, Timeout: cfg.Cairn.Timeout, Conns: cfg.Cairn.Conns, NodeConns: cfg.Cairn.NodeConns,
		SpreadReads: cfg.Cairn.SpreadReads, UnaryCalls: cfg.Cairn.UnaryCalls, NoCallSocket: !cfg.Cairn.CallSocket,
		Durability:  client.Durability{MasterSync: syncPolicy(cfg.Cairn.Durability)},
		Consistency: client.NoneRequired,
	}
	if cfg.Cairn.Consistency == "absolute" {
		ccfg.Consistency = client.Absolute
	}
	if cfg.Cairn.Security != "" {
		l, err := auth.ReadLogin(cfg.Cairn.Security)
		if err != nil {
			return nil, fmt.Errorf("bench: cairn.security: %w", err)
		}
		if ccfg.TLS, err = l.TLS(); err != nil {
			return nil, fmt.Errorf("bench: cairn.security: %w", err)
		}
		if ccfg.Password, err = l.Password(); err != nil {
			return nil, fmt.Errorf("bench: cairn.security: %w", err)
		}
		ccfg.User = l.User
	}
	c, err := client.Open(ctx, ccfg)
	if err != nil {
		return nil, fmt.Errorf("bench: -db cairn: %w", err)
	}
	return &cairnBinding{c: c, cfg: cfg, log: log}, nil
}

func syncPolicy(s string) client.SyncPolicy {
	switch s {
	case "sync":
		return client.Sync
	case "no_sync":
		return client.NoSync
	}
	return client.WriteNoSync
}

func (b *cairnBinding) NewDB(int) (DB, error) {
	return newCairnDB(clientStore{b.c}, b.cfg, b.log), nil
}

func (b *cairnBinding) Close() error { return b.c.Close() }

// clientStore is a kvStore over the public client.
type clientStore struct{ c *client.Client }

func (s clientStore) get(ctx context.Context, k client.Key) (client.Record, bool, error) {
	return s.c.Get(ctx, k)
}

func (s clientStore) getLatest(ctx context.Context, k client.Key) (client.Record, bool, error) {
	return s.c.Get(ctx, k, client.WithConsistency(client.Absolute))
}

func (s clientStore) multiGet(ctx context.Context, major []string) ([]client.Record, error) {
	return s.c.MultiGet(ctx, client.Key{Major: major}, nil, 0)
}

func (s clientStore) put(ctx context.Context, k client.Key, v []byte, c cond, match client.Version) (bool, error) {
	switch c {
	case condIfPresent:
		r, err := s.c.PutIfPresent(ctx, k, v)
		return r.Done, err
	case condIfVersion:
		r, err := s.c.PutIfVersion(ctx, k, v, match)
		return r.Done, err
	}
	_, err := s.c.Put(ctx, k, v)
	return err == nil, err
}

func (s clientStore) updateFields(ctx context.Context, k client.Key, fs []Field) (bool, error) {
	r, err := s.c.UpdateFields(ctx, k, fs)
	return r.Done, err
}

func (s clientStore) putAll(ctx context.Context, ks []client.Key, vs [][]byte) error {
	ops := make([]client.Op, len(ks))
	for i := range ks {
		ops[i] = client.OpPut(ks[i], vs[i])
	}
	_, err := s.c.Execute(ctx, ops)
	return err
}

func (s clientStore) delete(ctx context.Context, k client.Key) (bool, error) {
	r, err := s.c.Delete(ctx, k)
	return r.Done, err
}

func (s clientStore) multiDelete(ctx context.Context, major []string) (int, error) {
	return s.c.MultiDelete(ctx, client.Key{Major: major}, nil, 0)
}

func (s clientStore) scan(ctx context.Context, parent []string, start string, batch int, yield func(client.Record) bool) error {
	p := client.Key{Major: parent}
	for rec, err := range s.c.StoreIterator(ctx, batch, &p, client.From(start, true), 0) {
		if err != nil {
			return err
		}
		if !yield(rec) {
			return nil
		}
	}
	return nil
}
