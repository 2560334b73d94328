package clustertest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// readyTimeout bounds the wait for a node's ready line.
	readyTimeout = 20 * time.Second
	// exitTimeout bounds the wait for a process to exit after SIGKILL.
	exitTimeout = 10 * time.Second
	// signalTimeout bounds the wait for SIGSTOP or SIGCONT to take effect.
	signalTimeout = 5 * time.Second
	// pollInterval is how often a condition on other processes is checked.
	pollInterval = 20 * time.Millisecond
)

// readyRE matches the line `cairn sn` (or `cairn sn start`, deployed or
// not yet) prints once it serves.
var readyRE = regexp.MustCompile(`(?m)^cairn sn: .*\bready at ([^\s,]+)`)

// logBuffer collects a node's output over all its runs. It is safe for
// concurrent writers and readers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Len returns how many bytes were written.
func (b *logBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lineWatch passes output on to a logBuffer and signals once a line matching
// readyRE has been seen.
type lineWatch struct {
	to    *logBuffer
	mu    sync.Mutex
	seen  bytes.Buffer // stdout of this run, to find the ready line
	once  sync.Once
	ready chan string // the address of the ready line
}

func (w *lineWatch) Write(p []byte) (int, error) {
	n, err := w.to.Write(p)
	w.mu.Lock()
	w.seen.Write(p)
	m := readyRE.FindSubmatch(w.seen.Bytes())
	w.mu.Unlock()
	if m != nil {
		w.once.Do(func() { w.ready <- string(m[1]) })
	}
	return n, err
}

// process is one run of `cairn sn`.
type process struct {
	cmd    *exec.Cmd
	stdout *lineWatch
	exited chan struct{} // closed once Wait returned
	state  *os.ProcessState
}

// startProcess starts bin with args and env (KEY=VALUE, added to the
// test's environment); both output streams go to log.
func startProcess(bin string, args, env []string, log *logBuffer) (*process, error) {
	p := &process{
		stdout: &lineWatch{to: log, ready: make(chan string, 1)},
		exited: make(chan struct{}),
	}
	p.cmd = exec.Command(bin, args...)
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, log
	// The node dies with the test process even if the test binary crashes
	// (a panic in a workload goroutine skips every Cleanup).
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL (which also ends a stopped process) and waits for the
// process to be reaped.
func (p *process) kill() error {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
		return nil
	case <-time.After(exitTimeout):
		return fmt.Errorf("pid %d still running %v after SIGKILL", p.cmd.Process.Pid, exitTimeout)
	}
}

// procState returns the state letter of /proc/PID/stat (R, S, T, Z...).
func procState(pid int) (byte, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, s)
	}
	return s[i+2], nil
}

// signalAndWait sends sig and polls /proc until the process is (stopped:
// true) or is not (false) in the stopped state.
func (p *process) signalAndWait(sig syscall.Signal, stopped bool) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%v: %w", sig, err)
	}
	deadline := time.Now().Add(signalTimeout)
	for {
		st, err := procState(p.cmd.Process.Pid)
		if err != nil {
			return err
		}
		if (st == 'T') == stopped {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d in state %c %v after %v", p.cmd.Process.Pid, st, signalTimeout, sig)
		}
		time.Sleep(pollInterval) // polling a condition, with a deadline
	}
}
