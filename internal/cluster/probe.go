package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/grpcconn"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// probeTimeout bounds one StoreInfo call. A paused node makes the call run
// this long, so it is short.
const probeTimeout = 2 * time.Second

// reply is one node's answer to StoreInfo.
type reply struct {
	info *cairnpb.StoreInfoResponse
	err  error
}

// prober asks nodes for their StoreInfo over connections it keeps.
type prober struct {
	nodes   []Node
	conns   []*grpc.ClientConn
	clients map[topology.NodeID]cairnpb.KVClient
}

// newProber dials nodes, with the cluster's node certificate when it is
// secure (StoreInfo is open to nodes of the store without a login).
func newProber(dir string, nodes []Node) (*prober, error) {
	p := &prober{nodes: nodes, clients: make(map[topology.NodeID]cairnpb.KVClient)}
	opts, err := dialSecure(dir)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		c, err := grpcconn.New(n.Addr, opts...)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("cluster: node %d at %s: %w", n.ID, n.Addr, err)
		}
		p.conns = append(p.conns, c)
		p.clients[n.ID] = cairnpb.NewKVClient(c)
	}
	return p, nil
}

func (p *prober) close() {
	for _, c := range p.conns {
		c.Close()
	}
}

// errPaused is the reply of a node whose process is paused: it is not
// asked, since its kernel would accept the connection and the call would
// hang until its timeout.
var errPaused = errors.New("not asked: its process is paused (SIGSTOP)")

// poll asks every node at once, but those whose process procs says is
// paused, and returns the answers by node.
func (p *prober) poll(ctx context.Context, procs map[topology.NodeID]ProcState) map[topology.NodeID]reply {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := make(map[topology.NodeID]reply, len(p.nodes))
	for _, n := range p.nodes {
		if procs[n.ID] == ProcStopped {
			out[n.ID] = reply{err: errPaused}
			continue
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			info, err := p.clients[n.ID].StoreInfo(cctx, &cairnpb.StoreInfoRequest{})
			mu.Lock()
			out[n.ID] = reply{info, err}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// loadTopology reads the topology from the first node root that has one.
func loadTopology(f *File) (*topology.Topology, error) {
	var errs []error
	for _, n := range f.Nodes {
		t, err := readTopology(filepath.Join(n.Root, topology.FileName))
		if err == nil {
			return t, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("cluster: no node root holds a readable topology: %w", errors.Join(errs...))
}

// readTopology reads and validates a node's topology.json (a checked file).
func readTopology(path string) (*topology.Topology, error) {
	var raw json.RawMessage
	if err := files.ReadJSON(files.Default, path, &raw); err != nil {
		return nil, err
	}
	t, err := topology.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// rpcError shortens a gRPC error for a status line.
func rpcError(err error) string {
	if st, ok := status.FromError(err); ok {
		return fmt.Sprintf("%s: %s", st.Code(), st.Message())
	}
	return err.Error()
}
