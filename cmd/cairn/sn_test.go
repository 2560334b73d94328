package main

import (
	"strings"
	"testing"
)

// TestCheckSNFlags: cairn cluster start --sn-flag values are checked as
// the bare cairn sn parses and validates them, without a node.
func TestCheckSNFlags(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string // "" = valid
	}{
		{[]string{"--raft-tick=50ms", "--log-level=debug", "--row-cache-bytes=64MiB", "--peer", "2=127.0.0.1:7002"}, ""},
		{[]string{"--secure"}, ""},
		{[]string{"--raft-tick=abc"}, `invalid argument "abc" for "--raft-tick" flag`},
		{[]string{"--colour=red"}, "unknown flag: --colour"},
		{[]string{"--log-level=loud"}, "--log-level: "},
		{[]string{"--raft-tick=0s"}, "raft-tick: 0s is below 1ms"},
		{[]string{"--row-cache-bytes=1MiB"}, "row-cache-bytes: 1048576 is below the row cache's minimum"},
		{[]string{"--peer=x"}, `--peer "x": want NODE_ID=HOST:PORT`},
		{[]string{"--repair-stuck-after=0"}, ""},
		{[]string{"--repair-stuck-after=-1s"}, "repair-stuck-after: negative -1s (0 turns the repair off)"},
	} {
		err := checkSNFlags(tc.flags)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.flags, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error with %q", tc.flags, err, tc.want)
		}
	}
}
