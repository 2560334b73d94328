package storage

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

func TestApplyConditionalPuts(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	ops := func(o ...*cairnpb.Operation) []*cairnpb.Operation { return o }

	r := a.apply(1, ops(putOp("/a/-/x", "1", cairnpb.Condition_CONDITION_IF_PRESENT, nil)), Sync)
	if r.Ops[0].Success {
		t.Fatal("putIfPresent on a missing key succeeded")
	}
	r = a.apply(1, ops(putOp("/a/-/x", "1", cairnpb.Condition_CONDITION_IF_ABSENT, nil)), Sync)
	if !r.Ops[0].Success || r.Ops[0].PreviousExists {
		t.Fatalf("putIfAbsent on a missing key: %v", r.Ops[0])
	}
	v1 := r.Ops[0].NewVersion
	r = a.apply(1, ops(putOp("/a/-/x", "2", cairnpb.Condition_CONDITION_IF_ABSENT, nil)), Sync)
	if r.Ops[0].Success || string(r.Ops[0].PreviousValue) != "1" || !bytes.Equal(r.Ops[0].PreviousVersion, v1) {
		t.Fatalf("putIfAbsent on a present key: %v", r.Ops[0])
	}
	r = a.apply(1, ops(putOp("/a/-/x", "3", cairnpb.Condition_CONDITION_IF_VERSION, v1)), Sync)
	if !r.Ops[0].Success || bytes.Equal(r.Ops[0].NewVersion, v1) {
		t.Fatalf("putIfVersion with the current version: %v", r.Ops[0])
	}
	r = a.apply(1, ops(putOp("/a/-/x", "4", cairnpb.Condition_CONDITION_IF_VERSION, v1)), Sync)
	if r.Ops[0].Success {
		t.Fatal("putIfVersion with a stale version succeeded")
	}
	if rec, ok := mustGet(t, e, "/a/-/x", 1); !ok || string(rec.Value) != "3" {
		t.Fatalf("get = %q, %v; want 3", rec.Value, ok)
	}
}

func TestApplyExecuteAbortWritesNothing(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	fail := putOp("/a/-/y", "2", cairnpb.Condition_CONDITION_IF_PRESENT, nil)
	fail.AbortIfUnsuccessful = true
	r := a.apply(1, []*cairnpb.Operation{putOp("/a/-/x", "1", 0, nil), fail}, Sync)
	if !r.Aborted || r.FailedIndex != 1 {
		t.Fatalf("result %+v, want aborted at 1", r)
	}
	if _, ok := mustGet(t, e, "/a/-/x", 1); ok {
		t.Fatal("an aborted execute wrote its first operation")
	}
	// Later operations see earlier ones within one execute.
	ok := putOp("/a/-/y", "2", cairnpb.Condition_CONDITION_IF_PRESENT, nil)
	ok.AbortIfUnsuccessful = true
	r = a.apply(1, []*cairnpb.Operation{putOp("/a/-/y", "1", 0, nil), ok, delOp("/a/-/y")}, Sync)
	if r.Aborted || !r.Ops[1].Success || string(r.Ops[1].PreviousValue) != "1" || !r.Ops[2].Success {
		t.Fatalf("execute put, putIfPresent, delete: %+v", r)
	}
	if _, found := mustGet(t, e, "/a/-/y", 1); found {
		t.Fatal("deleted in the same execute, yet present")
	}
}

func TestApplyRejectsBadCommands(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	for name, body := range map[string]any{
		"no ops":     []*cairnpb.Operation{},
		"two majors": []*cairnpb.Operation{putOp("/a/-/x", "1", 0, nil), putOp("/b/-/x", "1", 0, nil)},
		"empty op":   []*cairnpb.Operation{{}},
		"key not UTF-8": []*cairnpb.Operation{{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{
			Key: &cairnpb.Key{Major: []string{"a"}, Minor: []string{"\xff"}}, Value: []byte("v")}}}},
		"empty parent": &commandpb.MultiDelete{},
	} {
		if r := a.apply(1, body, NoSync); !errors.Is(r.Err, ErrBadCommand) {
			t.Errorf("%s: err %v, want ErrBadCommand", name, r.Err)
		}
	}
	if r := a.apply(1, nil, NoSync); !errors.Is(r.Err, ErrBadCommand) {
		t.Errorf("no body: err %v", r.Err)
	}
}

func TestTTLInvisibleThenSwept(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	p := putOp("/t/-/x", "v", 0, nil)
	p.GetPut().TtlMs = 100
	a.apply(1000, []*cairnpb.Operation{p}, Sync)
	if _, ok := mustGet(t, e, "/t/-/x", 1099); !ok {
		t.Fatal("record invisible before its expiry")
	}
	if _, ok := mustGet(t, e, "/t/-/x", 1100); ok {
		t.Fatal("record visible at its expiry")
	}
	// A put without TTL over the expired record makes the old index entry stale.
	q := putOp("/t/-/y", "v", 0, nil)
	q.GetPut().TtlMs = 50
	a.apply(1000, []*cairnpb.Operation{q}, Sync)
	a.apply(1000, []*cairnpb.Operation{putOp("/t/-/y", "kept", 0, nil)}, Sync)
	exp, err := e.ExpiredBefore(2000, 10)
	if err != nil || len(exp) != 2 {
		t.Fatalf("ExpiredBefore = %v, %v; want 2 entries", exp, err)
	}
	r := a.apply(2000, &commandpb.Expire{Records: exp}, NoSync)
	if r.Deleted != 1 {
		t.Fatalf("expire deleted %d, want 1 (the stale entry's record was rewritten)", r.Deleted)
	}
	if rec, ok := mustGet(t, e, "/t/-/y", 5000); !ok || string(rec.Value) != "kept" {
		t.Fatal("the sweeper deleted a record rewritten without TTL")
	}
	if exp, _ := e.ExpiredBefore(1<<40, 10); len(exp) != 0 {
		t.Fatalf("index entries left after the sweep: %v", exp)
	}
}

func TestAppliedIndexPersists(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig(dir)
	cfg.MinFreeBytes = 0
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{t: t, e: e}
	for range 5 {
		a.apply(1, []*cairnpb.Operation{putOp("/a", "1", 0, nil)}, NoSync)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if idx, err := e.AppliedIndex(); err != nil || idx != 5 {
		t.Fatalf("applied index %d, %v; want 5", idx, err)
	}
}
