package e2e

// Helpers that run `cairn lite` as a real process: start it on a free port,
// wait for its ready line, stop it with SIGTERM or kill it with SIGKILL, and
// dial it. Every wait has a deadline; nothing sleeps to synchronise.
//
// The long tests whose processes mostly wait (admin plans, elections,
// moves) call t.Parallel, so they run three at a time once the others are
// done (TestMain; -parallel N overrides). A test that sets the test
// process's environment variables (t.Setenv; give a node its own with
// storageNode.env), mounts a tmpfs or asserts on timing must not.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairndb/cairn/test/clustertest"

	"github.com/cairndb/cairn/api/cairnpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const (
	// readyTimeout bounds the wait for the ready line.
	readyTimeout = 15 * time.Second
	// exitTimeout bounds the wait for a process to exit after a signal, or
	// for a process that is expected to fail to do so.
	exitTimeout = 15 * time.Second
	// rpcTimeout bounds one RPC.
	rpcTimeout = 10 * time.Second
	// logTimeout bounds the wait for a line a running process logs.
	logTimeout = 10 * time.Second
)

// TestMain runs the tests with $CAIRN_BIN, or a cairn binary built once
// (clustertest.Main).
func TestMain(m *testing.M) {
	flag.Parse()
	if !flagSet("test.parallel") {
		// go test's default is GOMAXPROCS (2 here): the parallel tests
		// mostly wait, so three at a time keeps the cores busier without
		// crowding them.
		_ = flag.Set("test.parallel", "3")
	}
	clustertest.Main(m)
}

// flagSet says whether the command line set the flag named name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// readyRE matches the line `cairn lite` prints once it serves.
var readyRE = regexp.MustCompile(`(?m)^cairn lite: store "([^"]*)" \((\d+) partitions\) ready at (\S+)\n`)

// stdoutWatch collects stdout and reports the ready line once.
type stdoutWatch struct {
	syncBuffer
	once  sync.Once
	ready chan []string // the ready line's submatches
}

func (w *stdoutWatch) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if m := readyRE.FindStringSubmatch(w.String()); m != nil {
		w.once.Do(func() { w.ready <- m })
	}
	return n, err
}

// proc is one run of the cairn binary.
type proc struct {
	t      testing.TB
	name   string
	args   []string
	cmd    *exec.Cmd
	stdout *stdoutWatch
	stderr *syncBuffer
	exited chan struct{} // closed when Wait returns
	state  *os.ProcessState
	start  time.Time
}

// startProc starts the binary with args and logs its output if the test fails.
func startProc(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, name, nil, args...)
}

// startProcEnv is startProc with env (KEY=VALUE) added to the test's
// environment.
func startProcEnv(t testing.TB, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{
		t: t, name: name, args: args,
		stdout: &stdoutWatch{ready: make(chan []string, 1)},
		stderr: &syncBuffer{},
		exited: make(chan struct{}),
	}
	cairnBin := clustertest.Binary(t)
	p.cmd = exec.Command(cairnBin, args...)
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = 5 * time.Second // the output copiers may not outlive the process by more
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: start %s: %v", name, cairnBin, err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		if p.running() {
			p.kill()
		}
		if t.Failed() {
			t.Logf("%s: %s %s\n--- stdout ---\n%s--- stderr ---\n%s--- end %s ---",
				name, cairnBin, strings.Join(args, " "), p.stdout.String(), p.stderr.String(), name)
		}
	})
	return p
}

func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// waitExit waits up to d for the process to exit and returns its exit code
// (-1 if a signal killed it).
func (p *proc) waitExit(d time.Duration) (int, bool) {
	select {
	case <-p.exited:
		return p.state.ExitCode(), true
	case <-time.After(d):
		return 0, false
	}
}

// stop sends SIGTERM and waits for the process to exit; it returns the exit code.
func (p *proc) stop() int {
	p.t.Helper()
	return p.stopWith(syscall.SIGTERM)
}

// stopWith sends sig and waits for the process to exit; it returns the exit code.
func (p *proc) stopWith(sig syscall.Signal) int {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && p.running() {
		p.t.Fatalf("%s: %v: %v", p.name, sig, err)
	}
	code, ok := p.waitExit(exitTimeout)
	if !ok {
		p.kill()
		p.t.Fatalf("%s: did not exit within %v of %v", p.name, exitTimeout, sig)
	}
	return code
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	if _, ok := p.waitExit(exitTimeout); !ok {
		p.t.Errorf("%s: still running %v after SIGKILL", p.name, exitTimeout)
	}
}

// logged waits up to logTimeout for p's stderr to contain every one of
// want. Its stderr reaches the test on its own pipe, so a line logged
// before the ready line (on stdout) may still be on its way.
func (p *proc) logged(want ...string) bool {
	return within(logTimeout, func() bool { return containsAll(p.stderr.String(), want) })
}

// within polls ok until it holds (true) or d passes (false).
func within(d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// containsAll says whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// lite is a running `cairn lite`.
type lite struct {
	*proc
	root       string
	addr       string
	store      string
	partitions int
	readyAfter time.Duration // from exec to the ready line
}

// liteOpts are the flags of a lite start beyond root, host and port.
type liteOpts struct {
	store      string // default "kvstore"
	partitions int    // default 10
	extra      []string
}

func (o liteOpts) withDefaults() liteOpts {
	if o.store == "" {
		o.store = "kvstore"
	}
	if o.partitions == 0 {
		o.partitions = 10
	}
	return o
}

// freePort returns a port that was free a moment ago on 127.0.0.1.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func liteArgs(root string, port int, o liteOpts) []string {
	args := []string{"lite", "--root", root, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--store", o.store, "--partitions", strconv.Itoa(o.partitions)}
	return append(args, o.extra...)
}

// startLite starts `cairn lite` on root with default options.
func startLite(t testing.TB, root string) *lite {
	t.Helper()
	return startLiteOpts(t, root, liteOpts{})
}

// startLiteOpts starts `cairn lite` on a free port and waits for its ready
// line. It retries with another port if the chosen one was taken meanwhile.
func startLiteOpts(t testing.TB, root string, o liteOpts) *lite {
	t.Helper()
	o = o.withDefaults()
	const attempts = 5
	for i := 1; ; i++ {
		port := freePort(t)
		p := startProc(t, fmt.Sprintf("lite[%s:%d]", filepath.Base(root), port), liteArgs(root, port, o)...)
		select {
		case m := <-p.stdout.ready:
			l := &lite{proc: p, root: root, addr: m[3], store: m[1], readyAfter: time.Since(p.start)}
			l.partitions, _ = strconv.Atoi(m[2])
			if want := net.JoinHostPort("127.0.0.1", strconv.Itoa(port)); l.addr != want {
				t.Fatalf("%s: ready at %s, want %s", p.name, l.addr, want)
			}
			return l
		case <-p.exited:
			stderr := p.stderr.String()
			if strings.Contains(stderr, "address already in use") && i < attempts {
				t.Logf("port %d was taken; retrying (%d/%d)", port, i, attempts)
				continue
			}
			t.Fatalf("%s exited with code %d before it was ready; stderr:\n%s", p.name, p.state.ExitCode(), stderr)
		case <-time.After(readyTimeout):
			p.kill()
			t.Fatalf("%s: no ready line within %v", p.name, readyTimeout)
		}
	}
}

// runFailing runs the binary with args, expects it to exit on its own within
// the deadline, and returns its exit code and stderr.
func runFailing(t testing.TB, name string, args ...string) (int, string) {
	t.Helper()
	p := startProc(t, name, args...)
	select {
	case m := <-p.stdout.ready:
		p.kill()
		t.Fatalf("%s: became ready at %s; it should have failed", name, m[3])
	case <-p.exited:
	case <-time.After(exitTimeout):
		p.kill()
		t.Fatalf("%s: still running after %v; it should have failed", name, exitTimeout)
	}
	return p.state.ExitCode(), p.stderr.String()
}

// dialConn returns a connection to addr; it closes with the test.
func dialConn(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// dial returns a KV client for addr; its connection closes with the test.
func dial(t testing.TB, addr string) cairnpb.KVClient {
	t.Helper()
	return cairnpb.NewKVClient(dialConn(t, addr))
}

// rpcCtx returns a context for one RPC.
func rpcCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), rpcTimeout)
}

// errorDetail returns the status of err and the ErrorDetail it carries.
func errorDetail(err error) (*status.Status, *cairnpb.ErrorDetail) {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if ed, ok := d.(*cairnpb.ErrorDetail); ok {
			return st, ed
		}
	}
	return st, nil
}

// key builds a key from a major path and a minor path.
func key(major []string, minor ...string) *cairnpb.Key {
	return &cairnpb.Key{Major: major, Minor: minor}
}

// put writes one record unconditionally with the given sync policy.
func put(ctx context.Context, c cairnpb.KVClient, k *cairnpb.Key, v []byte, sync cairnpb.SyncPolicy) error {
	_, err := c.Put(ctx, &cairnpb.PutRequest{
		Op:         &cairnpb.PutOp{Key: k, Value: v},
		Durability: &cairnpb.Durability{MasterSync: sync},
	})
	return err
}

// get reads one record with ABSOLUTE consistency.
func get(t testing.TB, c cairnpb.KVClient, k *cairnpb.Key) (*cairnpb.Record, bool) {
	t.Helper()
	ctx, cancel := rpcCtx()
	defer cancel()
	resp, err := c.Get(ctx, &cairnpb.GetRequest{Key: k, Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE}})
	if err != nil {
		t.Fatalf("get %v: %v", k, err)
	}
	return resp.GetRecord(), resp.GetFound()
}

// multiGetAll reads every record under a complete major path, in pages of
// batch records, following resume tokens.
func multiGetAll(t testing.TB, c cairnpb.KVClient, major []string, batch int32) []*cairnpb.Record {
	t.Helper()
	var out []*cairnpb.Record
	var resume []byte
	for page := 0; ; page++ {
		ctx, cancel := rpcCtx()
		resp, err := c.MultiGet(ctx, &cairnpb.MultiGetRequest{
			Parent: key(major), BatchSize: batch, Resume: resume,
			Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE},
		})
		cancel()
		if err != nil {
			t.Fatalf("multi-get %v page %d: %v", major, page, err)
		}
		out = append(out, resp.GetRecords()...)
		if len(resp.GetResume()) == 0 {
			return out
		}
		if batch > 0 && len(resp.GetRecords()) == 0 {
			t.Fatalf("multi-get %v page %d: empty page with a resume token", major, page)
		}
		resume = resp.GetResume()
	}
}
