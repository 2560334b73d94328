package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/server"
)

// TestPutMany: each record of a bulk put is done on its own, over many
// major paths; a bad record gets its own error (the one a single Put gets)
// and the others are written; puts of one key apply in order.
func TestPutMany(t *testing.T) {
	n := startLite(t, t.TempDir())
	defer n.close()
	ctx := context.Background()
	big := make([]byte, keys.DefaultLimits().MaxValueBytes+1)
	ops := []*cairnpb.PutOp{
		{Key: &cairnpb.Key{Major: []string{"pm", "a"}}, Value: []byte("1")},
		{Key: &cairnpb.Key{Major: []string{"pm", "b"}, Minor: []string{"x"}}, Value: []byte("2")},
		{Key: &cairnpb.Key{Major: []string{"pm", "c"}}, Value: big},
		{Key: &cairnpb.Key{Major: []string{"pm", ""}}, Value: []byte("bad key")},
		{Key: &cairnpb.Key{Major: []string{"pm", "a"}}, Value: []byte("1 again")},
		{Key: &cairnpb.Key{Major: []string{"pm", "d"}}, Value: []byte("4"), Condition: cairnpb.Condition_CONDITION_IF_PRESENT},
		// Two major paths that a naive join of components would confuse.
		{Key: &cairnpb.Key{Major: []string{"pm", "e\x00f"}}, Value: []byte("6")},
		{Key: &cairnpb.Key{Major: []string{"pm", "e", "f"}}, Value: []byte("7")},
	}
	resp, err := n.kv.PutMany(ctx, &cairnpb.PutManyRequest{Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	rs := resp.GetResults()
	if len(rs) != len(ops) {
		t.Fatalf("%d results for %d ops", len(rs), len(ops))
	}
	for _, i := range []int{0, 1, 4, 6, 7} {
		if rs[i].GetErrorCode() != 0 || !rs[i].GetResult().GetSuccess() || len(rs[i].GetResult().GetNewVersion()) == 0 {
			t.Errorf("record %d: %v, want written", i, rs[i])
		}
	}
	if r := rs[2]; codes.Code(r.GetErrorCode()) != codes.InvalidArgument || r.GetDetail().GetKind() != "limit_exceeded" || r.GetDetail().GetLimit() != "max_value_bytes" {
		t.Errorf("oversized record: %v, want limit_exceeded on max_value_bytes", r)
	}
	if r := rs[3]; codes.Code(r.GetErrorCode()) != codes.InvalidArgument || r.GetDetail().GetKind() != "invalid_key" || !strings.Contains(r.GetErrorMessage(), "empty") {
		t.Errorf("bad key: %v, want invalid_key naming the empty component", r)
	}
	if r := rs[5]; r.GetErrorCode() != 0 || r.GetResult().GetSuccess() {
		t.Errorf("put-if-present of a missing record: %v, want not done, no error", r)
	}
	got, err := n.kv.Get(ctx, &cairnpb.GetRequest{Key: ops[0].GetKey()})
	if err != nil || string(got.GetRecord().GetValue()) != "1 again" {
		t.Errorf("the later put of one key did not win: %q, %v", got.GetRecord().GetValue(), err)
	}
	for _, k := range []*cairnpb.Key{ops[2].GetKey(), ops[5].GetKey()} {
		if g, err := n.kv.Get(ctx, &cairnpb.GetRequest{Key: k}); err != nil || g.GetFound() {
			t.Errorf("%v: found %v (%v), want nothing written", k, g.GetFound(), err)
		}
	}
}

func TestPutManyBounds(t *testing.T) {
	n := startLite(t, t.TempDir())
	defer n.close()
	ctx := context.Background()
	if _, err := n.kv.PutMany(ctx, &cairnpb.PutManyRequest{}); err == nil || !strings.Contains(err.Error(), "0 records") {
		t.Errorf("empty PutMany: %v", err)
	}
	many := make([]*cairnpb.PutOp, server.MaxPutManyRecords+1)
	for i := range many {
		many[i] = &cairnpb.PutOp{Key: &cairnpb.Key{Major: []string{"m"}}, Value: []byte("v")}
	}
	if _, err := n.kv.PutMany(ctx, &cairnpb.PutManyRequest{Ops: many}); err == nil || !strings.Contains(err.Error(), "max_put_many_records") {
		t.Errorf("%d records: %v", len(many), err)
	}
	info, err := n.kv.StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
	if err != nil || info.GetLimits().GetMaxPutManyRecords() != server.MaxPutManyRecords {
		t.Errorf("StoreInfo max_put_many_records = %d, %v", info.GetLimits().GetMaxPutManyRecords(), err)
	}
}
