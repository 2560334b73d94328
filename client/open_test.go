package client

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// noTopologyKV answers StoreInfo as a storage node does before a topology
// is deployed.
type noTopologyKV struct{ cairnpb.UnimplementedKVServer }

func (noTopologyKV) StoreInfo(context.Context, *cairnpb.StoreInfoRequest) (*cairnpb.StoreInfoResponse, error) {
	return nil, status.Error(codes.FailedPrecondition, "this storage node holds no topology yet")
}

// serveNoTopology serves noTopologyKV on a free 127.0.0.1 port until the
// test ends.
func serveNoTopology(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	cairnpb.RegisterKVServer(srv, noTopologyKV{})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// TestOpenReportsTheHostThatAnswered: when a host answers StoreInfo with an
// error, Open returns that error (not "no host answered"), naming every
// host; only when none answers is it Unavailable "no host answered".
func TestOpenReportsTheHostThatAnswered(t *testing.T) {
	dead := deadAddr(t)
	live := serveNoTopology(t)

	_, err := Open(context.Background(), Config{Hosts: []string{dead, live}, Store: "kvstore"})
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != codes.FailedPrecondition {
		t.Fatalf("Open(dead, no topology) = %v, want FailedPrecondition", err)
	}
	if strings.Contains(ce.Msg, "no host answered") || !strings.Contains(ce.Msg, live+": this storage node holds no topology yet") || !strings.Contains(ce.Msg, dead+": ") {
		t.Errorf("message %q: want each host's failure, without \"no host answered\"", ce.Msg)
	}

	_, err = Open(context.Background(), Config{Hosts: []string{dead}, Store: "kvstore"})
	if !errors.As(err, &ce) || ce.Code != codes.Unavailable || !strings.HasPrefix(ce.Msg, "no host answered: "+dead) {
		t.Fatalf("Open(dead) = %v, want Unavailable \"no host answered\"", err)
	}
}
