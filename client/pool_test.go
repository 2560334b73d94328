package client

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/cairndb/cairn/internal/grpcconn/grpcconntest"
)

// TestPoolReconnectsAfterOutage: a pool's connection reaches a node that
// was down long enough for gRPC's default back-off to reach seconds within
// about a second of its restart.
func TestPoolReconnectsAfterOutage(t *testing.T) {
	grpcconntest.CheckReconnect(t, func(addr string) *grpc.ClientConn {
		p, err := dialPool(addr, 1, Config{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.close() })
		return p.conns[0]
	})
}
