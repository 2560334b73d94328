package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// StartOptions configures Start.
type StartOptions struct {
	// Root is DIR, the cluster's directory. Required; created if missing.
	Root string
	// Spec is the layout of a new cluster. For an existing one, the fields
	// named in Given must agree with it (ErrMismatch otherwise).
	Spec  Spec
	Given map[string]bool
	// Node, if not 0, starts only that node of an existing cluster.
	Node topology.NodeID
	// SNFlags are passed to every `cairn sn` (e.g. "--raft-tick=50ms").
	// When empty, an existing cluster keeps the flags it was started with.
	// New flags are recorded in the cluster's file only once a node
	// started with them is ready (or when every node runs already), so
	// flags no node can start with never stick.
	SNFlags []string
	// CheckSNFlags, when set, checks SNFlags as `cairn sn` would parse
	// them, before anything is written; an error is ErrInvalid.
	CheckSNFlags func([]string) error
	// Binary is the cairn executable that runs each node. Required.
	Binary string
	// Wait bounds the wait for the nodes' ready lines and then for every
	// shard to have a leader. Default 30s.
	Wait time.Duration
	// Out receives progress and the summary. Default: discarded.
	Out io.Writer
}

// DefaultWait is StartOptions.Wait's default.
const DefaultWait = 30 * time.Second

// readyRE matches the line `cairn sn` prints once it serves.
var readyRE = regexp.MustCompile(`(?m)^cairn sn: node (\d+) of store "([^"]*)" \((\d+) shards here\) ready at (\S+)$`)

// Start creates the cluster in Root if it has no cluster.json, then starts
// every node that is not running (or only Node), waits for their ready
// lines, and waits until every shard has a leader. Nodes already running
// are left alone. A node that fails to start is reported with the end of
// its log; nodes that did start keep running.
func Start(ctx context.Context, o StartOptions) (err error) {
	defer func() { err = prefixed(err) }()
	if o.Binary == "" {
		return explain(ErrInvalid, "no cairn binary to run the nodes with")
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.Root == "" {
		return explain(ErrInvalid, "--root is required")
	}
	if err := checkSNFlags(o.SNFlags); err != nil {
		return err
	}
	if o.CheckSNFlags != nil && len(o.SNFlags) > 0 {
		if err := o.CheckSNFlags(o.SNFlags); err != nil {
			return explain(ErrInvalid, "--sn-flag: %v (see 'cairn sn --help' for the flags a node takes)", err)
		}
	}
	dir, err := filepath.Abs(o.Root)
	if err != nil {
		return err
	}
	f, err := Load(dir)
	switch {
	case errors.Is(err, ErrNoCluster) && o.Node != 0:
		return explain(ErrNoCluster, "%s has no %s, so there is no node %d to start; run 'cairn cluster start --root %s' (without --node) to create the cluster", dir, FileName, o.Node, dir)
	case errors.Is(err, ErrNoCluster):
		if err := o.Spec.Validate(); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if err := f.Check(o.Spec, o.Given, dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	unlock, err := lock(dir)
	if err != nil {
		return err
	}
	defer unlock()
	if f == nil {
		if f, err = create(dir, o.Spec); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "created store %q in %s: %d nodes, %d shards, rf %d, %d partitions\n",
			f.Store, dir, len(f.Nodes), f.Shards, f.RF, f.Partitions)
	}
	flags := f.SNFlags // the nodes' flags; recorded in f once a node runs with them
	if len(o.SNFlags) > 0 {
		flags = withSecure(o.SNFlags, f.SNFlags)
	}
	targets, err := pick(f, o.Node, dir)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(o.Wait)
	var started []*launched
	for _, n := range targets {
		switch st := Inspect(n.PID, n.Root); st {
		case ProcRunning:
			fmt.Fprintf(o.Out, "node %d: already running at %s (pid %d)\n", n.ID, n.Addr, n.PID)
			continue
		case ProcStopped:
			fmt.Fprintf(o.Out, "node %d: already running at %s (pid %d) but paused (SIGSTOP); resume it with 'cairn cluster kill --root %s --node %d --signal CONT'\n",
				n.ID, n.Addr, n.PID, dir, n.ID)
			continue
		case ProcOther:
			fmt.Fprintf(o.Out, "node %d: its recorded pid %d now belongs to another program; leaving that alone\n", n.ID, n.PID)
		}
		l, err := launch(o.Binary, n, f.Host, flags, nodeProcs(len(f.Nodes)))
		if err != nil {
			return err
		}
		f.Nodes[nodeIndex(f, n.ID)].PID = l.pid
		if err := f.Save(dir); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "node %d: starting at %s (pid %d, log %s)\n", n.ID, n.Addr, l.pid, l.logPath)
		started = append(started, l)
	}
	ready, err := waitReady(o.Out, f, started, deadline)
	if ready > 0 || len(started) == 0 {
		if err := recordFlags(f, dir, flags); err != nil {
			return err
		}
	}
	if err != nil {
		kept := ""
		if !slices.Equal(f.SNFlags, flags) {
			had := "none"
			if len(f.SNFlags) > 0 {
				had = strings.Join(f.SNFlags, " ")
			}
			kept = fmt.Sprintf("\nno node became ready with the --sn-flag values given, so %s keeps the nodes' flags it had (%s)", FileName, had)
		}
		return fmt.Errorf("%w%s\nnodes that started keep running; 'cairn cluster status --root %s' shows them, 'cairn cluster stop --root %s' stops them", err, kept, dir, dir)
	}
	topo, err := loadTopology(f)
	if err != nil {
		return err
	}
	st, err := waitLeaders(ctx, o.Out, dir, f, topo, started, deadline)
	if err != nil {
		return err
	}
	printSummary(o.Out, dir, f, st)
	return nil
}

// withSecure returns the flags given to a cluster whose recorded flags are
// old: given, plus --secure if old has it (a secure cluster stays secure).
func withSecure(given, old []string) []string {
	if slices.Contains(old, "--secure") && !slices.Contains(given, "--secure") {
		return append(slices.Clip(given), "--secure")
	}
	return given
}

// recordFlags saves flags as f's nodes' flags, if they changed.
func recordFlags(f *File, dir string, flags []string) error {
	if slices.Equal(f.SNFlags, flags) {
		return nil
	}
	f.SNFlags = slices.Clone(flags)
	return f.Save(dir)
}

func nodeIndex(f *File, id topology.NodeID) int {
	for i, n := range f.Nodes {
		if n.ID == id {
			return i
		}
	}
	return -1
}

// create lays out a new cluster in dir, which must be empty (but for the
// lock), and writes every node's topology.json and then cluster.json. Its
// nodes' flags are only those the layout needs (--secure); Start records
// the --sn-flag values once a node runs with them.
func create(dir string, s Spec) (*File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	for _, e := range entries {
		if e.Name() != LockName {
			return nil, explain(ErrInvalid, "%s has no %s but is not empty (it holds %s); use an empty or new directory for a new cluster", dir, FileName, e.Name())
		}
	}
	ports, err := pickPorts(s)
	if err != nil {
		return nil, err
	}
	f := &File{Format: Format, Store: s.Store, Partitions: s.Partitions, Shards: s.Shards, RF: s.RF, Host: s.Host, SNFlags: []string{}}
	var tnodes []topology.Node
	for i, port := range ports {
		n := Node{ID: topology.NodeID(i + 1), Addr: net.JoinHostPort(s.Host, strconv.Itoa(port)), Root: filepath.Join(dir, "n"+strconv.Itoa(i+1))}
		f.Nodes = append(f.Nodes, n)
		tnodes = append(tnodes, topology.Node{ID: n.ID, Addr: n.Addr})
	}
	topo, err := topology.Build(s.Store, s.Partitions, tnodes, s.Shards, s.RF)
	if err != nil {
		return nil, err
	}
	for _, n := range f.Nodes {
		if err := os.MkdirAll(n.Root, 0o755); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		if err := files.WriteJSON(files.Default, filepath.Join(n.Root, topology.FileName), topo); err != nil {
			return nil, fmt.Errorf("cluster: node %d: %w", n.ID, err)
		}
	}
	if s.Secure {
		if err := secureLayout(dir, f); err != nil {
			return nil, err
		}
		f.SNFlags = append(f.SNFlags, "--secure")
	}
	return f, f.Save(dir)
}

// pickPorts returns BasePort+i, or with BasePort 0 as many distinct ports
// as nodes that were free a moment ago (all held open until all are found).
func pickPorts(s Spec) ([]int, error) {
	ports := make([]int, s.Nodes)
	if s.BasePort != 0 {
		for i := range ports {
			ports[i] = s.BasePort + i
		}
		return ports, nil
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort(s.Host, "0"))
		if err != nil {
			return nil, fmt.Errorf("cluster: find a free port on %s: %w", s.Host, err)
		}
		held = append(held, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// waitReady waits for every started node's ready line, each in its own log
// after its start marker, until the deadline, and returns how many were
// ready.
func waitReady(out io.Writer, f *File, started []*launched, deadline time.Time) (int, error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(started))
	ready := 0
	for i, l := range started {
		wg.Go(func() {
			addr, err := waitReadyLine(f, l, deadline)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[i] = err
				return
			}
			ready++
			fmt.Fprintf(out, "node %d: ready at %s (%.2fs)\n", l.node.ID, addr, time.Since(l.started).Seconds())
		})
	}
	wg.Wait()
	return ready, errors.Join(errs...)
}

func waitReadyLine(f *File, l *launched, deadline time.Time) (string, error) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		b, err := os.ReadFile(l.logPath)
		if err != nil {
			return "", fmt.Errorf("node %d: read its log: %w", l.node.ID, err)
		}
		if l.logOffset <= int64(len(b)) {
			if m := readyRE.FindSubmatch(b[l.logOffset:]); m != nil {
				if id, _ := strconv.ParseUint(string(m[1]), 10, 64); topology.NodeID(id) != l.node.ID || string(m[2]) != f.Store {
					return "", fmt.Errorf("node %d at %s came up as node %s of store %q; its topology.json disagrees with %s",
						l.node.ID, l.node.Addr, m[1], m[2], FileName)
				}
				return string(m[4]), nil
			}
		}
		select {
		case <-l.exited:
			return "", exitedEarly(l)
		case <-t.C:
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("node %d (pid %d) printed no ready line within the wait; it keeps running. Its log %s ends:\n%s",
				l.node.ID, l.pid, l.logPath, tail(l.logPath, l.logOffset, 15))
		}
	}
}

func exitedEarly(l *launched) error {
	end := tail(l.logPath, l.logOffset, 15)
	hint := ""
	if strings.Contains(end, fmt.Sprintf(":%d: bind: address already in use", l.node.Port())) {
		hint = fmt.Sprintf("\nport %d is taken by another process; free it (e.g. find it with 'ss -ltnp | grep :%d') and start again", l.node.Port(), l.node.Port())
	}
	return fmt.Errorf("node %d exited (%v) before it was ready. Its log %s ends:\n%s%s", l.node.ID, l.state, l.logPath, end, hint)
}

// waitLeaders polls every node until every shard is led and every started
// node knows the leader of each of its shards, printing progress when it
// changes. It fails at once when a shard cannot elect a leader because too
// few of its replicas' processes run.
func waitLeaders(ctx context.Context, out io.Writer, dir string, f *File, topo *topology.Topology, started []*launched, deadline time.Time) (*Status, error) {
	p, err := newProber(dir, f.Nodes)
	if err != nil {
		return nil, err
	}
	defer p.close()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	begin := time.Now()
	last := ""
	for {
		procs := inspectAll(f)
		for _, sh := range topo.Shards {
			running := 0
			for _, r := range sh.Replicas {
				if procs[r] == ProcRunning {
					running++
				}
			}
			if need := len(sh.Replicas)/2 + 1; running < need {
				return nil, fmt.Errorf("shard %d cannot elect a leader: %d of its %d replicas (nodes %s) run and it needs %d; start the others with 'cairn cluster start --root %s'",
					sh.ID, running, len(sh.Replicas), joinIDs(sh.Replicas), need, dir)
			}
		}
		st := assess(dir, f, topo, procs, p.poll(ctx, procs))
		pending := startedWithoutLeader(st, topo, started)
		if st.AllLed() && len(pending) == 0 {
			fmt.Fprintf(out, "every shard has a leader (%.2fs)\n", time.Since(begin).Seconds())
			return st, nil
		}
		if now := progress(st, pending); now != last {
			fmt.Fprintf(out, "waiting for leaders: %s\n", now)
			last = now
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("not every shard has a leader after the wait: %s\n%s", last, strings.Join(st.Problems, "\n"))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// startedWithoutLeader lists "node N shard S" for each shard of a started
// node whose replica there does not know its leader yet.
func startedWithoutLeader(st *Status, topo *topology.Topology, started []*launched) []string {
	var out []string
	for _, l := range started {
		for _, sh := range topo.ShardsOn(l.node.ID) {
			s, _ := st.Shard(sh.ID)
			known := false
			for _, r := range s.Replicas {
				if r.Node == l.node.ID && r.Up && r.Leader != 0 {
					known = true
				}
			}
			if !known {
				out = append(out, fmt.Sprintf("node %d shard %d", l.node.ID, sh.ID))
			}
		}
	}
	return out
}

func progress(st *Status, pending []string) string {
	var parts []string
	for _, sh := range st.Shards {
		if sh.Led {
			parts = append(parts, fmt.Sprintf("shard %d led by node %d", sh.ID, sh.Leader))
		} else {
			parts = append(parts, fmt.Sprintf("shard %d has none yet", sh.ID))
		}
	}
	if len(pending) > 0 {
		parts = append(parts, "not yet joined: "+strings.Join(pending, ", "))
	}
	return strings.Join(parts, "; ")
}

func printSummary(out io.Writer, dir string, f *File, st *Status) {
	fmt.Fprintf(out, "\nstore %q is ready in %s (%d nodes, %d shards, rf %d, %d partitions):\n",
		f.Store, dir, len(f.Nodes), f.Shards, f.RF, f.Partitions)
	for _, n := range st.Nodes {
		leads := ""
		if len(n.Leads) > 0 {
			leads = "  leads shard " + joinIDs(n.Leads)
		}
		fmt.Fprintf(out, "  node %d  %s  pid %d  %s%s\n", n.ID, n.Addr, n.PID, n.State, leads)
	}
	hosts := strings.Join(f.Addrs(), ",")
	fmt.Fprintf(out, "\nuse it:\n")
	sec := ""
	if login := loginFile(dir); login != "" {
		sec = " --security " + login
	}
	fmt.Fprintf(out, "  cairn kv --hosts %s --store %s%s put /users/alice/-/email alice@example.com\n", hosts, f.Store, sec)
	fmt.Fprintf(out, "  cairn kv --hosts %s --store %s%s get /users/alice/-/email\n", hosts, f.Store, sec)
	fmt.Fprintf(out, "  cairn cluster status --root %s\n", dir)
	fmt.Fprintf(out, "  cairn cluster stop --root %s\n", dir)
	fmt.Fprintf(out, "logs: %s\n", filepath.Join(dir, "n*", LogName))
}
