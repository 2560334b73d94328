package admin

import (
	"context"
	"net"
	"strings"
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

// TestClientNamesANodeWithoutAdmin: a gRPC server without the Admin service
// (cairn lite) gets a sentence, not gRPC's "unknown service".
func TestClientNamesANodeWithoutAdmin(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, err := Dial([]string{lis.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	_, err = c.Call(context.Background(), "ping", nil)
	if want := lis.Addr().String() + " serves no admin service"; err == nil || !strings.Contains(Message(err), want) {
		t.Fatalf("Call = %v, want %q", err, want)
	}
}
