package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairndb/cairn/internal/topology"
)

// FileName is the cluster file's name in DIR.
const FileName = "cluster.json"

// Format is the cluster.json layout this package writes and reads.
const Format = 1

// ErrNoCluster is returned (wrapped) when DIR has no cluster.json.
var ErrNoCluster = errors.New("cluster: no cluster.json")

// ErrMismatch is returned (wrapped) when flags given to Start disagree with
// the existing cluster.
var ErrMismatch = errors.New("cluster: flags disagree with the existing cluster")

// ErrInvalid is returned (wrapped) for arguments that cannot make a cluster.
var ErrInvalid = errors.New("cluster: invalid arguments")

// Spec is the shape of a new cluster: the flags of `cairn cluster start`.
type Spec struct {
	Store      string // store name; default "kvstore"
	Nodes      int    // storage nodes; default 3
	RF         int    // replication factor; default 3
	Shards     int    // shards; default 2
	Partitions uint32 // partitions; default 100
	Host       string // every node's host; default "127.0.0.1"
	// BasePort: node I listens on BasePort+I-1; 0 (the default) picks free
	// ports when the cluster is created.
	BasePort int
	// Secure makes a secure store (secure.go): ROOT/security holds its CA,
	// the admin user's login file, and every node runs with --secure.
	Secure bool
}

// The names of Spec's fields as flags, for StartOptions.Given and errors.
const (
	FlagStore      = "store"
	FlagNodes      = "nodes"
	FlagRF         = "rf"
	FlagShards     = "shards"
	FlagPartitions = "partitions"
	FlagHost       = "host"
	FlagBasePort   = "base-port"
	FlagSecure     = "secure"
)

// DefaultSpec returns the defaults: 3 nodes, rf 3, 2 shards, 100 partitions.
func DefaultSpec() Spec {
	return Spec{Store: "kvstore", Nodes: 3, RF: 3, Shards: 2, Partitions: 100, Host: "127.0.0.1"}
}

// Validate reports a spec that cannot make a cluster. Errors name the flag
// and wrap ErrInvalid; layout errors are topology.Build's (wrapping
// topology.ErrInvalid).
func (s Spec) Validate() error {
	switch {
	case s.Store == "" || strings.ContainsAny(s.Store, " \t\n/\"'"):
		return explain(ErrInvalid, "--store %q: want a name without spaces, quotes or '/'", s.Store)
	case s.Nodes < 1 || s.Nodes > 100:
		return explain(ErrInvalid, "--nodes %d: want 1 to 100 nodes", s.Nodes)
	case s.Partitions < 1:
		return explain(ErrInvalid, "--partitions %d: want at least 1", s.Partitions)
	case s.Host == "" || strings.ContainsAny(s.Host, " :/"):
		if ip := net.ParseIP(s.Host); ip != nil && ip.To4() == nil {
			return explain(ErrInvalid, "--host %q: IPv6 hosts are not supported yet; use 127.0.0.1 or a host name", s.Host)
		}
		return explain(ErrInvalid, "--host %q: want a host name or IPv4 address without a port", s.Host)
	case s.BasePort < 0 || s.BasePort+s.Nodes-1 > 65535:
		return explain(ErrInvalid, "--base-port %d: nodes 1 to %d would listen on ports %d to %d; want 0 (free ports) or ports up to 65535", s.BasePort, s.Nodes, s.BasePort, s.BasePort+s.Nodes-1)
	}
	// topology.Build's checks, with its messages (e.g. rf > nodes).
	_, err := topology.Build(s.Store, s.Partitions, placeholderNodes(s.Nodes), s.Shards, s.RF)
	return err
}

func placeholderNodes(n int) []topology.Node {
	out := make([]topology.Node, n)
	for i := range out {
		out[i] = topology.Node{ID: topology.NodeID(i + 1), Addr: "node" + strconv.Itoa(i+1) + ":1"}
	}
	return out
}

// File is the content of cluster.json; see the package doc.
type File struct {
	Format     int      `json:"format"`
	Store      string   `json:"store"`
	Partitions uint32   `json:"partitions"`
	Shards     int      `json:"shards"`
	RF         int      `json:"rf"`
	Host       string   `json:"host"`
	SNFlags    []string `json:"sn_flags"`
	Nodes      []Node   `json:"nodes"`
}

// Node is one storage node in cluster.json.
type Node struct {
	ID   topology.NodeID `json:"id"`
	Addr string          `json:"addr"` // host:port, as in the topology
	Root string          `json:"root"` // absolute
	PID  int             `json:"pid"`  // the last process started; 0: none
}

// Port returns the node's port.
func (n Node) Port() int {
	_, p, _ := net.SplitHostPort(n.Addr)
	port, _ := strconv.Atoi(p)
	return port
}

// Node returns the node with id.
func (f *File) Node(id topology.NodeID) (*Node, bool) {
	for i := range f.Nodes {
		if f.Nodes[i].ID == id {
			return &f.Nodes[i], true
		}
	}
	return nil, false
}

// Addrs returns every node's address, in node order.
func (f *File) Addrs() []string {
	out := make([]string, len(f.Nodes))
	for i, n := range f.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Validate checks what Load needs to trust the file.
func (f *File) Validate() error {
	if f.Format != Format {
		return fmt.Errorf("format %d; this cairn reads format %d", f.Format, Format)
	}
	if f.Store == "" || len(f.Nodes) == 0 {
		return errors.New("no store name or no nodes")
	}
	seen := map[topology.NodeID]bool{}
	for _, n := range f.Nodes {
		if n.ID == 0 || seen[n.ID] || n.Root == "" || !filepath.IsAbs(n.Root) || n.PID < 0 {
			return fmt.Errorf("node %d: zero or duplicate id, relative root %q or negative pid", n.ID, n.Root)
		}
		if _, _, err := net.SplitHostPort(n.Addr); err != nil {
			return fmt.Errorf("node %d: address %q: %v", n.ID, n.Addr, err)
		}
		seen[n.ID] = true
	}
	return nil
}

// Path returns DIR/cluster.json.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Load reads DIR/cluster.json. A missing file is ErrNoCluster, with a
// message that says how to create one.
func Load(dir string) (*File, error) {
	b, err := os.ReadFile(Path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, explain(ErrNoCluster, "%s has no %s; run 'cairn cluster start --root %s' first", dir, FileName, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("cluster: %s is not a cluster file: %w", Path(dir), err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: %s: %w", Path(dir), err)
	}
	return &f, nil
}

// Save writes f to DIR/cluster.json atomically (write, fsync, rename).
func (f *File) Save(dir string) error {
	if err := f.Validate(); err != nil {
		return fmt.Errorf("cluster: refusing to save an invalid cluster file: %w", err)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, FileName+".tmp*")
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("cluster: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("cluster: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := os.Rename(tmp.Name(), Path(dir)); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// Check reports flags that disagree with the existing cluster f. given
// names the flags the user set (FlagStore, ...); flags left at their
// defaults are not compared. The error wraps ErrMismatch and says what to
// do.
func (f *File) Check(s Spec, given map[string]bool, dir string) error {
	var diffs []string
	differ := func(flag, want, have string) {
		if given[flag] && want != have {
			diffs = append(diffs, fmt.Sprintf("--%s %s (the cluster has %s)", flag, want, have))
		}
	}
	differ(FlagStore, s.Store, f.Store)
	differ(FlagNodes, strconv.Itoa(s.Nodes), strconv.Itoa(len(f.Nodes)))
	differ(FlagRF, strconv.Itoa(s.RF), strconv.Itoa(f.RF))
	differ(FlagShards, strconv.Itoa(s.Shards), strconv.Itoa(f.Shards))
	differ(FlagPartitions, strconv.FormatUint(uint64(s.Partitions), 10), strconv.FormatUint(uint64(f.Partitions), 10))
	differ(FlagHost, s.Host, f.Host)
	differ(FlagSecure, strconv.FormatBool(s.Secure), strconv.FormatBool(loginFile(dir) != ""))
	if given[FlagBasePort] && s.BasePort != 0 {
		for i, n := range f.Nodes {
			if n.Port() != s.BasePort+i {
				diffs = append(diffs, fmt.Sprintf("--base-port %d (node %d listens on port %d)", s.BasePort, n.ID, n.Port()))
				break
			}
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return explain(ErrMismatch, "%s already holds store %q (%d nodes, rf %d, %d shards, %d partitions), but %s; "+
		"drop those flags to restart it as it is, or stop it ('cairn cluster stop --root %s') and use a new directory for a different layout", dir, f.Store, len(f.Nodes), f.RF, f.Shards, f.Partitions, strings.Join(diffs, ", "), dir)
}

// checkSNFlags refuses sn flags the cluster sets itself or that are not
// flags at all.
func checkSNFlags(flags []string) error {
	for _, fl := range flags {
		if !strings.HasPrefix(fl, "--") || len(fl) < 3 {
			return explain(ErrInvalid, "--sn-flag %q: want a flag of 'cairn sn' with its value, e.g. --sn-flag=--raft-tick=50ms", fl)
		}
		name, _, _ := strings.Cut(fl[2:], "=")
		switch name {
		case "root", "host", "port":
			return explain(ErrInvalid, "--sn-flag %q: 'cairn cluster' sets --root, --host and --port of each node itself", fl)
		}
	}
	return nil
}

// explained is an error whose message is its own sentence, and which is
// also its kind (one of the sentinels above) for errors.Is.
type explained struct {
	msg  string
	kind error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.kind }

// explain returns a "cluster: ..." error of kind.
func explain(kind error, format string, args ...any) error {
	return &explained{msg: "cluster: " + fmt.Sprintf(format, args...), kind: kind}
}

// prefixed makes err start with "cluster: ", as every error of this
// package's exported functions does.
func prefixed(err error) error {
	if err == nil || strings.HasPrefix(err.Error(), "cluster: ") {
		return err
	}
	return fmt.Errorf("cluster: %w", err)
}
