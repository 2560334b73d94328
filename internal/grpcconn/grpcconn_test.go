package grpcconn_test

import (
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cairndb/cairn/internal/grpcconn"
	"github.com/cairndb/cairn/internal/grpcconn/grpcconntest"
)

func TestNewReconnectsAfterOutage(t *testing.T) {
	grpcconntest.CheckReconnect(t, func(addr string) *grpc.ClientConn {
		cc, err := grpcconn.New(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	})
}

func TestCacheReconnectsAfterOutage(t *testing.T) {
	var c grpcconn.Cache
	t.Cleanup(func() { c.Close() })
	grpcconntest.CheckReconnect(t, func(addr string) *grpc.ClientConn {
		cc, err := c.Get(addr)
		if err != nil {
			t.Fatal(err)
		}
		return cc
	})
}

func TestCacheKeepsOneConnPerAddr(t *testing.T) {
	var c grpcconn.Cache
	a1, err := c.Get("127.0.0.1:18001")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := c.Get("127.0.0.1:18001")
	b, _ := c.Get("127.0.0.1:18002")
	if a1 != a2 || a1 == b || c.Len() != 2 {
		t.Fatalf("Get: same address gave %p and %p, other %p; %d cached, want 2", a1, a2, b, c.Len())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("127.0.0.1:18001"); !errors.Is(err, grpcconn.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
	if a1.GetState().String() != "SHUTDOWN" || c.Len() != 0 {
		t.Fatalf("after Close: conn %v, %d cached", a1.GetState(), c.Len())
	}
}

func TestCacheRoutes(t *testing.T) {
	route := map[string]string{"127.0.0.1:18001": "127.0.0.1:19001"}
	c := grpcconn.Cache{Route: func(addr string) string {
		if to, ok := route[addr]; ok {
			return to
		}
		return addr
	}}
	t.Cleanup(func() { c.Close() })
	a, _ := c.Get("127.0.0.1:18001")
	b, _ := c.Get("127.0.0.1:18002")
	if a.Target() != "127.0.0.1:19001" || b.Target() != "127.0.0.1:18002" {
		t.Fatalf("dialed %s and %s, want 127.0.0.1:19001 (routed) and 127.0.0.1:18002", a.Target(), b.Target())
	}
	// A route that changes gets a connection of its own.
	delete(route, "127.0.0.1:18001")
	if a2, _ := c.Get("127.0.0.1:18001"); a2 == a || a2.Target() != "127.0.0.1:18001" || c.Len() != 3 {
		t.Fatalf("after the route changed: %s (same conn %v), %d cached; want a new conn to 127.0.0.1:18001, 3 cached", a2.Target(), a2 == a, c.Len())
	}
}

// TestDefaultBackoffFailsOutage shows that the outage check catches what
// the policy fixes: a connection with gRPC's default back-off fails it.
func TestDefaultBackoffFailsOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("takes grpcconntest.OutageDeadline")
	}
	_, err := grpcconntest.Outage(func(addr string) *grpc.ClientConn {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	})
	if err == nil {
		t.Fatal("a connection with the default back-off passed the outage check")
	}
	t.Logf("default back-off: %v", err)
}
