package node

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/grpcconn"
	"github.com/cairndb/cairn/internal/topology"
)

// fakeAdmin answers every admin command with its name, counting the
// forwarded commands.
type fakeAdmin struct {
	cairnpb.UnimplementedAdminServer
	forwarded atomic.Int64
}

func (f *fakeAdmin) Command(_ context.Context, req *cairnpb.AdminRequest) (*cairnpb.AdminReply, error) {
	if req.GetForwarded() {
		f.forwarded.Add(1)
	}
	return &cairnpb.AdminReply{Text: "ran " + req.GetCommand()}, nil
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// TestForwardAdminCachesConns: a node without an admin forwards commands
// to a peer's admin over one kept connection, closed when the node stops.
func TestForwardAdminCachesConns(t *testing.T) {
	sns, _ := startCluster(t, 1, 1, 1)
	sn := sns[0]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lis := &countingListener{Listener: ln}
	fake := &fakeAdmin{}
	srv := grpc.NewServer()
	cairnpb.RegisterAdminServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	m := membership{Store: "kvstore", SN: 1, Peers: map[topology.NodeID]string{1: sn.Addr(), 2: ln.Addr().String()}}
	for i := range 3 {
		r, err := sn.forwardAdmin(context.Background(), &cairnpb.AdminRequest{Command: "show admins"}, m)
		if err != nil || r.GetText() != "ran show admins" {
			t.Fatalf("forward %d: %v, %v", i, r, err)
		}
	}
	if n, f := lis.accepted.Load(), fake.forwarded.Load(); n != 1 || f != 3 {
		t.Fatalf("3 forwarded commands: %d connections, %d commands marked forwarded; want 1 and 3", n, f)
	}
	cc, err := sn.adminConns.Get(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := sn.Close(); err != nil {
		t.Fatal(err)
	}
	if st := cc.GetState(); st != connectivity.Shutdown {
		t.Fatalf("after Close the forwarding connection is %v, want SHUTDOWN", st)
	}
	if _, err := sn.adminConns.Get(ln.Addr().String()); !errors.Is(err, grpcconn.ErrClosed) {
		t.Fatalf("Get after Close: %v, want grpcconn.ErrClosed", err)
	}
}

// TestDropAdminRefusesBadRequests: DropAdmin for another store or another
// node changes nothing.
func TestDropAdminRefusesBadRequests(t *testing.T) {
	sns, _ := startCluster(t, 1, 1, 1)
	sn := sns[0]
	sn.ctlMu.Lock()
	sn.member.Store, sn.member.Admin = "kvstore", true // as if it joined and hosts an admin
	sn.ctlMu.Unlock()
	for _, tc := range []struct {
		name string
		req  *controlpb.DropAdminRequest
		want string
	}{
		{"another store", &controlpb.DropAdminRequest{Store: "other", SnId: uint64(sn.ID())}, `not "other"`},
		{"another node", &controlpb.DropAdminRequest{Store: "kvstore", SnId: uint64(sn.ID()) + 1}, "not sn"},
		{"no node", &controlpb.DropAdminRequest{Store: "kvstore"}, "not sn0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sn.ctlMu.Lock()
			before := sn.member.clone()
			sn.ctlMu.Unlock()
			_, err := dialControl(t, sn.Addr()).DropAdmin(context.Background(), tc.req)
			if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("got %v, want FailedPrecondition with %q", err, tc.want)
			}
			sn.ctlMu.Lock()
			after := sn.member.clone()
			sn.ctlMu.Unlock()
			if !after.Admin || after.AdminFounder != before.AdminFounder {
				t.Errorf("a refused DropAdmin changed membership: %+v -> %+v", before, after)
			}
		})
	}
}

// TestAdminRefusesInvalidUTF8: a command name, option name or option value
// that is not valid UTF-8 reaches the node (admin.proto does not have the
// protobuf runtime refuse it) and is refused with INVALID_ARGUMENT naming
// it and an ErrorDetail with action FIX_INPUT; the node then still answers.
func TestAdminRefusesInvalidUTF8(t *testing.T) {
	sns, _ := startCluster(t, 1, 1, 1)
	cc, err := grpcconn.New(sns[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	adm := cairnpb.NewAdminClient(cc)
	ctx := context.Background()
	const bad = "a\xffb"
	for _, tc := range []struct {
		name string
		req  *cairnpb.AdminRequest
		says string
	}{
		{"command", &cairnpb.AdminRequest{Command: "show " + bad}, "command name"},
		{"option name", &cairnpb.AdminRequest{Command: "show topology", Args: map[string]string{bad: "x"}}, "option name"},
		{"option value", &cairnpb.AdminRequest{Command: "configure", Args: map[string]string{"name": bad}}, "option -name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := adm.Command(ctx, tc.req)
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tc.says) {
				t.Fatalf("got %v, want InvalidArgument saying %q", err, tc.says)
			}
			var d *cairnpb.ErrorDetail
			for _, x := range st.Details() {
				if ed, ok := x.(*cairnpb.ErrorDetail); ok {
					d = ed
				}
			}
			if d.GetKind() != "invalid_argument" || d.GetAction() != cairnpb.ErrorDetail_ACTION_FIX_INPUT {
				t.Errorf("ErrorDetail %v, want kind invalid_argument, action FIX_INPUT", d)
			}
		})
	}
	// Still serving: this node has a topology and no admin, and says so.
	if _, err := adm.Command(ctx, &cairnpb.AdminRequest{Command: "show topology"}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a valid command after the bad ones: %v, want FailedPrecondition (no admin here)", err)
	}
}
