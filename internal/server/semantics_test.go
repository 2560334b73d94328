package server_test

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/test/model"
	"google.golang.org/grpc/codes"
)

// These table tests pin semantics that are easy to get wrong and that the
// random differential test reaches only by chance: operations of one execute
// seeing each other, what a failed or aborted operation returns, TTLs, the
// major-path boundaries of multi-gets and store scans, and consistency waits.

// pk parses a key in its string form (see package keys), e.g. "/a/b/-/c".
func pk(t *testing.T, s string) *cairnpb.Key {
	t.Helper()
	k, err := keys.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return &cairnpb.Key{Major: k.Major, Minor: k.Minor}
}

func putOf(k *cairnpb.Key, v string, c cairnpb.Condition, rv cairnpb.ReturnValueVersion, abort bool) *cairnpb.Operation {
	return &cairnpb.Operation{
		Op:                  &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: k, Value: []byte(v), Condition: c, Return: rv}},
		AbortIfUnsuccessful: abort,
	}
}

func delOf(k *cairnpb.Key, rv cairnpb.ReturnValueVersion, abort bool) *cairnpb.Operation {
	return &cairnpb.Operation{Op: &cairnpb.Operation_Delete{Delete: &cairnpb.DeleteOp{Key: k, Return: rv}}, AbortIfUnsuccessful: abort}
}

const (
	none      = cairnpb.Condition_CONDITION_UNSPECIFIED
	ifAbsent  = cairnpb.Condition_CONDITION_IF_ABSENT
	ifPresent = cairnpb.Condition_CONDITION_IF_PRESENT
	retAll    = cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_ALL
	retValue  = cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VALUE
)

type kvt struct {
	t  *testing.T
	kv cairnpb.KVClient
}

func (c kvt) execute(ops ...*cairnpb.Operation) *cairnpb.ExecuteResponse {
	c.t.Helper()
	ctx, cancel := rpcCtx()
	defer cancel()
	resp, err := c.kv.Execute(ctx, &cairnpb.ExecuteRequest{Ops: ops})
	if err != nil {
		c.t.Fatalf("execute: %v", err)
	}
	return resp
}

func (c kvt) put(op *cairnpb.PutOp) *cairnpb.OperationResult {
	c.t.Helper()
	ctx, cancel := rpcCtx()
	defer cancel()
	resp, err := c.kv.Put(ctx, &cairnpb.PutRequest{Op: op})
	if err != nil {
		c.t.Fatalf("put: %v", err)
	}
	return resp.GetResult()
}

func (c kvt) get(k *cairnpb.Key) *cairnpb.Record {
	c.t.Helper()
	ctx, cancel := rpcCtx()
	defer cancel()
	resp, err := c.kv.Get(ctx, &cairnpb.GetRequest{Key: k})
	if err != nil {
		c.t.Fatalf("get: %v", err)
	}
	return resp.GetRecord()
}

func (c kvt) storeScanKeys(req *cairnpb.StoreScanRequest) []string {
	c.t.Helper()
	var out []string
	for _, r := range readStoreScan(c.t, c.kv, req) {
		out = append(out, model.FormatKeyPB(r.GetKey()))
	}
	slices.Sort(out)
	return out
}

func TestExecuteSemantics(t *testing.T) {
	n := startLite(t, t.TempDir())
	t.Cleanup(func() { n.close() })

	t.Run("put then putIfPresent of the same key", func(t *testing.T) {
		c := kvt{t, n.kv}
		k := pk(t, "/e1/-/k")
		r := c.execute(putOf(k, "1", none, 0, true), putOf(k, "2", ifPresent, retAll, true))
		if !r.GetCommitted() || !r.GetResults()[1].GetSuccess() {
			t.Fatalf("execute = %v, want committed with both puts successful", r)
		}
		op0, op1 := r.GetResults()[0], r.GetResults()[1]
		if string(op1.GetPreviousValue()) != "1" || !bytes.Equal(op1.GetPreviousVersion(), op0.GetNewVersion()) {
			t.Errorf("op 1 previous = %q %x, want op 0's value \"1\" and version %x", op1.GetPreviousValue(), op1.GetPreviousVersion(), op0.GetNewVersion())
		}
		if rec := c.get(k); string(rec.GetValue()) != "2" || !bytes.Equal(rec.GetVersion(), op1.GetNewVersion()) {
			t.Errorf("record = %v, want value 2 with op 1's version", rec)
		}
	})

	t.Run("delete then putIfAbsent of the same key", func(t *testing.T) {
		c := kvt{t, n.kv}
		k := pk(t, "/e2/-/k")
		old := c.put(&cairnpb.PutOp{Key: k, Value: []byte("old")})
		r := c.execute(delOf(k, retValue, true), putOf(k, "new", ifAbsent, retAll, true))
		if !r.GetCommitted() || r.GetResults()[1].GetPreviousExists() {
			t.Fatalf("execute = %v, want committed; the put must not see the deleted record", r)
		}
		if string(r.GetResults()[0].GetPreviousValue()) != "old" {
			t.Errorf("delete's previous value = %q, want \"old\"", r.GetResults()[0].GetPreviousValue())
		}
		if rec := c.get(k); string(rec.GetValue()) != "new" || bytes.Equal(rec.GetVersion(), old.GetNewVersion()) {
			t.Errorf("record = %v, want value \"new\" with a new version", rec)
		}
	})

	t.Run("abort sees earlier ops and writes nothing", func(t *testing.T) {
		c := kvt{t, n.kv}
		k, other := pk(t, "/e3/-/k"), pk(t, "/e3/-/other")
		before := c.put(&cairnpb.PutOp{Key: other, Value: []byte("keep")})
		r := c.execute(
			delOf(other, 0, true),
			putOf(k, "1", none, 0, true),
			putOf(k, "2", ifAbsent, retValue, true), // fails: op 1 made k present
			putOf(k, "3", none, 0, false),
		)
		if r.GetCommitted() || r.GetFailedIndex() != 2 || len(r.GetResults()) != 0 {
			t.Fatalf("execute = %v, want aborted at op 2 with no results", r)
		}
		if f := r.GetFailedResult(); f.GetSuccess() || !f.GetPreviousExists() || string(f.GetPreviousValue()) != "1" || len(f.GetNewVersion()) != 0 {
			t.Errorf("failed_result = %v, want unsuccessful with op 1's value as previous", f)
		}
		if rec := c.get(k); rec != nil {
			t.Errorf("aborted execute wrote %v", rec)
		}
		if rec := c.get(other); string(rec.GetValue()) != "keep" || !bytes.Equal(rec.GetVersion(), before.GetNewVersion()) {
			t.Errorf("aborted execute's delete took effect: %v", rec)
		}
	})

	t.Run("unsuccessful op without abort flag", func(t *testing.T) {
		c := kvt{t, n.kv}
		k := pk(t, "/e4/-/k")
		r := c.execute(putOf(k, "1", ifPresent, retAll, false), putOf(k, "2", ifAbsent, retAll, false))
		if !r.GetCommitted() || r.GetResults()[0].GetSuccess() || !r.GetResults()[1].GetSuccess() {
			t.Fatalf("execute = %v, want committed, op 0 failed, op 1 succeeded", r)
		}
		if rec := c.get(k); string(rec.GetValue()) != "2" {
			t.Errorf("record = %v, want value 2", rec)
		}
	})

	t.Run("failed putIfAbsent returns the previous record", func(t *testing.T) {
		c := kvt{t, n.kv}
		k := pk(t, "/e5/-/k")
		first := c.put(&cairnpb.PutOp{Key: k, Value: []byte("v")})
		r := c.put(&cairnpb.PutOp{Key: k, Value: []byte("w"), Condition: ifAbsent, Return: retAll})
		if r.GetSuccess() || len(r.GetNewVersion()) != 0 || !r.GetPreviousExists() ||
			string(r.GetPreviousValue()) != "v" || !bytes.Equal(r.GetPreviousVersion(), first.GetNewVersion()) {
			t.Errorf("result = %v, want unsuccessful with previous value v and version %x", r, first.GetNewVersion())
		}
	})
}

func TestTTLSemantics(t *testing.T) {
	n := startLite(t, t.TempDir())
	t.Cleanup(func() { n.close() })
	c := kvt{t, n.kv}
	hour := int64(time.Hour / time.Millisecond)

	k := pk(t, "/t1/-/k")
	lo := time.Now().UnixMilli()
	c.put(&cairnpb.PutOp{Key: k, Value: []byte("1"), TtlMs: hour})
	hi := time.Now().UnixMilli()
	rec := c.get(k)
	if e := rec.GetExpirationMs(); e < lo+hour || e > hi+hour {
		t.Fatalf("expiration_ms = %d, want within [%d, %d]", e, lo+hour, hi+hour)
	}
	r := c.put(&cairnpb.PutOp{Key: k, Value: []byte("2"), Return: cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VERSION})
	if r.GetPreviousExpirationMs() != rec.GetExpirationMs() {
		t.Errorf("previous_expiration_ms = %d, want %d", r.GetPreviousExpirationMs(), rec.GetExpirationMs())
	}
	if e := c.get(k).GetExpirationMs(); e != 0 {
		t.Errorf("a put without TTL left expiration_ms %d, want 0", e)
	}

	short := pk(t, "/t2/-/k")
	c.put(&cairnpb.PutOp{Key: short, Value: []byte("x"), TtlMs: 30})
	deadline := time.Now().Add(5 * time.Second)
	for c.get(short) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("a record with a 30 ms TTL is still visible after 5 s")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with the deadline above
	}
	if got := c.storeScanKeys(&cairnpb.StoreScanRequest{Parent: pk(t, "/t2")}); len(got) != 0 {
		t.Errorf("store scan returns expired records: %q", got)
	}
	r = c.put(&cairnpb.PutOp{Key: short, Value: []byte("y"), Condition: ifAbsent, Return: retAll})
	if !r.GetSuccess() || r.GetPreviousExists() {
		t.Errorf("putIfAbsent over an expired record = %v, want success with no previous record", r)
	}
}

func TestScanBoundaries(t *testing.T) {
	n := startLite(t, t.TempDir())
	t.Cleanup(func() { n.close() })
	c := kvt{t, n.kv}
	for _, s := range []string{"/s", "/s/-/b", "/s/-/b/x", "/s/-/a", "/s/b", "/s/b/-/x", "/s/c/-/y", "/sb/-/x"} {
		c.put(&cairnpb.PutOp{Key: pk(t, s), Value: []byte(s)})
	}
	for _, tc := range []struct {
		name string
		req  *cairnpb.StoreScanRequest
		want []string
	}{
		// The parent is a prefix of the major path: /s/-/b/x has full path
		// s/b/x but major path /s, so it is not under parent /s/b.
		{"partial major parent", &cairnpb.StoreScanRequest{Parent: pk(t, "/s/b")}, []string{"/s/b", "/s/b/-/x"}},
		{"partial major parent, children", &cairnpb.StoreScanRequest{Parent: pk(t, "/s/b"), Depth: cairnpb.Depth_DEPTH_CHILDREN_ONLY}, []string{"/s/b/-/x"}},
		{"shorter major parent", &cairnpb.StoreScanRequest{Parent: pk(t, "/s")},
			[]string{"/s", "/s/-/a", "/s/-/b", "/s/-/b/x", "/s/b", "/s/b/-/x", "/s/c/-/y"}},
		// A non-full range applies to the major component after the parent,
		// so records whose major path is the parent are outside it.
		{"range excludes the parent's own major path", &cairnpb.StoreScanRequest{Parent: pk(t, "/s"), Range: &cairnpb.KeyRange{HasPrefix: true}},
			[]string{"/s/b", "/s/b/-/x", "/s/c/-/y"}},
		{"whole store, range", &cairnpb.StoreScanRequest{Range: &cairnpb.KeyRange{HasStart: true, Start: "sb", StartInclusive: true}}, []string{"/sb/-/x"}},
	} {
		if got := c.storeScanKeys(tc.req); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}

	// A multi-get's parent is a complete major path: /s/-/b is not /s/b.
	ctx, cancel := rpcCtx()
	defer cancel()
	resp, err := n.kv.MultiGet(ctx, &cairnpb.MultiGetRequest{Parent: pk(t, "/s/-/b")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range resp.GetRecords() {
		got = append(got, model.FormatKeyPB(r.GetKey()))
	}
	if want := []string{"/s/-/b", "/s/-/b/x"}; !slices.Equal(got, want) {
		t.Errorf("multiGet /s/-/b: got %q, want %q", got, want)
	}
}

func TestConsistencyVersionWait(t *testing.T) {
	n := startLite(t, t.TempDir())
	t.Cleanup(func() { n.close() })
	c := kvt{t, n.kv}
	v := c.put(&cairnpb.PutOp{Key: pk(t, "/v/-/k"), Value: []byte("x")}).GetNewVersion()
	read := func(version []byte) error {
		ctx, cancel := rpcCtx()
		defer cancel()
		_, err := n.kv.Get(ctx, &cairnpb.GetRequest{Key: pk(t, "/v/-/k"),
			Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION, Version: version, TimeoutMs: 50}})
		return err
	}
	if err := read(v); err != nil {
		t.Fatalf("read at the version just written: %v", err)
	}
	future := bytes.Clone(v)
	binary.BigEndian.PutUint64(future[8:], binary.BigEndian.Uint64(future[8:])+1000) // versions are opaque; this test knows storage's layout
	if err := checkStatus(read(future), codes.Unavailable, "consistency_timeout"); err != nil {
		t.Errorf("read at a version not yet written: %v", err)
	}
}
