package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAdminBogusFlag(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"-bogus", "show", "topology"}, {"--port"}, {"-port", "x"}, {"-script", "a.kvs", "ping"}} {
		cmd := newAdminCmd()
		var out, errw bytes.Buffer
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&errw)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("cairn admin %q: err %v, want exit code 2", args, err)
		}
		if !strings.HasPrefix(errw.String(), "cairn admin: ") {
			t.Errorf("cairn admin %q: stderr %q", args, errw.String())
		}
	}
	cmd := newAdminCmd()
	var errw bytes.Buffer
	cmd.SetArgs([]string{"--bogus"})
	cmd.SetErr(&errw)
	_ = cmd.Execute()
	if want := `cairn admin: unknown option "--bogus"; the options are -host, -port, -helper-hosts, -security, -json, -failover-timeout, -script, -help`; !strings.Contains(errw.String(), want) {
		t.Errorf("stderr %q, want %q", errw.String(), want)
	}
}

// TestAdminUnusableArgs: a -host with a port in it, and a -script that is
// a directory, are usage errors (2) that say what to give instead, found
// before any node is dialed.
func TestAdminUnusableArgs(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-host", "127.0.0.1:5000", "ping"},
			`cairn admin: option -host wants a host without a port, not "127.0.0.1:5000": give the port with -port, as in -host 127.0.0.1 -port 5000`},
		{[]string{"-script", dir}, "cairn admin: -script: " + dir + " is a directory; give a script file"},
	} {
		var out, errw bytes.Buffer
		err := runAdmin(context.Background(), tc.args, strings.NewReader(""), &out, &errw)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(errw.String(), tc.want) {
			t.Errorf("cairn admin %q: err %v, stderr %q; want exit code 2 and %q", tc.args, err, errw.String(), tc.want)
		}
	}
	if _, err := parseAdminArgs([]string{"-host", "::1", "-port", "6000"}); err != nil {
		t.Errorf("-host ::1 (an IPv6 address, no port): %v", err)
	}
}

func TestAdminHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"-port", "1", "-help"}} {
		cmd := newAdminCmd()
		var out bytes.Buffer
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		if err := cmd.Execute(); err != nil {
			t.Errorf("cairn admin %q: %v", args, err)
		}
		if !strings.Contains(out.String(), "Usage: cairn admin") || !strings.Contains(out.String(), "plan deploy-zone") {
			t.Errorf("cairn admin %q: stdout %q", args, out.String())
		}
	}
}

func TestParseAdminArgs(t *testing.T) {
	a, err := parseAdminArgs([]string{"-host", "h1", "--port=6000", "--helper-hosts", "h2:5000, h3:5000", "-json", "plan", "deploy-zone", "-name", "x", "-json"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.addrs(), []string{"h1:6000", "h2:5000", "h3:5000"}) || !a.json ||
		!slices.Equal(a.commands, []string{"plan", "deploy-zone", "-name", "x", "-json"}) {
		t.Errorf("parsed %+v, addrs %q", a, a.addrs())
	}
	a, err = parseAdminArgs([]string{"-helper-hosts", "h2:5000", "--script", "s.kvs"})
	if err != nil || !slices.Equal(a.addrs(), []string{"h2:5000"}) || a.script != "s.kvs" {
		t.Errorf("parsed %+v, %v; addrs %q", a, err, a.addrs())
	}
	a, err = parseAdminArgs(nil)
	if err != nil || !slices.Equal(a.addrs(), []string{"127.0.0.1:5000"}) {
		t.Errorf("defaults: %+v, %v", a, err)
	}
	if _, err := parseAdminArgs([]string{"-helper-hosts", "nohost"}); err == nil {
		t.Errorf("-helper-hosts nohost: no error")
	}
	if a, err := parseAdminArgs([]string{"-failover-timeout", "2s", "ping"}); err != nil || a.failover != 2*time.Second {
		t.Errorf("-failover-timeout 2s: %+v, %v", a, err)
	}
	for _, bad := range []string{"0s", "-1s", "soon"} {
		if _, err := parseAdminArgs([]string{"-failover-timeout", bad}); err == nil || !strings.Contains(err.Error(), "wants a positive duration") {
			t.Errorf("-failover-timeout %s: %v, want a usage error", bad, err)
		}
	}
}

func TestSplitQuotedCommand(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"show zones"}, []string{"show", "zones"}},
		{[]string{`configure -name "my store"`}, []string{"configure", "-name", "my store"}},
		{[]string{"show", "zones"}, []string{"show", "zones"}},
		{[]string{"ping"}, []string{"ping"}},
		{nil, nil},
	} {
		got, err := splitQuotedCommand(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitQuotedCommand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
