package admin

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/cairndb/cairn/api/cairnpb"
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

// echoAdmin answers every command with its name.
type echoAdmin struct {
	cairnpb.UnimplementedAdminServer
}

func (echoAdmin) Command(_ context.Context, req *cairnpb.AdminRequest) (*cairnpb.AdminReply, error) {
	return &cairnpb.AdminReply{Text: req.GetCommand()}, nil
}

// TestClientCallAt: CallAt reaches a node that is not one of the Client's
// addresses, and names a node that is down with ErrUnreachable.
func TestClientCallAt(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	cairnpb.RegisterAdminServer(srv, echoAdmin{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	c, err := Dial([]string{deadAddr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if got := c.Addrs(); len(got) != 1 || got[0] != deadAddr {
		t.Errorf("Addrs = %v, want [%s]", got, deadAddr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.CallAt(ctx, lis.Addr().String(), "show admins", nil)
	if err != nil || r.GetText() != "show admins" {
		t.Fatalf("CallAt(live node) = %v, %v", r, err)
	}
	_, err = c.CallAt(ctx, deadAddr, "show admins", nil)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), deadAddr) {
		t.Fatalf("CallAt(dead node) = %v, want ErrUnreachable naming %s", err, deadAddr)
	}
}
