package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestIsNodeCmdline(t *testing.T) {
	nul := func(args ...string) []byte { return []byte(strings.Join(args, "\x00") + "\x00") }
	for _, tc := range []struct {
		cmdline []byte
		want    bool
	}{
		{nul("/usr/bin/cairn", "sn", "--root", "/c/n1", "--host", "127.0.0.1"), true},
		{nul("/usr/bin/cairn", "sn", "--root=/c/n1"), true},
		{nul("/usr/bin/cairn", "sn", "--root", "/c/n2"), false},   // another node
		{nul("/usr/bin/cairn", "lite", "--root", "/c/n1"), false}, // not a storage node
		{nul("/usr/bin/cairn", "sn", "--root", "/c/n1/x"), false}, // a prefix is not the root
		{nul("/usr/bin/vim", "sn", "/c/n1"), false},               // no --root
		{nil, false},
	} {
		if got := isNodeCmdline(tc.cmdline, "/c/n1"); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.cmdline, got, tc.want)
		}
	}
}

func TestProcStatState(t *testing.T) {
	for stat, want := range map[string]byte{
		"123 (cairn) S 1 2 3":  'S',
		"123 (a) (b)) T 1 2":   'T',
		"123 (with space) Z 0": 'Z',
		"garbage":              0,
		"1 (x)":                0,
	} {
		if got := procStatState([]byte(stat)); got != want {
			t.Errorf("%q: %q, want %q", stat, got, want)
		}
	}
}

// A process between releasing its memory and becoming a zombie reads an
// empty cmdline: it is gone, not another program (Stop, then Inspect, once
// saw it so).
func TestClassify(t *testing.T) {
	const root = "/r/n1"
	node := []byte("cairn\x00sn\x00--root\x00/r/n1\x00")
	for _, c := range []struct {
		name    string
		stat    string
		cmdline []byte
		err     error
		want    ProcState
	}{
		{"running node", "12 (cairn) S 1", node, nil, ProcRunning},
		{"paused node", "12 (cairn) T 1", node, nil, ProcStopped},
		{"zombie", "12 (cairn) Z 1", nil, nil, ProcGone},
		{"exiting: memory released", "12 (cairn) R 1", []byte{}, nil, ProcGone},
		{"exited between the reads", "12 (cairn) R 1", nil, fs.ErrNotExist, ProcGone},
		{"another program", "12 (sleep) S 1", []byte("sleep\x00100\x00"), nil, ProcOther},
		{"another node's root", "12 (cairn) S 1", []byte("cairn\x00sn\x00--root\x00/r/n2\x00"), nil, ProcOther},
		{"cmdline unreadable", "12 (cairn) S 1", nil, fs.ErrPermission, ProcOther},
		{"stat unparsable", "garbage", node, nil, ProcGone},
	} {
		if got := classify([]byte(c.stat), c.cmdline, c.err, root); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestHelperProcess is not a test: it is the body of the fake node that
// startFakeNode runs (this test binary, re-executed). It waits for its
// stdin to close or a signal to end it.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("CAIRN_CLUSTER_HELPER") != "1" {
		t.Skip("helper process only")
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// startFakeNode runs a process whose command line looks like node root's
// `cairn sn`. The test does not reap it, so a killed one stays a zombie,
// as a node whose parent is gone does under an init that does not reap.
func startFakeNode(t *testing.T, root string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "sn", "--root", root)
	cmd.Env = append(os.Environ(), "CAIRN_CLUSTER_HELPER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return pid
}

func TestInspectAndSignalAFakeNode(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	f := sampleFile(dir)
	root := f.Nodes[0].Root
	pid := startFakeNode(t, root)
	f.Nodes[0].PID = pid
	f.Nodes[1].PID = os.Getpid() // a reused pid: this test, not a node
	f.Nodes[2].PID = 0
	if err := f.Save(dir); err != nil {
		t.Fatal(err)
	}
	if st, ok := waitState(pid, root, 5*time.Second, func(s ProcState) bool { return s == ProcRunning }); !ok {
		t.Fatalf("fake node: %v, want running", st)
	}
	if st := Inspect(pid, "/some/other/root"); st != ProcOther {
		t.Errorf("with another root: %v, want pid reused", st)
	}
	if st := Inspect(os.Getpid(), f.Nodes[1].Root); st != ProcOther {
		t.Errorf("this test: %v, want pid reused", st)
	}
	ctx := context.Background()
	var out bytes.Buffer
	if err := Kill(ctx, KillOptions{Root: dir, Node: 1, Signal: "STOP", Timeout: 5 * time.Second, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if st := Inspect(pid, root); st != ProcStopped {
		t.Fatalf("after STOP: %v", st)
	}
	if err := Kill(ctx, KillOptions{Root: dir, Node: 2, Out: &out}); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("kill of a node whose pid was reused: %v", err)
	}
	// Stop must get past the pause (SIGTERM then SIGCONT), must leave the
	// reused pid alone (this test survives it), and must see the killed
	// process go although it stays a zombie until the cleanup reaps it.
	if err := Stop(ctx, StopOptions{Root: dir, Timeout: 5 * time.Second, Out: &out}); err != nil {
		t.Fatalf("stop: %v\n%s", err, out.String())
	}
	for _, want := range []string{"node 1 (pid ", "stopped by SIGTERM", "node 2: not running (pid", "another program; left alone", "node 3: not running\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not say %q:\n%s", want, out.String())
		}
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Logf("the fake node was reaped already (%v); the zombie case was not exercised", err)
	}
	if st := Inspect(pid, root); st != ProcGone {
		t.Errorf("after stop: %v, want gone", st)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range back.Nodes {
		if n.PID != 0 {
			t.Errorf("node %d: pid %d left in %s after stop", n.ID, n.PID, FileName)
		}
	}
	if err := Kill(ctx, KillOptions{Root: dir, Node: 9}); err == nil || !strings.Contains(err.Error(), "has nodes 1, 2, 3") {
		t.Errorf("unknown node: %v", err)
	}
}

func TestLockExcludesASecondCommand(t *testing.T) {
	dir := t.TempDir()
	f := sampleFile(dir)
	if err := f.Save(dir); err != nil {
		t.Fatal(err)
	}
	unlock, err := lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = Stop(context.Background(), StopOptions{Root: dir})
	if err == nil || !strings.Contains(err.Error(), "another 'cairn cluster' command") {
		t.Fatalf("stop while locked: %v", err)
	}
	unlock()
	if err := Stop(context.Background(), StopOptions{Root: dir}); err != nil {
		t.Fatalf("stop after unlock: %v", err)
	}
}

func TestStartRefusesBadArguments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bad := DefaultSpec()
	bad.RF = 4
	if err := Start(ctx, StartOptions{Root: dir, Spec: bad, Binary: "/bin/false"}); err == nil || !strings.Contains(err.Error(), "replication factor 4 needs at least 4 nodes") {
		t.Errorf("rf > nodes: %v", err)
	}
	if err := Start(ctx, StartOptions{Root: dir, Spec: DefaultSpec(), Node: 2, Binary: "/bin/false"}); err == nil || !strings.Contains(err.Error(), "without --node") {
		t.Errorf("--node on a new cluster: %v", err)
	}
	if err := Start(ctx, StartOptions{Root: dir, Spec: DefaultSpec(), Binary: "/bin/false", SNFlags: []string{"--port=1"}}); err == nil {
		t.Error("--sn-flag=--port accepted")
	}
	if err := os.WriteFile(dir+"/stray", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Start(ctx, StartOptions{Root: dir, Spec: DefaultSpec(), Binary: "/bin/false"}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty directory: %v", err)
	}
	if _, err := os.Stat(Path(dir)); err == nil {
		t.Error("a refused start wrote cluster.json")
	}
}

// TestStartRecordsSNFlagsOnlyOnceANodeRuns: flags that CheckSNFlags
// refuses are ErrInvalid and write nothing; flags no node becomes ready
// with (here /bin/false, which exits at once) are not recorded, so a later
// start without --sn-flag runs with the flags the cluster had.
func TestStartRecordsSNFlagsOnlyOnceANodeRuns(t *testing.T) {
	ctx := context.Background()
	spec := DefaultSpec()
	spec.Nodes, spec.RF, spec.Shards = 1, 1, 1
	dir := t.TempDir()
	refuse := func(flags []string) error { return errors.New("unknown flag: --colour") }
	err := Start(ctx, StartOptions{Root: dir, Spec: spec, Binary: "/bin/false", SNFlags: []string{"--colour=red"}, CheckSNFlags: refuse})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "cluster: --sn-flag: unknown flag: --colour") {
		t.Errorf("refused flag: %v, want ErrInvalid naming it", err)
	}
	if _, err := os.Stat(Path(dir)); err == nil {
		t.Error("a start with a refused --sn-flag wrote cluster.json")
	}

	err = Start(ctx, StartOptions{Root: dir, Spec: spec, Binary: "/bin/false", SNFlags: []string{"--raft-tick=50ms"}, Wait: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("start with a node that exits: %v", err)
	}
	f, err := Load(dir)
	if err != nil || len(f.SNFlags) != 0 {
		t.Fatalf("new cluster whose node never ran: flags %q (%v), want none recorded", f.SNFlags, err)
	}

	f.SNFlags = []string{"--raft-tick=50ms", "--secure"}
	if err := f.Save(dir); err != nil {
		t.Fatal(err)
	}
	err = Start(ctx, StartOptions{Root: dir, Spec: spec, Binary: "/bin/false", SNFlags: []string{"--raft-tick=1ms"}, Wait: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "keeps the nodes' flags it had (--raft-tick=50ms --secure)") {
		t.Errorf("new flags no node ran with: %v, want the kept flags named", err)
	}
	if f, err := Load(dir); err != nil || !slices.Equal(f.SNFlags, []string{"--raft-tick=50ms", "--secure"}) {
		t.Errorf("flags after a failed start with new ones: %q (%v), want the old ones", f.SNFlags, err)
	}
}

func TestWithSecure(t *testing.T) {
	for _, tc := range []struct{ given, old, want []string }{
		{[]string{"--raft-tick=50ms"}, []string{"--secure"}, []string{"--raft-tick=50ms", "--secure"}},
		{[]string{"--secure", "--raft-tick=50ms"}, []string{"--secure"}, []string{"--secure", "--raft-tick=50ms"}},
		{[]string{"--raft-tick=50ms"}, []string{"--raft-tick=10ms"}, []string{"--raft-tick=50ms"}},
	} {
		if got := withSecure(tc.given, tc.old); !slices.Equal(got, tc.want) {
			t.Errorf("withSecure(%q, %q) = %q, want %q", tc.given, tc.old, got, tc.want)
		}
	}
}
