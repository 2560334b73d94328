package server_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/node"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// testStore and testPartitions are the identity of every test node's store.
const (
	testStore      = "kvstore"
	testPartitions = 7
)

// liteNode is a lite node on 127.0.0.1 and a client connection to it.
type liteNode struct {
	lite *node.Lite
	conn *grpc.ClientConn
	kv   cairnpb.KVClient
}

// startLite starts a lite node on root (a free port on 127.0.0.1) and dials
// it. The node's warnings go to the test's output.
func startLite(t testing.TB, root string) *liteNode {
	t.Helper()
	cfg := node.DefaultLiteConfig(root)
	cfg.Host, cfg.Port, cfg.Store, cfg.Partitions = "127.0.0.1", 0, testStore, testPartitions
	cfg.MinFreeBytes = 0
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	lite, err := node.StartLite(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start lite node on %s: %v", root, err)
	}
	conn, err := grpc.NewClient(lite.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		lite.Close()
		t.Fatalf("dial %s: %v", lite.Addr(), err)
	}
	return &liteNode{lite: lite, conn: conn, kv: cairnpb.NewKVClient(conn)}
}

// close closes the client connection, then the node.
func (n *liteNode) close() error {
	return errors.Join(n.conn.Close(), n.lite.Close())
}

// checkStatus returns nil if err is a gRPC status with code and an
// ErrorDetail of kind (any kind if kind is "").
func checkStatus(err error, code codes.Code, kind string) error {
	if err == nil {
		return fmt.Errorf("no error, want %v %q", code, kind)
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("error %v is not a gRPC status, want %v %q", err, code, kind)
	}
	if st.Code() != code {
		return fmt.Errorf("status %v (%s), want %v %q", st.Code(), st.Message(), code, kind)
	}
	for _, d := range st.Details() {
		if ed, ok := d.(*cairnpb.ErrorDetail); ok {
			if kind != "" && ed.GetKind() != kind {
				return fmt.Errorf("error kind %q (%s), want %q", ed.GetKind(), st.Message(), kind)
			}
			return nil
		}
	}
	return fmt.Errorf("status %v (%s) carries no ErrorDetail", st.Code(), st.Message())
}
