package admin

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/cairndb/cairn/internal/grpcconn/grpcconntest"
)

// TestClientReconnectsAfterOutage: the admin shell's connection reaches a
// node that was down for a while within about a second of its restart.
func TestClientReconnectsAfterOutage(t *testing.T) {
	grpcconntest.CheckReconnect(t, func(addr string) *grpc.ClientConn {
		c, err := Dial([]string{addr})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c.conns[0]
	})
}

// TestServiceConnReconnectsAfterOutage: the admin's cached connection to a
// node (used by verify and plans) does the same.
func TestServiceConnReconnectsAfterOutage(t *testing.T) {
	s := &Service{conns: make(map[string]*grpc.ClientConn)}
	t.Cleanup(func() {
		for _, c := range s.conns {
			c.Close()
		}
	})
	grpcconntest.CheckReconnect(t, s.conn)
}
