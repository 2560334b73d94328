package storage

import (
	"flag"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

const testOrigin = 0xC0FFEE

var seedFlag = flag.Uint64("seed", 0, "seed for randomized tests (0: from the clock)")

// testSeed returns the seed of a randomized test and logs how to rerun it.
func testSeed(t testing.TB) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./internal/storage/ -run '^%s$' -count=1 -seed=%d)", seed, t.Name(), seed)
	return seed
}

// testEngine opens an engine in a temp dir, closed at cleanup.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	cfg := DefaultConfig(t.TempDir())
	cfg.CacheBytes = 8 << 20
	cfg.MinFreeBytes = 0
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// applier applies commands one per commit, at increasing indexes.
type applier struct {
	t    testing.TB
	e    *Engine
	next uint64
}

func (a *applier) apply(now int64, body any, mode SyncMode) Result {
	a.t.Helper()
	cmd := commandOf(now, body)
	bt := a.e.NewBatch(testOrigin)
	defer bt.Close()
	a.next++
	r := bt.Apply(a.next, cmd)
	if err := bt.Commit(mode); err != nil {
		a.t.Fatal(err)
	}
	return r
}

// commandOf wraps body (operations, a MultiDelete or an Expire) in a
// command proposed at now.
func commandOf(now int64, body any) *commandpb.Command {
	cmd := &commandpb.Command{NowMs: now}
	switch b := body.(type) {
	case []*cairnpb.Operation:
		cmd.Body = &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: b}}
	case *commandpb.MultiDelete:
		cmd.Body = &commandpb.Command_MultiDelete{MultiDelete: b}
	case *commandpb.Expire:
		cmd.Body = &commandpb.Command_Expire{Expire: b}
	}
	return cmd
}

func pbKey(s string) *cairnpb.Key {
	k, err := keys.Parse(s)
	if err != nil {
		panic(err)
	}
	return &cairnpb.Key{Major: k.Major, Minor: k.Minor}
}

func putOp(key, value string, cond cairnpb.Condition, match []byte) *cairnpb.Operation {
	return &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{
		Key: pbKey(key), Value: []byte(value), Condition: cond, MatchVersion: match,
		Return: cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_ALL,
	}}}
}

func delOp(key string) *cairnpb.Operation {
	return &cairnpb.Operation{Op: &cairnpb.Operation_Delete{Delete: &cairnpb.DeleteOp{Key: pbKey(key)}}}
}

func mustGet(t testing.TB, e *Engine, key string, now int64) (Record, bool) {
	t.Helper()
	k, _ := keys.Parse(key)
	r, ok, err := e.Get(k, now)
	if err != nil {
		t.Fatal(err)
	}
	return r, ok
}
