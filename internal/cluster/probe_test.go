package cluster

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/cairndb/cairn/internal/grpcconn/grpcconntest"
)

// TestProberReconnectsAfterOutage: cairn cluster status's connection to a
// node reaches it within about a second of its restart.
func TestProberReconnectsAfterOutage(t *testing.T) {
	grpcconntest.CheckReconnect(t, func(addr string) *grpc.ClientConn {
		p, err := newProber(t.TempDir(), []Node{{ID: 1, Addr: addr}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.close)
		return p.conns[0]
	})
}
