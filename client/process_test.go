package client_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// binDir holds the cairn binary the process tests build (once per run).
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// cairnBinary builds cmd/cairn once and returns its path.
func cairnBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "cairn-client-test-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "cairn")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/cairndb/cairn/cmd/cairn").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, out}
		}
	})
	if buildErr != nil {
		t.Fatalf("building cairn: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + ": " + string(e.out) }

// procNode is a `cairn sn` process.
type procNode struct {
	id   topology.NodeID
	addr string
	cmd  *exec.Cmd
	logs *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProcCluster runs n `cairn sn` processes holding shards shards of rf
// replicas, with a 20ms Raft tick, and waits until each is ready. They are
// killed when the test ends; a failed test prints their logs.
func startProcCluster(t *testing.T, n, shards, rf int) map[topology.NodeID]*procNode {
	t.Helper()
	bin := cairnBinary(t)
	var nodes []topology.Node
	for i, addr := range freeAddrs(t, n) {
		nodes = append(nodes, topology.Node{ID: topology.NodeID(i + 1), Addr: addr})
	}
	topo, err := topology.Build("kvstore", 20, nodes, shards, rf)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[topology.NodeID]*procNode)
	for _, nd := range nodes {
		root := t.TempDir()
		if err := files.WriteJSON(files.Default, filepath.Join(root, topology.FileName), topo); err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(nd.Addr)
		cmd := exec.Command(bin, "sn", "--root", root, "--host", host, "--port", port,
			"--raft-tick", "20ms", "--min-free-bytes", "0", "--cache-bytes", "8388608",
			"--shutdown-grace", "200ms", "--log-level", "warn")
		p := &procNode{id: nd.ID, addr: nd.Addr, cmd: cmd, logs: &lockedBuffer{}}
		cmd.Stderr = p.logs
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("node %d log:\n%s", p.id, p.logs.String())
			}
		})
		ready := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "ready at") {
					ready <- true
				}
			}
			ready <- false
		}()
		select {
		case ok := <-ready:
			if !ok {
				t.Fatalf("node %d exited before it was ready:\n%s", nd.ID, p.logs.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("node %d not ready after 20s:\n%s", nd.ID, p.logs.String())
		}
		out[nd.ID] = p
	}
	return out
}

// TestProcessLeaderCrash kills (SIGKILL) the process leading a shard in the
// middle of a write loop: the leader dies without handing off, and the
// replicas must elect another. See runFailover for what the application
// must see.
func TestProcessLeaderCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs cairn processes")
	}
	nodes := startProcCluster(t, 3, 2, 3)
	addrs := make(map[topology.NodeID]string)
	for id, p := range nodes {
		addrs[id] = p.addr
	}
	victim := nodes[waitLeaderAt(t, addrs, 1)]
	c, err := client.Open(context.Background(), client.Config{
		Hosts: []string{nodes[1].addr, nodes[2].addr}, Store: "kvstore", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runFailover(t, c, func() {
		t.Logf("killing node %d, the leader of shard 1", victim.id)
		if err := victim.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = victim.cmd.Wait()
	})
}
