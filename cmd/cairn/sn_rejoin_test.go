package main

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckRejoinArgs: a malformed --rejoin-as id or --helper-hosts entry
// is a usage error (exit 2) before any node is asked.
func TestCheckRejoinArgs(t *testing.T) {
	for _, tc := range []struct {
		id      string
		helpers []string
		want    string // the id as snN, or the error's text
	}{
		{"sn3", []string{"127.0.0.1:5000"}, "sn3"},
		{"3", []string{"h:5000", "h2:6000"}, "sn3"},
		{"SN12", []string{"h:5000"}, "sn12"},
		{"snX", []string{"h:5000"}, `--rejoin-as "snX": want the storage node id the lost node had, as sn3 or 3`},
		{"sn0", []string{"h:5000"}, `--rejoin-as "sn0": want the storage node id`},
		{"sn3", nil, "--rejoin-as needs --helper-hosts HOST:PORT"},
		{"sn3", []string{"127.0.0.1"}, `--helper-hosts "127.0.0.1": want HOST:PORT of a running storage node`},
		{"sn3", []string{"h:5000", "h2:"}, `--helper-hosts "h2:": want HOST:PORT`},
	} {
		id, err := checkRejoinArgs(tc.id, tc.helpers)
		var ee *exitError
		switch {
		case err == nil && id != tc.want:
			t.Errorf("--rejoin-as %s --helper-hosts %q: %s, want %s", tc.id, tc.helpers, id, tc.want)
		case err != nil && (!errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("--rejoin-as %s --helper-hosts %q: %v, want exit 2 with %q", tc.id, tc.helpers, err, tc.want)
		}
	}
}
