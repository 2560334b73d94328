package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairndb/cairn/internal/topology"
)

// DefaultStopTimeout is how long Stop and Kill wait for a process to exit
// after SIGTERM (or SIGKILL) before they escalate or give up.
const DefaultStopTimeout = 10 * time.Second

// StopOptions configures Stop.
type StopOptions struct {
	Root string          // DIR; required
	Node topology.NodeID // 0: every node
	// Timeout is how long each node has to exit after SIGTERM before it
	// gets SIGKILL. Default 10s.
	Timeout time.Duration
	Out     io.Writer // one line per node; default discarded
}

// Stop stops the cluster's nodes (or one): SIGTERM and SIGCONT, a wait of
// up to Timeout for the process to exit, then SIGKILL. Nodes whose recorded
// pid is stale are reported and not signalled. Every stopped node's pid is
// cleared in cluster.json. The error lists the nodes that could not be
// stopped.
func Stop(_ context.Context, o StopOptions) (err error) {
	defer func() { err = prefixed(err) }()
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultStopTimeout
	}
	dir, f, unlock, err := openLocked(o.Root)
	if err != nil {
		return err
	}
	defer unlock()
	targets, err := pick(f, o.Node, dir)
	if err != nil {
		return err
	}
	lines := make([]string, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, n := range targets {
		wg.Go(func() { lines[i], errs[i] = stopNode(n, o.Timeout) })
	}
	wg.Wait()
	for i, n := range targets {
		fmt.Fprintln(o.Out, lines[i])
		if errs[i] == nil {
			f.Nodes[nodeIndex(f, n.ID)].PID = 0
		}
	}
	if err := f.Save(dir); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// stopNode stops one node and describes what it did.
func stopNode(n Node, timeout time.Duration) (string, error) {
	switch st := Inspect(n.PID, n.Root); st {
	case ProcGone:
		if n.PID == 0 {
			return fmt.Sprintf("node %d: not running", n.ID), nil
		}
		return fmt.Sprintf("node %d: not running (pid %d is gone)", n.ID, n.PID), nil
	case ProcOther:
		return fmt.Sprintf("node %d: not running (pid %d now belongs to another program; left alone)", n.ID, n.PID), nil
	}
	begin := time.Now()
	if err := syscall.Kill(n.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Sprintf("node %d (pid %d): SIGTERM failed: %v", n.ID, n.PID, err), fmt.Errorf("node %d (pid %d): SIGTERM: %w", n.ID, n.PID, err)
	}
	_ = syscall.Kill(n.PID, syscall.SIGCONT) // a paused node must run to act on SIGTERM
	if waitGone(n.PID, n.Root, timeout) {
		return fmt.Sprintf("node %d (pid %d): stopped by SIGTERM in %.2fs", n.ID, n.PID, time.Since(begin).Seconds()), nil
	}
	if err := syscall.Kill(n.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Sprintf("node %d (pid %d): SIGKILL failed: %v", n.ID, n.PID, err), fmt.Errorf("node %d (pid %d): SIGKILL: %w", n.ID, n.PID, err)
	}
	if waitGone(n.PID, n.Root, timeout) {
		return fmt.Sprintf("node %d (pid %d): did not exit within %v of SIGTERM; killed with SIGKILL (see %s)",
			n.ID, n.PID, timeout, filepath.Join(n.Root, LogName)), nil
	}
	return fmt.Sprintf("node %d (pid %d): still there %v after SIGKILL", n.ID, n.PID, timeout),
		fmt.Errorf("node %d (pid %d) is still there %v after SIGKILL; look at it with 'ps -o pid,stat,cmd -p %d'", n.ID, n.PID, timeout, n.PID)
}

// KillOptions configures Kill.
type KillOptions struct {
	Root string          // DIR; required
	Node topology.NodeID // required
	// Signal is KILL (default), STOP, CONT or TERM, with or without "SIG",
	// in any case.
	Signal string
	// Timeout bounds the wait for the signal's effect (gone, paused,
	// running). Default 10s.
	Timeout time.Duration
	Out     io.Writer // default discarded
}

// signals maps Kill's signal names.
var signals = map[string]syscall.Signal{"KILL": syscall.SIGKILL, "STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT, "TERM": syscall.SIGTERM}

// ParseSignal parses a Kill signal name.
func ParseSignal(s string) (syscall.Signal, error) {
	if s == "" {
		return syscall.SIGKILL, nil
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if sig, ok := signals[name]; ok {
		return sig, nil
	}
	return 0, explain(ErrInvalid, "--signal %q: want KILL, STOP, CONT or TERM", s)
}

// Kill sends a signal to one node's process, for fault testing, and waits
// for its effect: KILL and TERM until the process is gone, STOP until it is
// paused, CONT until it runs. It leaves cluster.json alone.
func Kill(_ context.Context, o KillOptions) (err error) {
	defer func() { err = prefixed(err) }()
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultStopTimeout
	}
	sig, err := ParseSignal(o.Signal)
	if err != nil {
		return err
	}
	if o.Node == 0 {
		return explain(ErrInvalid, "--node is required: which node to signal")
	}
	dir, f, unlock, err := openLocked(o.Root)
	if err != nil {
		return err
	}
	defer unlock()
	targets, err := pick(f, o.Node, dir)
	if err != nil {
		return err
	}
	n := targets[0]
	if st := Inspect(n.PID, n.Root); !st.Ours() {
		return fmt.Errorf("node %d is not running (pid %d: %s); nothing to signal. 'cairn cluster start --root %s --node %d' starts it",
			n.ID, n.PID, st, dir, n.ID)
	}
	begin := time.Now()
	if err := syscall.Kill(n.PID, sig); err != nil {
		return fmt.Errorf("node %d (pid %d): %v: %w", n.ID, n.PID, sig, err)
	}
	want, effect := func(s ProcState) bool { return !s.Ours() }, "gone"
	switch sig {
	case syscall.SIGSTOP:
		want, effect = func(s ProcState) bool { return s == ProcStopped }, "paused"
	case syscall.SIGCONT:
		want, effect = func(s ProcState) bool { return s == ProcRunning }, "running"
	}
	st, ok := waitState(n.PID, n.Root, o.Timeout, want)
	if !ok {
		return fmt.Errorf("node %d (pid %d): sent %s, but it is not %s after %v (it is %s)", n.ID, n.PID, sigName(sig), effect, o.Timeout, st)
	}
	fmt.Fprintf(o.Out, "node %d (pid %d): sent %s; %s after %.3fs\n", n.ID, n.PID, sigName(sig), effect, time.Since(begin).Seconds())
	if sig == syscall.SIGSTOP {
		fmt.Fprintf(o.Out, "resume it with 'cairn cluster kill --root %s --node %d --signal CONT'\n", dir, n.ID)
	}
	return nil
}

func sigName(sig syscall.Signal) string {
	for name, s := range signals {
		if s == sig {
			return "SIG" + name
		}
	}
	return sig.String()
}

// openLocked loads the cluster in root and takes its lock.
func openLocked(root string) (string, *File, func(), error) {
	if root == "" {
		return "", nil, nil, explain(ErrInvalid, "--root is required")
	}
	dir, err := filepath.Abs(root)
	if err != nil {
		return "", nil, nil, err
	}
	if _, err := Load(dir); err != nil {
		return "", nil, nil, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return "", nil, nil, err
	}
	f, err := Load(dir) // again, under the lock
	if err != nil {
		unlock()
		return "", nil, nil, err
	}
	return dir, f, unlock, nil
}

// pick returns every node (id 0) or the one with id.
func pick(f *File, id topology.NodeID, dir string) ([]Node, error) {
	if id == 0 {
		return append([]Node(nil), f.Nodes...), nil
	}
	n, ok := f.Node(id)
	if !ok {
		return nil, explain(ErrInvalid, "--node %d: the cluster in %s has nodes %s", id, dir, joinIDs(nodeIDs(f)))
	}
	return []Node{*n}, nil
}

func nodeIDs(f *File) []topology.NodeID {
	out := make([]topology.NodeID, len(f.Nodes))
	for i, n := range f.Nodes {
		out[i] = n.ID
	}
	return out
}
