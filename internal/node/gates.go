package node

import (
	"context"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/transport/transportpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// gRPC services must be registered before the server starts, but a node
// started before it belongs to a store gets its KV server (with its
// topology) and its transport (with its id) later. The gates are
// registered at start and pass each call to what exists, or answer
// FAILED_PRECONDITION / UNAVAILABLE saying what is missing.

type kvGate struct {
	cairnpb.UnimplementedKVServer
	n *SN
}

func (g kvGate) srv() (*server.Server, error) {
	s := g.n.kv.Load()
	if s == nil {
		return nil, status.Error(codes.FailedPrecondition, "this storage node holds no topology yet: deploy one with cairn admin (topology create, then plan deploy-topology)")
	}
	return s, nil
}

// pass hands a request to the KV server once there is one. The request
// holds the node's engine (enter) until it returns, so a heal never closes
// the engine under it; during a heal it answers "rejoining".
func pass[Req, Resp any](g kvGate, ctx context.Context, r Req, call func(*server.Server, context.Context, Req) (Resp, error)) (Resp, error) {
	s, err := g.srv()
	if err != nil {
		var zero Resp
		return zero, err
	}
	release, err := g.n.enter()
	if err != nil {
		var zero Resp
		return zero, server.ToStatus(err)
	}
	defer release()
	return call(s, ctx, r)
}

func (g kvGate) Get(ctx context.Context, r *cairnpb.GetRequest) (*cairnpb.GetResponse, error) {
	return pass(g, ctx, r, (*server.Server).Get)
}

func (g kvGate) Put(ctx context.Context, r *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
	return pass(g, ctx, r, (*server.Server).Put)
}

func (g kvGate) Delete(ctx context.Context, r *cairnpb.DeleteRequest) (*cairnpb.WriteResponse, error) {
	return pass(g, ctx, r, (*server.Server).Delete)
}

func (g kvGate) Execute(ctx context.Context, r *cairnpb.ExecuteRequest) (*cairnpb.ExecuteResponse, error) {
	return pass(g, ctx, r, (*server.Server).Execute)
}

func (g kvGate) PutMany(ctx context.Context, r *cairnpb.PutManyRequest) (*cairnpb.PutManyResponse, error) {
	return pass(g, ctx, r, (*server.Server).PutMany)
}

func (g kvGate) MultiGet(ctx context.Context, r *cairnpb.MultiGetRequest) (*cairnpb.MultiGetResponse, error) {
	return pass(g, ctx, r, (*server.Server).MultiGet)
}

func (g kvGate) MultiDelete(ctx context.Context, r *cairnpb.MultiDeleteRequest) (*cairnpb.MultiDeleteResponse, error) {
	return pass(g, ctx, r, (*server.Server).MultiDelete)
}

func (g kvGate) StoreScan(ctx context.Context, r *cairnpb.StoreScanRequest) (*cairnpb.StoreScanResponse, error) {
	return pass(g, ctx, r, (*server.Server).StoreScan)
}

func (g kvGate) StoreInfo(ctx context.Context, r *cairnpb.StoreInfoRequest) (*cairnpb.StoreInfoResponse, error) {
	return pass(g, ctx, r, (*server.Server).StoreInfo)
}

type raftGate struct {
	transportpb.UnimplementedRaftServer
	n *SN
}

var errNoTransport = status.Error(codes.Unavailable, "this storage node has not joined a store yet")

func (g raftGate) Messages(s grpc.ClientStreamingServer[transportpb.Batch, transportpb.Ack]) error {
	t := g.n.transport()
	if t == nil {
		return errNoTransport
	}
	return t.Server().Messages(s)
}

func (g raftGate) Snapshot(s grpc.ClientStreamingServer[transportpb.SnapshotChunk, transportpb.Ack]) error {
	t := g.n.transport()
	if t == nil {
		return errNoTransport
	}
	return t.Server().Snapshot(s)
}

func (g raftGate) Rejoin(ctx context.Context, r *transportpb.RejoinRequest) (*transportpb.RejoinResponse, error) {
	t := g.n.transport()
	if t == nil {
		return nil, errNoTransport
	}
	return t.Server().Rejoin(ctx, r)
}
