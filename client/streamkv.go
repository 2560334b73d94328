package client

import (
	"context"

	"google.golang.org/grpc"

	"github.com/cairndb/cairn/api/cairnpb"
)

// streamKV is a connection's KV client whose calls travel on the
// connection's call stream (callStream: one long-lived gRPC stream), where
// a call costs one DATA frame each way instead of a new HTTP/2 stream with
// its headers and trailers. StoreScan and StoreInfo stay unary. A server
// without the stream (an older one) answers it UNIMPLEMENTED; the
// connection then calls unary from then on.
type streamKV struct {
	cairnpb.KVClient
	cs *callStream
}

// newStreamKV returns cc's KV client over its call stream; s is the login
// whose token the stream's calls carry (nil: none). With sock, the calls
// go on that call socket first, and on the stream if the node has none.
func newStreamKV(cc *grpc.ClientConn, s *session, sock *sockPool) streamKV {
	cs := &callStream{api: cairnpb.NewKVStreamClient(cc), sock: sock}
	if s != nil {
		cs.token = s.current
	}
	return streamKV{KVClient: cairnpb.NewKVClient(cc), cs: cs}
}

// viaStream makes call c on the stream and returns what get takes from its
// answer, or makes the unary call if the server has no stream (c was then
// not run).
func viaStream[Resp any](ctx context.Context, k streamKV, c *cairnpb.StreamCall, unary func() (Resp, error), get func(*cairnpb.StreamAnswer) Resp) (Resp, error) {
	a, err := k.cs.do(ctx, c)
	if err == errNoStream {
		return unary()
	}
	if err != nil {
		var none Resp
		return none, err
	}
	return get(a), nil
}

// Get implements cairnpb.KVClient.
func (k streamKV) Get(ctx context.Context, in *cairnpb.GetRequest, opts ...grpc.CallOption) (*cairnpb.GetResponse, error) {
	return viaStream(ctx, k, &cairnpb.StreamCall{Op: &cairnpb.StreamCall_Get{Get: in}},
		func() (*cairnpb.GetResponse, error) { return k.KVClient.Get(ctx, in, opts...) }, (*cairnpb.StreamAnswer).GetGet)
}

// MultiGet implements cairnpb.KVClient.
func (k streamKV) MultiGet(ctx context.Context, in *cairnpb.MultiGetRequest, opts ...grpc.CallOption) (*cairnpb.MultiGetResponse, error) {
	return viaStream(ctx, k, &cairnpb.StreamCall{Op: &cairnpb.StreamCall_MultiGet{MultiGet: in}},
		func() (*cairnpb.MultiGetResponse, error) { return k.KVClient.MultiGet(ctx, in, opts...) }, (*cairnpb.StreamAnswer).GetMultiGet)
}

// Put implements cairnpb.KVClient.
func (k streamKV) Put(ctx context.Context, in *cairnpb.PutRequest, opts ...grpc.CallOption) (*cairnpb.WriteResponse, error) {
	return viaStream(ctx, k, &cairnpb.StreamCall{Op: &cairnpb.StreamCall_Put{Put: in}},
		func() (*cairnpb.WriteResponse, error) { return k.KVClient.Put(ctx, in, opts...) }, (*cairnpb.StreamAnswer).GetPut)
}

// Delete implements cairnpb.KVClient.
func (k streamKV) Delete(ctx context.Context, in *cairnpb.DeleteRequest, opts ...grpc.CallOption) (*cairnpb.WriteResponse, error) {
	return viaStream(ctx, k, &cairnpb.StreamCall{Op: &cairnpb.StreamCall_Delete{Delete: in}},
		func() (*cairnpb.WriteResponse, error) { return k.KVClient.Delete(ctx, in, opts...) }, (*cairnpb.StreamAnswer).GetDelete)
}

// Execute implements cairnpb.KVClient.
func (k streamKV) Execute(ctx context.Context, in *cairnpb.ExecuteRequest, opts ...grpc.CallOption) (*cairnpb.ExecuteResponse, error) {
	return viaStream(ctx, k, &cairnpb.StreamCall{Op: &cairnpb.StreamCall_Execute{Execute: in}},
		func() (*cairnpb.ExecuteResponse, error) { return k.KVClient.Execute(ctx, in, opts...) }, (*cairnpb.StreamAnswer).GetExecute)
}

// PutMany implements cairnpb.KVClient.
func (k streamKV) PutMany(ctx context.Context, in *cairnpb.PutManyRequest, opts ...grpc.CallOption) (*cairnpb.PutManyResponse, error) {
	return viaStream(ctx, k, &cairnpb.StreamCall{Op: &cairnpb.StreamCall_PutMany{PutMany: in}},
		func() (*cairnpb.PutManyResponse, error) { return k.KVClient.PutMany(ctx, in, opts...) }, (*cairnpb.StreamAnswer).GetPutMany)
}

// MultiDelete implements cairnpb.KVClient.
func (k streamKV) MultiDelete(ctx context.Context, in *cairnpb.MultiDeleteRequest, opts ...grpc.CallOption) (*cairnpb.MultiDeleteResponse, error) {
	return viaStream(ctx, k, &cairnpb.StreamCall{Op: &cairnpb.StreamCall_MultiDelete{MultiDelete: in}},
		func() (*cairnpb.MultiDeleteResponse, error) { return k.KVClient.MultiDelete(ctx, in, opts...) }, (*cairnpb.StreamAnswer).GetMultiDelete)
}
