package node

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCluster starts n in-process storage nodes holding shards shards of
// rf replicas.
func startCluster(t *testing.T, n, shards, rf int) ([]*SN, *topology.Topology) {
	sns, topo, _ := startClusterCfg(t, n, shards, rf)
	return sns, topo
}

func startClusterCfg(t *testing.T, n, shards, rf int) ([]*SN, *topology.Topology, []SNConfig) {
	var nodes []topology.Node
	for i := 1; i <= n; i++ {
		nodes = append(nodes, topology.Node{ID: topology.NodeID(i), Addr: "127.0.0.1:" + strconv.Itoa(freePort(t))})
	}
	topo, err := topology.Build("kvstore", 20, nodes, shards, rf)
	if err != nil {
		t.Fatal(err)
	}
	var sns []*SN
	var cfgs []SNConfig
	for _, nd := range nodes {
		root := t.TempDir()
		if err := files.WriteJSON(files.Default, filepath.Join(root, topology.FileName), topo); err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(nd.Addr)
		cfg := DefaultSNConfig(root)
		cfg.Host, cfg.Port = host, atoi(port)
		cfg.MinFreeBytes, cfg.CacheBytes, cfg.TickInterval = 0, 8<<20, 20*time.Millisecond
		cfg.LogKeep = 50
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
		sn, err := StartSN(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sn.Close() })
		sns = append(sns, sn)
		cfgs = append(cfgs, cfg)
	}
	return sns, topo, cfgs
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func dial(t *testing.T, addr string) cairnpb.KVClient {
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return cairnpb.NewKVClient(c)
}

// TestSNClusterServesWrites: each write goes to its shard's leader (found
// by following not_leader hints) and is readable from every replica.
func TestSNClusterServesWrites(t *testing.T) {
	sns, topo := startCluster(t, 3, 2, 3)
	clients := map[string]cairnpb.KVClient{}
	for _, sn := range sns {
		clients[sn.Addr()] = dial(t, sn.Addr())
	}
	ctx := context.Background()
	start := time.Now()
	for i := range 40 {
		key := &cairnpb.Key{Major: []string{"u", strconv.Itoa(i)}}
		addr := sns[0].Addr()
		var last error
		var resp *cairnpb.WriteResponse
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			resp, last = clients[addr].Put(ctx, &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: key, Value: []byte("v")},
				Durability: &cairnpb.Durability{MasterSync: cairnpb.SyncPolicy_SYNC_POLICY_SYNC}})
			if last == nil {
				break
			}
			if hint := leaderHint(last); hint != "" {
				addr = hint
			} else {
				<-time.After(20 * time.Millisecond) // election under way: poll with a deadline
			}
		}
		if last != nil {
			t.Fatalf("put %d: %v", i, last)
		}
		if i < 3 {
			t.Logf("put %d done at %v", i, time.Since(start))
		}
		shard := topo.ShardForKey(key.Major)
		for _, sn := range sns {
			got, err := clients[sn.Addr()].Get(ctx, &cairnpb.GetRequest{Key: key, Consistency: &cairnpb.Consistency{
				Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION, Version: resp.GetResult().GetNewVersion(), TimeoutMs: 5000}})
			if err != nil || !got.GetFound() {
				t.Fatalf("read-your-write %d (shard %d) on node %d: %v %v", i, shard, sn.ID(), got, err)
			}
		}
	}
}

func leaderHint(err error) string {
	st, ok := statusOf(err)
	if !ok {
		return ""
	}
	for _, d := range st.Details() {
		if ed, ok := d.(*cairnpb.ErrorDetail); ok && ed.GetKind() == "not_leader" {
			return ed.GetLeaderAddr()
		}
	}
	return ""
}

var _ = fmt.Sprint
