package storage

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/api/fieldrec"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

func mergeOp(key string, cond cairnpb.Condition, fs ...fieldrec.Field) *cairnpb.Operation {
	op := putOp(key, "", cond, nil)
	op.GetPut().Value, op.GetPut().MergeFields = fieldrec.Append(nil, fs), true
	return op
}

func TestApplyMergeFields(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	f := func(n, v string) fieldrec.Field { return fieldrec.Field{Name: n, Value: []byte(v)} }

	// IF_PRESENT over nothing writes nothing; unconditional creates.
	r := a.apply(1, []*cairnpb.Operation{mergeOp("/r", cairnpb.Condition_CONDITION_IF_PRESENT, f("a", "1"))}, Sync)
	if r.Err != nil || r.Ops[0].Success {
		t.Fatalf("merge IF_PRESENT over nothing: %+v", r)
	}
	if _, ok := mustGet(t, e, "/r", 1); ok {
		t.Fatal("a failed IF_PRESENT merge wrote a record")
	}
	r = a.apply(1, []*cairnpb.Operation{mergeOp("/r", 0, f("a", "1"), f("b", "2"))}, Sync)
	if r.Err != nil || !r.Ops[0].Success {
		t.Fatalf("merge over nothing: %+v", r)
	}
	// A merge replaces named fields in place, appends new ones, and
	// returns the previous record when asked.
	r = a.apply(1, []*cairnpb.Operation{mergeOp("/r", cairnpb.Condition_CONDITION_IF_PRESENT, f("c", "3"), f("a", "one"))}, Sync)
	want := fieldrec.Append(nil, []fieldrec.Field{f("a", "one"), f("b", "2"), f("c", "3")})
	if r.Err != nil || !r.Ops[0].Success || !bytes.Equal(r.Ops[0].PreviousValue, fieldrec.Append(nil, []fieldrec.Field{f("a", "1"), f("b", "2")})) {
		t.Fatalf("merge IF_PRESENT: %+v", r)
	}
	if rec, ok := mustGet(t, e, "/r", 1); !ok || !bytes.Equal(rec.Value, want) {
		t.Fatalf("after merge: %x, %v; want %x", rec.Value, ok, want)
	}
	// Within one execute a merge sees the put before it.
	r = a.apply(1, []*cairnpb.Operation{putOp("/s", string(fieldrec.Append(nil, []fieldrec.Field{f("x", "0")})), 0, nil),
		mergeOp("/s", 0, f("x", "9"))}, Sync)
	if rec, _ := mustGet(t, e, "/s", 1); r.Err != nil || !bytes.Equal(rec.Value, fieldrec.Append(nil, []fieldrec.Field{f("x", "9")})) {
		t.Fatalf("execute put then merge: %+v, stored %x", r, rec.Value)
	}
}

func TestApplyMergeRefusals(t *testing.T) {
	e := testEngine(t)
	a := &applier{t: t, e: e}
	a.apply(1, []*cairnpb.Operation{putOp("/plain", "not a record", 0, nil)}, Sync)
	r := a.apply(1, []*cairnpb.Operation{mergeOp("/plain", 0, fieldrec.Field{Name: "a"})}, Sync)
	if !errors.Is(r.Err, ErrNotFieldRecord) || !errors.Is(r.Err, ErrBadCommand) {
		t.Fatalf("merge over a plain value: %v, want ErrNotFieldRecord", r.Err)
	}
	if rec, _ := mustGet(t, e, "/plain", 1); string(rec.Value) != "not a record" {
		t.Fatalf("a refused merge changed the value to %q", rec.Value)
	}
	// A merged record over the command's bound is refused alike.
	big := fieldrec.Field{Name: "a", Value: make([]byte, 600)}
	a.apply(1, []*cairnpb.Operation{mergeOp("/big", 0, big)}, Sync)
	cmd := &commandpb.Command{NowMs: 1, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{
		Ops: []*cairnpb.Operation{mergeOp("/big", 0, fieldrec.Field{Name: "b", Value: make([]byte, 600)})}, MaxMergedBytes: 1000}}}
	bt := e.NewBatch(testOrigin)
	defer bt.Close()
	res := bt.Apply(100, cmd)
	var le *keys.LimitError
	if !errors.As(res.Err, &le) || le.Max != 1000 || le.Seen <= 1200 {
		t.Fatalf("oversized merge: %v, want a LimitError over 1000", res.Err)
	}
}
