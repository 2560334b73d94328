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

// cairn lite checks routing as a cluster does, so a client's routing bugs
// show up against it: a request routed with a topology, or a store scan of
// a shard other than its one shard 0, is refused with wrong_shard; its
// limits say the timeout cap and the result cap.
func TestLiteChecksRouting(t *testing.T) {
	n := startLite(t, t.TempDir())
	defer n.close()
	ctx := context.Background()
	h := &cairnpb.RequestHeader{Store: testStore, TopologySeq: 3}
	_, err := n.kv.Get(ctx, &cairnpb.GetRequest{Header: h, Key: &cairnpb.Key{Major: []string{"a"}}})
	if err := checkStatus(err, codes.FailedPrecondition, "wrong_shard"); err != nil {
		t.Errorf("get routed with topology seq 3: %v", err)
	}
	_, err = n.kv.StoreScan(ctx, &cairnpb.StoreScanRequest{Header: &cairnpb.RequestHeader{Store: testStore}, Shard: 2})
	if err := checkStatus(err, codes.FailedPrecondition, "wrong_shard"); err != nil {
		t.Errorf("store scan of shard 2: %v", err)
	}
	if _, err := n.kv.StoreScan(ctx, &cairnpb.StoreScanRequest{Header: &cairnpb.RequestHeader{Store: testStore}}); err != nil {
		t.Errorf("store scan of shard 0: %v", err)
	}
	info, err := n.kv.StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
	if err != nil || info.GetLimits().GetMaxTimeoutMs() != 300000 || info.GetLimits().GetMaxResultBytes() != 32<<20 {
		t.Errorf("StoreInfo limits %v (%v), want a 5 min timeout cap and a 32 MiB result cap", info.GetLimits(), err)
	}
}
