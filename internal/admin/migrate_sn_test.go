package admin

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCheckMigrateArgs: -from and -to that are not node ids, or that name
// one node, are refused as bad input before the store is looked at.
func TestCheckMigrateArgs(t *testing.T) {
	for _, tc := range []struct {
		from, to, err string // err "" = valid
	}{
		{"sn3", "sn4", ""},
		{"3", "SN4", ""},
		{"sn1", "sn1", "-from and -to name the same storage node, sn1"},
		{"sn1", "1", "-from and -to name the same storage node, sn1"},
		{"snX", "sn2", `-from: "snX" is not a storage node id`},
		{"sn1", "0", `-to: "0" is not a storage node id`},
	} {
		err := checkMigrateArgs(tc.from, tc.to)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("-from %s -to %s: %v", tc.from, tc.to, err)
		case tc.err != "" && (status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("-from %s -to %s: %v, want InvalidArgument with %q", tc.from, tc.to, err, tc.err)
		}
	}
}
