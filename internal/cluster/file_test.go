package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/topology"
)

func sampleFile(dir string) *File {
	return &File{
		Format: Format, Store: "kvstore", Partitions: 100, Shards: 2, RF: 3, Host: "127.0.0.1",
		SNFlags: []string{"--raft-tick=50ms"},
		Nodes: []Node{
			{ID: 1, Addr: "127.0.0.1:5001", Root: filepath.Join(dir, "n1"), PID: 4242},
			{ID: 2, Addr: "127.0.0.1:5002", Root: filepath.Join(dir, "n2")},
			{ID: 3, Addr: "127.0.0.1:5003", Root: filepath.Join(dir, "n3"), PID: 7},
		},
	}
}

func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	f := sampleFile(dir)
	if err := f.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f, back) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, f)
	}
	// Saving again replaces the file and leaves no temporary behind.
	back.Nodes[1].PID = 99
	if err := back.Save(dir); err != nil {
		t.Fatal(err)
	}
	again, err := Load(dir)
	if err != nil || again.Nodes[1].PID != 99 {
		t.Fatalf("after second save: %+v, %v", again, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("dir holds %d entries, want only %s: %v", len(entries), FileName, entries)
	}
	if n, ok := again.Node(3); !ok || n.Port() != 5003 {
		t.Fatalf("Node(3) = %+v, %v", n, ok)
	}
	if got := strings.Join(again.Addrs(), ","); got != "127.0.0.1:5001,127.0.0.1:5002,127.0.0.1:5003" {
		t.Fatalf("Addrs = %s", got)
	}
}

func TestLoadErrorsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir)
	if !errors.Is(err, ErrNoCluster) || !strings.Contains(err.Error(), "run 'cairn cluster start --root "+dir) {
		t.Fatalf("missing file: %v", err)
	}
	for name, content := range map[string]string{
		"not json":      "{nope",
		"other format":  `{"format": 2, "store": "s", "nodes": [{"id": 1, "addr": "h:1", "root": "/r"}]}`,
		"no nodes":      `{"format": 1, "store": "s", "nodes": []}`,
		"relative root": `{"format": 1, "store": "s", "nodes": [{"id": 1, "addr": "h:1", "root": "r"}]}`,
		"doubled id":    `{"format": 1, "store": "s", "nodes": [{"id": 1, "addr": "h:1", "root": "/r"}, {"id": 1, "addr": "h:2", "root": "/q"}]}`,
		"bad address":   `{"format": 1, "store": "s", "nodes": [{"id": 1, "addr": "nocolon", "root": "/r"}]}`,
	} {
		if err := os.WriteFile(Path(dir), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir)
		if err == nil || errors.Is(err, ErrNoCluster) || !strings.Contains(err.Error(), Path(dir)) {
			t.Errorf("%s: Load = %v; want an error naming %s", name, err, Path(dir))
		}
	}
	bad := sampleFile(dir)
	bad.Nodes[0].Root = "relative"
	if err := bad.Save(dir); err == nil {
		t.Error("Save accepted a relative root")
	}
}

func TestSpecValidate(t *testing.T) {
	ok := DefaultSpec()
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Spec)
		is     error
		says   string
	}{
		{"rf above nodes", func(s *Spec) { s.RF = 5 }, topology.ErrInvalid, "replication factor 5 needs at least 5 nodes, there are 3"},
		{"no shards", func(s *Spec) { s.Shards = 0 }, topology.ErrInvalid, "at least one"},
		{"shards above partitions", func(s *Spec) { s.Partitions = 1 }, topology.ErrInvalid, "2 shards but only 1 partitions"},
		{"no nodes", func(s *Spec) { s.Nodes = 0 }, ErrInvalid, "--nodes 0"},
		{"no partitions", func(s *Spec) { s.Partitions = 0 }, ErrInvalid, "--partitions 0"},
		{"empty store", func(s *Spec) { s.Store = "" }, ErrInvalid, "--store"},
		{"store with slash", func(s *Spec) { s.Store = "a/b" }, ErrInvalid, "--store"},
		{"host with port", func(s *Spec) { s.Host = "127.0.0.1:5000" }, ErrInvalid, "--host"},
		{"ipv6 host", func(s *Spec) { s.Host = "::1" }, ErrInvalid, "IPv6"},
		{"ports past 65535", func(s *Spec) { s.BasePort = 65534 }, ErrInvalid, "65534 to 65536"},
		{"negative port", func(s *Spec) { s.BasePort = -1 }, ErrInvalid, "--base-port -1"},
	} {
		s := DefaultSpec()
		tc.change(&s)
		err := s.Validate()
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v; want %v saying %q", tc.name, err, tc.is, tc.says)
		}
	}
}

func TestCheckComparesOnlyGivenFlags(t *testing.T) {
	f := sampleFile("/c")
	other := Spec{Store: "other", Nodes: 5, RF: 1, Shards: 9, Partitions: 7, Host: "10.0.0.1", BasePort: 6000}
	if err := f.Check(other, nil, "/c"); err != nil {
		t.Fatalf("no flags given: %v", err)
	}
	same := Spec{Store: "kvstore", Nodes: 3, RF: 3, Shards: 2, Partitions: 100, Host: "127.0.0.1", BasePort: 5001}
	all := map[string]bool{FlagStore: true, FlagNodes: true, FlagRF: true, FlagShards: true, FlagPartitions: true, FlagHost: true, FlagBasePort: true}
	if err := f.Check(same, all, "/c"); err != nil {
		t.Fatalf("agreeing flags: %v", err)
	}
	same.BasePort = 0 // "free ports" agrees with any ports
	if err := f.Check(same, all, "/c"); err != nil {
		t.Fatalf("--base-port 0: %v", err)
	}
	err := f.Check(other, map[string]bool{FlagNodes: true, FlagBasePort: true}, "/c")
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("disagreeing flags: %v", err)
	}
	for _, want := range []string{"--nodes 5 (the cluster has 3)", "--base-port 6000 (node 1 listens on port 5001)", "cairn cluster stop --root /c"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "--store") {
		t.Errorf("error %q names --store, which was not given", err)
	}
	// --secure on a plaintext cluster (no ROOT/security) disagrees.
	same.Secure = true
	if err := f.Check(same, map[string]bool{FlagSecure: true}, t.TempDir()); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "--secure true (the cluster has false)") {
		t.Errorf("--secure on a plaintext cluster: %v", err)
	}
}

func TestCheckSNFlags(t *testing.T) {
	if err := checkSNFlags([]string{"--raft-tick=50ms", "--raft-log-keep=100", "--log-level=debug"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"raft-tick=50ms", "-x", "--", "--port=5000", "--root", "--host=h"} {
		if err := checkSNFlags([]string{bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]string{"": "SIGKILL", "KILL": "SIGKILL", "stop": "SIGSTOP", "SIGCONT": "SIGCONT", "term": "SIGTERM"} {
		sig, err := ParseSignal(in)
		if err != nil || sigName(sig) != want {
			t.Errorf("%q: %v, %v; want %s", in, sigName(sig), err, want)
		}
	}
	if _, err := ParseSignal("HUP"); !errors.Is(err, ErrInvalid) {
		t.Errorf("HUP: %v", err)
	}
}
