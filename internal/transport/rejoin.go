package transport

import (
	"context"
	"fmt"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// Rejoin is the server side of transportpb.Raft/Rejoin.
func (s *service) Rejoin(ctx context.Context, req *transportpb.RejoinRequest) (*transportpb.RejoinResponse, error) {
	if !s.t.gate.enter() {
		return nil, errClosed
	}
	defer s.t.gate.exit()
	return s.t.h.HandleRejoin(ctx, ShardID(req.GetShard()), NodeID(req.GetNode())), nil
}

// Rejoin asks node `to` (which should lead shard) to readmit this node into
// shard. It dials a connection of its own: rejoining is rare.
func (t *Transport) Rejoin(ctx context.Context, to NodeID, shard ShardID) (*transportpb.RejoinResponse, error) {
	addr, ok := t.cfg.Resolve(to)
	if !ok {
		return nil, fmt.Errorf("transport: no address for node %d", to)
	}
	conn, err := t.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return transportpb.NewRaftClient(conn).Rejoin(ctx, &transportpb.RejoinRequest{Shard: uint64(shard), Node: uint64(t.cfg.NodeID)})
}
