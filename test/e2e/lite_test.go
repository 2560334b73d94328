package e2e

// The life of a `cairn lite` process: start, ready line, clean stop, restart
// with its data, and the starts it must refuse.

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

const (
	// readyGoal is how fast lite should be ready; readyLimit fails the test
	// (the slack tolerates a loaded CI machine).
	readyGoal  = time.Second
	readyLimit = 3 * time.Second
)

func TestLiteLifecycle(t *testing.T) {
	root := t.TempDir()
	l := startLite(t, root)
	t.Logf("ready in %v (first start, empty root)", l.readyAfter.Round(time.Millisecond))
	checkReadyTime(t, l)
	if l.store != "kvstore" || l.partitions != 10 {
		t.Errorf("ready line names store %q with %d partitions, want kvstore with 10", l.store, l.partitions)
	}

	c := dial(t, l.addr)
	const n = 50
	rec := func(i int) (*cairnpb.Key, []byte) {
		return key([]string{"life", "u" + strconv.Itoa(i%5)}, strconv.Itoa(i)), []byte("v" + strconv.Itoa(i))
	}
	for i := range n {
		ctx, cancel := rpcCtx()
		k, v := rec(i)
		// Unspecified durability: the default (WRITE_NO_SYNC) must survive a clean stop.
		if err := put(ctx, c, k, v, cairnpb.SyncPolicy_SYNC_POLICY_UNSPECIFIED); err != nil {
			t.Fatalf("put %v: %v", k, err)
		}
		cancel()
	}

	t.Run("second_process_same_root", func(t *testing.T) {
		code, stderr := runFailing(t, "lite-second", liteArgs(root, freePort(t), liteOpts{}.withDefaults())...)
		t.Logf("exit %d: %s", code, strings.TrimSpace(stderr))
		if code == 0 {
			t.Errorf("exit code 0, want non-zero")
		}
		if !strings.Contains(stderr, filepath.Join(root, "data")) {
			t.Errorf("stderr does not name the locked directory %s:\n%s", filepath.Join(root, "data"), stderr)
		}
		if !l.running() {
			t.Fatalf("the first process exited when the second started")
		}
		if r, ok := get(t, c, key([]string{"life", "u0"}, "0")); !ok || string(r.GetValue()) != "v0" {
			t.Errorf("first process: /life/u0/-/0 = %q (found %v), want v0", r.GetValue(), ok)
		}
	})

	start := time.Now()
	if code := l.stop(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	t.Logf("stopped in %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(l.stderr.String(), "stopped cleanly") {
		t.Errorf("stderr does not say it stopped cleanly:\n%s", l.stderr.String())
	}

	t.Run("restart_keeps_data", func(t *testing.T) {
		l := startLite(t, root)
		t.Logf("ready in %v (restart)", l.readyAfter.Round(time.Millisecond))
		checkReadyTime(t, l)
		c := dial(t, l.addr)
		ctx, cancel := rpcCtx()
		defer cancel()
		info, err := c.StoreInfo(ctx, &cairnpb.StoreInfoRequest{})
		if err != nil {
			t.Fatalf("store info: %v", err)
		}
		if info.GetStore() != "kvstore" || info.GetPartitions() != 10 {
			t.Errorf("store info %q/%d, want kvstore/10", info.GetStore(), info.GetPartitions())
		}
		for i := range n {
			k, v := rec(i)
			if r, ok := get(t, c, k); !ok || string(r.GetValue()) != string(v) {
				t.Errorf("%v = %q (found %v), want %q", k, r.GetValue(), ok, v)
			}
		}
		// SIGINT (Ctrl-C) stops it as cleanly as SIGTERM.
		if code := l.stopWith(syscall.SIGINT); code != 0 {
			t.Errorf("exit code %d after SIGINT, want 0", code)
		}
		if !strings.Contains(l.stderr.String(), "stopped cleanly") {
			t.Errorf("stderr does not say it stopped cleanly after SIGINT:\n%s", l.stderr.String())
		}
	})

	mismatch := []struct {
		name string
		opts liteOpts
		want []string
	}{
		{"other_store", liteOpts{store: "otherstore"}, []string{"does not match", `"kvstore"`, `"otherstore"`}},
		{"other_partitions", liteOpts{partitions: 7}, []string{"does not match", "10 partitions", "7 partitions"}},
	}
	for _, tc := range mismatch {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runFailing(t, "lite-"+tc.name, liteArgs(root, freePort(t), tc.opts.withDefaults())...)
			t.Logf("exit %d: %s", code, strings.TrimSpace(stderr))
			if code == 0 {
				t.Errorf("exit code 0, want non-zero")
			}
			for _, s := range tc.want {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not mention %s:\n%s", s, stderr)
				}
			}
		})
	}

	t.Run("bad_flags", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"lite", "--root", t.TempDir(), "--port", "0", "--no-such-flag"}, "--no-such-flag"},
			{[]string{"lite", "--port", "0"}, `"root"`},
			{[]string{"lite", "--root", t.TempDir(), "--port", "0", "--partitions", "0"}, "partitions"},
		} {
			code, stderr := runFailing(t, "cairn-bad-flags", tc.args...)
			t.Logf("want %s: exit %d: %s", tc.want, code, strings.TrimSpace(stderr))
			if code == 0 {
				t.Errorf("%v: exit code 0, want non-zero", tc.args)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("%v: stderr does not mention %s:\n%s", tc.args, tc.want, stderr)
			}
		}
	})

	// The refused starts left the store as it was.
	l = startLite(t, root)
	c = dial(t, l.addr)
	if r, ok := get(t, c, key([]string{"life", "u4"}, "49")); !ok || string(r.GetValue()) != "v49" {
		t.Errorf("after the refused starts: /life/u4/-/49 = %q (found %v), want v49", r.GetValue(), ok)
	}
	if code := l.stop(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

func checkReadyTime(t *testing.T, l *lite) {
	t.Helper()
	switch {
	case l.readyAfter > readyLimit:
		t.Errorf("ready after %v, over the %v limit (goal %v)", l.readyAfter, readyLimit, readyGoal)
	case l.readyAfter > readyGoal:
		t.Logf("NOTE: ready after %v, over the %v goal (tolerated up to %v)", l.readyAfter, readyGoal, readyLimit)
	}
}
