package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/api/cairnpb"
)

// streamCalls sends calls on stream s and returns the answers by id, once
// every call has one.
func streamCalls(t *testing.T, s cairnpb.KVStream_CallsClient, reads ...*cairnpb.StreamCall) map[uint64]*cairnpb.StreamAnswer {
	t.Helper()
	if err := s.Send(&cairnpb.CallsRequest{Calls: reads}); err != nil {
		t.Fatalf("send: %v", err)
	}
	out := make(map[uint64]*cairnpb.StreamAnswer)
	for len(out) < len(reads) {
		resp, err := s.Recv()
		if err != nil {
			t.Fatalf("recv after %d of %d answers: %v", len(out), len(reads), err)
		}
		for _, a := range resp.GetAnswers() {
			out[a.GetId()] = a
		}
	}
	return out
}

// answerStatus is the status an answer carries.
func answerStatus(a *cairnpb.StreamAnswer) error {
	if a.GetCode() == 0 {
		return nil
	}
	st := status.New(codes.Code(a.GetCode()), a.GetMessage()).Proto()
	st.Details = a.GetDetails()
	return status.FromProto(st).Err()
}

// TestCallStreamAnswersAsUnary: each read on the stream is answered as the
// unary Get or MultiGet answers the same request: the same response, or
// the same status code and ErrorDetail kind.
func TestCallStreamAnswersAsUnary(t *testing.T) {
	n := startLite(t, t.TempDir())
	defer n.close()
	ctx := context.Background()
	h := &cairnpb.RequestHeader{Store: testStore, TimeoutMs: 5000}
	for i, minor := range []string{"a", "b", "c"} {
		put := &cairnpb.PutRequest{Header: h, Op: &cairnpb.PutOp{
			Key: &cairnpb.Key{Major: []string{"u"}, Minor: []string{minor}}, Value: []byte(fmt.Sprint("v", i))}}
		if _, err := n.kv.Put(ctx, put); err != nil {
			t.Fatalf("put: %v", err)
		}
	}
	gets := []*cairnpb.GetRequest{
		{Header: h, Key: &cairnpb.Key{Major: []string{"u"}, Minor: []string{"b"}}},                // found
		{Header: h, Key: &cairnpb.Key{Major: []string{"u"}, Minor: []string{"zz"}}},               // missing
		{Header: h, Key: &cairnpb.Key{Major: []string{"u\xff"}}},                                  // invalid UTF-8
		{Header: &cairnpb.RequestHeader{Store: "other"}, Key: &cairnpb.Key{Major: []string{"u"}}}, // another store
	}
	mg := &cairnpb.MultiGetRequest{Header: h, Parent: &cairnpb.Key{Major: []string{"u"}}}
	var reads []*cairnpb.StreamCall
	for i, g := range gets {
		reads = append(reads, &cairnpb.StreamCall{Id: uint64(i + 1), Op: &cairnpb.StreamCall_Get{Get: g}})
	}
	reads = append(reads, &cairnpb.StreamCall{Id: 100, Op: &cairnpb.StreamCall_MultiGet{MultiGet: mg}},
		&cairnpb.StreamCall{Id: 200}, // no op
		&cairnpb.StreamCall{Id: 300, Op: &cairnpb.StreamCall_StoreInfo{StoreInfo: &cairnpb.StoreInfoRequest{}}})
	st, err := cairnpb.NewKVStreamClient(n.conn).Calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answers := streamCalls(t, st, reads...)
	for i, g := range gets {
		want, werr := n.kv.Get(ctx, g)
		a := answers[uint64(i+1)]
		if err := sameAnswer(a.GetGet(), answerStatus(a), want, werr); err != nil {
			t.Errorf("get %d: %v", i+1, err)
		}
	}
	want, werr := n.kv.MultiGet(ctx, mg)
	if a := answers[100]; len(a.GetMultiGet().GetRecords()) != 3 {
		t.Errorf("multi-get: %d records, want 3", len(a.GetMultiGet().GetRecords()))
	} else if err := sameAnswer(a.GetMultiGet(), answerStatus(a), want, werr); err != nil {
		t.Errorf("multi-get: %v", err)
	}
	if err := checkStatus(answerStatus(answers[200]), codes.InvalidArgument, "invalid_argument"); err != nil {
		t.Errorf("a read with no op: %v", err)
	}
	info, ierr := n.kv.StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
	if a := answers[300]; a.GetStoreInfo().GetStore() != testStore {
		t.Errorf("store info: %v, want store %q", a, testStore)
	} else if err := sameAnswer(a.GetStoreInfo(), answerStatus(a), info, ierr); err != nil {
		t.Errorf("store info: %v", err)
	}
}

// sameAnswer compares a stream answer with the unary call's result.
func sameAnswer(got proto.Message, gerr error, want proto.Message, werr error) error {
	if werr != nil {
		var d *cairnpb.ErrorDetail
		for _, x := range status.Convert(werr).Details() {
			if dd, ok := x.(*cairnpb.ErrorDetail); ok {
				d = dd
			}
		}
		if d == nil {
			return fmt.Errorf("the unary call's error %v has no ErrorDetail", werr)
		}
		return checkStatus(gerr, status.Code(werr), d.GetKind())
	}
	if gerr != nil {
		return fmt.Errorf("stream: %v, unary answered", gerr)
	}
	if !proto.Equal(got, want) {
		return fmt.Errorf("stream answered %v, unary %v", got, want)
	}
	return nil
}

// TestCallStreamEndsAtClose: closing the node ends an open call stream
// with UNAVAILABLE once the reads it took are answered, instead of holding
// the shutdown until its grace runs out. A read waiting for a version the
// store never reaches is answered (consistency timeout) before the end.
func TestCallStreamEndsAtClose(t *testing.T) {
	n := startLite(t, t.TempDir())
	defer n.conn.Close()
	ctx := context.Background()
	h := &cairnpb.RequestHeader{Store: testStore, TimeoutMs: 5000}
	put, err := n.kv.Put(ctx, &cairnpb.PutRequest{Header: h, Op: &cairnpb.PutOp{Key: &cairnpb.Key{Major: []string{"w"}}, Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := cairnpb.NewKVStreamClient(n.conn).Calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	streamCalls(t, st, &cairnpb.StreamCall{Id: 1, Op: &cairnpb.StreamCall_Get{Get: &cairnpb.GetRequest{Header: h, Key: &cairnpb.Key{Major: []string{"w"}}}}})
	// A version far ahead of the store's: the read waits for its timeout.
	future := append([]byte(nil), put.GetResult().GetNewVersion()...) // origin(8) index(8)
	future[8] = 0x7f
	wait := &cairnpb.GetRequest{Header: &cairnpb.RequestHeader{Store: testStore, TimeoutMs: 800}, Key: &cairnpb.Key{Major: []string{"w"}},
		Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION, Version: future, TimeoutMs: 500}}
	// Read 3's answer shows the node took read 2: one goroutine takes a
	// stream's reads, in order.
	get := &cairnpb.GetRequest{Header: h, Key: &cairnpb.Key{Major: []string{"w"}}}
	if err := st.Send(&cairnpb.CallsRequest{Calls: []*cairnpb.StreamCall{
		{Id: 2, Op: &cairnpb.StreamCall_Get{Get: wait}}, {Id: 3, Op: &cairnpb.StreamCall_Get{Get: get}}}}); err != nil {
		t.Fatal(err)
	}
	if resp, err := st.Recv(); err != nil || resp.GetAnswers()[0].GetId() != 3 {
		t.Fatalf("want read 3's answer first, got %v, %v", resp, err)
	}
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- n.lite.Close() }()
	resp, err := st.Recv()
	if err != nil || len(resp.GetAnswers()) != 1 || resp.GetAnswers()[0].GetId() != 2 {
		t.Fatalf("want read 2's answer before the stream ends, got %v, %v", resp, err)
	}
	if a := resp.GetAnswers()[0]; a.GetCode() == 0 {
		t.Fatalf("read 2 was answered %v: its version was never reached", a)
	}
	_, err = st.Recv()
	if err := checkStatus(err, codes.Unavailable, "shutting_down"); err != nil {
		t.Fatalf("the stream's end: %v (the client retries its unanswered calls, writes too, only on kind shutting_down)", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	if d := time.Since(start); d > 4*time.Second { // the default grace is 5 s
		t.Fatalf("close took %v: the stream held the shutdown until the grace ran out", d)
	}
}

// TestCallStreamWrites: writes on the stream are applied and answered as
// the unary calls are; a bad write gets the unary call's error.
func TestCallStreamWrites(t *testing.T) {
	n := startLite(t, t.TempDir())
	defer n.close()
	ctx := context.Background()
	h := &cairnpb.RequestHeader{Store: testStore, TimeoutMs: 5000}
	key := func(major, minor string) *cairnpb.Key {
		return &cairnpb.Key{Major: []string{major}, Minor: []string{minor}}
	}
	st, err := cairnpb.NewKVStreamClient(n.conn).Calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	put := &cairnpb.PutRequest{Header: h, Op: &cairnpb.PutOp{Key: key("w", "a"), Value: []byte("one")}}
	del := &cairnpb.DeleteRequest{Header: h, Op: &cairnpb.DeleteOp{Key: key("w", "gone")}}
	many := &cairnpb.PutManyRequest{Header: h, Ops: []*cairnpb.PutOp{{Key: key("m", "1"), Value: []byte("x")}, {Key: key("m", "2"), Value: []byte("y")}}}
	bad := &cairnpb.ExecuteRequest{Header: h, Ops: []*cairnpb.Operation{
		{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: key("w", "a"), Value: []byte("v")}}},
		{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: key("other", "a"), Value: []byte("v")}}}}}
	answers := streamCalls(t, st,
		&cairnpb.StreamCall{Id: 1, Op: &cairnpb.StreamCall_Put{Put: put}},
		&cairnpb.StreamCall{Id: 2, Op: &cairnpb.StreamCall_Delete{Delete: del}},
		&cairnpb.StreamCall{Id: 3, Op: &cairnpb.StreamCall_PutMany{PutMany: many}},
		&cairnpb.StreamCall{Id: 4, Op: &cairnpb.StreamCall_Execute{Execute: bad}})
	v := answers[1].GetPut().GetResult().GetNewVersion()
	got, err := n.kv.Get(ctx, &cairnpb.GetRequest{Header: h, Key: key("w", "a")})
	if err != nil || string(got.GetRecord().GetValue()) != "one" || !proto.Equal(got.GetRecord(), &cairnpb.Record{Key: key("w", "a"), Value: []byte("one"), Version: v}) {
		t.Errorf("after the stream's put: %v, %v (its answer: %v)", got, err, answers[1])
	}
	wantDel, err := n.kv.Delete(ctx, &cairnpb.DeleteRequest{Header: h, Op: &cairnpb.DeleteOp{Key: key("w", "gone2")}})
	if err := sameAnswer(answers[2].GetDelete(), answerStatus(answers[2]), wantDel, err); err != nil {
		t.Errorf("delete of a missing record: %v", err)
	}
	if r := answers[3].GetPutMany(); answerStatus(answers[3]) != nil || r == nil {
		t.Errorf("put-many: %v", answers[3])
	} else if mg, err := n.kv.MultiGet(ctx, &cairnpb.MultiGetRequest{Header: h, Parent: &cairnpb.Key{Major: []string{"m"}}}); err != nil || len(mg.GetRecords()) != 2 {
		t.Errorf("after the stream's put-many: %v, %v", mg, err)
	}
	_, werr := n.kv.Execute(ctx, bad)
	if err := sameAnswer(answers[4].GetExecute(), answerStatus(answers[4]), nil, werr); err != nil || werr == nil {
		t.Errorf("an execute over two major paths: %v (unary: %v)", err, werr)
	}
}
