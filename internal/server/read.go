package server

import (
	"context"
	"fmt"
	"github.com/cairndb/cairn/internal/replica"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage"
)

const (
	defaultScanBatch = 100
	maxScanBatch     = 10000
	maxScanVisited   = 50000
	pageBytes        = 4 << 20
)

// Get reads one record.
func (s *Server) Get(ctx context.Context, req *cairnpb.GetRequest) (_ *cairnpb.GetResponse, err error) {
	defer s.calls.done(opGet, time.Now(), &err)
	if err := checkHeader(req.GetHeader()); err != nil {
		return nil, s.status(err)
	}
	if err := s.checkKey("key", req.GetKey()); err != nil {
		return nil, s.status(err)
	}
	sh, err := s.router.ShardFor(req.GetKey().GetMajor())
	if err != nil {
		return nil, s.status(err)
	}
	ctx, cancel, err := s.readBegin(ctx, sh, req.GetHeader(), req.GetConsistency(), req.GetKey().GetMajor())
	defer cancel()
	if err != nil {
		return nil, s.status(err)
	}
	rec, ok, err := sh.Engine().GetIn(sh.Shard(), keyOf(req.GetKey()), time.Now().UnixMilli())
	if err != nil || !ok {
		return &cairnpb.GetResponse{}, s.status(err)
	}
	return getResponse(rec), nil
}

// getResponse builds a found get's response, its record and its key in one
// allocation.
func getResponse(r storage.Record) *cairnpb.GetResponse {
	g := &struct {
		resp cairnpb.GetResponse
		rec  cairnpb.Record
		key  cairnpb.Key
	}{}
	g.key.Major, g.key.Minor = r.Key.Major, r.Key.Minor
	g.rec.Key, g.rec.Value, g.rec.Version, g.rec.ExpirationMs = &g.key, r.Value, r.Version, r.ExpiresMs
	g.resp.Found, g.resp.Record = true, &g.rec
	return &g.resp
}

// MultiGet reads records under a complete major path, whole or in pages.
func (s *Server) MultiGet(ctx context.Context, req *cairnpb.MultiGetRequest) (_ *cairnpb.MultiGetResponse, err error) {
	defer s.calls.done(opMultiGet, time.Now(), &err)
	sc, err := s.multiGetScan(req)
	if err != nil {
		return nil, s.status(err)
	}
	sh, err := s.router.ShardFor(req.GetParent().GetMajor())
	if err != nil {
		return nil, s.status(err)
	}
	sc.Shard = sh.Shard()
	recs, resume, err := s.scan(ctx, sh, req.GetHeader(), req.GetConsistency(), sc, sh.Engine().MultiGet, req.GetParent().GetMajor())
	if err != nil {
		return nil, s.status(err)
	}
	return &cairnpb.MultiGetResponse{Records: recs, Resume: resume}, nil
}

// scan runs a validated scan once the read's consistency is met.
func (s *Server) scan(ctx context.Context, sh Shard, h *cairnpb.RequestHeader, c *cairnpb.Consistency, sc storage.Scan,
	read func(storage.Scan, int64) ([]storage.Record, []byte, error), major []string) ([]*cairnpb.Record, []byte, error) {
	ctx, cancel, err := s.readBegin(ctx, sh, h, c, major)
	defer cancel()
	if err != nil {
		return nil, nil, err
	}
	recs, resume, err := read(sc, time.Now().UnixMilli())
	if err != nil {
		return nil, nil, err
	}
	return recordsPB(recs), resume, nil
}

func (s *Server) multiGetScan(req *cairnpb.MultiGetRequest) (storage.Scan, error) {
	if err := checkHeader(req.GetHeader()); err != nil {
		return storage.Scan{}, err
	}
	if err := s.checkKey("parent", req.GetParent()); err != nil {
		return storage.Scan{}, err
	}
	depth, err := checkDepth(req.GetDepth())
	if err != nil {
		return storage.Scan{}, err
	}
	r, err := checkRange(req.GetRange())
	if err != nil {
		return storage.Scan{}, err
	}
	if err := checkEnum("direction", req.GetDirection()); err != nil {
		return storage.Scan{}, err
	}
	if req.GetDirection() == cairnpb.Direction_DIRECTION_UNORDERED {
		return storage.Scan{}, badInput("invalid_argument", "direction: a multi-get is FORWARD or REVERSE")
	}
	if req.GetBatchSize() < 0 {
		return storage.Scan{}, badInput("invalid_argument", "batch_size: negative %d", req.GetBatchSize())
	}
	sc := storage.Scan{
		Parent: keyOf(req.GetParent()), Range: r, Depth: depth, KeysOnly: req.GetKeysOnly(),
		Reverse: req.GetDirection() == cairnpb.Direction_DIRECTION_REVERSE, Resume: req.GetResume(),
		Limit: int(min(req.GetBatchSize(), maxScanBatch)), MaxBytes: s.cfg.MaxResultBytes,
	}
	if sc.Limit > 0 {
		sc.MaxBytes = pageBytes
	}
	return sc, nil
}

// StoreScan reads a page of the whole store, or of the records under a
// partial major path.
func (s *Server) StoreScan(ctx context.Context, req *cairnpb.StoreScanRequest) (_ *cairnpb.StoreScanResponse, err error) {
	defer s.calls.done(opStoreScan, time.Now(), &err)
	sc, err := s.storeScan(req)
	if err != nil {
		return nil, s.status(err)
	}
	sh, err := s.router.ShardByID(req.GetShard())
	if err != nil {
		return nil, s.status(err)
	}
	sc.Shard, sc.Spans = sh.Shard(), sh.Spans()
	recs, resume, err := s.scan(ctx, sh, req.GetHeader(), req.GetConsistency(), sc, sh.Engine().StoreScan, nil)
	if err != nil {
		return nil, s.status(err)
	}
	return &cairnpb.StoreScanResponse{Records: recs, Resume: resume}, nil
}

func (s *Server) storeScan(req *cairnpb.StoreScanRequest) (storage.Scan, error) {
	if err := checkHeader(req.GetHeader()); err != nil {
		return storage.Scan{}, err
	}
	parent := keyOf(req.GetParent())
	if err := s.limits.CheckParent(parent); err != nil {
		return storage.Scan{}, fmt.Errorf("parent: %w", err)
	}
	if len(parent.Minor) > 0 {
		return storage.Scan{}, badInput("invalid_key", "parent: a store scan's parent is a major path without a minor path, got %s", parent)
	}
	depth, err := checkDepth(req.GetDepth())
	if err != nil {
		return storage.Scan{}, err
	}
	r, err := checkRange(req.GetRange())
	if err != nil {
		return storage.Scan{}, err
	}
	batch := int(req.GetBatchSize())
	switch {
	case batch < 0:
		return storage.Scan{}, badInput("invalid_argument", "batch_size: negative %d", batch)
	case batch == 0:
		batch = defaultScanBatch
	}
	return storage.Scan{
		Parent: parent, Range: r, Depth: depth, KeysOnly: req.GetKeysOnly(), Resume: req.GetResume(),
		Limit: min(batch, maxScanBatch), MaxScanned: maxScanVisited, MaxBytes: pageBytes,
	}, nil
}

// readBegin checks a read and waits for its consistency; then, for a read
// under one major path (major != nil), checks that the shard serves it.
func (s *Server) readBegin(ctx context.Context, sh Shard, h *cairnpb.RequestHeader, c *cairnpb.Consistency, major []string) (context.Context, context.CancelFunc, error) {
	cons, err := checkConsistency(c)
	if err != nil {
		return ctx, func() {}, err
	}
	cancel := context.CancelFunc(func() {})
	if cons.Kind == replica.NoneRequired {
		// Such a read never waits (ReadReady returns at once) and a page
		// is bounded in size: no timer to arm and stop, which was 5 % of
		// a get's server CPU.
		_, err = s.timeout(h)
	} else {
		ctx, cancel, err = s.begin(ctx, h)
	}
	if err != nil {
		return ctx, cancel, err
	}
	cons.Timeout = waitRoom(ctx, cons)
	if err := sh.ReadReady(ctx, cons); err != nil || major == nil {
		return ctx, cancel, err
	}
	return ctx, cancel, sh.Serves(major)
}

// waitRoom bounds how long a read may wait for its consistency (VERSION,
// TIME_LAG) so that the wait ends a little before the call's deadline:
// the caller then learns that the replica was behind (consistency_timeout,
// worth retrying elsewhere or later) rather than that its call ran out of
// time. The margin is a tenth of the time left, at most 50 ms.
func waitRoom(ctx context.Context, c replica.Consistency) time.Duration {
	if c.Kind != replica.AtVersion && c.Kind != replica.TimeLag {
		return c.Timeout
	}
	dl, ok := ctx.Deadline()
	if !ok {
		return c.Timeout
	}
	left := time.Until(dl)
	room := left - min(left/10, 50*time.Millisecond)
	if room > 0 && (c.Timeout == 0 || c.Timeout > room) {
		return room
	}
	return c.Timeout
}

// recordsPB builds records as they go back to the client. Their keys'
// components are valid UTF-8, as every string the server sends must be (the runtime no
// longer checks, see kv.proto, and a client built from a proto3 copy of
// kv.proto would fail to unmarshal the response): every stored key passed
// keys.Limits.CheckKey, UTF-8 included, before its write was proposed, and
// storage.Apply refuses a put whose key is not valid UTF-8 all the same.
// A page takes three allocations in all (the pointers, the records, the
// keys) rather than two per record; getResponse builds a get's in one.
func recordsPB(rs []storage.Record) []*cairnpb.Record {
	out := make([]*cairnpb.Record, len(rs))
	recs := make([]cairnpb.Record, len(rs))
	ks := make([]cairnpb.Key, len(rs))
	for i, r := range rs {
		k, rec := &ks[i], &recs[i]
		k.Major, k.Minor = r.Key.Major, r.Key.Minor
		rec.Key, rec.Value, rec.Version, rec.ExpirationMs = k, r.Value, r.Version, r.ExpiresMs
		out[i] = rec
	}
	return out
}
