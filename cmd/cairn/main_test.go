package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunExitCodes: command lines that need no server exit with the shared
// table's codes, cobra's own errors (unknown command or flag, missing
// required flag) included, and print one "cairn" prefix.
func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr, when main prints it
	}{
		{[]string{"frobnicate"}, 2, `cairn: unknown command "frobnicate"`},
		{[]string{"lite", "--colour"}, 2, "cairn: unknown flag: --colour"},
		{[]string{"lite"}, 2, `cairn: required flag(s) "root" not set`},
		{[]string{"lite", "--root", filepath.Join(dir, "l"), "--partitions", "0"}, 2, "cairn: partitions: 0 is not between"},
		{[]string{"lite", "--root", filepath.Join(dir, "l"), "--log-level", "loud"}, 2, "cairn: --log-level: "},
		{[]string{"sn", "--root", filepath.Join(dir, "s"), "--peer", "x"}, 2, `cairn: --peer "x"`},
		{[]string{"sn", "start", "--root", filepath.Join(dir, "s")}, 2, "run cairn sn init"},
		{[]string{"sn", "start", "--root", filepath.Join(dir, "s"), "--peer", "x"}, 2, `cairn: --peer "x"`},
		{[]string{"sn", "init", "--root", filepath.Join(dir, "i"), "--port", "1"}, 0, ""},
		{[]string{"sn", "--root", filepath.Join(dir, "i"), "--port", "1"}, 2, "set up by cairn sn init: start it with cairn sn start --root"},
		{[]string{"kv", "--hosts", "127.0.0.1", "get", "/a/-/b"}, 2, ""},
		{[]string{"kv", "get"}, 2, ""}, // cairn kv prints its own errors
		{[]string{"bench"}, 2, ""},     // so does cairn bench
		{[]string{"bench", "report", filepath.Join(dir, "missing.json")}, 2, "missing.json"},
		{[]string{"cluster", "status", "--root", dir}, 1, "cairn: "},
		{[]string{"--version"}, 0, ""},
	} {
		var stderr bytes.Buffer
		code := run(tc.args, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "cairn: cairn") {
			t.Errorf("cairn %s: exit %d, stderr %q; want exit %d with %q", strings.Join(tc.args, " "), code, stderr.String(), tc.code, tc.want)
		}
	}
}
