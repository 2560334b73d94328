package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/client"
)

func TestExitCode(t *testing.T) {
	_, malformed := client.ParseKey("nokey")
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"ok", nil, ExitOK},
		{"not found", ErrNotFound, ExitNotFound},
		{"not done", ErrNotDone, ExitNotFound},
		{"usage", Usagef("bad flag"), ExitBadInput},
		{"wrapped usage", fmt.Errorf("x: %w", Usagef("bad")), ExitBadInput},
		{"malformed key", malformed, ExitBadInput},
		{"limit", &client.Error{Code: codes.InvalidArgument, Kind: client.KindLimitExceeded, Action: client.ActionFixInput}, ExitBadInput},
		{"store mismatch", &client.Error{Code: codes.FailedPrecondition, Kind: client.KindStoreMismatch, Action: client.ActionFixInput}, ExitBadInput},
		{"unavailable", &client.Error{Code: codes.Unavailable, Action: client.ActionRetry}, ExitUnavailable},
		{"maybe applied", &client.Error{Code: codes.Unavailable, Action: client.ActionRetry, MaybeApplied: true}, ExitUnavailable},
		{"timeout", &client.Error{Code: codes.DeadlineExceeded}, ExitUnavailable},
		{"disk full", &client.Error{Code: codes.ResourceExhausted, Kind: client.KindDiskFull, Action: client.ActionRetry}, ExitUnavailable},
		{"internal", &client.Error{Code: codes.Internal, Action: client.ActionNone}, ExitFailed},
		{"data loss", &client.Error{Code: codes.DataLoss, Kind: "corruption", Action: client.ActionNone}, ExitFailed},
		{"plain", errors.New("disk on fire"), ExitFailed},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("%s: ExitCode(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestReport(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
		code int
	}{
		{nil, "", ExitOK},
		{ErrNotFound, "not found\n", ExitNotFound},
		{ErrNotDone, "not done\n", ExitNotFound},
		{Usagef("--depth: %q is not a depth", "x"), "cairn kv: --depth: \"x\" is not a depth\n", ExitBadInput},
		{&client.Error{Code: codes.InvalidArgument, Kind: client.KindLimitExceeded, Limit: "max_value_bytes", Max: 4, Seen: 5, Msg: "value too large"},
			"cairn kv: value too large (max_value_bytes is 4, saw 5)\n", ExitBadInput},
		{&client.Error{Code: codes.InvalidArgument, Kind: client.KindLimitExceeded, Limit: "max_value_bytes", Max: 4, Seen: 5, Msg: "5 exceeds max_value_bytes 4"},
			"cairn kv: 5 exceeds max_value_bytes 4\n", ExitBadInput},
		{&client.Error{Code: codes.Unavailable, Action: client.ActionRetry, Msg: "connection refused"},
			"cairn kv: connection refused (is the store running? check --hosts)\n", ExitUnavailable},
		{&client.Error{Code: codes.Unavailable, Kind: client.KindConsistencyTimeout, Action: client.ActionRetry, Msg: "replica behind"},
			"cairn kv: replica behind\n", ExitUnavailable},
		{&client.Error{Code: codes.Unavailable, Action: client.ActionRetry, MaybeApplied: true, Msg: "EOF"},
			"cairn kv: EOF; the write may or may not have been applied (read the key to find out)\n", ExitUnavailable},
		{&client.Error{Code: codes.FailedPrecondition, Msg: "127.0.0.1:5000: this storage node holds no topology yet"},
			"cairn kv: 127.0.0.1:5000: this storage node holds no topology yet\n", ExitFailed},
		{errors.New("disk on fire"), "cairn kv: disk on fire\n", ExitFailed},
	} {
		var buf bytes.Buffer
		if code := Report(&buf, tc.err); code != tc.code || buf.String() != tc.want {
			t.Errorf("Report(%v) printed %q and returned %d; want %q and %d", tc.err, buf.String(), code, tc.want, tc.code)
		}
	}
}
