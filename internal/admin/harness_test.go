package admin

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/transport/transportpb"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
)

// nopSender is the transport of a one-member admin group: nothing to send.
type nopSender struct{}

func (nopSender) Send(uint64, []*raftpb.Message)                       {}
func (nopSender) SendNotice(uint64, uint64, *transportpb.CommitNotice) {}

// startService runs a real admin Service on node 1: a one-member admin
// group (a Raft replica over a storage engine in a temp dir, as
// internal/node opens it), waited on until it leads. Its metadata starts
// as setup makes it.
func startService(t *testing.T, setup func(m *Meta)) *Service {
	t.Helper()
	sc := storage.DefaultConfig(t.TempDir())
	sc.CacheBytes, sc.MinFreeBytes = 8<<20, 0
	e, err := storage.Open(sc)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := e.Init("admin", 1)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	// No Spans: a one-member group sends no snapshot, and the metadata
	// record has no expiry to sweep.
	rep, err := replica.OpenRaft(e, meta, replica.RaftConfig{
		Shard: Shard, Node: 1, Voters: []uint64{1}, Origin: 1,
		TickInterval: 10 * time.Millisecond, Sender: nopSender{}, Logger: log,
		Fatal: func(err error) { t.Errorf("fatal: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	rep.Admit()
	s := New(Config{Replica: rep, Node: 1, Logger: log})
	t.Cleanup(func() {
		s.Close()
		rep.Close()
		_ = e.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for !rep.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("the one-member admin group elected no leader within 10s")
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.store.update(ctx, func(m *Meta) error { setup(m); return nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

// run sends one command as the shell would and returns the reply's text,
// or the error's message, and the error.
func run(t *testing.T, s *Service, words string, args map[string]string) (*cairnpb.AdminReply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return s.Command(ctx, &cairnpb.AdminRequest{Command: words, Args: args})
}

// fakeSizer is a storage node's Control service whose PartitionSizes
// answers bytes[shard] in numbering partitions (0: refuses the shard).
type fakeSizer struct {
	controlpb.UnimplementedControlServer
	partitions uint32
	bytes      map[uint64]map[uint32]int64
}

func (f *fakeSizer) PartitionSizes(_ context.Context, r *controlpb.PartitionSizesRequest) (*controlpb.PartitionSizesReply, error) {
	b, ok := f.bytes[r.GetShard()]
	if !ok {
		return nil, failed("sn hosts no replica of rg%d", r.GetShard())
	}
	n := f.partitions
	if r.GetPartitions() != 0 {
		n = r.GetPartitions()
	}
	return &controlpb.PartitionSizesReply{Partitions: n, Bytes: b}, nil
}

// connService is a Service with only its connection cache, for tests of
// what it asks storage nodes (fake ones, serveControl); the connections
// close when t ends.
func connService(t *testing.T) *Service {
	t.Helper()
	s := &Service{conns: map[string]*grpc.ClientConn{}}
	t.Cleanup(func() {
		for _, c := range s.conns {
			c.Close()
		}
	})
	return s
}

// serveControl serves c on a free port and returns the port.
func serveControl(t *testing.T, c controlpb.ControlServer) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	controlpb.RegisterControlServer(srv, c)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().(*net.TCPAddr).Port
}

// closedPort returns a port where nothing listens.
func closedPort(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().(*net.TCPAddr).Port
}
