package e2e

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExitCodes runs the binary's subcommands into each kind of failure and
// checks the one exit-code table they share (cairn --help): 0 ok, 1 failed,
// 2 usage or bad input, 3 unavailable; and that no message repeats its
// "cairn" prefix.
func TestExitCodes(t *testing.T) {
	l := startLite(t, t.TempDir())
	stopped := startLite(t, t.TempDir()) // a root of store kvstore, not locked
	if code := stopped.stop(); code != 0 {
		t.Fatalf("lite stop: exit %d", code)
	}
	sns := initNodes(t, 1) // a storage node with no topology yet
	sns[0].start(t)
	fresh := sns[0].addr()
	dead := "127.0.0.1:" + strconv.Itoa(freePort(t))
	deadPort := strings.TrimPrefix(dead, "127.0.0.1:")
	bigFile := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(bigFile, make([]byte, 4<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	scripts := t.TempDir()
	longLine := filepath.Join(scripts, "long.kvs")
	if err := os.WriteFile(longLine, []byte("# over 1 MiB\nshow topology "+strings.Repeat("x", 1<<20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	selfLoad := filepath.Join(scripts, "self.kvs")
	if err := os.WriteFile(selfLoad, []byte("# loads itself\n\nload -file self.kvs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	snRoot := t.TempDir()
	mustCairn(t, "sn", "init", "--root", snRoot, "--port", "5000", "--capacity", "2")
	bench := func(hosts string, props ...string) []string {
		args := []string{"bench", "run", "-p", "cairn.hosts=" + hosts, "-p", "recordcount=10", "-p", "operationcount=10"}
		for _, p := range props {
			args = append(args, "-p", p)
		}
		return args
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr
		not  string // not in stderr
	}{
		{"kv ok", []string{"kv", "--hosts", l.addr, "put", "/e/-/k", "v"}, 0, "", ""},
		{"kv not found", []string{"kv", "--hosts", l.addr, "get", "/e/-/missing"}, 1, "not found", ""},
		{"kv no topology yet", []string{"kv", "--hosts", fresh, "get", "/e/-/k"}, 1, "no topology yet", "no host answered"},
		{"bench no topology yet", bench(fresh), 1, "no topology yet", "no host answered"},
		{"admin not in a store", []string{"admin", "-port", strconv.Itoa(sns[0].port), "show", "topology"}, 1, "configure -name STORE", ""},
		{"cluster status without a cluster", []string{"cluster", "status", "--root", t.TempDir()}, 1, "cairn cluster start", ""},

		{"unknown subcommand", []string{"frobnicate"}, 2, `unknown command "frobnicate"`, ""},
		{"kv typo suggests", []string{"kv", "--hosts", l.addr, "gte", "/e/-/k"}, 2, "did you mean get?", ""},
		{"sn typo suggests", []string{"sn", "strat"}, 2, "did you mean start?", ""},
		{"cluster typo suggests", []string{"cluster", "stpo"}, 2, "did you mean stop?", ""},
		{"version", []string{"version"}, 0, "", ""},
		{"kv value over the limit", []string{"kv", "--hosts", l.addr, "put", "/e/-/big", "--file", bigFile}, 2,
			"cairn kv: value is 4,194,305 bytes; the store's limit max_value_bytes is 4,194,304 (the node's --max-value-bytes)", "keys:"},
		{"sn init conflict", []string{"sn", "init", "--root", snRoot, "--port", "5000", "--capacity", "4"}, 2,
			"capacity: 2 in the file, 4 given", "node:"},
		{"kv unknown flag", []string{"kv", "--colour", "get", "/a"}, 2, "unknown flag", ""},
		{"kv malformed key", []string{"kv", "--hosts", l.addr, "get", "nokey"}, 2, "cairn kv: ", ""},
		{"kv wrong store", []string{"kv", "--hosts", l.addr, "--store", "wrong", "get", "/e/-/k"}, 2, "check --store", ""},
		{"bench wrong store", bench(l.addr, "cairn.store=wrong"), 2, "cairn bench: -db cairn: node " + l.addr + ` serves store "kvstore", not "wrong" (check -p cairn.store)`, ""},
		{"bench unknown property", []string{"bench", "run", "-p", "nosuch=1"}, 2, `cairn bench: unknown property "nosuch"`, ""},
		{"bench missing phase", []string{"bench"}, 2, "cairn bench: missing phase", ""},
		{"bench report missing file", []string{"bench", "report", filepath.Join(t.TempDir(), "missing.json")}, 2, "missing.json", ""},
		{"admin missing script", []string{"admin", "-script", "/nonexistent/setup.kvs"}, 2, "cairn admin: -script: ", ""},
		{"admin script is a directory", []string{"admin", "-script", scripts}, 2, "cairn admin: -script: " + scripts + " is a directory; give a script file", ""},
		{"admin script line over 1 MiB", []string{"admin", "-port", deadPort, "-script", longLine}, 2,
			"Error: " + longLine + ":2: the line is longer than 1048576 bytes (1 MiB)", ""},
		{"admin script loads itself", []string{"admin", "-port", deadPort, "-script", selfLoad}, 2,
			"Error: " + selfLoad + ":3: load: " + selfLoad + " is running already", selfLoad + ":3: " + selfLoad + ":3:"},
		{"admin host with a port", []string{"admin", "-host", "127.0.0.1:" + deadPort, "ping"}, 2,
			"cairn admin: option -host wants a host without a port, not \"127.0.0.1:" + deadPort + "\": give the port with -port", ""},
		{"admin unknown command", []string{"admin", "-port", strconv.Itoa(sns[0].port), "frobnicate"}, 2, `unknown command "frobnicate"`, ""},
		{"lite without root", []string{"lite"}, 2, `"root" not set`, ""},
		{"lite bad partitions", []string{"lite", "--root", t.TempDir(), "--partitions", "0"}, 2, "partitions: 0", ""},
		{"lite root of another store", []string{"lite", "--root", stopped.root, "--store", "other", "--port", "0"}, 2, `holds store "kvstore"`, ""},
		{"lite root in use", []string{"lite", "--root", l.root, "--port", "0"}, 1, "locked by another process", ""},
		{"sn bad log level", []string{"sn", "--root", t.TempDir(), "--log-level", "loud"}, 2, "--log-level", ""},
		{"sn start without init", []string{"sn", "start", "--root", t.TempDir()}, 2, "run cairn sn init", ""},
		{"sn restore missing root", []string{"sn", "restore", "--root", "/nonexistent/sn1", "--snapshot", "s1"}, 2,
			"cairn: restore: the root /nonexistent/sn1 does not exist or is not a directory: give the stopped node's directory", ""},
		{"sn restore not a node's root", []string{"sn", "restore", "--root", t.TempDir(), "--snapshot", "s1"}, 2, "has no topology.json: restore needs the node's topology", ""},
		{"sn restore bad snapshot name", []string{"sn", "restore", "--root", snRoot, "--snapshot", "no such"}, 2, `"no such" is not a snapshot name`, ""},

		{"kv dead host", []string{"kv", "--hosts", dead, "get", "/e/-/k"}, 3, "check --hosts", ""},
		{"bench dead host", bench(dead), 3, "check -p cairn.hosts", ""},
		{"admin dead host", []string{"admin", "-port", deadPort, "ping"}, 3, "no storage node answered", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCairn(t, tc.args...)
			bad := code != tc.code || !strings.Contains(errOut, tc.want) || (tc.not != "" && strings.Contains(errOut, tc.not))
			for _, doubled := range []string{"cairn: cairn", "cairn: bench:", "bench: bench:", "cairn kv: cairn", "cairn bench: cairn:"} {
				bad = bad || strings.Contains(errOut, doubled)
			}
			if bad {
				t.Errorf("cairn %s: exit %d, want %d with %q in stderr (and not %q, nor a doubled prefix)\nstdout:\n%s\nstderr:\n%s",
					strings.Join(tc.args, " "), code, tc.code, tc.want, tc.not, out, errOut)
			}
		})
	}
}

// TestKVJSONAlwaysPrints: with --json, a missing key and a conditional put
// that is not done still print one JSON document on stdout, and exit 1.
func TestKVJSONAlwaysPrints(t *testing.T) {
	l := startLite(t, t.TempDir())
	mustCairn(t, "kv", "--hosts", l.addr, "put", "/j/-/k", "v")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "/j/-/missing"}, `{"key":"/j/-/missing","found":false}`},
		{[]string{"put", "/j/-/k", "w", "--if-absent"}, `{"key":"/j/-/k","done":false}`},
	} {
		args := append([]string{"kv", "--hosts", l.addr, "--json"}, tc.args...)
		code, out, errOut := runCairn(t, args...)
		var doc map[string]any
		if code != 1 || strings.TrimSpace(out) != tc.want || json.Unmarshal([]byte(out), &doc) != nil {
			t.Errorf("cairn %s: exit %d, stdout %q (stderr %q); want exit 1 and %s",
				strings.Join(args, " "), code, out, errOut, tc.want)
		}
	}
}

// TestLiteBindFailureLeavesRootUnused: a lite whose port is taken exits
// before it creates its store, so a retry with another store name and port
// works.
func TestLiteBindFailureLeavesRootUnused(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	root := t.TempDir()
	port := strings.TrimPrefix(busy.Addr().String(), "127.0.0.1:")
	code, errOut := runFailing(t, "lite on a busy port", "lite", "--root", root, "--port", port)
	if code != 1 || !strings.Contains(errOut, "address already in use") {
		t.Fatalf("lite on a busy port: exit %d, stderr %q; want 1 and address already in use", code, errOut)
	}
	l := startLiteOpts(t, root, liteOpts{store: "other"})
	if l.store != "other" {
		t.Errorf("retry serves store %q, want other", l.store)
	}
}

// TestBenchGivesUpOnADeadStore: a run whose store is SIGKILLed mid-run
// stops after cairn.giveup with no answer, and exits 3 (no node answered),
// instead of running on at one operation per timeout.
func TestBenchGivesUpOnADeadStore(t *testing.T) {
	l := startLite(t, t.TempDir())
	b := startProc(t, "bench", "bench", "run", "-P", "../../workloads/workloadc", "-threads", "2", "-s",
		"-p", "cairn.hosts="+l.addr, "-p", "recordcount=100", "-p", "operationcount=0",
		"-p", "cairn.timeout=300ms", "-p", "cairn.giveup=2s", "-p", "status.interval=1")
	deadline := time.Now().Add(30 * time.Second)
	for !regexp.MustCompile(` sec: [1-9]\d* operations; `).MatchString(b.stderr.String()) {
		if time.Now().After(deadline) || !b.running() {
			t.Fatalf("bench did no operation within 30 s (running: %v)", b.running())
		}
		time.Sleep(20 * time.Millisecond)
	}
	l.kill()
	killed := time.Now()
	code, ok := b.waitExit(30 * time.Second)
	if !ok {
		t.Fatalf("bench still running 30 s after its store was killed")
	}
	took := time.Since(killed)
	errOut := b.stderr.String()
	if code != 3 || !strings.Contains(errOut, "gave up: no operation had an answer for") ||
		!strings.Contains(errOut, "(is the store running? check -p cairn.hosts)") {
		t.Fatalf("bench after its store was killed: exit %d, want 3 with the give-up and its cause in stderr:\n%s", code, errOut)
	}
	if took < 2*time.Second {
		t.Errorf("bench gave up %v after the kill, before cairn.giveup=2s", took)
	}
	if !strings.Contains(b.stdout.String(), "[OVERALL], Throughput(ops/sec)") {
		t.Errorf("no summary of the operations done before the kill:\n%s", b.stdout.String())
	}
}

// TestClusterSNFlagsNotSavedUntilANodeRuns: a --sn-flag that cairn sn
// would refuse is a usage error (2) that writes nothing; one a node cannot
// start with (a taken --pprof port) fails the start (1) without being
// recorded, so the next start without it works; a good one is recorded.
func TestClusterSNFlagsNotSavedUntilANodeRuns(t *testing.T) {
	dir := t.TempDir()
	seenPIDs := map[int]string{}
	t.Cleanup(func() { cleanupCluster(t, dir, seenPIDs) })
	layout := []string{"cluster", "start", "--root", dir, "--nodes", "1", "--rf", "1", "--shards", "1", "--partitions", "10"}
	for _, tc := range []struct{ flag, want string }{
		{"--raft-tick=abc", `cairn: cluster: --sn-flag: invalid argument "abc" for "--raft-tick" flag`},
		{"--raft-tick=0s", "cairn: cluster: --sn-flag: raft-tick: 0s is below 1ms"},
		{"--colour=red", "cairn: cluster: --sn-flag: unknown flag: --colour"},
	} {
		code, out, errOut := runCairn(t, append(layout, "--sn-flag="+tc.flag)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("cluster start --sn-flag=%s: exit %d, want 2 with %q\nstdout:\n%s\nstderr:\n%s", tc.flag, code, tc.want, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "cluster.json")); err == nil {
			t.Fatalf("cluster start --sn-flag=%s wrote cluster.json", tc.flag)
		}
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, out, errOut := runCairn(t, append(layout, "--sn-flag=--pprof="+busy.Addr().String())...)
	for _, n := range readClusterFile(t, dir).Nodes {
		seenPIDs[n.PID] = n.Root
	}
	if code != 1 || !strings.Contains(errOut, "exited") || !strings.Contains(errOut, "so cluster.json keeps the nodes' flags it had (none)") ||
		strings.Contains(errOut, "is taken by another process") { // the node's own port is free
		t.Fatalf("cluster start with a taken --pprof port: exit %d, want 1 (the node exited, its flags not kept)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if f := readClusterFile(t, dir); len(f.SNFlags) != 0 {
		t.Errorf("cluster.json records %q, flags no node ran with", f.SNFlags)
	}
	mustCairn(t, "cluster", "start", "--root", dir)
	mustCairn(t, "cluster", "stop", "--root", dir)
	mustCairn(t, "cluster", "start", "--root", dir, "--sn-flag=--raft-tick=50ms")
	f := readClusterFile(t, dir)
	for _, n := range f.Nodes {
		seenPIDs[n.PID] = n.Root
	}
	if !slices.Equal(f.SNFlags, []string{"--raft-tick=50ms"}) {
		t.Errorf("cluster.json records %q after a start with --sn-flag=--raft-tick=50ms", f.SNFlags)
	}
	mustCairn(t, "cluster", "stop", "--root", dir)
}
