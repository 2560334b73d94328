package client

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/api/cairnpb"
)

// A PutMany record refused for a reason that passes, and certainly not
// applied (dropped by a leader change, its partition moving, its shard
// moved), is sent again; one whose outcome is unknown, or that the server
// refused for good, is not, and keeps its error.
func TestPutManyResendsWhatPasses(t *testing.T) {
	refusals := map[string][]*cairnpb.ErrorDetail{
		"/k/dropped": {{Kind: "dropped", Action: cairnpb.ErrorDetail_ACTION_RETRY}},
		"/k/moving": {
			{Kind: "partition_moving", Action: cairnpb.ErrorDetail_ACTION_RETRY},
			{Kind: "partition_moving", Action: cairnpb.ErrorDetail_ACTION_RETRY},
		},
		"/k/moved":   {{Kind: "wrong_shard", Action: cairnpb.ErrorDetail_ACTION_REFRESH}},
		"/k/unknown": {{Kind: "outcome_unknown", Action: cairnpb.ErrorDetail_ACTION_NONE, MaybeApplied: true}},
		"/k/timeout": {{Kind: "ack_timeout", Action: cairnpb.ErrorDetail_ACTION_RETRY, MaybeApplied: true}},
		"/k/big":     {{Kind: "limit_exceeded", Action: cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	}
	var mu sync.Mutex
	var sent [][]string // the keys of each request, in order
	f := &fakeKV{store: "kvstore", putMany: func(_ context.Context, r *cairnpb.PutManyRequest) (*cairnpb.PutManyResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		resp := &cairnpb.PutManyResponse{}
		var keys []string
		for _, op := range r.GetOps() {
			k := keyFromPB(op.GetKey()).String()
			keys = append(keys, k)
			if q := refusals[k]; len(q) > 0 {
				refusals[k] = q[1:]
				resp.Results = append(resp.Results, &cairnpb.PutManyResult{
					ErrorCode: uint32(codes.Unavailable), ErrorMessage: q[0].GetKind(), Detail: q[0]})
				continue
			}
			resp.Results = append(resp.Results, &cairnpb.PutManyResult{
				Result: &cairnpb.OperationResult{Success: true, NewVersion: []byte(k)}})
		}
		sent = append(sent, keys)
		return resp, nil
	}}
	f.info = func() *cairnpb.StoreInfoResponse {
		return &cairnpb.StoreInfoResponse{Store: "kvstore", Partitions: 4, Version: "fake",
			Limits: &cairnpb.Limits{MaxKeyBytes: 10 << 10, MaxValueBytes: 4 << 20, MaxComponents: 64, MaxPutManyRecords: 100}}
	}
	addr, _ := serveFake(t, f)
	c := openFake(t, addr)
	names := []string{"/k/ok", "/k/dropped", "/k/moving", "/k/moved", "/k/unknown", "/k/timeout", "/k/big"}
	var entries []Entry
	for _, n := range names {
		entries = append(entries, Entry{Key: MustParseKey(n), Value: []byte("v")})
	}
	res := c.PutMany(context.Background(), entries, 1)
	wantKind := map[string]string{"/k/unknown": "outcome_unknown", "/k/timeout": "ack_timeout", "/k/big": "limit_exceeded"}
	for i, n := range names {
		var ce *Error
		switch kind, failed := wantKind[n]; {
		case failed && (!errors.As(res[i].Err, &ce) || ce.Kind != kind):
			t.Errorf("%s: %v, want its %s error", n, res[i].Err, kind)
		case !failed && (res[i].Err != nil || string(res[i].Version) != n):
			t.Errorf("%s: %v, version %q; want it written", n, res[i].Err, res[i].Version)
		}
	}
	want := [][]string{names, {"/k/dropped", "/k/moving", "/k/moved"}, {"/k/moving"}}
	if !slices.EqualFunc(sent, want, slices.Equal) {
		t.Errorf("requests sent %q, want %q", sent, want)
	}
}
