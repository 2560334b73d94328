package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// ProcState is what a node's recorded pid names now.
type ProcState int

// The process states.
const (
	// ProcGone: no pid recorded, no such process, or a zombie.
	ProcGone ProcState = iota
	// ProcRunning: the node's `cairn sn`, running.
	ProcRunning
	// ProcStopped: the node's `cairn sn`, stopped by a signal (SIGSTOP).
	ProcStopped
	// ProcOther: the pid now names another program (it was reused).
	ProcOther
)

func (s ProcState) String() string {
	switch s {
	case ProcRunning:
		return "running"
	case ProcStopped:
		return "stopped"
	case ProcOther:
		return "pid reused"
	}
	return "gone"
}

// Ours reports whether the pid names the node's own process.
func (s ProcState) Ours() bool { return s == ProcRunning || s == ProcStopped }

// procRoot is where Linux shows processes.
const procRoot = "/proc"

// Inspect reports what pid names now, for a node whose root is root.
func Inspect(pid int, root string) ProcState {
	if pid <= 0 {
		return ProcGone
	}
	if _, err := os.Stat(filepath.Join(procRoot, "self")); err != nil {
		// No /proc: all we can tell is whether the pid is alive.
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			return ProcRunning
		}
		return ProcGone
	}
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return ProcGone
	}
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	return classify(stat, cmdline, err, root)
}

// classify tells what a process is from its /proc stat and cmdline (and
// the error reading cmdline, if any). A process that is exiting has
// released its memory before it turns into a zombie, and meanwhile its
// cmdline reads empty: it is gone too, not another program (Stop waits for
// a node to be no longer ours, and may look again within that window).
func classify(stat, cmdline []byte, cmdErr error, root string) ProcState {
	state := procStatState(stat)
	switch {
	case state == 'Z' || state == 'X' || state == 'x' || state == 0:
		return ProcGone // a zombie is dead; nobody has reaped it yet
	case errors.Is(cmdErr, fs.ErrNotExist):
		return ProcGone
	case cmdErr == nil && len(cmdline) == 0:
		return ProcGone // exiting (or a kernel thread): not a node, and not a program to leave alone
	case cmdErr != nil || !isNodeCmdline(cmdline, root):
		return ProcOther
	case state == 'T' || state == 't':
		return ProcStopped
	}
	return ProcRunning
}

// procStatState returns the state letter of /proc/PID/stat: the field after
// the command name, which is in parentheses and may itself hold spaces and
// parentheses.
func procStatState(stat []byte) byte {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// isNodeCmdline reports whether a NUL-separated command line is `... sn ...
// --root ROOT ...` (or --root=ROOT).
func isNodeCmdline(cmdline []byte, root string) bool {
	args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
	var sn, rooted bool
	for i, a := range args {
		switch s := string(a); {
		case s == "sn":
			sn = true
		case s == "--root" && i+1 < len(args) && string(args[i+1]) == root:
			rooted = true
		case s == "--root="+root:
			rooted = true
		}
	}
	return sn && rooted
}

// nodeArgs returns the arguments of node n's `cairn sn`.
func nodeArgs(n Node, host string, snFlags []string) []string {
	args := []string{"sn", "--root", n.Root, "--host", host, "--port", strconv.Itoa(n.Port())}
	return append(args, snFlags...)
}

// LogName is a node's log file in its root.
const LogName = "sn.log"

// launched is a node process just started.
type launched struct {
	node      Node
	pid       int
	logPath   string
	logOffset int64         // where this run's output starts in the log
	exited    chan struct{} // closed when the process exits (while we run)
	state     *os.ProcessState
	started   time.Time
}

// launch starts node n as a detached process: its own session, stdin
// /dev/null, stdout and stderr appended to ROOT/sn.log, and GOMAXPROCS
// procs unless the environment sets it (0: leave it to Go).
func launch(bin string, n Node, host string, snFlags []string, procs int) (*launched, error) {
	logPath := filepath.Join(n.Root, LogName)
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("node %d: open its log: %w", n.ID, err)
	}
	defer log.Close()
	args := nodeArgs(n, host, snFlags)
	fmt.Fprintf(log, "--- cairn cluster: starting node %d at %s: %s %q ---\n", n.ID, time.Now().Format(time.RFC3339), bin, args)
	off, err := log.Seek(0, 2)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", n.ID, err)
	}
	cmd := exec.Command(bin, args...)
	if _, set := os.LookupEnv("GOMAXPROCS"); !set && procs > 0 {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
		fmt.Fprintf(log, "--- GOMAXPROCS=%d: this machine's %d cores, shared by the cluster's nodes ---\n", procs, runtime.NumCPU())
	}
	cmd.Dir = n.Root
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("node %d: start %s: %w", n.ID, bin, err)
	}
	l := &launched{node: n, pid: cmd.Process.Pid, logPath: logPath, logOffset: off, exited: make(chan struct{}), started: time.Now()}
	go func() {
		_ = cmd.Wait() // reaps it if it dies while this command still runs
		l.state = cmd.ProcessState
		close(l.exited)
	}()
	return l, nil
}

// pollEvery is how often waits on another process's state look again.
const pollEvery = 20 * time.Millisecond

// waitState waits up to d for pid's state (for root) to satisfy ok, and
// returns the last state seen and whether ok held.
func waitState(pid int, root string, d time.Duration, ok func(ProcState) bool) (ProcState, bool) {
	deadline := time.Now().Add(d)
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		st := Inspect(pid, root)
		if ok(st) {
			return st, true
		}
		if time.Now().After(deadline) {
			return st, false
		}
		<-t.C
	}
}

// waitGone waits up to d for the node's process to be gone.
func waitGone(pid int, root string, d time.Duration) bool {
	_, ok := waitState(pid, root, d, func(s ProcState) bool { return !s.Ours() })
	return ok
}

// tail returns the last n lines of path after offset.
func tail(path string, offset int64, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	if offset > 0 && offset <= int64(len(b)) {
		b = b[offset:]
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var out bytes.Buffer
	for _, l := range lines {
		out.WriteString("    | ")
		out.Write(l)
		out.WriteByte('\n')
	}
	return out.String()
}

// nodeProcs is the GOMAXPROCS of each of nodes processes on this machine:
// its cores shared out, at least one. Go's scheduler assumes it has its
// cores to itself; several node processes each running as many threads as
// the machine has cores spin and wake one another for nothing. Measured on
// 2 cores with 3 nodes (docs/benchmarks.md): server CPU per read x0.67,
// per insert x0.74.
func nodeProcs(nodes int) int {
	return max(1, runtime.NumCPU()/max(nodes, 1))
}
